"""Start-up time: `attnstat --help`, `import attnstat.slr` and `import attnstat.rmt`, lazy (this tree)
against eager (the package as it was before the lazy imports, commit 74b347b, when git has it; and
always this tree with every submodule imported up front, which is what the eager package did).

Each figure is the median of several warm runs of a fresh interpreter (`python -c ...`), run in
turn in the same session so that the ratios compare like with like. Targets: --help < 0.5 s,
import attnstat.slr < 0.5 s. `--quick`: `attnstat --help` only, lazy against eager imports of this tree, one
cold run each (no warm-up, no git archive).

Second part (issue 33): the CPU a one-point command spends importing, this tree against the baseline commit
(_bench.BASELINE). The command runs once under `python -X importtime` to learn which modules it imports (at start-up
and on first use inside functions); a fresh interpreter then imports exactly those and reports its CPU time
(time.process_time; median of several runs). Target: < 0.5 s for `attnstat slr population ...` and
`attnstat rmt error ...`. Also the CPU of importing the modules whose scipy imports moved into the functions.
`--quick`: `rmt error` only, one run per tree.
"""
import io, os, re, statistics, subprocess, sys, tarfile, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BASELINE, QUICK, ratio, load

ROOT = Path(__file__).resolve().parents[1]
EAGER_COMMIT = "74b347b" # the last commit with eager imports (attnstat --help took 3.2-3.7 s there)
RUNS = 1 if QUICK else int(os.environ.get("BENCH_RUNS", "5"))

CASES = {
    "attnstat --help": "import sys; sys.argv = ['attnstat', '--help']\nfrom attnstat.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass",
    "import attnstat.slr": "import attnstat.slr",
    "import attnstat.rmt": "import attnstat.rmt",
}
# what the eager __init__s did: import every submodule (and the CLI imported numpy and the figures' matplotlib)
EAGER_PRELUDE = ("import numpy, matplotlib.figure, attnstat.slr.models, attnstat.slr.activations, attnstat.slr.population, "
                 "attnstat.slr.replica, attnstat.slr.bayes, attnstat.slr.simulate, attnstat.rmt.hermite, "
                 "attnstat.rmt.models, attnstat.rmt.theory, attnstat.rmt.sweeps\n")

def timed(code: str, path: Path, runs: int = RUNS) -> float:
    "Median wall time of `python -c code` with `path` first on sys.path, run from an empty folder."
    prog = f"import sys; sys.path.insert(0, {str(path)!r})\n" + code
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    out = []
    with tempfile.TemporaryDirectory() as cwd:
        if not QUICK: subprocess.run([sys.executable, "-c", prog], cwd=cwd, env=env, capture_output=True) # warm the file cache
        for _ in range(runs):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", prog], cwd=cwd, env=env, capture_output=True, text=True)
            out.append(time.perf_counter() - t0)
            if p.returncode: sys.exit(f"failed: {code!r} with {path}\n{p.stderr[-2000:]}")
    return statistics.median(out)

def eager_tree(tmp: Path):
    "The attnstat/ folder of the eager commit, extracted with `git archive` (None when git lacks it)."
    p = subprocess.run(["git", "archive", EAGER_COMMIT, "attnstat"], cwd=ROOT, capture_output=True)
    if p.returncode: return None
    tarfile.open(fileobj=io.BytesIO(p.stdout)).extractall(tmp)
    return tmp

COMMANDS = {   # one-point commands (a user waiting for one number)
    "rmt error": ["rmt", "error", "--gamma", "0.1"],
    "slr population (overlaps given)": ["slr", "population", "--nu", "1.0", "--m-k", "0.5", "--q-k", "1", "--m-v", "0.5",
                                        "--q-v", "1"],
    "slr population (optimised)": ["slr", "population", "--nu", "1.0"],
}
MODULES = ("attnstat.gaussian", "attnstat.rmt.hermite", "attnstat.rmt.models")

