"""attnstat.store: writers killed at random instants, concurrent writers, parameters checked on every read,
damaged files, result keys that name a parameter, arrays bit-exact (issue 29)."""
import json, os, random, signal, sqlite3, subprocess, sys, time, tracemalloc, warnings
from pathlib import Path
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
from attnstat import __version__
from attnstat.store import Store, CacheError, STORE_NAME, open_store, remove_store, entry_key

# A writer process: commits entries in a loop and prints one acknowledgement line after each commit returned.
# Table "t": disjoint entries {w, i} (rows depend on w, i) and shared entries {shared: i % 5} that every writer
# writes with its own rows (a mixed entry would show two writers); table "a": arrays every fifth step.
WRITER = r"""
import sys, numpy as np
from attnstat.store import Store
path, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
st = Store(path, timeout=120)
def rows(w, i, m, shared):
    return [{"writer": w, "i": i, "j": j, "v": (w + 1) * 1000.0 + i + j / 8, "is_shared": shared} for j in range(m)]
print("ready", flush=True)
for i in range(n):
    st.put_rows("t", {"w": w, "i": i}, rows(w, i, 1 + i % 7, False))
    print("d", i, flush=True)
    st.put_rows("t", {"shared": i % 5}, rows(w, i, 2 + i % 4, True))
    print("s", i, flush=True)
    if i % 5 == 0:
        st.put_arrays("a", {"w": w, "i": i}, {"x": np.arange(1000 + 37 * i) * (w + 1.0) + i, "k": np.full((3, i % 4), w, np.int8)})
        print("a", i, flush=True)
"""

def _rows(w, i, m, shared):
    return [{"writer": w, "i": i, "j": j, "v": (w + 1) * 1000.0 + i + j / 8, "is_shared": shared} for j in range(m)]

def _spawn(path, w, n):
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(w), str(n)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})

def _acks(out):
    "The commits a writer acknowledged: {(kind, i)}."
    return {(line.split()[0], int(line.split()[1])) for line in out.splitlines() if line[:1] in "dsa" and len(line.split()) == 2}

def check_store(path, acked):
    "Check every entry row by row; every acknowledged commit must be there. Returns (entries, rows) checked."
    n_entries = n_rows = 0
    with Store(path) as st, warnings.catch_warnings():
        warnings.simplefilter("error")   # a damaged entry warns: make it fail the test
        for e in st.entries("t"):
            rows = st.get_rows("t", e["params"])
            assert rows is not None and len(rows) == e["n"], e
            if "shared" in e["params"]:   # one writer's whole version, never a mix of two
                w, i = rows[0]["writer"], rows[0]["i"]
                assert i % 5 == e["params"]["shared"] and rows == _rows(w, i, 2 + i % 4, True), e
            else:
                w, i = e["params"]["w"], e["params"]["i"]
                assert rows == _rows(w, i, 1 + i % 7, False), e
            n_entries += 1; n_rows += len(rows)
        for e in st.entries("a"):
            w, i = e["params"]["w"], e["params"]["i"]
            arr = st.get_arrays("a", e["params"])
            assert arr is not None and set(arr) == {"k", "x"}
            x = np.arange(1000 + 37 * i) * (w + 1.0) + i
            assert arr["x"].dtype == x.dtype and arr["x"].tobytes() == x.tobytes()
            assert arr["k"].dtype == np.int8 and arr["k"].tobytes() == np.full((3, i % 4), w, np.int8).tobytes()
            n_entries += 1; n_rows += 2
        for w, acks in acked.items():
            for kind, i in acks:
                if kind == "d": assert st.get_rows("t", {"w": w, "i": i}) is not None, (w, i)
                if kind == "s": assert st.get_rows("t", {"shared": i % 5}) is not None, (w, i)
                if kind == "a": assert st.get_arrays("a", {"w": w, "i": i}) is not None, (w, i)
        with st.transaction(write=False) as conn:   # no orphan or duplicated row: the rows table is exactly the entries'
            total = conn.execute("SELECT count(*) FROM rows WHERE tbl = 't'").fetchone()[0]
            orphans = conn.execute("SELECT count(*) FROM rows r WHERE NOT EXISTS (SELECT 1 FROM entries e "
                                   "WHERE e.tbl = r.tbl AND e.key = r.key)").fetchone()[0]
            expected = conn.execute("SELECT coalesce(sum(n), 0) FROM entries WHERE tbl = 't'").fetchone()[0]
            assert orphans == 0 and total == expected, (orphans, total, expected)
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    return n_entries, n_rows

