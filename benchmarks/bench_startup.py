"""Start-up time: `attnstat --help`, `import attnstat.slr` and `import attnstat.rmt`, lazy (this tree)
against eager (the package as it was before the lazy imports, commit 74b347b, when git has it; and
always this tree with every submodule imported up front, which is what the eager package did).

Each figure is the median of several warm runs of a fresh interpreter (`python -c ...`), run in
turn in the same session so that the ratios compare like with like. Targets: --help < 0.5 s,
import attnstat.slr < 0.5 s. `--quick`: `attnstat --help` only, lazy against eager imports of this tree, one
cold run each (no warm-up, no git archive).
"""
import os, statistics, subprocess, sys, tarfile, tempfile, time, io
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import QUICK, ratio, load

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

if __name__ == "__main__": main()
