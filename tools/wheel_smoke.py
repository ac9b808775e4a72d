"""Wheel smoke test: build the sdist and the wheel, `twine check` them, install the wheel into a clean
virtual environment and run the README quickstart, the console script, `write_html`, `data_path` and
`attnstat reproduce` from it (`--list` shows every figure of the book; `--quick --only fig-mehler`, the
README's example, remakes a chapter's figure from the notebooks and data the wheel carries, or, without
the 'book' extra, exits 2 with one line naming it).

    python tools/wheel_smoke.py                 # offline (used by .ci/run): build without isolation,
                                                # install the wheel with --no-deps into a new venv that
                                                # borrows this environment's installed dependencies
    python tools/wheel_smoke.py --python PY     # check an environment where the wheel is already
                                                # installed with its dependencies (release workflow)
    python tools/wheel_smoke.py --dist DIR      # keep the built files in DIR

Everything runs outside the source tree, so `import attnstat` can only find the installed wheel.
Prints one line per check and exits non-zero on the first failure.
"""
import argparse, json, os, re, site, subprocess, sys, sysconfig, tempfile, time, zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def sh(*cmd, cwd=None, env=None, timeout=600):
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        sys.exit(f"wheel smoke test FAILED: {' '.join(map(str, cmd))}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p.stdout

def quickstart() -> str:
    "The Python block of README.md's quickstart."
    text = (ROOT / "README.md").read_text()
    m = re.search(r"## Quickstart in Python.*?```python\n(.*?)```", text, re.S)
    if not m: sys.exit("wheel smoke test FAILED: README.md has no ```python block under '## Quickstart in Python'")
    return m.group(1)

CHECK = r'''
import json, sys, tempfile, time
from pathlib import Path
import attnstat
assert "site-packages" in attnstat.__file__, attnstat.__file__   # the wheel, not the source tree
ns = {}
exec(compile(QUICKSTART, "README quickstart", "exec"), ns)
assert abs(ns["bayes_risk"](ns["model"]).risk - 0.35242) < 1e-4
from attnstat import data_path   # the cached data ship in the wheel (setup.py copies data/ to attnstat/data/)
shipped = data_path("slr_population_spiked_nu.csv")
assert "site-packages" in str(shipped) and shipped.is_file(), shipped
fp = ns["fixed_point"](ns["np"].cos, 1.0, damping=0.5, atol=1e-12)
assert fp.converged and fp.residual <= 1e-12, fp.residual
try: import ipywidgets
except ImportError: # without the 'interactive' extra: a clear error that names it
    try: import attnstat.interactive
    except ImportError as e: assert "attnstat[interactive]" in str(e), e
    else: raise AssertionError("attnstat.interactive imported without ipywidgets")
    html = "skipped: ipywidgets absent, and the import error names the 'interactive' extra"
else:
    from attnstat.interactive import precomputed_figure, write_html, PACKAGED_EMBED_JS
    assert PACKAGED_EMBED_JS.exists()
    w = precomputed_figure(lambda ax, a: ax.plot([0, 1], [0, a]), {"a": [1.0, 2.0]}, dpi=30)
    with tempfile.TemporaryDirectory() as d:
        page = write_html(w, Path(d) / "fig.html")
        assert (Path(d) / "embed.js").stat().st_size > 100_000 and "embed.js" in page.read_text()
    html = "write_html found the packaged embed.js"
print(json.dumps({"attnstat": attnstat.__version__, "from": str(Path(attnstat.__file__).parent), "html": html}))
'''

FIG_LABEL = re.compile(r"^\s*#\|\s*label:\s*fig-", re.M)
REPRODUCE_FIGURE = "fig-mehler"   # the README's example of a figure drawn by its chapter

def book_figures() -> int:
    "The labelled figure cells of the book (nbs/ of this checkout: the notebooks the wheel carries)."
    return sum(1 for p in sorted((ROOT / "nbs").glob("[!_]*.ipynb"))
               for c in json.loads(p.read_text(encoding="utf-8"))["cells"]
               if c["cell_type"] == "code" and FIG_LABEL.search("".join(c["source"])))

def files_under(folder: Path) -> set:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if "__pycache__" not in p.parts}

def check_reproduce(py: Path, script: Path, work: Path, env: dict):
    """`reproduce --list` shows every figure; `--quick --only fig-mehler` writes it (modes from
    the umask, nothing written into the installed package) or, without the 'book' extra, exits 2
    with one line naming the extra."""
    listed = json.loads(sh(script, "reproduce", "--list", "--json", cwd=work, env=env))["figure"]
    want = book_figures()
    assert len(listed) == want and len(set(listed)) == want, (len(listed), want)
    pkg = Path(sh(py, "-c", "import attnstat, pathlib; print(pathlib.Path(attnstat.__file__).parent)",
                  cwd=work, env=env).strip())
    before = files_under(pkg)
    kernel = subprocess.run([str(py), "-c", "import nbclient, nbformat, ipykernel, matplotlib_inline"],
                            cwd=work, env=env, capture_output=True, check=False).returncode == 0
    out, t0 = work / "figures", time.perf_counter()
    p = subprocess.run([str(script), "reproduce", "--quick", "--only", REPRODUCE_FIGURE,
                        "--out", str(out), "--json"], cwd=work, env=env, capture_output=True,
                       text=True, timeout=600, check=False, preexec_fn=lambda: os.umask(0o027))
    wall = time.perf_counter() - t0
    stray = sorted(files_under(pkg) ^ before)
    assert not stray, f"written into the installed package: {stray[:5]}"
    if not kernel:   # no Jupyter: one line naming the extra, exit 2
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and "attnstat[book]" in p.stderr, \
            (p.returncode, p.stderr)
        print(f"  reproduce --list shows all {want} figures; --only {REPRODUCE_FIGURE} without the "
              "'book' extra: exit 2, one line naming attnstat[book]")
        return
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    rows = json.loads(p.stdout)["figures"]
    png = out / f"{REPRODUCE_FIGURE}.png"
    assert [r["figure"] for r in rows] == [REPRODUCE_FIGURE], rows
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    modes = {f.name: oct(f.stat().st_mode & 0o777) for f in out.iterdir()}
    assert set(modes.values()) == {"0o640"}, modes   # umask 027: every file written is 0640
    m = re.search(r"about (\d+) s", p.stderr)
    assert m, p.stderr[-2000:]
    print(f"  reproduce --list shows all {want} figures; --quick --only {REPRODUCE_FIGURE} wrote "
          f"{png.name} ({png.stat().st_size // 1024} kB, files 0640 under umask 027) in {wall:.1f} s "
          f"wall (estimate announced: {m.group(1)} s); nothing written into the installed package")

