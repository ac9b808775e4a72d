"""Generate the book's API reference pages: Sphinx autodoc (numpydoc sections read by napoleon) in MyST pages.

Usage: python tools/api_reference.py [OUT_DIR] [--check] [--check-inventory=objects.inv] [--sphinx=DIR]

Pages: `api_index.md` (every module with its one-line summary and the number of names it documents) and one
page per (sub)package: `api_attnstat.md` (the top-level modules: core, gaussian, sweep, ...), `api_slr.md`,
`api_rmt.md`, `api_book.md`, and `api_NAME.md` for any subpackage added later (each must be listed in
book/_toc.yml; tests/test_api_reference.py checks it). Modules are found by walking the installed package, so
a new module appears without editing this file.

Each page is Markdown (MyST) with one `{eval-rst}` block per module: `py:module`, then an autodoc directive
(`autofunction`, `autoclass` with the class's own public methods, `autodata`) per public name. The text comes
from the docstrings, whose numpydoc `Parameters`/`Returns` sections are written at export time from the
docments comments (`attnstat.docs`; `help()` shows the same text); napoleon renders them. Each object is
described once (no duplicate descriptions under `-W`):

- under the path users import it from: `attnstat.slr.replica_erm` for a name of a lazy subpackage
  (`attnstat.slr`, `attnstat.rmt`: every submodule's `__all__` is importable from the package), else its
  defining module (`attnstat.core.check_real`, `attnstat.book.figures.FigureRecipe`);
- every other public path of the same object (the defining module's `attnstat.slr.replica.replica_erm`,
  the re-exports `attnstat.data_path`, `attnstat.figures.FIGURES`) is an alias in the inventory
  (`attnstat-aliases`, a directive of tools/book_ext.py; classes also get autodoc's `:canonical:`).

So `objects.inv` holds a `py:` entry for every `MODULE.NAME` of every public module's `__all__` (and every
module): other projects' docs link to them with intersphinx. `--check-inventory=PATH` lists the public paths
missing from a built inventory; `--sphinx=DIR` builds the reference pages alone with Sphinx (the book's settings,
tens of seconds: the development loop for docstrings) and checks its inventory. Each module section keeps its label `api-mod-...` and links the chapter
(notebook) that defines and derives it, read from the `# %% ../nbs/NAME.ipynb #id` markers of nbdev.

`--check` prints the public names whose parameters lack a docments comment and exits 1 if there is any.
`tools/build_book.py` calls `write_pages(stage)` when it assembles the book.
"""
from __future__ import annotations
import ast, importlib, inspect, pkgutil, re, sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT, Path(__file__).resolve().parent):   # the package, and book_ext beside this file
    if str(_p) not in sys.path: sys.path.insert(0, str(_p))
PACKAGE = "attnstat"
SKIP_MODULES = {"attnstat._modidx"}
MARKER = re.compile(r"^# %% (?:\.\./)+nbs/([\w.-]+)\.ipynb")
VALUE_CHARS = 80   # a constant whose repr is longer shows its type and length instead

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

def all_names(mod) -> list[str]:
    "The names of a module's `__all__` (once each, in order), without submodules."
    return [n for n in dict.fromkeys(getattr(mod, "__all__", ()) or ()) if not inspect.ismodule(getattr(mod, n, None))]

def _home(obj) -> str | None:
    "The module that defines a class or function (through decorators' wrappers); None for other objects."
    if not (inspect.isclass(obj) or inspect.isfunction(obj)): return None
    return getattr(inspect.unwrap(obj) if inspect.isfunction(obj) else obj, "__module__", None)

def public_names(mod) -> list[str]:
    """The names of `mod.__all__` that `mod` defines: classes and functions whose `__module__` is `mod`, other
    objects (constants, instances, commands) assigned at the top level of its source. Re-exports, such as the lazy
    names of a subpackage, are left out (they are aliases of the object's own entry)."""
    lines = definition_lines(mod)
    out = []
    for name in all_names(mod):
        if not hasattr(mod, name): continue
        home = _home(getattr(mod, name))
        if (home == mod.__name__) if home is not None else name in lines: out.append(name)
    return out

def lazy_package(mod) -> bool:
    "A package whose `__getattr__` imports the submodule of a name on first use (`attnstat.core.lazy_exports`)."
    return hasattr(mod, "__path__") and "__getattr__" in vars(mod)

