"""The API reference (tools/api_reference.py: Sphinx autodoc pages, objects.inv for intersphinx) and help()
(attnstat.docs, at export time): every public name described once and resolvable, every parameter documented,
and the sections written in the modules' files, not at import."""
import importlib, inspect, re, shutil, subprocess, sys, textwrap
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import api_reference as ar  # noqa: E402
import book_ext  # noqa: E402
from attnstat.docs import param_docs, numpydoc_section, source_docments  # noqa: E402

BOOK_INV = ROOT / "book" / "_build" / "html" / "objects.inv"

@pytest.fixture(scope="module")
def pages():
    return ar.build_pages()

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    "The reference pages built alone by Sphinx with the book's settings (about 30 s): (HTML folder, warnings)."
    return ar.build_reference(tmp_path_factory.mktemp("reference"))

def test_every_module_is_found():
    names = ar.module_names()
    # walking the package finds every module file (a module added today appears without editing the tool)
    files = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "attnstat").rglob("*.py")}
    files = {f[: -len(".__init__")] if f.endswith(".__init__") else f for f in files}
    expected = {f for f in files if not any(part.startswith("_") for part in f.split(".")) and f not in ar.SKIP_MODULES}
    assert set(names) == expected

def test_every_public_name_described_once(pages):
    "Every object of a public `__all__` has one autodoc directive (under the path users import) and aliases for its other paths."
    text = "\n".join(pages.values())
    entries = ar.entries()
    described = [e.path for e in entries]
    assert len(described) == len(set(described)) and len(described) > 300
    for e in entries:
        directive = {"function": "autofunction", "class": "autoclass", "data": "autodata"}.get(e.kind)
        assert (f".. {directive}:: {e.path}\n" in text) if directive else f".. py:data:: {e.name}\n   :module: {e.path.rpartition('.')[0]}\n" in text, e.path
        for a in e.aliases: assert f"   {a}\n" in text.split(f".. attnstat-aliases:: {e.path}\n", 1)[1].split("\n..", 1)[0], (e.path, a)
    # every MODULE.NAME of every __all__ is described or an alias of the same object's description
    paths = ar.public_paths()
    covered = {e.path: e.obj for e in entries} | {a: e.obj for e in entries for a in e.aliases}
    assert set(paths) == set(covered), set(paths) ^ set(covered)
    for p, obj in paths.items(): assert covered[p] is obj, p
    # a lazy subpackage's name is described under the subpackage; the defining module's path is its alias
    e = next(e for e in entries if e.name == "replica_erm")
    assert (e.path, e.module, e.aliases) == ("attnstat.slr.replica_erm", "attnstat.slr.replica", ["attnstat.slr.replica.replica_erm"])
    e = next(e for e in entries if e.name == "data_path")   # a top-level module's name: its module, `attnstat.data_path` an alias
    assert (e.path, e.aliases) == ("attnstat.data.data_path", ["attnstat.data_path"])
    assert f"{len(entries)} public names in " in pages["api_index"]

def test_no_parameter_undocumented():
    bad = ar.all_undocumented()
    assert bad == {}, "parameters without a docments comment:\n" + "\n".join(f"{k}: {', '.join(v)}" for k, v in bad.items())

def test_pages_in_toc(pages):
    toc = (ROOT / "book" / "_toc.yml").read_text()
    listed = set(re.findall(r"file:\s*(\S+)", toc))
    assert set(pages) <= listed, set(pages) - listed

def test_page_content(pages):
    "A page: the module sections with their labels and chapters, autodoc directives, the class's own public methods."
    slr = pages["api_slr"]
    sec = slr.split("## `attnstat.slr.replica`")[1].split("\n## ")[0]
    assert sec.startswith("\n\n") and "{doc}`02a_slr_replica`" in sec and "(api-mod-attnstat-slr-replica)=" in slr
    assert ".. py:module:: attnstat.slr.replica\n" in sec and ".. autofunction:: attnstat.slr.replica_erm\n" in sec
    assert ".. autoclass:: attnstat.slr.ReplicaOptions\n" in sec
    act = slr.split(".. autoclass:: attnstat.slr.Activation\n")[1].split("\n\n")[0]
    assert act.startswith("   :members: ") and "value" in act and "predict" in act
    text = "\n".join(pages.values())
    assert ".. autoclass:: attnstat.book.figures.FigureRecipe\n" in text
    # a constant shows its value when short, else its type and size; a command its options
    assert ".. autodata:: attnstat.slr.softmax\n\n   An instance of :py:class:`attnstat.slr.activations.NormalisedActivation`." in text
    assert ".. autodata:: attnstat.slr.ACTIVATIONS\n   :no-value:\n\n   Constant: ``dict`` of length " in text
    cmd = text.split(".. py:data:: replica\n   :module: attnstat.cli\n")[1].split("\n.. ")[0]
    assert "   :type: click.Command" in cmd and "``--alpha``" in cmd and "Options:" in cmd

