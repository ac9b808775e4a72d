"""Run every notebook in nbs/ through nbdev's notebook tester: one pytest case per notebook.

Cells flagged with `tst_flags` (notest, slow) are skipped, as in `nbdev-test`.
"""
import os
from pathlib import Path
import pytest
from nbdev.test import test_nb as _run_notebook
from nbdev.config import get_config

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "nbs").glob("*.ipynb") if not p.name.startswith("_"))

@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    monkeypatch.chdir(path.parent)
    monkeypatch.setenv("IN_TEST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    skip = get_config().tst_flags.split()
    ok, seconds = _run_notebook(path, skip_flags=skip, basepath=str(ROOT), showerr=True)
    assert ok, f"{path.name} failed after {seconds:.1f}s (traceback above)"