def _run(prog: str, path: Path, *flags) -> subprocess.CompletedProcess:
    "`python [flags] -c prog` with `path` first on sys.path, from an empty folder."
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}; env["MPLBACKEND"] = "Agg"
    with tempfile.TemporaryDirectory() as cwd:
        p = subprocess.run([sys.executable, *flags, "-c", f"import sys; sys.path.insert(0, {str(path)!r})\n" + prog],
                           cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode: sys.exit(f"failed: {prog!r} with {path}\n{p.stderr[-2000:]}")
    return p

def imported(args: list, path: Path) -> list:
    "The modules a CLI command imports: the outermost ones, and all of them (from -X importtime)."
    p = _run(f"from attnstat.cli import main\nmain({args!r})", path, "-X", "importtime")
    found = [m.groups() for m in (re.match(r"import time:\s+\d+ \|\s+\d+ \|( +)(\S+)$", l) for l in p.stderr.splitlines()) if m]
    return [name for pad, name in found if len(pad) <= 2], [name for _, name in found]

def import_cpu(mods: list, path: Path, runs: int = RUNS) -> float:
    "Median CPU seconds of a fresh interpreter importing `mods` (numpy, scipy and attnstat included)."
    prog = f"import importlib, time\nt = time.process_time()\nfor m in {mods!r}: importlib.import_module(m)\nprint(time.process_time() - t)"
    return statistics.median(float(_run(prog, path).stdout.split()[-1]) for _ in range(runs))

def baseline_tree(tmp: Path):
    "The attnstat/ folder of the baseline commit (None when git lacks it)."
    p = subprocess.run(["git", "archive", BASELINE, "attnstat"], cwd=ROOT, capture_output=True)
    if p.returncode: return None
    tarfile.open(fileobj=io.BytesIO(p.stdout)).extractall(tmp)
    return tmp

def import_cpu_table():
    "Issue 33: the CPU a one-point command spends importing, this tree against the baseline."
    runs = 1 if QUICK else RUNS
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_tree(Path(tmp))
        print(f"\nCPU seconds spent importing (median of {runs}); baseline {BASELINE}; target < 0.5 s; {load()}")
        print(f"{'':42s} {'this tree':>10s} {'baseline':>10s} {'ratio':>7s}  scipy modules imported (this tree)")
        cases = [(k, v) for k, v in COMMANDS.items() if not QUICK or k == "rmt error"]
        for name, args in cases + ([] if QUICK else [(m, None) for m in MODULES]):
            mods, every = imported(args, ROOT) if args else ([name], [])
            new = import_cpu(mods, ROOT, runs)
            was = import_cpu(imported(args, base)[0] if args else [name], base, runs) if base is not None else float("nan")
            top = sorted({m.split(".")[1] for m in every if m.startswith("scipy.") and not m.split(".")[1].startswith("_")})
            print(f"{'attnstat ' + name if args else 'import ' + name:42s} {new:10.3f} {was:10.3f} {was / new:7.2f}  "
                  f"{', '.join(top) if args else ''}")
            ratio(f"import CPU of {'attnstat ' + name if args else 'import ' + name}: baseline {BASELINE} / this tree",
                  was / new, f"{new:.2f} s CPU now" + ("; target < 0.5 s" if args else ""))
            if args and new >= 0.5:
                print(f"  note: above the 0.5 s target (load average {os.getloadavg()[0]:.1f}?)")

def main():
    with tempfile.TemporaryDirectory() as tmp:
        old = None if QUICK else eager_tree(Path(tmp))
        print(f"start-up times, median of {RUNS} warm runs each (seconds); ratio = eager / lazy; {load()}")
        print(f"{'':22s} {'lazy (this tree)':>17s} {'eager ' + EAGER_COMMIT:>15s} {'ratio':>7s} {'eager imports':>14s} {'ratio':>7s}")
        for name, code in (list(CASES.items())[:1] if QUICK else CASES.items()):
            new = timed(code, ROOT)
            was = timed(code, old) if old is not None else float("nan")
            forced = timed(EAGER_PRELUDE + code, ROOT)
            print(f"{name:22s} {new:17.3f} {was:15.3f} {was / new:7.1f} {forced:14.3f} {forced / new:7.1f}")
            ratio(f"start-up {name}: eager imports / lazy", forced / new, f"{new:.2f} s lazy" + (f"; eager {EAGER_COMMIT}: {was / new:.1f}x" if old is not None else ""))
            if name in ("attnstat --help", "import attnstat.slr") and new >= 0.5:
                print(f"  note: {name} took {new:.2f} s, above the 0.5 s target (a loaded machine?)")
    import_cpu_table()

if __name__ == "__main__": main()