def test_sigkill_writers_at_random_instants(tmp_path):
    "(a) 6 rounds of 4 writers, each killed (SIGKILL) after a random delay: 24 kills; every entry intact, none lost."
    path, rnd = tmp_path / STORE_NAME, random.Random(29)
    acked, kills = {}, 0
    for r in range(6):
        procs = {4 * r + w: _spawn(path, 4 * r + w, 100000) for w in range(4)}
        for p in procs.values(): assert p.stdout.readline().strip() == "ready"
        for w, p in procs.items():
            time.sleep(rnd.uniform(0.0, 0.25)); p.send_signal(signal.SIGKILL)
        for w, p in procs.items():
            out, err = p.communicate(timeout=60)
            assert p.returncode == -signal.SIGKILL, err[-2000:]
            acked[w] = _acks(out); kills += 1
        if r in (0, 5): n_entries, n_rows = check_store(path, acked)   # after the first round and at the end
    assert kills == 24 and sum(map(len, acked.values())) > 0
    print(f"{kills} kills, {sum(map(len, acked.values()))} acknowledged commits, {n_entries} entries and {n_rows} rows checked")

def test_concurrent_writers(tmp_path):
    "(b) 4 writer processes on one store at once, disjoint and overlapping keys: nothing lost, duplicated or mixed."
    path = tmp_path / STORE_NAME
    procs = {w: _spawn(path, w, 40) for w in range(4)}
    acked = {}
    for w, p in procs.items():
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
        acked[w] = _acks(out)
    assert all(len(a) == 40 * 2 + 8 for a in acked.values())
    n_entries, n_rows = check_store(path, acked)
    with Store(path) as st: assert st.tables() == {"a": 32, "t": 4 * 40 + 5}
    assert n_entries == 4 * 40 + 5 + 32

def test_parameter_mismatch_never_returned(tmp_path):
    "(c) another seed, trials, n_test or a: a miss that computes, never the rows (or arrays) of other parameters."
    st = Store(tmp_path / STORE_NAME)
    base = {"a": 1.0, "trials": 8, "n_test": 2000, "point": 0, "p": 64, "chunk": 0}
    calls = []
    def compute(**kw):
        calls.append(kw); return [{"err": float(len(calls)), "k": k} for k in range(2)]
    first = st.cached_rows("chunks", base, lambda: compute(**base), seed=2031)
    assert st.cached_rows("chunks", dict(base), lambda: compute(**base), seed=2031) == first and len(calls) == 1
    variants = [(dict(base), 2032), (dict(base, trials=9), 2031), (dict(base, n_test=1000), 2031),
                (dict(base, a=2.0), 2031), (dict(base, chunk=1), 2031), ({k: v for k, v in base.items() if k != "p"}, 2031)]
    for params, seed in variants:
        assert st.get_rows("chunks", params, seed=seed) is None
        rows = st.cached_rows("chunks", params, lambda: compute(**params), seed=seed)
        assert rows != first
    assert len(calls) == 1 + len(variants)
    assert st.get_rows("chunks", base, seed=2031, version="0.0.1") is None   # another code version: a miss too
    assert st.get_rows("other", base, seed=2031) is None                      # another table
    # integral floats and ints are one key; a stored entry whose parameters were changed behind the key is refused
    assert st.get_rows("chunks", dict(base, trials=8.0), seed=2031) == first
    with st.transaction() as conn:
        conn.execute("UPDATE entries SET params = replace(params, '\"a\":1', '\"a\":2') WHERE tbl = 'chunks'")
    with pytest.warns(RuntimeWarning, match="stored parameters"):
        assert st.get_rows("chunks", base, seed=2031) is None
    st.put_arrays("arr", base, {"e": np.ones(3)}, seed=1)
    assert st.get_arrays("arr", base, seed=2) is None and st.get_arrays("arr", dict(base, n_test=1), seed=1) is None

def _filled(path):
    st = Store(path)
    for i in range(200): st.put_rows("t", {"i": i}, [{"i": i, "v": float(i) / 3, "s": "x" * 50}] * 3)
    st.put_arrays("a", {"k": 1}, {"x": np.arange(5000.0)})
    st.close()
    assert not Path(f"{path}-wal").exists()   # closed cleanly: everything in the main file
    return Path(path).read_bytes()

@pytest.mark.parametrize("damage", ["truncated_header", "truncated_10", "truncated_50", "truncated_90", "random_bytes",
                                    "random_pages", "csv_file", "text_utf8", "other_program", "zero_pages"])
