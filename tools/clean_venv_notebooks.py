"""Run the book's notebooks as a reader would: from a folder outside the repository, in a clean virtual
environment that holds only the attnstat wheel and its `book` extra (the offline stand-in for Binder and Colab).

    python tools/clean_venv_notebooks.py                  # every notebook with code
    python tools/clean_venv_notebooks.py 00f_data 05a_interactive
    python tools/clean_venv_notebooks.py --jobs 1 --keep  # one kernel at a time; keep the work folder

Steps (each timed): build the sdist and the wheel from it (`python -m build --no-isolation`, offline); find or
make the cached environment for that wheel's requirements (`~/.cache/attnstat/clean-venv/<hash of the
requirements>`, or `$ATTNSTAT_CLEAN_VENV_CACHE`): `venv --without-pip`, then `pip install --no-index
--find-links WHEELHOUSE "WHEEL[book]"`, where the wheelhouse (`.../wheelhouse`) is filled from the package
registry by `pip download` only when something is missing (bounded by a timeout); when only attnstat's own
files changed, the cached environment gets the new wheel alone (`--no-deps --force-reinstall`); copy the notebooks into a temporary folder; execute
each one with nbclient in a kernel of that environment, with `ATTNSTAT_DATA` pointing at a fresh folder.

Cells are skipped the way nbdev-test skips them (`#| eval: false`, `#| notest`, front matter `skip_exec`),
except that a `#| slow` cell guarded by `recompute_requested(...)` is run (a reader's "Run All" runs it;
without `ATTNSTAT_RECOMPUTE` it must do nothing); an unguarded slow cell is skipped and reported.
`IN_TEST` is not set: the notebooks run as on Binder. Afterwards nothing may have appeared outside the
notebooks' folder and the data folder, and the data shipped in the environment must be unchanged.
"""
import argparse, hashlib, json, os, re, shutil, subprocess, sys, tempfile, time, zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
CACHE = Path(os.environ.get("ATTNSTAT_CLEAN_VENV_CACHE") or Path.home() / ".cache" / "attnstat" / "clean-venv")
EXTRA = "book"

def sh(*cmd, timeout=600, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kw)
    if p.returncode: raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p.stdout

def notebooks(names=None) -> list:
    "The notebooks with code cells (all, or those whose stem starts with one of `names`)."
    out = []
    for p in sorted(NBS.glob("*.ipynb")):
        if p.name.startswith("_"): continue
        nb = json.loads(p.read_text())
        if not any(c["cell_type"] == "code" and "".join(c["source"]).strip() for c in nb["cells"]): continue
        if names and not any(p.stem == n or p.stem.startswith(n) for n in names): continue
        out.append(p)
    return out

def build_wheel(dist: Path) -> Path:
    "Build the sdist and the wheel from it into `dist` (no network: no build isolation)."
    dist.mkdir(parents=True, exist_ok=True)
    for f in dist.glob("attnstat-*"): f.unlink()
    sh(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT, cwd=dist)
    wheel, = dist.glob("attnstat-*.whl")
    return wheel

def wheel_key(wheel: Path) -> str:
    "A hash of the wheel's contents (names and CRCs), stable across rebuilds of the same sources."
    with zipfile.ZipFile(wheel) as z:
        items = sorted(f"{i.filename}:{i.CRC}" for i in z.infolist())
    return hashlib.sha256("\n".join(items).encode()).hexdigest()[:16]

def deps_key(wheel: Path) -> str:
    "A hash of what the environment must hold besides attnstat: the wheel's requirements, the extra, the Python."
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    reqs = sorted(l for l in meta.splitlines() if l.startswith(("Requires-Dist:", "Requires-Python:")))
    return hashlib.sha256(("\n".join(reqs) + f"\nextra={EXTRA}\npython={sys.version_info[:2]}").encode()).hexdigest()[:16]