def check(py: Path, work: Path):
    "Run the checks with interpreter `py` (the wheel installed in its environment), from `work`."
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["MPLBACKEND"] = "Agg"
    out = sh(py, "-c", f"QUICKSTART = {quickstart()!r}\n" + CHECK, cwd=work, env=env)
    info = json.loads(out.strip().splitlines()[-1])
    print(f"  README quickstart ran from the installed wheel ({info['from']}); {info['html']}")
    script = Path(py).parent / "attnstat"
    t0 = time.perf_counter(); sh(script, "--help", cwd=work, env=env); dt = time.perf_counter() - t0
    data = json.loads(sh(script, "slr", "bayes", "--nu", "2", "--L", "3", "--json", cwd=work, env=env))
    assert abs(data["risk"] - 0.35242) < 1e-4, data
    p = subprocess.run([str(script), "rmt", "error", "--gamma", "0.1,,1"], cwd=work, env=env, capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--gamma" in p.stderr, (p.returncode, p.stderr)
    print(f"  console script: --help in {dt:.2f} s, slr bayes --json risk {data['risk']:.6f}, "
          f"bad --gamma -> exit 2 with one line")
    check_reproduce(py, script, work, env)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", help="interpreter of an environment where the wheel is already installed")
    ap.add_argument("--dist", help="folder for the built sdist and wheel (default: a temporary folder)")
    a = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="attnstat-smoke-") as tmp:
        tmp = Path(tmp)
        if a.python:
            check(Path(a.python), tmp)
            print(f"wheel smoke test passed in {time.perf_counter() - t0:.1f} s"); return
        dist = Path(a.dist) if a.dist else tmp / "dist"
        dist.mkdir(parents=True, exist_ok=True)
        for f in dist.glob("attnstat-*"): f.unlink()
        # sdist, then the wheel from the sdist (what pip users get), without network (no build isolation)
        sh(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT, cwd=tmp)
        sdist, = dist.glob("attnstat-*.tar.gz"); wheel, = dist.glob("attnstat-*.whl")
        sh(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel)
        names = zipfile.ZipFile(wheel).namelist()
        meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
        assert "attnstat/_static/embed.js" in names and any(n.endswith("licenses/LICENSE") for n in names), names
        data = [n for n in names if n.startswith("attnstat/data/")]
        want = {f"attnstat/data/{q.relative_to(ROOT / 'data').as_posix()}" for q in (ROOT / "data").rglob("*")
                if q.is_file() and q.suffix in (".csv", ".json", ".npz")}
        assert want <= set(data), sorted(want - set(data))[:5]
        nbs = {f"attnstat/_notebooks/{q.name}" for q in (ROOT / "nbs").glob("[!_]*.ipynb")}
        assert nbs <= set(names), sorted(nbs - set(names))[:5]   # the chapters, for `reproduce`
        assert "attnstat/data/reproduce_times.json" in names   # its reference times
        urls = {l.split(":", 1)[1].split(",")[0].strip().lower() for l in meta.splitlines() if l.startswith("Project-URL:")}
        assert {"repository", "source", "docs", "issues", "changelog"} <= urls, urls
        assert "Provides-Extra: book" in meta and "Classifier: Development Status" in meta, "book extra or classifiers missing"
        hard = [l for l in meta.splitlines() if l.startswith("Requires-Dist:") and "extra ==" not in l]
        assert not any("ipywidgets" in l for l in hard), hard
        print(f"  built {sdist.name} ({sdist.stat().st_size // 1024} kB) and {wheel.name} "
              f"({wheel.stat().st_size // 1024} kB); twine check passed; LICENSE, embed.js, {len(data)} data files and {len(nbs)} notebooks "
              f"inside; ipywidgets only in extras")
        # a clean venv; the dependencies come from this environment through a .pth file (offline)
        venv = tmp / "venv"
        sh(sys.executable, "-m", "venv", "--without-pip", venv)
        py = venv / "bin" / "python"
        purelib = Path(sh(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
        deps = [p for p in site.getsitepackages() if Path(p).exists()]
        (purelib / "_attnstat_smoke_deps.pth").write_text("\n".join(deps) + "\n")
        sh(sys.executable, "-m", "pip", "--python", py, "install", "--quiet", "--no-deps", "--no-index", wheel, cwd=tmp)
        check(py, tmp)
    print(f"wheel smoke test passed in {time.perf_counter() - t0:.1f} s")

if __name__ == "__main__": main()