@dataclass
class Entry:
    "One documented object: where it is defined, the path it is described under, its other public paths."
    module: str      # the defining module
    name: str
    obj: object = field(repr=False)
    path: str        # the described (primary) path
    page: str        # page stem
    aliases: list = field(default_factory=list)

    @property
    def kind(self) -> str:
        if inspect.isclass(self.obj): return "class"
        if inspect.isfunction(self.obj): return "function"
        if hasattr(self.obj, "get_short_help_str") and hasattr(self.obj, "params"): return "command"
        return "data"

def entries(package: str = PACKAGE) -> list[Entry]:
    """Every documented object of `package` (see the module docstring: one entry per object, under the path users
    import it from), with the aliases of every other public `MODULE.NAME` that names it."""
    out, by_path = [], {}
    for mname in module_names(package):
        mod = importlib.import_module(mname)
        pkg_name = ".".join(mname.split(".")[:-1])
        pkg = importlib.import_module(pkg_name) if pkg_name else None
        for n in public_names(mod):
            obj = getattr(mod, n)
            lazy = pkg is not None and lazy_package(pkg) and n in all_names(pkg) and getattr(pkg, n) is obj
            path = f"{pkg_name}.{n}" if lazy and f"{pkg_name}.{n}" not in by_path else f"{mname}.{n}"
            e = Entry(mname, n, obj, path, page_file(page_of(mname)))
            out.append(e); by_path[e.path] = e
    by_id = {}
    for e in out:
        if e.kind in ("class", "function"): by_id.setdefault(id(e.obj), e)
    for path, obj in public_paths(package).items():
        if path in by_path: continue
        e = by_id.get(id(obj)) if (inspect.isclass(obj) or inspect.isfunction(obj)) else None
        if e is None:   # a constant: the entry of the same name holding the same object, nearest the module first
            mname, _, n = path.rpartition(".")
            same = [x for x in out if x.name == n and x.obj is obj]
            same.sort(key=lambda x: (not x.module.startswith(mname + "."), x.module))
            e = same[0] if same else None
        if e is not None and path not in e.aliases: e.aliases.append(path)
    return out

def public_paths(package: str = PACKAGE) -> dict:
    "{`MODULE.NAME`: object} for every name of every public module's `__all__` (submodules left out)."
    out = {}
    for mname in module_names(package):
        mod = importlib.import_module(mname)
        for n in all_names(mod):
            if hasattr(mod, n): out[f"{mname}.{n}"] = getattr(mod, n)
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
        elif isinstance(node, ast.Assign):   # `X = ...` and `X, Y = ...`
            for t in node.targets:
                for n in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                    if isinstance(n, ast.Name): out.setdefault(n.id, node.lineno)
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


def _rst_text(text: str) -> str:
    "One line of plain text safe in reStructuredText (`book_ext.escape_prose`, as the docstrings are escaped)."
    from book_ext import escape_prose
    return escape_prose(" ".join((text or "").split()))

def _value_text(obj) -> str | None:
    "The repr of a constant when it is short, else None."
    text = repr(obj)
    return text if len(text) <= VALUE_CHARS and "\n" not in text else None

def entry_rst(e: Entry, chapter: str | None = None) -> list[str]:
    "The reStructuredText of one entry: an autodoc directive, its extra content, and the directive of its aliases."
    out = []
    if e.kind == "function":
        out += [f".. autofunction:: {e.path}"]
    elif e.kind == "class":
        methods = [k for k, _ in public_methods(e.obj)]
        out += [f".. autoclass:: {e.path}"] + ([f"   :members: {', '.join(methods)}"] if methods else [])
    elif e.kind == "command":   # a click command of the CLI: its help line and options (its docstring is the same help)
        kind = "group" if hasattr(e.obj, "commands") else "command"
        mod_name, _, short = e.path.rpartition(".")
        out += [f".. py:data:: {short}", f"   :module: {mod_name}", f"   :type: click.{kind.capitalize()}", "",
                f"   Command line {kind} (click): {_rst_text(e.obj.get_short_help_str(limit=300))}", ""]
        opts = [p for p in e.obj.params if not getattr(p, "hidden", False)]
        if opts:
            out += ["   Options:", ""]
            for p in opts:
                names = ", ".join(f"``{o}``" for o in (p.opts + p.secondary_opts)) if p.opts else f"``{p.name}``"
                out += [f"   - {names}: {_rst_text(getattr(p, 'help', None) or '') or '(argument)'}"]
            out.append("")
        if hasattr(e.obj, "commands"):
            out += ["   Subcommands: " + ", ".join(f"``{c}``" for c in sorted(e.obj.commands)), ""]
    else:
        value, cls = _value_text(e.obj), type(e.obj)
        out += [f".. autodata:: {e.path}"] + (["   :no-value:"] if value is None else []) + [""]
        if cls.__module__.startswith(PACKAGE + "."):   # an instance of a class of the package (an activation)
            out.append(f"   An instance of :py:class:`{cls.__module__}.{cls.__qualname__}`.")
        elif value is None:   # a long value: its type and size
            what = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
            size = (f" of shape {tuple(e.obj.shape)}" if hasattr(e.obj, "shape") else
                    f" of length {len(e.obj)}" if hasattr(e.obj, "__len__") and not isinstance(e.obj, str) else "")
            out.append(f"   Constant: ``{what}``{size}.")
    if chapter: out += ["", f"   Chapter: :doc:`{chapter}`."]
    out.append("")
    if e.aliases:
        out += [f".. attnstat-aliases:: {e.path}", ""] + [f"   {a}" for a in e.aliases] + [""]
    return out

