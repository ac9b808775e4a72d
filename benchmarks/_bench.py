"""Shared helpers of the benchmarks: the `--quick` flag, and one machine-readable line per ratio, which
`benchmarks/run_all.py` (`make bench`) collects into the ratio table.

A ratio line reads `RATIO<TAB>label<TAB>value<TAB>note`: value = baseline time / new time (> 1: the new code is
faster), unless the note says otherwise."""
import os, sys

QUICK = "--quick" in sys.argv

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