def test_sphinx_builds_the_reference_without_warnings(reference):
    "The pages build with the book's Sphinx settings (autodoc, napoleon) without a warning: -W holds in the book."
    html, warnings = reference
    assert warnings.strip() == "", warnings[:5000]
    page = (html / "api_slr.html").read_text()
    assert 'id="attnstat.slr.replica_erm"' in page and "sample ratio N/D" in page   # napoleon's parameter list
    assert 'id="attnstat.slr.replica.replica_erm"' not in page   # one description; the defining path is an alias
    # light pages: no page over 1 MB (autodoc markup of ~200 names)
    sizes = {p.name: p.stat().st_size for p in html.glob("api_*.html")}
    assert len(sizes) == len(ar.build_pages()) and max(sizes.values()) < 1_000_000, sizes

def _inventory(path):
    from sphinx.util.inventory import InventoryFile
    with open(path, "rb") as f: return InventoryFile.load(f, "https://example.org/attnstat/", lambda a, b: a + b)

def _check_inventory(path):
    inv = _inventory(path)
    py = {name: (kind, v) for kind, objs in inv.items() if kind.startswith("py:") for name, v in objs.items()}
    missing = [p for p in [*ar.module_names(), *ar.public_paths()] if p not in py]
    assert missing == [], missing
    assert py["attnstat.slr.replica_erm"][0] == "py:function" and py["attnstat.slr.SpikedSLR"][0] == "py:class"
    # the defining module's path points at the same description
    assert py["attnstat.slr.replica.replica_erm"][1][2] == py["attnstat.slr.replica_erm"][1][2]
    assert py["attnstat.slr.replica_erm"][1][2].endswith("api_slr.html#attnstat.slr.replica_erm")
    assert py["attnstat.data_path"][1][2].endswith("api_attnstat.html#attnstat.data.data_path")
    return inv

def test_inventory_resolves_every_public_name(reference):
    "objects.inv has a py: entry for every module and every MODULE.NAME of every public __all__."
    inv = _check_inventory(reference[0] / "objects.inv")
    assert len(inv["py:function"]) > 300 and len(inv["py:class"]) > 100 and len(inv["py:data"]) > 50

def test_intersphinx_links_from_another_project(reference, tmp_path):
    "Another project's docs link to attnstat's names through intersphinx, by the package path and the defining path."
    import io
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils
    inv = reference[0] / "objects.inv"
    paths = ar.public_paths()
    src = tmp_path / "other"; src.mkdir()
    refs = ["- :py:func:`attnstat.slr.replica_erm`", "- :py:func:`attnstat.slr.replica.replica_erm`",
            "- :py:class:`attnstat.rmt.AttentionTheory`", "- :py:mod:`attnstat.slr`"]
    refs += [f"- :py:obj:`{p}`" for p in paths]
    (src / "index.rst").write_text("Other project\n=============\n\n" + "\n".join(refs) + "\n")
    warnings = io.StringIO()
    with patch_docutils(str(src)), docutils_namespace():
        app = Sphinx(str(src), None, str(tmp_path / "out"), str(tmp_path / "dt"), "html", freshenv=True, warning=warnings,
                     status=None, confoverrides={"extensions": ["sphinx.ext.intersphinx"], "nitpicky": True, "project": "other",
                                                 "intersphinx_mapping": {"attnstat": ("https://example.org/attnstat/", str(inv))}})
        app.build()
    assert warnings.getvalue().strip() == "", warnings.getvalue()[:3000]
    html = (tmp_path / "out" / "index.html").read_text()
    # two :func: roles and two :obj: (the package's and the defining module's paths) reach the one description
    assert html.count('href="https://example.org/attnstat/api_slr.html#attnstat.slr.replica_erm"') == 4
    assert html.count('href="https://example.org/attnstat/') >= len(refs)

@pytest.mark.skipif(not (BOOK_INV).exists(), reason="book not built (make book)")
def test_built_book_inventory():
    "The book's own objects.inv (`make book`) resolves every public name too."
    _check_inventory(BOOK_INV)

