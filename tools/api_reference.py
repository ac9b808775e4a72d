"""Generate the book's API reference from the code: one Markdown (MyST) page per package level.

Usage: python tools/api_reference.py [OUT_DIR] [--check]

Pages: `api_index.md` (every module with its one-line summary and the number of public names) and one
page per (sub)package: `api_attnstat.md` (the top-level modules: core, gaussian, sweep, ...),
`api_slr.md`, `api_rmt.md`, and `api_NAME.md` for any subpackage added later (each must be listed in
book/_toc.yml; tests/test_api_reference.py checks it). Modules are found by walking the installed
package, so a new module appears without editing this file.

For every public name of a module (its `__all__`, without the names it re-exports from elsewhere):
the signature, the one-line docstring, every parameter with its annotation, default and docments
comment, the return annotation with its comment, and a link to the chapter (notebook) that defines
and derives it, read from the `# %% ../nbs/NAME.ipynb #id` markers that nbdev writes before each
exported cell. The docments are read by `attnstat.docs` (the same parser that writes the
`Parameters` sections into the exported docstrings at export time, which `help()` shows), so the page
and `help()` agree.

`--check` prints the public names whose parameters lack a comment and exits 1 if there is any.
`tools/build_book.py` calls `write_pages(stage)` when it assembles the book.
"""
from __future__ import annotations
import ast, importlib, inspect, pkgutil, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
PACKAGE = "attnstat"
SKIP_MODULES = {"attnstat._modidx"}
MARKER = re.compile(r"^# %% (?:\.\./)+nbs/([\w.-]+)\.ipynb")

def module_names(package: str = PACKAGE) -> list[str]:
    "Every public module and subpackage of `package` (names not starting with `_`), in a stable order."
    pkg = importlib.import_module(package)
    names = [package]
    for m in pkgutil.walk_packages(pkg.__path__, package + "."):
        if any(part.startswith("_") for part in m.name.split(".")) or m.name in SKIP_MODULES: continue
        names.append(m.name)
    return sorted(names, key=lambda n: (page_of(n), n.count(".") > 1 or n == page_of(n), n))

def page_of(module: str) -> str:
    "The page of a module: its subpackage (`attnstat.slr` for `attnstat.slr.replica`), or `attnstat` for a top-level module."
    parts = module.split(".")
    if len(parts) >= 2:
        sub = ".".join(parts[:2])
        spec = importlib.util.find_spec(sub)
        if spec is not None and spec.submodule_search_locations: return sub
    return parts[0]

def page_file(page: str) -> str:
    return "api_" + page.split(".")[-1]

def public_names(mod) -> list[str]:
    "The names of `mod.__all__` defined in `mod` itself (re-exports, such as the lazy names of a subpackage, are left out)."
    out = []
    for name in getattr(mod, "__all__", ()) or ():
        obj = getattr(mod, name, None)
        base = inspect.unwrap(obj) if inspect.isfunction(obj) else obj   # a decorator's wrapper: the function it wraps
        origin = getattr(base, "__module__", None) if (inspect.isclass(obj) or inspect.isfunction(obj)) else None
        if inspect.ismodule(obj) or (origin is not None and origin != mod.__name__): continue
        out.append(name)
    return out

def _source(mod) -> str:
    path = getattr(mod, "__file__", None)
    return Path(path).read_text(encoding="utf-8") if path and path.endswith(".py") else ""

def definition_lines(mod) -> dict:
    "Line of the top-level definition (def, class or assignment) of each name in a module's source."
    src = _source(mod)
    out = {}
    if not src: return out
    for node in ast.parse(src).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): out.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name): out.setdefault(t.id, node.lineno)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name): out.setdefault(node.target.id, node.lineno)
    return out

def chapter_of(mod, line: int) -> str | None:
    "The notebook that exports the cell holding `line` of a module (from nbdev's cell markers)."
    found = None
    for i, text in enumerate(_source(mod).splitlines(), 1):
        if i > line: break
        m = MARKER.match(text)
        if m: found = m.group(1)
    return found

def _is_math(span: str) -> bool:
    "A `$...$` span of a docstring that is TeX (kept, typeset with the book) rather than shell variables such as $HOME."
    body = span[1:-1]
    return bool(body.strip()) and not re.search(r"[A-Z]{3,}", body) and (
        bool(re.search(r"[\\^{}=]", body)) or bool(re.fullmatch(r"[\w\s,.+\-()]*", body)))

