"""Shared helpers of the benchmarks: the `--quick` flag, CPU timing, the baseline commit, and one machine-readable
line per ratio, which `benchmarks/run_all.py` (`make bench`) collects into the ratio table.

A ratio line reads `RATIO<TAB>label<TAB>value<TAB>note`: value = baseline time / new time (> 1: the new code is
faster), unless the note says otherwise."""
import os, sys, time

QUICK = "--quick" in sys.argv
# today's code when issue 33 (speed where users wait) was taken up: the baseline the speed-ups are measured against
BASELINE = "ac787dc"

def ratio(label:str, # what is compared, e.g. "dblquad / Gauss-Hermite"
          value:float, # the ratio
          note:str="", # the target or the sizes it was measured at
         ) -> float:
    "Print one ratio line (human-readable, and parsed by run_all.py)."
    print(f"RATIO\t{label}\t{value:.3g}\t{note}{' [quick]' if QUICK else ''}", flush=True)
    return value

def load() -> str:
    "The 1/5/15-minute load averages and the core count, for the record (the machine may be shared)."
    a = os.getloadavg()
    return f"load average {a[0]:.2f} {a[1]:.2f} {a[2]:.2f} on {os.cpu_count()} cores"

def cpu_best(fn, # the call to time
             number:int=100, # calls per repeat
             repeat:int=5, # repeats; the best (least disturbed) one counts
            ) -> float:
    "CPU seconds (time.process_time) of one call of `fn`, best of `repeat` runs of `number` calls."
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        for _ in range(number): fn()
        best = min(best, (time.process_time() - t) / number)
    return best

def former(module:str, # e.g. "gaussian" or "rmt.theory"
           commit:str=BASELINE, # the baseline commit
          ):
    "attnstat.<module> as it was at `commit` (via _former.load_former), or None where git lacks it."
    from _former import load_former
    try: return load_former(module, commit)
    except Exception as e:  # noqa: BLE001 (no git, a shallow clone: the baseline is skipped, with a note)
        print(f"note: baseline {commit} of attnstat.{module} unavailable ({type(e).__name__}); skipped")
        return None
