"""Every benchmark runs to the end in its `--quick` mode (seconds), so a refactor that breaks one fails the tests
instead of rotting silently (issue 18: `bench_slr_restarts.py` crashed for weeks because nothing ran it), and
`benchmarks/run_all.py` (`make bench`) reports a failing benchmark in its table without stopping the others."""
import os, subprocess, sys
from pathlib import Path
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
SCRIPTS = sorted(BENCH.glob("bench_*.py"))
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MPLBACKEND="Agg")
sys.path.insert(0, str(BENCH))
import run_all  # noqa: E402


def test_every_benchmark_is_collected():
    names = {p.stem for p in SCRIPTS}
    assert {"bench_gaussian", "bench_rmt", "bench_slr_restarts", "bench_startup"} <= names
    assert [p.stem for p in run_all.benchmarks()] == sorted(names)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_benchmark_quick_mode_runs_to_the_end(script):
    if "--quick" not in script.read_text():
        pytest.skip(f"{script.name} has no --quick mode yet (its owner adds it; then this test runs it)")
    p = subprocess.run([sys.executable, str(script), "--quick"], cwd=ROOT, env=ENV, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, f"{script.name} --quick failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
    rows = run_all.ratios(p.stdout)
    assert rows, f"{script.name} --quick printed no ratio"
    if "RATIO\t" in p.stdout:   # machine-readable ratios are finite positive numbers
        assert all(float(v) > 0 for _, v, _ in rows), rows


def test_run_all_reports_a_failure_and_carries_on(tmp_path):
    bad = tmp_path / "bench_broken.py"; bad.write_text("raise SystemExit('broken on purpose')\n")
    good = tmp_path / "bench_fine.py"; good.write_text("print('RATIO\\tfine: a / b\\t2.5\\tnote')\n")
    res = [run_all.run(p, [], timeout=60) for p in (bad, good)]
    assert res[0]["rc"] != 0 and res[1]["rc"] == 0 and res[1]["ratios"] == [("fine: a / b", "2.5", "note")]
    t = run_all.table(res)
    assert "FAILED" in t and "| bench_fine | ok |" in t and "2.5" in t
    assert run_all.ratios("speed ratio dblquad / x: 12x\nother line") == [("speed ratio dblquad / x: 12x", "", "(free text)")]
    skip = run_all.run(bad, ["--quick"], timeout=60)          # bench_broken.py has no --quick mode: skipped, not failed
    assert str(skip["rc"]).startswith("skipped") and "skipped" in run_all.table([skip])


def test_gaussian_and_rmt_kernel_modules_import_no_heavy_scipy():
    "scipy.integrate, scipy.optimize and scipy.stats are imported where used, not by these modules (issue 33)."
    code = ("import sys, attnstat.gaussian, attnstat.rmt.hermite, attnstat.rmt.models\n"
            "print(sorted(m for m in sys.modules if m.split('.')[:2] in (['scipy', 'integrate'], ['scipy', 'optimize'], "
            "['scipy', 'stats'], ['scipy', 'special'])))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_empirical_errors_guard_within_3x_of_the_measured_time():
    "The run-time guard's estimate against the CPU time of two small cases (issue 33: it overestimated 17-73x)."
    import time
    from attnstat.rmt import empirical_errors
    from attnstat.rmt.models import _trial_seconds
    g = np.logspace(-4, 1, 50)
    empirical_errors("tanh", 64, 32, [1.0], [0.5], [0.5], g, 1, 0)            # warm up (imports, coefficients)
    for n, p in ((1024, 512), (512, 1024)):
        ts = []
        for seed in range(2):
            t = time.process_time(); empirical_errors("tanh", n, p, [1.0], [0.5], [0.5], g, 1, seed)
            ts.append(time.process_time() - t)
        r = _trial_seconds(n, p, g.size) / min(ts)
        # target within 3x; measured 0.9-1.1 on an idle core; a factor 2 more for a loaded, shared machine
        assert 1 / 6 < r < 6, (n, p, r, min(ts))
