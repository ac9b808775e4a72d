"""The package's shape (issue 28): small functions, narrow signatures, no string dispatch on models, short lines,
ruff clean, one function object per public name, no import hook."""
import importlib, shutil, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import check_structure as cs   # noqa: E402

def test_no_function_over_80_lines():
    bad = cs.report()["long_functions"]
    assert not bad, f"functions over {cs.MAX_LINES} lines (docstrings not counted): {bad}"

def test_no_public_function_over_12_parameters():
    bad = cs.report()["wide_signatures"]
    assert not bad, f"public functions over {cs.MAX_PARAMS} parameters (use an options dataclass): {bad}"

def test_models_dispatch_by_type():
    bad = cs.report()["kind_tests"]
    assert len(bad) <= cs.MAX_KIND_TESTS, f"string tests of model.kind: {bad}"

def test_ruff_is_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None: pytest.skip("ruff is not installed (it is in the dev extra)")
    r = subprocess.run([ruff, "check", "--quiet", "attnstat"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, f"ruff findings in attnstat/ (fix them in the notebooks):\n{r.stdout[-3000:]}"

def test_one_object_per_public_name_and_no_import_hook():
    import attnstat, attnstat.slr, attnstat.rmt
    assert not [f for f in sys.meta_path if type(f).__module__.startswith("attnstat")]
    for pkg in (attnstat.slr, attnstat.rmt):
        for name in pkg.__all__:
            obj = getattr(pkg, name)
            mod = getattr(obj, "__module__", None)
            if callable(obj) and mod and mod.startswith(pkg.__name__ + "."):
                assert getattr(importlib.import_module(mod), name) is obj, f"{pkg.__name__}.{name} is a different object"
