"""Run every benchmark (`benchmarks/bench_*.py`) to the end, one after the other, and print a table of the ratios
they report, with the machine load before and after each (the machine may be shared: wall-clock ratios measured
under load are indicative only). A benchmark that fails is reported in the table and makes the exit status 1, but
does not stop the others.

Usage: python benchmarks/run_all.py [--quick] [NAME ...]   (`make bench`; NAME: e.g. bench_rmt)"""
import os, re, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent

def benchmarks(names=()) -> list:
    "The benchmark scripts, sorted (all of them, or those named)."
    all_ = sorted(HERE.glob("bench_*.py"))
    return [p for p in all_ if not names or p.stem in names]

def ratios(out:str) -> list:
    "(label, value, note) from the RATIO lines of a benchmark's output, else its free-text lines that mention a ratio."
    rows = [tuple(l.split("\t")[1:4]) for l in out.splitlines() if l.startswith("RATIO\t")]
    if rows: return [(a, b, c) for a, b, c in (r + ("", "")[:3 - len(r)] for r in rows)]
    return [(l.strip()[:110], "", "(free text)") for l in out.splitlines() if re.search(r"\bratio", l, re.I)]

def run(path:Path, args:list, timeout:float) -> dict:
    "Run one benchmark, echo its output, return status, seconds, loads and ratios (a quick run skips one without --quick)."
    la = os.getloadavg()[0]; t0 = time.perf_counter()
    if "--quick" in args and "--quick" not in path.read_text():
        print(f"== {path.name}: no --quick mode, skipped in a quick run", flush=True)
        return dict(name=path.stem, rc="skipped: no --quick mode", seconds=0.0, load_before=la, load_after=la, ratios=[])
    print(f"== {path.name} {' '.join(args)} (load average {la:.2f})", flush=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"), MPLBACKEND="Agg")
    try:
        p = subprocess.run([sys.executable, str(path), *args], cwd=HERE.parent, env=env, capture_output=True, text=True,
                           timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), ""
    print(out, end="", flush=True)
    if rc != 0: print(err[-3000:], file=sys.stderr, flush=True)
    return dict(name=path.stem, rc=rc, seconds=time.perf_counter() - t0, load_before=la, load_after=os.getloadavg()[0],
                ratios=ratios(out))

def table(results:list) -> str:
    "The ratio table (Markdown)."
    lines = ["| benchmark | status | seconds | load before / after | ratio | value | note |", "|---|---|---|---|---|---|---|"]
    for r in results:
        st = "ok" if r["rc"] == 0 else (r["rc"] if str(r["rc"]).startswith("skipped") else f"FAILED ({r['rc']})")
        rows = r["ratios"] or [("(no ratio printed)", "", "")]
        for k, (lab, val, note) in enumerate(rows):
            head = (r["name"], st, f"{r['seconds']:.1f}", f"{r['load_before']:.1f} / {r['load_after']:.1f}") if k == 0 else ("", "", "", "")
            lines.append("| " + " | ".join((*head, lab, val, note)) + " |")
    return "\n".join(lines)

def main(argv:list) -> int:
    flags = [a for a in argv if a.startswith("--")]; names = [a for a in argv if not a.startswith("--")]
    timeout = 600.0 if "--quick" in flags else 3600.0
    res = [run(p, flags, timeout) for p in benchmarks(names)]
    print(f"\nRatio table ({'--quick' if '--quick' in flags else 'full'} run; {os.cpu_count()} cores; "
          f"load averages now {' '.join(f'{x:.2f}' for x in os.getloadavg())}; wall-clock timings on a shared machine "
          "are inflated by the load, and so are ratios between a loaded and an idle phase):\n")
    print(table(res))
    bad = [r["name"] for r in res if r["rc"] != 0 and not str(r["rc"]).startswith("skipped")]
    if bad: print(f"\nfailed: {', '.join(bad)}", file=sys.stderr)
    return 1 if bad else 0

if __name__ == "__main__": sys.exit(main(sys.argv[1:]))
