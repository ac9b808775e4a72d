"""Every benchmark runs to the end in its `--quick` mode (seconds), so a refactor that breaks one fails the tests
instead of rotting silently (issue 18: `bench_slr_restarts.py` crashed for weeks because nothing ran it), and
`benchmarks/run_all.py` (`make bench`) reports a failing benchmark in its table without stopping the others."""
import os, subprocess, sys
from pathlib import Path
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
