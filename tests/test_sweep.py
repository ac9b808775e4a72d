"""attnstat.sweep: local processes, a Dask LocalCluster on loopback, the store-backed cache, its CSV export and resumption."""
import csv, sys, time
from pathlib import Path
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
from attnstat.sweep import run_sweep, read_sweep, point_seed
from attnstat import __version__

def noisy(a, b, seed=None):
    "A deterministic part and a seeded draw, so that runs can be compared value by value."
    rng = np.random.default_rng(seed)
    return {"sum": a * b, "draw": float(rng.normal()), "n": 3}

POINTS = [{"a": a, "b": b} for a in range(5) for b in (0.25, 2.0)]

def test_local_processes_match_sequential(tmp_path):
    seq = run_sweep(noisy, POINTS, jobs=1, seed=11, progress=False)
    par = run_sweep(noisy, POINTS, jobs=2, backend="loky", seed=11, progress=False)
    assert seq == par # the order of points and the per-point seeds do not depend on the backend
    assert [r["sum"] for r in seq] == [p["a"] * p["b"] for p in POINTS]
    assert len({r["draw"] for r in seq}) == len(POINTS) # independent seeds
    assert seq[3]["seed"] == point_seed(11, POINTS[3])

def test_cache_header_and_resume(tmp_path, capsys):
    cache = tmp_path / "sub" / "sweep.csv"
    full = run_sweep(noisy, POINTS, cache=cache, params={"what": "test", "n": 3}, seed=5, progress=True, desc="toy")
    err = capsys.readouterr().err
    assert "toy" in err and "10/10" in err # the tqdm bar was shown
    text = cache.read_text().splitlines()
    assert text[0] == "# attnstat sweep"
    header, rows = read_sweep(cache)
    assert header["params"] == {"what": "test", "n": 3}
    assert header["version"] == __version__ and header["seed"] == 5
    assert len(rows) == len(POINTS)
    # The file is a plain CSV after its comment lines, readable by any CSV reader.
    with open(cache) as f:
        plain = list(csv.DictReader(l for l in f if not l.startswith("#")))
    assert sorted(float(r["sum"]) for r in plain) == sorted(r["sum"] for r in full)
    # Simulate an interruption: keep 4 complete rows and half of the fifth.
    lines = cache.read_text().splitlines(keepends=True)
    first = next(i for i, l in enumerate(lines) if not l.startswith("#")) + 1
    cache.write_text("".join(lines[:first + 4]) + lines[first + 4][:5])
    calls = []
    def counted(a, b, seed=None):
        calls.append((a, b)); return noisy(a, b, seed)
    resumed = run_sweep(counted, POINTS, cache=cache, params={"what": "test", "n": 3}, seed=5, progress=False)
    assert resumed == full
    assert len(calls) == len(POINTS) - 4
    assert len(read_sweep(cache)[1]) == len(POINTS)
    # Extending the sweep computes only the new points.
    calls.clear()
    more = POINTS + [{"a": 9, "b": 1.0}]
    ext = run_sweep(counted, more, cache=cache, params={"what": "test", "n": 3}, seed=5, progress=False)
    assert ext[:-1] == full and calls == [(9, 1.0)]

def test_cache_mismatch(tmp_path):
    cache = tmp_path / "c.csv"
    run_sweep(noisy, POINTS[:2], cache=cache, params={"x": 1}, seed=1, progress=False)
    with pytest.raises(ValueError, match="other parameters"):
        run_sweep(noisy, POINTS[:2], cache=cache, params={"x": 2}, seed=1, progress=False)
    with pytest.raises(ValueError, match="other parameters"):
        run_sweep(noisy, POINTS[:2], cache=cache, params={"x": 1}, seed=2, progress=False)
    rows = run_sweep(noisy, POINTS[:2], cache=cache, params={"x": 2}, seed=1, progress=False, on_mismatch="restart")
    assert read_sweep(cache)[0]["params"] == {"x": 2} and len(rows) == 2