def ensure_venv(wheel: Path, download_timeout: int = 600) -> tuple:
    """The cached clean environment for this wheel: (python, seconds spent, how it was made).

    One environment per set of requirements (`deps_key`): made with `venv --without-pip` and
    `pip install WHEEL[book]` from the wheelhouse (filled by `pip download` when something is missing);
    when only attnstat's own files changed, the wheel alone is reinstalled (`--no-deps`)."""
    from filelock import FileLock
    CACHE.mkdir(parents=True, exist_ok=True)
    venv = CACHE / deps_key(wheel); py = venv / "bin" / "python"; wh = CACHE / "wheelhouse"; stamp = venv / ".complete"
    pip = [sys.executable, "-m", "pip", "--python", py, "install", "--quiet", "--no-index", "--find-links", wh]
    t0 = time.perf_counter()
    with FileLock(str(CACHE / "lock"), timeout=1800):
        if stamp.exists():
            os.utime(venv)
            if stamp.read_text().strip() == wheel_key(wheel): return py, time.perf_counter() - t0, "cached"
            sh(*pip, "--no-deps", "--force-reinstall", wheel)
            stamp.write_text(wheel_key(wheel) + "\n")
            return py, time.perf_counter() - t0, "cached; the attnstat wheel reinstalled"
        for old in CACHE.iterdir():   # environments of other requirements, unused for an hour, are dropped
            if old.is_dir() and (old / "pyvenv.cfg").exists() and time.time() - old.stat().st_mtime > 3600:
                shutil.rmtree(old, ignore_errors=True)
        sh(sys.executable, "-m", "venv", "--without-pip", venv)
        wh.mkdir(exist_ok=True)
        spec = f"{wheel}[{EXTRA}]"
        how = "made from the wheelhouse"
        try: sh(*pip, spec)
        except RuntimeError:
            # the same interpreter as the environment's, so the downloaded wheels fit it
            sh(sys.executable, "-m", "pip", "download", "--quiet", "--dest", wh, spec, timeout=download_timeout)
            sh(*pip, spec); how = "made after pip download into the wheelhouse"
        stamp.write_text(wheel_key(wheel) + "\n")
    return py, time.perf_counter() - t0, how

def site_size(py: Path) -> dict:
    "Installed size (MB) and number of distributions of an environment."
    out = sh(py, "-c", "import sysconfig, json, importlib.metadata as m; "
             "print(json.dumps([sysconfig.get_paths()['purelib'], len(list(m.distributions()))]))")
    purelib, n = json.loads(out)
    size = sum(f.stat().st_size for f in Path(purelib).rglob("*") if f.is_file())
    return {"mb": size / 2**20, "distributions": n}

DRIVER = r'''
import json, os, re, sys, time, traceback
from concurrent.futures import ThreadPoolExecutor
import nbformat
from nbclient import NotebookClient
folder, jobs, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
DIRECTIVE = re.compile(r"^\s*#\|\s*([\w-]+)\s*:?\s*(.*?)\s*$")
def flags(src):
    out = {}
    for line in src.splitlines():
        m = DIRECTIVE.match(line)
        if m: out[m.group(1)] = m.group(2)
        elif line.strip(): break
    return out
def prepare(path):
    nb = nbformat.read(path, as_version=4)
    if nb.metadata.get("skip_exec"): return None, ["skip_exec"]
    keep, skipped = [], []
    for c in nb.cells:
        if c.cell_type != "code": keep.append(c); continue
        f = flags(c.source)
        if f.get("eval") == "false" or "notest" in f: skipped.append(c.get("id", "?")); continue
        if "slow" in f and "recompute_requested(" not in c.source: skipped.append("UNGUARDED-SLOW:" + c.get("id", "?")); continue
        keep.append(c)
    nb.cells = keep
    return nb, skipped
def run(name):
    path = os.path.join(folder, name)
    t0 = time.perf_counter()
    nb, skipped = prepare(path)
    if nb is None: return dict(name=name, ok=True, seconds=0.0, skipped=skipped, error="")
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": folder}}).execute()
        err = ""
    except Exception as e:
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(e))
        head = f"{getattr(e, 'ename', type(e).__name__)}: {getattr(e, 'evalue', '')}"
        err = (head + "\n" + text[-2000:]) if head.strip(": ") else text[-2500:]
    return dict(name=name, ok=not err, seconds=time.perf_counter() - t0, skipped=skipped, error=err)
with ThreadPoolExecutor(max_workers=jobs) as ex:
    for r in ex.map(run, names): print(json.dumps(r), flush=True)
'''

