"""Sphinx extension for the attnstat book (copied into the staged book by tools/build_book.py).

- Page titles in the browser tab and in the search index are plain text: inline TeX such as
  `$\\alpha$` in a heading becomes `α` there (the page itself still typesets it with MathJax).
- Thebe's scripts (Thebe is off) and duplicate scripts are dropped from the pages.
- MathJax is added to every page (one script per page, whether or not the page has equations),
  so widget labels and Markdown outputs that contain math are typeset everywhere.
"""
import json, re
from pathlib import Path

GREEK = {name: chr(code) for name, code in [
    ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4), ("epsilon", 0x3B5),
    ("varepsilon", 0x3B5), ("zeta", 0x3B6), ("eta", 0x3B7), ("theta", 0x3B8), ("vartheta", 0x3D1),
    ("iota", 0x3B9), ("kappa", 0x3BA), ("lambda", 0x3BB), ("mu", 0x3BC), ("nu", 0x3BD), ("xi", 0x3BE),
    ("pi", 0x3C0), ("rho", 0x3C1), ("sigma", 0x3C3), ("tau", 0x3C4), ("upsilon", 0x3C5),
    ("phi", 0x3C6), ("varphi", 0x3C6), ("chi", 0x3C7), ("psi", 0x3C8), ("omega", 0x3C9),
    ("Gamma", 0x393), ("Delta", 0x394), ("Theta", 0x398), ("Lambda", 0x39B), ("Xi", 0x39E),
    ("Pi", 0x3A0), ("Sigma", 0x3A3), ("Phi", 0x3A6), ("Psi", 0x3A8), ("Omega", 0x3A9)]}
SYMBOLS = {"infty": "∞", "to": "→", "rightarrow": "→", "leftarrow": "←", "le": "≤", "leq": "≤",
           "ge": "≥", "geq": "≥", "neq": "≠", "approx": "≈", "sim": "∼", "times": "×", "cdot": "·",
           "pm": "±", "in": "∈", "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏", "int": "∫",
           "ell": "ℓ", "star": "*", "ast": "*", "top": "ᵀ", "langle": "⟨", "rangle": "⟩",
           "mathbb{E}": "𝔼", "mathbb{R}": "ℝ", "mathbb{P}": "ℙ", "quad": " ", "qquad": " ",
           ",": " ", ";": " ", "!": "", " ": " "}

def tex_to_text(s: str) -> str:
    "Plain-text rendering of a string with inline TeX ($...$ or \\(...\\)): Greek letters and common symbols as Unicode."
    def conv(tex):
        tex = re.sub(r"\\(?:mathrm|mathbf|mathit|mathsf|boldsymbol|text|operatorname|mathcal|hat|bar|tilde)\s*\{([^{}]*)\}",
                     r"\1", tex)
        tex = re.sub(r"\\(mathbb\{[A-Z]\})", lambda m: SYMBOLS.get(m.group(1), m.group(1)[-2]), tex)
        tex = re.sub(r"\\([A-Za-z]+|[,;! ])", lambda m: GREEK.get(m.group(1), SYMBOLS.get(m.group(1), m.group(1))), tex)
        tex = re.sub(r"\^\{?([^{}\s])\}?", lambda m: {"2": "²", "3": "³", "*": "*", "ᵀ": "ᵀ", "T": "ᵀ", "-": "⁻"}.get(m.group(1), "^" + m.group(1)), tex)
        tex = re.sub(r"_\{([^{}]*)\}", r"_\1", tex)
        return tex.replace("{", "").replace("}", "").replace("\\", "")
    s = re.sub(r"\\\((.+?)\\\)", lambda m: conv(m.group(1)), s)
    s = re.sub(r"\$\$?(.+?)\$\$?", lambda m: conv(m.group(1)), s)
    return s

def _page_context(app, pagename, templatename, context, doctree):
    # drop Thebe (disabled in _config.yml, yet sphinx-thebe declares its config twice: a console error)
    # and any script listed twice
    scripts, seen = [], set()
    for js in context.get("script_files", []):
        name, body = str(getattr(js, "filename", js) or ""), str(getattr(js, "attributes", {}).get("body", "") or "")
        if "thebe" in name or "THEBE_JS_URL" in body or (name, body) in seen: continue
        seen.add((name, body)); scripts.append(js)
    if "script_files" in context: context["script_files"] = scripts
    for key in ("title", "pagetitle"):
        if isinstance(context.get(key), str):
            context[key] = tex_to_text(re.sub(r"<[^>]+>", "", context[key]))

def _plain_search_titles(app, exc):
    "Rewrite the titles stored in searchindex.js (shown as search results) without TeX."
    if exc is not None or app.builder.format != "html": return
    path = Path(app.outdir) / "searchindex.js"
    if not path.exists(): return
    text = path.read_text()
    m = re.match(r"(\s*Search\.setIndex\()(.*)(\)\s*;?\s*)$", text, re.S)
    if not m: return
    index = json.loads(m.group(2))
    if isinstance(index.get("titles"), list):
        index["titles"] = [tex_to_text(t) for t in index["titles"]]
    if isinstance(index.get("alltitles"), dict):
        index["alltitles"] = {tex_to_text(k): v for k, v in index["alltitles"].items()}
    path.write_text(m.group(1) + json.dumps(index, separators=(",", ":"), ensure_ascii=False) + m.group(3))

def setup(app):
    app.set_html_assets_policy("always")   # one MathJax script on every page
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _plain_search_titles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