def test_damaged_file_raises_cache_error(tmp_path, damage):
    "(d) a damaged store raises CacheError (a ValueError) naming the file and how to start afresh; never read as empty."
    path = tmp_path / STORE_NAME
    whole = _filled(path)
    rnd = random.Random(hash(damage) % 1000)
    if damage.startswith("truncated"):
        cut = 50 if damage == "truncated_header" else len(whole) * int(damage.split("_")[1]) // 100
        path.write_bytes(whole[:cut])
    elif damage == "random_bytes": path.write_bytes(bytes(rnd.randrange(256) for _ in range(len(whole))))
    elif damage == "random_pages":   # the header kept, pages of the tables overwritten
        b = bytearray(whole)
        for page in range(2, len(whole) // 4096):
            if rnd.random() < 0.5: b[page * 4096:(page + 1) * 4096] = bytes(rnd.randrange(256) for _ in range(4096))
        path.write_bytes(bytes(b))
    elif damage == "zero_pages":
        b = bytearray(whole); b[4096:3 * 4096] = bytes(2 * 4096); path.write_bytes(bytes(b))
    elif damage == "csv_file": path.write_text("a,b\n1,2\n")
    elif damage == "text_utf8": path.write_text("SQLite format 2 — not really\n" * 40)
    elif damage == "other_program":
        path.unlink()
        with sqlite3.connect(path) as c: c.execute("CREATE TABLE results (x, y)")
    with pytest.raises(CacheError) as e:
        st = Store(path)
        for _ in range(2):
            st.tables(); st.get_rows("t", {"i": 199}); st.get_arrays("a", {"k": 1})
            [st.get_rows("t", {"i": i}) for i in range(200)]
    msg = str(e.value)
    assert isinstance(e.value, ValueError) and STORE_NAME in msg and "\n" not in msg
    assert "start afresh" in msg and "remove_store" in msg
    removed = remove_store(path)
    assert path in removed and not path.exists()
    assert open_store(path).tables() == {}   # afresh

def test_result_key_naming_a_parameter_refused(tmp_path):
    "(e) a row key that names a parameter with another value is refused; an echo of the same value is fine."
    st = Store(tmp_path / STORE_NAME)
    with pytest.raises(ValueError, match=r"\['x'\] name parameters.*rename it"):
        st.put_rows("t", {"x": 1}, [{"x": 2, "y": 10}])
    with pytest.raises(ValueError, match="rename it"):
        st.cached_rows("t", {"x": 1, "seed": 3}, lambda: [{"seed": 4}])
    assert st.tables() == {}   # nothing committed
    assert st.put_rows("t", {"x": 1, "alpha": 0.5}, [{"x": 1.0, "alpha": 0.5, "y": 10}])
    assert st.get_rows("t", {"x": 1, "alpha": 0.5}) == [{"x": 1.0, "alpha": 0.5, "y": 10}]

def test_arrays_bit_exact_and_bounded(tmp_path):
    "(f) arrays of every plain dtype round-trip bit-exact; a declared size beyond memory is refused before allocation."
    st = Store(tmp_path / STORE_NAME)
    rng = np.random.default_rng(0)
    arrays = {"f8": rng.normal(size=(7, 5)), "f4": rng.normal(size=9).astype(np.float32), "c16": rng.normal(size=4) + 1j,
              "i8": np.arange(-5, 5), "u1": np.arange(256, dtype=np.uint8), "b": rng.random(6) > 0.5,
              "U": np.array(["k0_p64", "ridge", "é"]), "scalar": np.array(3.5), "empty": np.zeros((0, 4)),
              "F": np.asfortranarray(rng.normal(size=(3, 4))), "view": np.arange(20.0)[::3], "big_endian": np.arange(4, dtype=">f8"),
              "special": np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324])}
    st.put_arrays("a", {"p": 1}, arrays, seed=2)
    back = st.get_arrays("a", {"p": 1}, seed=2)
    assert set(back) == set(arrays)
    for k, a in arrays.items():
        assert back[k].dtype == a.dtype and back[k].shape == a.shape and back[k].tobytes() == a.tobytes(), k
    assert back["F"].flags.f_contiguous
    assert st.cached_arrays("a", {"p": 1}, lambda: pytest.fail("computed on a hit"), seed=2)["f8"].tobytes() == arrays["f8"].tobytes()
    with pytest.raises(TypeError, match="no Python objects"): st.put_arrays("a", {"p": 2}, {"o": np.array([{}, 1])})
    # the memory limit: a consistent entry larger than the limit is refused from its columns, with the limit named
    os.environ["ATTNSTAT_MAX_MEMORY"] = "1000"
    try:
        with pytest.raises(ValueError, match="too large.*ATTNSTAT_MAX_MEMORY"): st.get_arrays("a", {"p": 1}, seed=2)
    finally: os.environ.pop("ATTNSTAT_MAX_MEMORY")
    # a declared shape of 2^40 float64 (in the columns, or in the .npy header) allocates nothing: a miss with a warning
    for how in ("columns", "header"):
        st.put_arrays("a", {"p": 3}, {"x": np.arange(5.0)})
        with st.transaction() as conn:
            if how == "columns":
                conn.execute("UPDATE arrays SET shape = '[1099511627776]', nbytes = 8796093022208 WHERE key = ?",
                             (entry_key("a", {"p": 3}, __version__),))
            else:
                blob = conn.execute("SELECT npy FROM arrays WHERE name = 'x' AND tbl = 'a' AND dtype = '<f8' AND nbytes = 40").fetchone()[0]
                conn.execute("UPDATE arrays SET npy = ? WHERE nbytes = 40", (blob.replace(b"(5,)", b"(1099511627776,)"),))
        tracemalloc.start()
        with pytest.warns(RuntimeWarning, match="not used"):
            assert st.get_arrays("a", {"p": 3}) is None
        peak = tracemalloc.get_traced_memory()[1]; tracemalloc.stop()
        assert peak < 2 ** 20, peak
        assert st.cached_arrays("a", {"p": 3}, lambda: {"x": np.arange(5.0)})["x"].tolist() == [0, 1, 2, 3, 4]