def test_docstring_prose_escaped():
    "Plain-text docstrings read as reStructuredText: markup characters escaped, the numpydoc structure and code kept."
    doc = ["Sum of |x|, see `f_1` and --fresh.", "", "Parameters", "----------", "**kw : dict | None",
           "    the *rest* of lambda_", "", "See Also", "--------", "g_2 : the |y| form", "h_3, k_4",
           "", "Examples", "--------", ">>> f(*a)", "|1|", "", "done_"]
    assert book_ext.escape_docstring(doc) == [
        "Sum of \\|x\\|, see `f_1` and -\\-fresh.", "", "Parameters", "----------", "**kw : dict | None",
        "    the \\*rest\\* of lambda\\_", "", "See Also", "--------", "g_2 : the \\|y\\| form", "h_3, k_4",
        "", "Examples", "--------", ">>> f(*a)", "|1|", "", "done\\_"]

def _public_callables():
    for mname in ar.module_names():
        mod = importlib.import_module(mname)
        for n in ar.public_names(mod):
            obj = getattr(mod, n)
            if inspect.isfunction(obj) or inspect.isclass(obj): yield f"{mname}.{n}", obj

def _words(text: str) -> str:
    "Whitespace-normalised text (the sections in the files are wrapped at 100 columns)."
    return " ".join(text.split())

def test_help_shows_the_same_parameter_text():
    "The sections written at export time (from the source) are those of the live objects' docments."
    checked = 0
    for name, obj in _public_callables():
        docs = param_docs(obj)
        if docs is None: continue
        section = numpydoc_section(docs)
        if not section: continue
        doc = inspect.getdoc(obj) or ""
        assert _words(section) in _words(doc), name
        for p in docs["params"]:
            if p["doc"] and p["name"] not in ("self", "cls"): assert _words(p["doc"]) in _words(doc), (name, p["name"])
        checked += 1
    assert checked > 200