def test_failure_keeps_finished_points(tmp_path):
    cache = tmp_path / "c.csv"
    def fails_at_3(a, b, seed=None):
        if a == 3: raise RuntimeError("boom")
        return noisy(a, b, seed)
    with pytest.raises(RuntimeError, match="boom"):
        run_sweep(fails_at_3, POINTS, cache=cache, seed=0, progress=False)
    kept = read_sweep(cache)[1]
    assert 0 < len(kept) < len(POINTS) and all(r["a"] != 3 for r in kept)
    assert run_sweep(noisy, POINTS, cache=cache, seed=0, progress=False) == run_sweep(noisy, POINTS, seed=0, progress=False)

@pytest.mark.parametrize("kw, msg", [
    (dict(jobs=0), "jobs must be"), (dict(backend="mpi"), "backend must be one of"),
    (dict(scheduler="tcp://127.0.0.1:1"), "only used with backend='dask'"), (dict(seed=-1), "seed must be"),
])
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        run_sweep(noisy, POINTS, progress=False, **kw)

def test_dask_local_cluster(tmp_path):
    "The same sweep on a two-process Dask LocalCluster bound to 127.0.0.1 gives the same rows."
    distributed = pytest.importorskip("dask.distributed", reason="the optional 'cluster' extra (dask[distributed]) is not installed")
    expected = run_sweep(noisy, POINTS, seed=3, progress=False)
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        cache = tmp_path / "dask.csv"
        rows = run_sweep(noisy, POINTS, backend="dask", scheduler=cluster.scheduler_address, cache=cache,
                         seed=3, progress=False)
        assert rows == expected
        with distributed.Client(cluster.scheduler_address) as client:
            # the work really ran on the cluster's worker processes
            pids = run_sweep(_pid, [{"i": i} for i in range(8)], backend="dask", scheduler=client, progress=False)
            worker_pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert {r["pid"] for r in pids} <= worker_pids
    assert read_sweep(cache)[1] and time.perf_counter() - t0 < 60

def _pid(i):
    import os
    return {"pid": os.getpid()}

def test_dask_unreachable_scheduler():
    pytest.importorskip("dask.distributed", reason="the optional 'cluster' extra is not installed")
    with pytest.raises(ValueError, match="scheduler"):
        run_sweep(noisy, POINTS[:1], backend="dask", scheduler="tcp://127.0.0.1:9", progress=False)

# --- hardening: checksums, stray rows, corrupt files, locks, jobs bound --------------------------------
from attnstat.sweep import CacheError, max_jobs, KEY_COLUMN, row_key

def test_rows_are_checksummed(tmp_path):
    cache = tmp_path / "c.csv"
    rows = run_sweep(noisy, POINTS, cache=cache, params={"x": 1}, seed=2, progress=False)
    assert (rows.cached, rows.computed) == (0, len(POINTS))
    header_line = next(l for l in cache.read_text().splitlines() if not l.startswith("#"))
    assert header_line.split(",")[-1] == KEY_COLUMN
    again = run_sweep(noisy, POINTS, cache=cache, params={"x": 1}, seed=2, progress=False)
    assert again == rows and (again.cached, again.computed) == (len(POINTS), 0)
    # a hand edit of one value: the row fails its checksum, is recomputed (with a warning) and counted as computed
    lines = cache.read_text().splitlines(keepends=True)
    i = next(k for k, l in enumerate(lines) if not l.startswith("#")) + 3
    cells = lines[i].split(","); cells[2] = "999.0"; lines[i] = ",".join(cells)
    lines.append(lines[i + 1]) # and a repeated row
    cache.write_text("".join(lines))
    with pytest.warns(RuntimeWarning, match="checksum"):
        fixed = run_sweep(noisy, POINTS, cache=cache, params={"x": 1}, seed=2, progress=False)
    assert fixed == rows and (fixed.cached, fixed.computed) == (len(POINTS) - 1, 1)
    assert len(read_sweep(cache)[1]) == len(POINTS) # no duplicate left in the file

def test_stray_rows_dropped(tmp_path):
    cache = tmp_path / "c.csv"
    run_sweep(noisy, POINTS, cache=cache, seed=2, progress=False)
    rows = run_sweep(noisy, POINTS[:4], cache=cache, seed=2, progress=False) # a smaller sweep on the same cache
    assert rows.cached == 4 and len(read_sweep(cache)[1]) == 4

