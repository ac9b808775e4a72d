"""Sphinx extension for the attnstat book (copied into the staged book by tools/build_book.py).

- Page titles in the browser tab and in the search index are plain text: inline TeX such as
  `$\\alpha$` in a heading becomes `α` there (the page itself still typesets it with MathJax).
- Thebe's scripts (Thebe is off) and duplicate scripts are dropped from the pages.
- MathJax is added to every page (one script per page, whether or not the page has equations),
  so widget labels and Markdown outputs that contain math are typeset everywhere.
- API reference (tools/api_reference.py): the `attnstat-aliases` directive enters the other public paths of an
  object described just above it (`attnstat.slr.replica.replica_erm` for `attnstat.slr.replica_erm`) into the
  Python domain as aliases, so `objects.inv` resolves every import path of every public name; a constant or an
  instance documented by autodoc without a docstring of its own shows no docstring of its type; the docstrings'
  prose is plain text (the docments comments and one-line summaries of the notebooks), so its characters that
  reStructuredText reads as markup (`|x|`, `*args`, `lambda_`, a backslash) are escaped before napoleon reads the
  numpydoc sections; code in backticks, the sections' `name : type` lines and doctest blocks are left as they are.
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

def _aliases_directive():
    from sphinx.util import logging
    from sphinx.util.docutils import SphinxDirective
    logger = logging.getLogger(__name__)

    class AliasesDirective(SphinxDirective):
        """`.. attnstat-aliases:: TARGET` with one alias path per content line: each alias resolves (cross-references,
        intersphinx) to the description of TARGET, which must precede the directive on the same page."""
        required_arguments = 1
        has_content = True

        def run(self):
            domain = self.env.get_domain("py")
            target = self.arguments[0]
            entry = domain.objects.get(target)
            if entry is None or entry.docname != self.env.docname:
                logger.warning("attnstat-aliases: %s is not described above on this page", target, location=self.get_location())
                return []
            for alias in (line.strip() for line in self.content):
                if not alias: continue
                other = domain.objects.get(alias)
                if other is not None:   # autodoc's :canonical: of a class, or a clash
                    if (other.docname, other.node_id) != (entry.docname, entry.node_id):
                        logger.warning("attnstat-aliases: %s already names another object", alias, location=self.get_location())
                    continue
                domain.note_object(alias, entry.objtype, entry.node_id, aliased=True, location=self.get_location())
            return []
    return AliasesDirective

SECTIONS = {"Parameters", "Other Parameters", "Returns", "Yields", "Receives", "Raises", "Warns", "Warnings",
            "Attributes", "Methods", "See Also", "Notes", "References", "Examples", "Keyword Arguments"}
SPEC_SECTIONS = {"Parameters", "Other Parameters", "Returns", "Yields", "Receives", "Raises", "Warns", "Attributes",
                 "Methods", "Keyword Arguments"}

def escape_prose(text: str) -> str:
    """Plain text as reStructuredText: `\\ * | _ [ ]` escaped outside code spans in backticks, and `--` (a command-line
    option, not an en dash for the smart-quotes transform)."""
    parts = re.split(r"(`[^`]+`)", text)
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1 else
                   re.sub(r"([\\*|_\[\]])", r"\\\1", p).replace("--", "-\\-") for p in parts)

def escape_docstring(lines: list) -> list:
    """The lines of a plain-text numpydoc docstring with the prose escaped for reStructuredText (`escape_prose`):
    section headers and underlines, the `name : type` lines of the parameter-like sections, the names of the See
    Also entries and doctest blocks (`>>>` up to a blank line) are kept."""
    out, section, doctest = [], None, False
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() in SECTIONS and re.fullmatch(r"\s*-{3,}\s*", nxt):
            section, doctest = line.strip(), False; out.append(line); continue
        if re.fullmatch(r"\s*-{3,}\s*", line) and out and out[-1].strip() in SECTIONS:
            out.append(line); continue
        if line.lstrip().startswith(">>>"): doctest = True
        elif not line.strip(): doctest = False
        top = line[:1] not in ("", " ", "\t")   # a `name : type` line (or a See Also entry), not its description
        if section == "See Also" and top and " : " in line:   # `func : description`: the names stay references
            name, _, desc = line.partition(" : ")
            out.append(f"{name} : {escape_prose(desc)}"); continue
        keep = doctest or (top and section in SPEC_SECTIONS | {"See Also"})
        out.append(line if keep else escape_prose(line))
    return out

def _escape_docstring(app, what, name, obj, options, lines):
    lines[:] = escape_docstring(lines)

def _no_type_docstring(app, what, name, obj, options, lines):
    "A constant or an instance without a docstring of its own: drop the docstring of its type that autodoc shows."
    import inspect
    if what not in ("data", "attribute") or inspect.isclass(obj) or inspect.isroutine(obj): return
    if "__doc__" in (getattr(obj, "__dict__", None) or {}): return   # set on the object itself
    from sphinx.errors import PycodeError
    from sphinx.pycode import ModuleAnalyzer
    modname, _, attr = name.rpartition(".")
    try: comment = ("", attr) in ModuleAnalyzer.for_module(modname).find_attr_docs()   # a `#:` comment
    except PycodeError: comment = False
    if not comment: lines.clear()

def setup(app):
    app.setup_extension("sphinx.ext.autodoc")   # the API reference's event below
    app.add_directive("attnstat-aliases", _aliases_directive())
    app.connect("autodoc-process-docstring", _no_type_docstring, priority=300)
    app.connect("autodoc-process-docstring", _escape_docstring, priority=400)   # before napoleon (500)
    app.set_html_assets_policy("always")   # one MathJax script on every page
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _plain_search_titles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