PAGE_TITLES = {"attnstat": "Foundations and tools (`attnstat`)", "attnstat.slr": "Single-location regression (`attnstat.slr`)",
               "attnstat.rmt": "Nonlinear attention versus ridge (`attnstat.rmt`)",
               "attnstat.book": "The book's machinery (`attnstat.book`)"}

def build_pages(package: str = PACKAGE) -> dict[str, str]:
    "{file stem: MyST Markdown text} of the reference pages."
    all_entries = entries(package)
    by_module: dict[str, list[Entry]] = {}
    for e in all_entries: by_module.setdefault(e.module, []).append(e)
    groups: dict[str, list] = {}
    for name in module_names(package):
        groups.setdefault(page_of(name), []).append(importlib.import_module(name))
    pages, index_rows = {}, []
    for page, mods in groups.items():
        stem = page_file(page)
        title = PAGE_TITLES.get(page, f"`{page}`")
        head = [f"({label(page)}-page)=", f"# {title}", ""]
        pkg = importlib.import_module(page)
        if page != package and lazy_package(pkg):
            lazy = all_names(pkg)
            head += [f"{_esc(summary(pkg))}", "",
                     f"Every name of its submodules is also importable from `{page}` itself ({len(lazy)} names; the "
                     f"submodule is imported on first use): they are described under that path, `{page}.NAME`.", ""]
        elif page != package:
            head += [f"{_esc(summary(pkg))}", ""]
        else:
            head += ["The top-level modules: the shared numerical core, quadrature, fixed points, reports, sweeps, "
                     "figures, the command line and the helpers for notebooks.", ""]
        head += ["Generated from the docstrings when the book is built (Sphinx autodoc and napoleon, "
                 "`tools/api_reference.py`): the signature, the summary, the parameters with the comments written "
                 "beside them in the source (the numpydoc sections that `help()` shows) and the chapter of each "
                 "module. Other projects link here through intersphinx (`objects.inv`).", "",
                 "```{eval-rst}", f".. py:module:: {page}", "```", ""]
        body = []
        for mod in mods:
            mine = by_module.get(mod.__name__, [])
            if mod.__name__ == page and page != package and not mine: continue
            lines = definition_lines(mod)
            chapter = chapter_of(mod, 10**9)
            body += [f"({label(mod.__name__)})=", f"## `{mod.__name__}`", "",
                     _esc(summary(mod)) + (f" Chapter: {{doc}}`{chapter}`." if chapter and chapter != "index" else ""), ""]
            rst = [".. default-role:: py:obj", ""] + ([f".. py:module:: {mod.__name__}", ""] if mod.__name__ != page else [])
            rst += [f".. py:currentmodule:: {mod.__name__}", ""]
            for e in mine:
                ch = chapter_of(mod, lines.get(e.name, 10**9))
                rst += entry_rst(e, ch if ch and ch not in ("index", chapter) else None)
            if not mine: rst += ["No public names.", ""]
            body += ["```{eval-rst}", *rst, "```", ""]
            index_rows.append((mod.__name__, stem, summary(mod), len(mine)))
        pages[stem] = "\n".join(head + body).rstrip() + "\n"
    n_paths = len(public_paths(package))
    idx = ["(api-index)=", "# API reference", "",
           "One page per package level, generated from the docstrings at build time by Sphinx autodoc (numpydoc "
           "sections rendered by napoleon). Each public name shows its signature, its summary, every parameter "
           "with the comment written beside it in the source (`help(name)` shows the same text), its return, and "
           "the chapter that derives it.", "",
           "Other projects' documentation can link to every public name with "
           "[intersphinx](https://www.sphinx-doc.org/en/master/usage/extensions/intersphinx.html): add "
           "`\"attnstat\": (\"<this book's URL>\", None)` to `intersphinx_mapping`, then write "
           "``:func:`attnstat.slr.replica_erm` `` (the defining module's path, `attnstat.slr.replica.replica_erm`, "
           "resolves too).", "",
           "| module | page | documented names | summary |", "|---|---|---|---|"]
    for mod, stem, summ, n in index_rows:
        idx.append(f"| {{ref}}`{mod} <{label(mod)}>` | {{doc}}`{stem}` | {n} | {_esc(summ)} |")
    idx += ["", f"{sum(r[3] for r in index_rows)} public names in {len(index_rows)} modules "
            f"({n_paths} public import paths, with the re-exports)."]
    pages["api_index"] = "\n".join(idx) + "\n"
    return pages

