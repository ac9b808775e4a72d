"""The API reference (tools/api_reference.py) and help() (attnstat.docs, at export time): every public name
listed, every parameter documented, and the sections written in the modules' files, not at import."""
import importlib, inspect, re, shutil, subprocess, sys, textwrap
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import api_reference as ar  # noqa: E402
from attnstat.docs import param_docs, numpydoc_section, source_docments  # noqa: E402

@pytest.fixture(scope="module")
def pages():
    return ar.build_pages()

def test_every_module_is_found():
    names = ar.module_names()
    # walking the package finds every module file (a module added today appears without editing the tool)
    files = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "attnstat").rglob("*.py")}
    files = {f[: -len(".__init__")] if f.endswith(".__init__") else f for f in files}
    expected = {f for f in files if not any(part.startswith("_") for part in f.split(".")) and f not in ar.SKIP_MODULES}
    assert set(names) == expected

def test_no_public_name_missing(pages):
    text = "\n".join(pages.values())
    missing = []
    for mname in ar.module_names():
        mod = importlib.import_module(mname)
        for n in ar.public_names(mod):
            if f"({ar.label(mname, n)})=" not in text: missing.append(f"{mname}.{n}")
        # the re-exports left out are defined (and listed) in another module of the package
        for n in set(getattr(mod, "__all__", [])) - set(ar.public_names(mod)):
            obj = getattr(mod, n)
            home = getattr(inspect.unwrap(obj) if inspect.isfunction(obj) else obj, "__module__", "")
            assert home.startswith("attnstat") and home != mname, (mname, n, home)
            assert f"({ar.label(home, n)})=" in text or inspect.ismodule(obj), (mname, n, home)
    assert missing == []
    n_names = sum(len(ar.public_names(importlib.import_module(m))) for m in ar.module_names())
    assert n_names > 300 and f"{n_names} public names" in pages["api_index"]

def test_no_parameter_undocumented():
    bad = ar.all_undocumented()
    assert bad == {}, "parameters without a docments comment:\n" + "\n".join(f"{k}: {', '.join(v)}" for k, v in bad.items())

def test_pages_in_toc(pages):
    toc = (ROOT / "book" / "_toc.yml").read_text()
    listed = set(re.findall(r"file:\s*(\S+)", toc))
    assert set(pages) <= listed, set(pages) - listed

def test_page_content(pages):
    slr = pages["api_slr"]
    sec = slr.split("### `replica_erm`")[1].split("\n### ")[0]
    assert "```python\nreplica_erm(\n" in sec and ") -> ReplicaResult" in sec
    assert "- **alpha** (`float`): sample ratio N/D" in sec
    assert "{doc}`02a_slr_replica`" in sec
    # a dataclass lists its fields as the parameters of its constructor; a constant its type
    # (whichever page holds them: the book's machinery may move between namespaces)
    text = "\n".join(pages.values())
    fig = text.split("### `FigureRecipe`")[1].split("\n### ")[0]
    assert "```python\nclass FigureRecipe(" in fig and "- **name** (`str`): registry key" in fig
    assert "*constant* (`tuple`)" in text.split("### `RISK_ACTIVATIONS`")[1].split("\n### ")[0]

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
        assert "### `flow`" in sec and "- **rate** (`float`, default `1.0`): decay rate" in sec
        assert "{doc}`09_dynamics`" in sec and "Exponential decay." in sec
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