def tree(folder: Path) -> set:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}

def run_notebooks(py: Path, paths: list, jobs: int = 2, keep: bool = False, timeout: int = 1800) -> dict:
    "Copy `paths` to a temporary folder and execute them with the environment of `py`; a summary dict."
    work = Path(tempfile.mkdtemp(prefix="attnstat-nbs-"))
    try:
        folder, data = work / "notebooks", work / "user-data"
        folder.mkdir(); data.mkdir()
        # the whole book goes into the folder (as a user has it), only `paths` are executed
        for p in {q.name: q for q in [*notebooks(), *paths]}.values(): shutil.copy2(p, folder / p.name)
        before = tree(work)
        shipped = Path(sh(py, "-c", "import attnstat.data as d; print(d.shipped_data_dir())", cwd=work).strip())
        assert "site-packages" in str(shipped), shipped   # the installed wheel's data, not a source tree
        ship_before = {p: p.stat().st_mtime_ns for p in shipped.rglob("*")}
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "IN_TEST", "ATTNSTAT_RECOMPUTE",
                                                                  "VIRTUAL_ENV", "MPLBACKEND", "JUPYTER_PATH")}
        env.update(ATTNSTAT_DATA=str(data), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   MPLCONFIGDIR=str(py.parents[1] / ".mplconfig"), JUPYTER_PLATFORM_DIRS="1",
                   PATH=f"{py.parent}{os.pathsep}{env.get('PATH', '')}")
        t0 = time.perf_counter(); load0 = os.getloadavg()[0]
        p = subprocess.run([str(py), "-c", DRIVER, str(folder), str(jobs), *[q.name for q in paths]], cwd=work, env=env,
                           capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
        results = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        if p.returncode or len(results) != len(paths):
            raise RuntimeError(f"notebook driver failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
        after = tree(work)
        stray = sorted(x for x in after - before if not (x.startswith("notebooks/") or x.startswith("user-data/")))
        changed = sorted(str(q) for q, m in ship_before.items() if not q.exists() or q.stat().st_mtime_ns != m)
        changed += sorted(str(q) for q in shipped.rglob("*") if q not in ship_before)
        return {"results": results, "wall": wall, "stray": stray, "shipped_changed": changed,
                "user_data": sorted(tree(data)), "work": str(work), "load": (load0, os.getloadavg()[0]), "cpus": os.cpu_count()}
    finally:
        if not keep: shutil.rmtree(work, ignore_errors=True)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="notebook stems or prefixes (default: all)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    a = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="attnstat-dist-") as d:
        wheel = build_wheel(Path(d)); tb = time.perf_counter() - t0
        print(f"built {wheel.name} ({wheel.stat().st_size // 1024} kB) in {tb:.1f} s", flush=True)
        py, tv, how = ensure_venv(wheel)
    size = site_size(py)
    print(f"clean environment {py.parents[1]} ({how}) in {tv:.1f} s: {size['distributions']} distributions, "
          f"{size['mb']:.0f} MB", flush=True)
    paths = notebooks(a.names)
    s = run_notebooks(py, paths, jobs=a.jobs, keep=a.keep)
    for r in sorted(s["results"], key=lambda r: -r["seconds"]):
        print(f"  {'ok  ' if r['ok'] else 'FAIL'} {r['name']:34s} {r['seconds']:6.1f} s" +
              (f"  skipped {len(r['skipped'])}" if r["skipped"] else "") + (f"\n      {r['error'][:400]}\n      ...\n      {r['error'][-600:]}" if r["error"] else ""))
    bad = [r["name"] for r in s["results"] if not r["ok"]]
    print(f"{len(paths)} notebooks in {s['wall']:.1f} s wall ({a.jobs} at a time); total {time.perf_counter() - t0:.1f} s; "
          f"stray files: {s['stray'] or 'none'}; shipped data changed: {s['shipped_changed'] or 'no'}; "
          f"user data written: {len(s['user_data'])} entries; load average {s['load'][0]:.1f} -> {s['load'][1]:.1f} on {s['cpus']} cores")
    sys.exit(1 if bad or s["stray"] or s["shipped_changed"] else 0)

if __name__ == "__main__": main()