def test_store_in_workers_and_entry_checks(tmp_path):
    "A Store sent to loky workers reopens the file there; each worker commits its own entries."
    from joblib import Parallel, delayed
    st = Store(tmp_path / STORE_NAME)
    keys = Parallel(n_jobs=2, backend="loky")(delayed(_put)(st, i) for i in range(6))
    assert len(set(keys)) == 6 and st.tables() == {"w": 6}
    assert [st.get_rows("w", {"i": i})[0]["pid"] != os.getpid() for i in range(6)] == [True] * 6
    for call, exc, msg in [(lambda: Store(3), TypeError, "path must be a file path"),
                           (lambda: Store(tmp_path / "x", timeout=float("nan")), ValueError, "timeout"),
                           (lambda: st.put_rows("", {}, []), ValueError, "table must be"),
                           (lambda: st.put_rows("t", {}, {"a": 1}), TypeError, "rows must be a list"),
                           (lambda: st.put_rows("t", {}, [{"a": object()}]), ValueError, "must be a scalar"),
                           (lambda: st.put_rows("t", {1: 2}, []), TypeError, "str keys"),
                           (lambda: st.get_rows("t", {}, version=3), TypeError, "version must be"),
                           (lambda: st.put_many("t", [{}], []), ValueError, "one list of rows per entry"),
                           (lambda: st.cached_rows("t", {}, lambda: [], fresh=1), TypeError, "fresh must be True or False"),
                           (lambda: open_store(tmp_path / "y", fresh="yes"), TypeError, "fresh must be True or False")]:
        with pytest.raises(exc, match=msg): call()

def _put(st, i):
    return st.put_rows("w", {"i": i}, [{"i": i, "pid": os.getpid()}])

def test_opening_never_touches_the_file_of_open_connections(tmp_path, monkeypatch):
    """Closing any descriptor of a file releases every POSIX lock the process holds on it, its SQLite
    connections' included; another process could then checkpoint and drop a WAL holding their commits
    (seen: 2 of 10 loky runs lost entries when opening a second Store read the file's header).
    Opening a store whose file exists must leave the file to SQLite."""
    import builtins
    path = tmp_path / STORE_NAME
    first = Store(path); first.put_rows("w", {"i": 0}, [{"i": 0}])
    real_open, real_os_open = builtins.open, os.open
    def guard(f, *a, **k):
        if Path(f) == path: raise AssertionError("the store file was opened outside SQLite")
        return real_open(f, *a, **k)
    def os_guard(f, *a, **k):
        if Path(f) == path: raise AssertionError("the store file was opened outside SQLite")
        return real_os_open(f, *a, **k)
    monkeypatch.setattr(builtins, "open", guard); monkeypatch.setattr(os, "open", os_guard)
    second = Store(path); second.put_rows("w", {"i": 1}, [{"i": 1}])
    monkeypatch.undo()
    assert first.tables() == {"w": 2} and second.get_rows("w", {"i": 0}) == [{"i": 0}]
