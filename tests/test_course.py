"""The book as a course (issue 23): every theory chapter opens with what the reader will learn and needs, ends with a
summary and at least two exercises with folded solutions, and the single-location-regression chapters follow the
book's running example (SpikedSLR(3, 2), softmax vs linear, lambda = 0.1; introduced in 01_slr, label
`sec-running-example`).

The checks read the notebooks' Markdown (what the book renders), so they run without a built book."""
import json, re, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import book_browser  # noqa: E402

THEORY = list(dict.fromkeys(["01a_slr_models", *book_browser.THEORY]))
# The chapters of the two single-location-regression parts carry the running example.
SLR = [c for c in THEORY if c.startswith(("01", "02"))]

def markdown(nb: Path) -> str:
    "The Markdown cells of a notebook, joined."
    cells = json.loads(nb.read_text())["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")

def course_failures(md: str, slr: bool = False) -> list[str]:
    "What a chapter's Markdown lacks of the course structure (empty when complete)."
    bad = []
    block = lambda w: rf"\*\*{w}:?\*\*|^#+ {w}|\{{admonition\}}\s*{w}|^{w}:"
    if not re.search(block("You will learn"), md, re.M): bad.append("no 'You will learn' block")
    if not re.search(block("Prerequisites"), md, re.M): bad.append("no 'Prerequisites'")
    if not re.search(r"^## Summary\b", md, re.M): bad.append("no '## Summary' section")
    m = re.search(r"^## Exercises\b(.*?)(?=^## |\Z)", md, re.M | re.S)
    if not m: bad.append("no '## Exercises' section")
    else:
        body = m.group(1)
        outside = re.sub(r"^(:::+)\{dropdown\}.*?^\1\s*$", "", body, flags=re.M | re.S)   # exercises, not solutions
        n_ex = len(re.findall(r"^(\d+\.\s+\S|\*\*\d+\.|\*\*Exercise\s+\d)", outside, re.M))
        n_sol = len(re.findall(r"^:::+\{dropdown\}\s*Solution", body, re.M))
        if n_ex < 2: bad.append(f"{n_ex} exercise(s) (at least 2)")
        if n_sol < min(max(n_ex, 2), 2): bad.append(f"{n_sol} folded solution(s) (at least 2)")
    if slr and not re.search(r"running example", md, re.I): bad.append("does not mention the running example")
    return bad

@pytest.mark.parametrize("chapter", THEORY)
def test_theory_chapter_is_a_course_chapter(chapter):
    nb = ROOT / "nbs" / f"{chapter}.ipynb"
    bad = course_failures(markdown(nb), slr=chapter in SLR)
    assert not bad, f"{chapter}: " + "; ".join(bad)

def test_running_example_is_defined_once():
    "01_slr defines the running example under its label; the chapters link to it, none redefines the label."
    defs = [nb.stem for nb in sorted((ROOT / "nbs").glob("*.ipynb")) if "(sec-running-example)=" in markdown(nb)]
    assert defs == ["01_slr"], defs
    md = markdown(ROOT / "nbs" / "01_slr.ipynb")
    sec = md.split("(sec-running-example)=", 1)[1][:4000]
    assert re.search(r"SpikedSLR\(\s*(L\s*=\s*)?3,\s*(nu\s*=\s*)?2", sec) or re.search(r"L\s*=\s*3.*\\nu\s*=\s*2", sec, re.S), sec[:400]

def test_the_check_can_fail():
    "The structure check rejects a chapter without the blocks and accepts the template's shape."
    assert len(course_failures("# T\n\nSome text.\n", slr=True)) == 5
    good = ("**You will learn**\n- a\n\n**Prerequisites**: none.\n\nThe running example.\n\n## Summary\n\n- s\n\n"
            "## Exercises\n\n1. **One.** Do.\n2. **Two.** Do.\n\n:::{dropdown} Solution 1\nx\n:::\n\n:::{dropdown} Solution 2\ny\n:::\n")
    assert course_failures(good, slr=True) == []
    one = good.replace("2. **Two.** Do.\n", "")
    assert any("1 exercise" in b for b in course_failures(one))