def test_key_depends_on_version_and_params():
    h = {"params": {"a": 1}, "version": "0.1.0", "seed": 0}
    k = row_key(h, ["a", "y"], ["1", "2.0"])
    assert k != row_key(dict(h, version="0.2.0"), ["a", "y"], ["1", "2.0"])
    assert k != row_key(dict(h, params={"a": 2}), ["a", "y"], ["1", "2.0"])
    assert k != row_key(h, ["a", "y"], ["1", "2.5"])

@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00garbage", b"a,b,c\n1,2,3\n", b"# attnstat sweep\n# params: {}\n"])
def test_corrupt_cache_one_error(tmp_path, content):
    cache = tmp_path / "c.csv"
    cache.write_bytes(content)
    if content in (b"", b"# attnstat sweep\n# params: {}\n"): # empty, or a header without rows: simply resumed
        assert len(run_sweep(noisy, POINTS[:2], cache=cache, seed=1, progress=False, on_mismatch="restart")) == 2
        return
    with pytest.raises(CacheError) as e:
        run_sweep(noisy, POINTS[:2], cache=cache, seed=1, progress=False, on_mismatch="restart")
    msg = str(e.value)
    assert "c.csv" in msg and "fresh" in msg and "\n" not in msg
    assert cache.read_bytes() == content # never overwritten silently
    rows = run_sweep(noisy, POINTS[:2], cache=cache, seed=1, progress=False, fresh=True)
    assert len(rows) == 2 and len(read_sweep(cache)[1]) == 2

def test_jobs_bounded():
    with pytest.raises(ValueError, match=r"jobs must be -1 \(all cores\) or an integer in \[1, "):
        run_sweep(noisy, POINTS, jobs=max_jobs() + 1, progress=False)
    with pytest.raises(TypeError, match="jobs must be an integer"):
        run_sweep(noisy, POINTS, jobs=2.0, progress=False)

def _locked_sweep(cache, out):
    import attnstat.sweep as S
    rows = S.run_sweep(_slow_noisy, POINTS, cache=cache, seed=4, progress=False)
    Path(out).write_text(f"{rows.cached} {rows.computed}")

def _slow_noisy(a, b, seed=None):
    time.sleep(0.05)
    return noisy(a, b, seed)

def test_two_processes_one_cache(tmp_path):
    "Two processes on one cache: the lock serialises them; the second reuses every row; no temporary files remain."
    import multiprocessing as mp
    cache = tmp_path / "c.csv"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_locked_sweep, args=(cache, tmp_path / f"out{i}")) for i in range(2)]
    for p in procs: p.start()
    for p in procs: p.join(120)
    assert all(p.exitcode == 0 for p in procs)
    counts = sorted(tuple(map(int, (tmp_path / f"out{i}").read_text().split())) for i in range(2))
    assert counts == [(0, len(POINTS)), (len(POINTS), 0)], counts
    assert len(read_sweep(cache)[1]) == len(POINTS)
    # no lock, temporary or WAL files: the store file and the CSV export only
    assert sorted(f.name for f in tmp_path.iterdir()) == ["attnstat.sqlite", "c.csv", "out0", "out1"]


# --- the store behind the cache (issue 29) ------------------------------------------------------------
from attnstat.store import Store, STORE_NAME
import os, signal, subprocess

def test_result_named_like_a_parameter_refused(tmp_path):
    "f(x) = {x: x + 1, y: 10 x} used to resume onto the wrong points; now refused, with or without a cache."
    f = lambda x: {"x": x + 1, "y": 10 * x}
    for cache in (None, tmp_path / "c.csv"):
        with pytest.raises(ValueError, match=r"result key\(s\) \['x'\].*rename it"):
            run_sweep(f, [{"x": 1}, {"x": 2}], cache=cache, progress=False)
    echo = run_sweep(lambda x: {"x": float(x), "y": 10 * x}, [{"x": 1}, {"x": 2}], cache=tmp_path / "e.csv", progress=False)
    assert [r["y"] for r in echo] == [10, 20]