def write_pages(out: Path, package: str = PACKAGE) -> list[Path]:
    "Write the reference pages into folder `out`; returns their paths."
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, text in build_pages(package).items():
        p = out / f"{stem}.md"; p.write_text(text, encoding="utf-8"); paths.append(p)
    return paths

def sphinx_settings(config: Path = ROOT / "book" / "_config.yml") -> tuple[list, dict]:
    "The book's Sphinx extensions for the reference (`extra_extensions`) and its `autodoc_`, `napoleon_`, `python_` keys."
    import yaml
    cfg = yaml.safe_load(Path(config).read_text())["sphinx"]
    keys = {k: v for k, v in cfg.get("config", {}).items() if k.startswith(("autodoc_", "napoleon_", "python_", "add_module"))}
    return list(cfg.get("extra_extensions", [])), keys

def build_reference(out: Path, package: str = PACKAGE) -> tuple[Path, str]:
    """Build the reference pages alone with Sphinx (HTML, the book's settings; a stub page per chapter they link),
    in a few tens of seconds instead of a book build; returns (HTML folder, warnings text)."""
    import io
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils
    src = Path(out) / "src"; src.mkdir(parents=True, exist_ok=True)
    stems = [p.stem for p in write_pages(src, package)]
    linked = set()
    for stem in stems:
        linked |= {a or b for a, b in re.findall(r"\{doc\}`([\w.-]+)`|:doc:`([\w.-]+)`", (src / f"{stem}.md").read_text())}
    for c in sorted(linked - set(stems)): (src / f"{c}.md").write_text(f"# {c}\n")
    (src / "index.md").write_text("# Reference\n\n```{toctree}\n:hidden:\n" + "\n".join(stems + sorted(linked - set(stems))) + "\n```\n")
    extensions, keys = sphinx_settings()
    warnings = io.StringIO()
    with patch_docutils(str(src)), docutils_namespace():   # as sphinx-build: several builds in one process stay apart
        app = Sphinx(str(src), None, str(Path(out) / "html"), str(Path(out) / "doctrees"), "html", freshenv=True,
                     warning=warnings, status=None, confoverrides={"extensions": ["myst_parser", *extensions, "book_ext"],
                                                                 "html_theme": "basic", "project": package, **keys})
        app.build()
    return Path(out) / "html", warnings.getvalue()

def missing_from_inventory(inv_path, package: str = PACKAGE) -> list[str]:
    """The public paths (every module, every `MODULE.NAME` of the `__all__` lists) without a `py:` entry in a built
    `objects.inv` (read as intersphinx reads it)."""
    from sphinx.util.inventory import InventoryFile
    with open(inv_path, "rb") as f: inv = InventoryFile.load(f, "", lambda a, b: b)
    have = {name for kind, objs in inv.items() if kind.startswith("py:") for name in objs}
    return [p for p in list(module_names(package)) + list(public_paths(package)) if p not in have]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--check" in sys.argv:
        bad = all_undocumented()
        for k, v in bad.items(): print(f"{k}: {', '.join(v)}")
        print(f"{sum(map(len, bad.values()))} undocumented parameters in {len(bad)} public names")
        sys.exit(1 if bad else 0)
    sx = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--sphinx=")), None)
    if sx:   # the reference alone, built by Sphinx (development)
        import time
        t0 = time.time()
        html, warnings = build_reference(Path(sx))
        print(warnings or "no warnings")
        print(f"built {html} in {time.time() - t0:.0f} s")
        sys.argv.append(f"--check-inventory={html / 'objects.inv'}")
    inv = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--check-inventory=")), None)
    if inv:
        miss = missing_from_inventory(inv)
        for p in miss: print(f"missing: {p}")
        print(f"{len(miss)} public paths missing from {inv}")
        sys.exit(1 if miss else 0)
    for p in write_pages(Path(args[0]) if args else ROOT / "_api"): print(p)