def test_no_import_hook_and_docstrings_in_the_files():
    "help() has the Parameters section however the function is reached, with no finder of attnstat installed."
    code = textwrap.dedent("""
        import pydoc, sys
        import attnstat
        assert not [f for f in sys.meta_path if 'attnstat' in type(f).__module__], sys.meta_path
        from attnstat.slr.replica import replica_erm
        import attnstat.slr, attnstat.rmt
        assert not [f for f in sys.meta_path if 'attnstat' in type(f).__module__], sys.meta_path
        t1 = pydoc.render_doc(replica_erm, renderer=pydoc.plaintext)
        t2 = pydoc.render_doc(attnstat.slr.replica_erm, renderer=pydoc.plaintext)
        t3 = pydoc.render_doc(attnstat.rmt.attention_theory, renderer=pydoc.plaintext)
        t4 = pydoc.render_doc(attnstat.slr.population_risk, renderer=pydoc.plaintext)
        for t in (t1, t2): assert "Parameters" in t and "alpha : float" in t and "sample ratio N/D" in t, t[:2000]
        assert "Parameters" in t3 and "Parameters" in t4
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
    # the section is in the module's file (written by nbdev-export through attnstat.docs.DocstringProc)
    src = (ROOT / "attnstat" / "slr" / "replica.py").read_text(encoding="utf-8")
    doc = src.split("\ndef replica_erm(")[1].split('"""')[1]   # the docstring literal in the file
    assert "\n\n    Parameters\n    ----------\n    model : " in doc, doc[:500]

def test_every_module_already_documented(tmp_path):
    "Writing the sections again changes no file: the committed modules hold what the export writes."
    from attnstat.docs import write_docstrings
    copy = tmp_path / "attnstat"
    shutil.copytree(ROOT / "attnstat", copy, ignore=shutil.ignore_patterns("__pycache__", "_modidx.py"))
    changed = [f for f in sorted(copy.rglob("*.py"))
               if write_docstrings(f) and not f.name.startswith("_")]
    assert changed == [], f"modules without their numpydoc sections (run the export): {changed}"

def test_export_processor_configured():
    "pyproject.toml names the export processor, so a bare nbdev-export writes the sections too."
    import tomllib
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["nbdev"]
    assert "attnstat.docs:DocstringProc" in cfg["export_procs"]

def test_new_module_is_picked_up(tmp_path, monkeypatch):
    "A package with a module that did not exist when the tool was written: pages and help() cover it."
    from attnstat.docs import write_docstrings
    pkg = tmp_path / "newpkg"; (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"A new package."\n')
    (pkg / "sub" / "__init__.py").write_text('"A new subpackage."\n__all__ = []\n')
    (pkg / "sub" / "dynamics.py").write_text(textwrap.dedent('''
        "Dynamics of a toy."
        __all__ = ["flow"]
        # %% ../../nbs/09_dynamics.ipynb #abc
        def flow(t:float, # time
                 rate:float=1.0, # decay rate
                ) -> float: # the value at time t
            "Exponential decay."
            return rate * t
    '''))
    assert write_docstrings(pkg) == 1   # what the export does for a notebook's module
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        pages = ar.build_pages("newpkg")
        assert set(pages) == {"api_newpkg", "api_sub", "api_index"}
        sec = pages["api_sub"]
        assert ".. autofunction:: newpkg.sub.dynamics.flow\n" in sec and "{doc}`09_dynamics`" in sec
        html, warnings = ar.build_reference(tmp_path / "ref", "newpkg")   # what autodoc makes of it
        assert warnings.strip() == "", warnings
        page = (html / "api_sub.html").read_text()
        assert 'id="newpkg.sub.dynamics.flow"' in page and "Exponential decay." in page and "decay rate" in page
        assert "newpkg.sub.dynamics.flow" in _inventory(html / "objects.inv")["py:function"]
        mod = importlib.import_module("newpkg.sub.dynamics")
        doc = inspect.getdoc(mod.flow)
        assert "rate : float, default 1.0\n    decay rate" in doc and "Returns\n-------\nfloat\n    the value at time t" in doc
    finally:
        for m in [m for m in sys.modules if m.startswith("newpkg")]: del sys.modules[m]

def test_parser_agrees_with_fastcore():
    "attnstat.docs reads the same comments as fastcore's docments (the reference implementation, a dev tool)."
    docments = pytest.importorskip("fastcore.docments").docments
    compared = 0
    for name, obj in _public_callables():
        if not inspect.isfunction(obj): continue
        ours = {p["name"]: p["doc"] for p in (param_docs(obj) or {}).get("params", [])}
        try: theirs = docments(inspect.unwrap(obj))
        except Exception: continue
        for k, v in theirs.items():
            if k == "return" or v is None or k not in ours: continue
            # fastcore falls back on the numpydoc section that attnstat.docs wrote, where the comment is missing
            # (fastcore drops a comment's continuation lines; attnstat.docs appends them)
            want = "" if v.strip() == "(undocumented)" else v.strip()
            assert (ours[k] == "") if not want else ours[k].startswith(want), (name, k, ours[k], v)
            compared += 1
    assert compared > 800

def test_parser_rules():
    src = textwrap.dedent('''
        def f(a, b:int=2, # only b
              # c, from the line above
              c=None, *args, # the rest
              **kw) -> dict: # what comes back
            pass
    ''')
    d = source_docments(src)["f"]
    assert [(p["name"], p["doc"]) for p in d["params"]] == [("a", ""), ("b", "only b"), ("c", "c, from the line above"),
                                                             ("args", "the rest"), ("kw", "")]
    assert d["returns"] == "what comes back" and d["return_annotation"] == "dict"

def test_one_seed_convention():
    "Every public random function takes `seed`; the old names (`mc_seed`, `seeds`) are deprecated aliases that still work."
    import warnings
    old_names = {"mc_seed", "seeds"}
    offenders, aliased = [], []
    for name, obj in _public_callables():
        if not inspect.isfunction(obj): continue
        params = set(inspect.signature(obj).parameters)
        if params & old_names: offenders.append(name)
        renames = getattr(obj, "__renamed_params__", {})
        if renames: aliased.append(name); assert set(renames.values()) <= params, name
    assert offenders == [], f"public functions with an old seed name: {offenders}"
    assert len(aliased) >= 6, aliased
    import attnstat.slr as slr
    from attnstat.slr.models import SpikedSLR
    m = SpikedSLR(2, 2.0)
    for f in (slr.bayes_optimal_error, importlib.import_module("attnstat.slr.bayes").bayes_optimal_error):  # lazy and direct
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            old = f(m, 1.5, n_mc=500, mc_seed=3, n_blocks=0)
        assert [x.category for x in w if x.category is DeprecationWarning] == [DeprecationWarning]
        assert "`mc_seed` is deprecated, use `seed`" in str(w[0].message) and w[0].filename == __file__   # points at the caller
        assert old.error == f(m, 1.5, n_mc=500, seed=3, n_blocks=0).error
    with pytest.raises(TypeError, match="got both"):
        slr.bayes_optimal_error(m, 1.5, n_mc=500, mc_seed=3, seed=3)