def test_rows_live_in_the_store(tmp_path):
    "cache=DIR/NAME.csv: table NAME of DIR/attnstat.sqlite, one entry per point keyed by the full parameters."
    rows = run_sweep(noisy, POINTS, cache=tmp_path / "c.csv", params={"x": 1}, seed=2, progress=False)
    with Store(tmp_path / STORE_NAME) as st:
        ents = st.entries("c")
        assert len(ents) == len(POINTS) and all(e["seed"] == 2 and e["version"] == __version__ for e in ents)
        assert sorted((e["params"]["a"], e["params"]["b"]) for e in ents) == sorted((p["a"], p["b"]) for p in POINTS)
        assert all(e["params"]["_sweep"] == {"x": 1} for e in ents)
        for p, r in zip(POINTS, rows):   # another seed or other sweep parameters: never these rows
            q = {**p, "seed": point_seed(2, p), "_sweep": {"x": 1}}
            assert st.get_rows("c", q, seed=2) == [r]
            assert st.get_rows("c", q, seed=3) is None and st.get_rows("c", {**q, "_sweep": {"x": 2}}, seed=2) is None

def test_csv_deleted_starts_afresh_and_legacy_csv_imported(tmp_path):
    cache = tmp_path / "c.csv"
    full = run_sweep(noisy, POINTS, cache=cache, seed=5, progress=False)
    legacy = cache.read_text()
    cache.unlink()                       # deleting the export starts the sweep afresh
    again = run_sweep(noisy, POINTS, cache=cache, seed=5, progress=False)
    assert again == full and (again.cached, again.computed) == (0, len(POINTS))
    (tmp_path / STORE_NAME).unlink()     # a cache from before the store: its rows are imported, then resumed
    cache.write_text(legacy)
    resumed = run_sweep(noisy, POINTS, cache=cache, seed=5, progress=False)
    assert resumed == full and resumed.cached == len(POINTS)
    assert Store(tmp_path / STORE_NAME).tables() == {"c": len(POINTS)}

def test_damaged_store_one_error(tmp_path):
    run_sweep(noisy, POINTS[:2], cache=tmp_path / "c.csv", seed=1, progress=False)
    (tmp_path / STORE_NAME).write_bytes(b"\x00garbage" * 100)
    with pytest.raises(CacheError, match="start afresh") as e:
        run_sweep(noisy, POINTS[:2], cache=tmp_path / "c.csv", seed=1, progress=False)
    assert "attnstat.sqlite" in str(e.value) and "\n" not in str(e.value)

_KILL = """
import sys, time
from attnstat.sweep import run_sweep
def slow(a, b, seed=None):
    time.sleep(0.02)
    import numpy as np
    return {"sum": a * b, "draw": float(np.random.default_rng(seed).normal()), "n": 3}
run_sweep(slow, [{"a": a, "b": b} for a in range(60) for b in (0.25, 2.0)], cache=sys.argv[1], seed=9, progress=False)
"""

def test_sigkill_mid_sweep_then_resume(tmp_path):
    "kill -9 at random instants of a sweep; each rerun keeps every committed row and the end equals an uninterrupted run."
    import random
    rnd = random.Random(0)
    pts = [{"a": a, "b": b} for a in range(60) for b in (0.25, 2.0)]
    cache, kills = tmp_path / "k.csv", 0
    for _ in range(4):
        p = subprocess.Popen([sys.executable, "-c", _KILL, str(cache)], cwd=ROOT)
        t0 = time.time()
        while time.time() - t0 < 60 and not cache.exists(): time.sleep(0.02)
        time.sleep(rnd.uniform(0.0, 0.5)); p.send_signal(signal.SIGKILL); p.wait(); kills += 1
    with Store(tmp_path / STORE_NAME) as st: n = len(st.entries("k"))
    assert 0 < n < len(pts)
    rows = run_sweep(noisy, pts, cache=cache, seed=9, progress=False)   # noisy computes the same rows as slow
    assert rows == run_sweep(noisy, pts, seed=9, progress=False) and rows.cached == n and kills == 4