def _esc(text: str) -> str:
    "Plain text safe in MyST: no emphasis or HTML from `*`, `<`; code spans in backticks and TeX spans `$...$` are kept."
    parts = re.split(r"(`[^`]*`|\$[^$\n]+\$)", text or "")
    return "".join(p if (p.startswith("`") and p.endswith("`") and len(p) > 1) or (p.startswith("$") and _is_math(p)) else
                   p.replace("\\", "\\\\").replace("$", "\\$").replace("*", "\\*").replace("<", "\\<").replace("_", "\\_")
                   .replace("[", "\\[").replace("|", "\\|")
                   for p in parts)

def summary(obj) -> str:
    "The first line of an object's own docstring (before the Parameters section written at export)."
    doc = inspect.getdoc(obj) or ""
    if doc.startswith(("Parameters\n", "Returns\n")): return ""   # only the sections: no summary
    # the first paragraph (the export wraps a summary that the opening quotes push past 100 columns)
    return " ".join(doc.split("\n\n")[0].split()) if doc.strip() else ""

def param_table(obj) -> tuple[list[dict], dict | None]:
    """The parameters of a callable that a reader passes (no `self`), each {name, kind, annotation, default, doc},
    in signature order, and the docments entry (None when the object has no Python source)."""
    from attnstat.docs import param_docs
    docs = param_docs(obj)
    by_name = {p["name"]: p for p in (docs or {}).get("params", [])}
    try: sig = inspect.signature(obj)
    except (TypeError, ValueError): sig = None
    if inspect.isclass(obj) and docs is not None:
        own_init = any("__init__" in vars(b) for b in obj.__mro__ if b.__module__.startswith(PACKAGE))
        import dataclasses
        if not (own_init or dataclasses.is_dataclass(obj) or hasattr(obj, "_fields")):   # builtin __init__: class attributes
            return [p for p in docs["params"]], docs
    if sig is None: return [dict(p) for p in by_name.values()], docs
    out = []
    for name, p in sig.parameters.items():
        if name in ("self", "cls"): continue
        kind = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**", p.KEYWORD_ONLY: "keyword"}.get(p.kind, "positional")
        d = by_name.get(name, {})
        ann = d.get("annotation") or ("" if p.annotation is p.empty else (p.annotation if isinstance(p.annotation, str) else inspect.formatannotation(p.annotation)))
        default = d.get("default") if d else (None if p.default is p.empty else repr(p.default))
        out.append({"name": name, "kind": kind, "annotation": ann, "default": default, "doc": d.get("doc", "")})
    return out, docs

def signature_text(name: str, params: list[dict], ret: str) -> str:
    "A signature, one parameter per line when it is long."
    items, star_done = [], False
    for p in params:
        if p["kind"] == "keyword" and not star_done: items.append("*"); star_done = True
        if p["kind"] in ("*", "**"): star_done = True
        s = {"*": "*", "**": "**"}.get(p["kind"], "") + p["name"]
        if p["annotation"]: s += ": " + p["annotation"]
        if p["default"] is not None: s += (" = " if p["annotation"] else "=") + p["default"]
        items.append(s)
    tail = f" -> {ret}" if ret else ""
    one = f"{name}({', '.join(items)}){tail}"
    if len(one) <= 88: return one
    return f"{name}(\n" + "".join(f"    {s},\n" for s in items) + f"){tail}"

def foreign_override(cls, name: str) -> bool:
    "Whether method `name` of `cls` overrides one of a base class from another library (its parameters are that library's API)."
    return any(name in vars(b) for b in cls.__mro__[1:] if not b.__module__.startswith(PACKAGE) and b is not object)

def public_methods(cls) -> list:
    "(name, function) of the public methods a class defines, without the overrides of another library's methods."
    return [(k, v) for k, v in vars(cls).items() if not k.startswith("_") and inspect.isfunction(v) and not foreign_override(cls, k)]

def undocumented(obj) -> list[str]:
    "Parameters of a public callable without a docments comment (empty for objects without parameters)."
    if not callable(obj) or not (inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismethod(obj)): return []
    params, docs = param_table(obj)
    if docs is None: return []
    return [p["name"] for p in params if not p["doc"]]

