"""The notation page (nbs/notation.md) is kept true against the chapters (issue 23).

The page is the registry: each table row names one or more symbols (TeX in the first column) and the chapter that
introduces them (the last column). The tests check, on the notebooks' Markdown cells (no build needed):
- every symbol on the page is used in some chapter (a symbol nobody uses is a stale entry);
- every symbol a chapter defines in a "where $x$ denotes ..." / "$x$ denotes ..." / "we write $x$ for ..."
  sentence, or in a `:::{admonition} Notation` block, is on the page;
- no symbol is listed twice with two meanings (one row per symbol).
"""
import json, re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
PAGE = NBS / "notation.md"

def norm(tex: str) -> str:
    "A TeX symbol in a canonical form: no spaces, thin spaces or braces; `\\rm` and `\\mathrm` alike."
    t = tex.replace("\\mathrm", "\\rm").replace("\\operatorname", "\\rm").replace("\\text", "\\rm")
    t = re.sub(r"\\[,;! ]|\s+|[{}]", "", t)
    return t.replace("\\left", "").replace("\\right", "")

def split_top(tex: str, seps=(",",)) -> list[str]:
    "Split at the separators outside parentheses, brackets and braces."
    out, depth, cur = [], 0, ""
    for ch in tex:
        depth += ch in "([{"; depth -= ch in ")]}"
        if ch in seps and depth == 0: out.append(cur); cur = ""
        else: cur += ch
    return out + [cur]

def page_symbols(text: str) -> list[tuple[str, str, str]]:
    "(symbol TeX, normalised key, row) for every symbol in the first column of the page's tables."
    rows = []
    for line in text.splitlines():
        if not line.startswith("| $"): continue
        first = line.split("|")[1]
        for tex in re.findall(r"\$([^$]+)\$", first):
            for part in split_top(tex):
                part = re.split(r"\s*(?:=|\\in\b|\\sim\b)\s*", part.strip())[0] if not part.strip().startswith("\\hat V^") else part
                key = norm(part)
                if key: rows.append((part.strip(), key, line))
    return rows

def chapter_markdown(code: bool = False) -> dict[str, str]:
    """The Markdown text of every notebook and Markdown page of the book except the notation page; with `code`,
    also the code cells (whose strings put math into tables, labels and captions)."""
    out = {}
    for nb in sorted(NBS.glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        parts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
        if code:   # math in code strings, line by line (a `$` of the code must not pair with one of the next cell)
            parts += [m.replace("\\\\", "\\") for c in cells if c["cell_type"] == "code"
                      for line in "".join(c["source"]).splitlines() for m in re.findall(r"\$[^$\n]+\$", line)]
        out[nb.stem] = "\n\n".join(parts)
    for md in sorted(NBS.glob("*.md")):
        if md != PAGE: out[md.stem] = md.read_text()
    return out

def math_keys(text: str) -> str:
    "Normalised text of all the math of a chapter (paragraph by paragraph, so that one stray `$` stays local), for substring search."
    return " ".join(norm(" ".join(re.findall(r"\$\$?([^$]+)\$\$?", para))) for para in text.split("\n\n"))

DEFINES = [r"where\s+\$([^$]+)\$\s+denotes", r"\$([^$]+)\$\s+denotes", r"we\s+write\s+\$([^$]+)\$\s+for"]

def defined_symbols(text: str) -> list[str]:
    "Symbols a chapter defines in a 'denotes' / 'we write ... for' sentence or a Notation admonition."
    out = []
    for pat in DEFINES: out += re.findall(pat, text, re.I)
    out = list(dict.fromkeys(out))
    for block in re.findall(r":::\{admonition\}\s*Notation[^\n]*\n([\s\S]*?)\n:::", text):
        out += re.findall(r"^\s*[-*]?\s*\$([^$]+)\$\s*[:—–-]", block, re.M)
    return out

def test_registry_parser():
    "The parser on a small table and the definition finder on sentences (the checks below rely on them)."
    rows = page_symbols("| $k^*,\\ v^*$ | dirs | x |\n| $g_\\nu(\\varepsilon, \\chi^*)$ | tilt | x |\n| $X = \\mu y^\\top + Z$ | tokens | x |")
    assert [k for _, k, _ in rows] == ["k^*", "v^*", "g_\\nu(\\varepsilon,\\chi^*)", "X"]
    text = "where $\\kappa_L$ denotes the mean maximum, and we write $\\bar s^2$ for the norm.\n:::{admonition} Notation\n- $Q^*$: teacher overlap\n:::"
    assert defined_symbols(text) == ["\\kappa_L", "\\bar s^2", "Q^*"]
    assert norm("\\mathrm{SNR}") == norm("\\rm SNR") and norm("m_{k}") == norm("m_k")

def test_every_symbol_on_the_page_is_used():
    chapters = {k: math_keys(v) for k, v in chapter_markdown(code=True).items()}
    allmath = "\n".join(chapters.values())
    used = lambda key: key in allmath or (key.endswith("(\\cdot)") and key[:-len("\\cdot)")] in allmath)
    unused = [f"${tex}$  ({row[:70]}...)" for tex, key, row in page_symbols(PAGE.read_text()) if not used(key)]
    assert not unused, "symbols on the notation page that no chapter uses:\n" + "\n".join(unused)

def test_every_defined_symbol_is_on_the_page():
    listed = {key for _, key, _ in page_symbols(PAGE.read_text())}
    missing = [f"{name}: ${s}$" for name, text in chapter_markdown().items() for s in defined_symbols(text) if norm(s) not in listed]
    assert not missing, "symbols defined in a chapter but missing from nbs/notation.md:\n" + "\n".join(missing)

def test_one_row_per_symbol():
    """Within one part of the page (single-location regression, RMT, numerical methods) a symbol has one row; qualified
    rows, e.g. '(multi-head chapter)', name the exception. The two theory parts are separate namespaces."""
    seen, dup, section, sec = {}, [], {}, ""
    text = PAGE.read_text()
    where = {}
    for line in text.splitlines():
        if line.startswith("## "): sec = line
        where[line] = sec
    for tex, key, row in page_symbols(text):
        sec = where[row]
        qualified = re.search(r"\$[^|]*\(([^)|]*chapter[^)|]*|dynamics)\)", row.split("|")[1])
        if qualified: continue
        if key in seen and seen[key] != row and section[key] == sec: dup.append(f"${tex}$:\n    {seen[key][:90]}\n    {row[:90]}")
        seen.setdefault(key, row); section.setdefault(key, sec)
    assert not dup, "symbols listed twice on the notation page:\n" + "\n".join(dup)

@pytest.mark.parametrize("old, new", [("\\bar\\chi_L", "\\kappa_L"), ("\\mu_s", "\\nu_s")])
def test_fixed_defects_stay_fixed(old, new):
    "Issue 23: the page once listed symbols the chapters do not use, in place of the ones they do."
    page = page_symbols(PAGE.read_text())
    assert norm(old) not in {k for _, k, _ in page} and norm(new) in {k for _, k, _ in page}