def label(module: str, name: str = "") -> str:
    """The target of a module (`api-mod-...`) or of a public name (`api-...`); Sphinx lowercases targets, so a name
    with capitals gets the positions of its capitals appended (`Activation` and `activation` differ)."""
    if not name: return "api-mod-" + module.replace(".", "-").replace("_", "-").lower()
    caps = "".join(f"{i:x}" for i, ch in enumerate(name) if ch.isupper())
    return "api-" + (module + "." + name).replace(".", "-").replace("_", "-").lower() + (f"-c{caps}" if caps else "")

def describe(mod, name: str, lines: dict, level: str = "###") -> str:
    "The section of one public name."
    obj = getattr(mod, name)
    chapter = chapter_of(mod, lines.get(name, 10**9))
    where = f" Chapter: {{doc}}`{chapter}`." if chapter and chapter != "index" else ""
    out = [f"({label(mod.__name__, name)})=", f"{level} `{name}`", ""]
    if hasattr(obj, "get_short_help_str") and hasattr(obj, "params"):   # a click command or group of the CLI
        out += [f"*command* (`{type(obj).__name__}`). {_esc(obj.get_short_help_str(limit=300))}{where}", ""]
        opts = [p for p in obj.params if not getattr(p, "hidden", False)]
        if opts:
            out += ["**Options**", ""]
            for p in opts:
                names = ", ".join(f"`{o}`" for o in (p.opts + p.secondary_opts)) if p.opts else f"`{p.name}`"
                out.append(f"- {names}: {_esc(getattr(p, 'help', None) or '') or '(argument)'}")
            out.append("")
        if hasattr(obj, "commands"):
            out += ["**Subcommands**: " + ", ".join(f"`{c}`" for c in sorted(obj.commands)), ""]
        return "\n".join(out)
    if inspect.isclass(obj) or callable(obj):
        params, docs = param_table(obj)
        is_fields = inspect.isclass(obj) and params and all(p["kind"] == "field" for p in params)
        ret = (docs or {}).get("return_annotation", "") if not inspect.isclass(obj) else ""
        if docs is not None and not is_fields:
            sig = signature_text(name, params, ret)
            out += ["```python", ("class " if inspect.isclass(obj) else "") + sig, "```", ""]
        kind = "class" if inspect.isclass(obj) else ("function" if inspect.isfunction(obj) else type(obj).__name__)
        out += [f"*{kind}*. {_esc(summary(obj))}{where}", ""]
        if params:
            out += ["**Fields**" if is_fields else "**Parameters**", ""]
            for p in params:
                star = {"*": "\\*", "**": "\\*\\*"}.get(p["kind"], "")
                bits = [f"`{p['annotation']}`"] if p["annotation"] else []
                if p["default"] is not None: bits.append(f"default `{p['default']}`")
                if p["kind"] == "keyword": bits.append("keyword only")
                extra = f" ({', '.join(bits)})" if bits else ""
                out.append(f"- **{star}{_esc(p['name'])}**{extra}: {_esc(p['doc']) or '*(undocumented)*'}")
            out.append("")
        if docs and (docs.get("returns") or ret):
            out += [f"**Returns** {('`' + ret + '`') if ret else ''}{': ' + _esc(docs['returns']) if docs.get('returns') else ''}", ""]
        if inspect.isclass(obj):
            methods = public_methods(obj)
            if methods:
                out += ["**Methods**", ""]
                for k, v in methods:
                    mp, md = param_table(v)
                    sig = signature_text(k, mp, (md or {}).get("return_annotation", ""))
                    pdoc = "; ".join(f"`{p['name']}`: {_esc(p['doc']) or '*(undocumented)*'}" for p in mp)
                    out.append(f"- `{sig if len(sig) <= 88 else k + '(...)'}`: {_esc(summary(v))}" + (f" Parameters: {pdoc}." if pdoc else ""))
                out.append("")
    else:
        text = repr(obj)
        shown = text if len(text) <= 80 else f"{type(obj).__name__} of length {len(obj)}" if hasattr(obj, "__len__") else type(obj).__name__
        out += [f"*constant* (`{type(obj).__name__}`): `{shown}`.{where}", ""]
    return "\n".join(out)

PAGE_TITLES = {"attnstat": "Foundations and tools (`attnstat`)", "attnstat.slr": "Single-location regression (`attnstat.slr`)",
               "attnstat.rmt": "Nonlinear attention versus ridge (`attnstat.rmt`)"}

def build_pages(package: str = PACKAGE) -> dict[str, str]:
    "{file stem: Markdown text} of the reference pages."
    groups: dict[str, list] = {}
    for name in module_names(package):
        groups.setdefault(page_of(name), []).append(importlib.import_module(name))
    pages, index_rows = {}, []
    for page, mods in groups.items():
        stem = page_file(page)
        title = PAGE_TITLES.get(page, f"`{page}`")
        head = [f"({label(page)}-page)=", f"# {title}", ""]
        pkg = importlib.import_module(page)
        if page != package:
            lazy = sorted(getattr(pkg, "__all__", []))
            head += [f"{_esc(summary(pkg))}", "",
                     f"Every name below is also importable from `{page}` itself ({len(lazy)} names; the submodule "
                     f"is imported on first use).", ""]
        else:
            head += ["The top-level modules: the shared numerical core, quadrature, fixed points, reports, sweeps, "
                     "figures, the command line and the helpers for notebooks.", ""]
        head += ["Generated from the code when the book is built (`tools/api_reference.py`): signatures, the one-line "
                 "docstrings, the parameters with the comments written beside them in the source (the same text "
                 "that `help()` shows), and the chapter that derives each name.", ""]
        body = []
        for mod in mods:
            names = public_names(mod)
            if mod.__name__ == page and page != package and not names: continue
            lines = definition_lines(mod)
            chapter = chapter_of(mod, 10**9)
            body += [f"({label(mod.__name__)})=", f"## `{mod.__name__}`", "",
                     _esc(summary(mod)) + (f" Chapter: {{doc}}`{chapter}`." if chapter and chapter != "index" else ""), ""]
            if not names: body += ["No public names.", ""]
            for n in names: body.append(describe(mod, n, lines))
            index_rows.append((mod.__name__, stem, summary(mod), len(names)))
        pages[stem] = "\n".join(head + body).rstrip() + "\n"
    idx = ["(api-index)=", "# API reference", "",
           "One page per package level, generated from the code at build time. Each public name lists its "
           "signature, its one-line docstring, every parameter with the comment written beside it in the "
           "source (`help(name)` shows the same text as a numpydoc `Parameters` section), its return and the "
           "chapter that derives it.", "",
           "| module | page | public names | summary |", "|---|---|---|---|"]
    for mod, stem, summ, n in index_rows:
        idx.append(f"| {{ref}}`{mod} <{label(mod)}>` | {{doc}}`{stem}` | {n} | {_esc(summ)} |")
    idx += ["", f"{sum(r[3] for r in index_rows)} public names in {len(index_rows)} modules."]
    pages["api_index"] = "\n".join(idx) + "\n"
    return pages

def write_pages(out: Path, package: str = PACKAGE) -> list[Path]:
    "Write the reference pages into folder `out`; returns their paths."
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, text in build_pages(package).items():
        p = out / f"{stem}.md"; p.write_text(text, encoding="utf-8"); paths.append(p)
    return paths

def all_undocumented(package: str = PACKAGE) -> dict[str, list[str]]:
    "{module.name: [parameters without a comment]} over every public callable (and the public methods of classes)."
    bad = {}
    for mname in module_names(package):
        mod = importlib.import_module(mname)
        for n in public_names(mod):
            obj = getattr(mod, n)
            miss = undocumented(obj)
            if miss: bad[f"{mname}.{n}"] = miss
            if inspect.isclass(obj):
                for k, v in public_methods(obj):
                    miss = undocumented(v)
                    if miss: bad[f"{mname}.{n}.{k}"] = miss
    return bad

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--check" in sys.argv:
        bad = all_undocumented()
        for k, v in bad.items(): print(f"{k}: {', '.join(v)}")
        print(f"{sum(map(len, bad.values()))} undocumented parameters in {len(bad)} public names")
        sys.exit(1 if bad else 0)
    for p in write_pages(Path(args[0]) if args else ROOT / "_api"): print(p)
