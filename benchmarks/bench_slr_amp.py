"""Benchmark: GAMP and the Bayes-optimal branches for single-location regression.

1. One point of the phase diagram (both branches with block errors and the free entropy) at the default precision
   (n_mc = 20000, 4 blocks); target under 5 s.
2. GAMP at D = 2000, alpha = 3, L = 3 to convergence, against L-BFGS ERM (`simulate_erm`, softmax, random start) on the
   same data size; target under 10 s. Printed: seconds of each and the ratio ERM / GAMP.

   With `--baseline`, the former implementation itself (`attnstat/slr/bayes.py` at commit FORMER, loaded from git
   history: plain iteration, every block re-solved, numpy reductions over the short token axis, 256 i.i.d. inner draws
   shared by all blocks at finite nu) runs on the same point in the same run, and the ratio is printed.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_slr_amp.py [--quick] [--baseline] [--branches-only]
"""
import sys, time, warnings
import numpy as np
from _former import load_former
from _bench import ratio, load
from threadpoolctl import threadpool_limits
from attnstat.slr import SpikedSLR, MaxSLR
from attnstat.slr.bayes import bayes_optimal_branches
from attnstat.slr.amp import simulate_amp
from attnstat.slr.simulate import simulate_erm

FORMER = "98a26d56034e9efa80ab79a9379cd7ef8acbd3dc"   # last commit with plain iteration, re-solved blocks, i.i.d. inner draws

def timed(f, *a, **k):
    t = time.perf_counter(); r = f(*a, **k); return r, time.perf_counter() - t

if __name__ == "__main__":
    quick = "--quick" in sys.argv
    baseline = "--baseline" in sys.argv
    former = load_former("slr.bayes", FORMER) if baseline else None
    D = 300 if quick else 2000
    print(load(), flush=True)
    with threadpool_limits(1):
        gm = (MaxSLR(3, np.inf, noise=0.1),) if quick else (MaxSLR(3, np.inf, noise=0.1), SpikedSLR(3, 1.0, noise=0.1))
        for model in (() if "--branches-only" in sys.argv else gm):
            amp, s_amp = timed(simulate_amp, model, 3.0, D, seed=0, n_test=2000)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                erm, s_erm = timed(simulate_erm, model, "softmax", 3.0, 0.1, D, init="random", seed=0, n_test=2000)
            print(f"GAMP      {model!r:38s} D={D} alpha=3: iterations {amp.result.seconds:6.2f} s ({amp.n_iter} it, "
                  f"converged {amp.converged}), whole call {s_amp:6.2f} s, test error {amp.test_error:.4f} ± {amp.test_error_se:.4f}")
            print(f"L-BFGS    {model!r:38s} D={D} alpha=3: whole call {s_erm:6.2f} s, test error {erm.test_error:.4f}; "
                  f"ratio L-BFGS / GAMP (whole calls) = {s_erm / s_amp:.2f}")
            ratio(f"L-BFGS ERM / GAMP, {model!r}", s_erm / s_amp, f"D = {D}, alpha = 3, whole calls")
        for model in ((MaxSLR(3, np.inf),) if quick else (SpikedSLR(3, 1.0), MaxSLR(3, np.inf), MaxSLR(3, 2.0), MaxSLR(5, 1.0, noise=0.1))):
            n_mc = 2000 if quick else 20_000
            b, s = timed(bayes_optimal_branches, model, 1.2, n_mc=n_mc)
            line = (f"branches  {model!r:38s} alpha=1.2: {s:6.2f} s (both branches, 4 blocks, Phi; "
                    f"{b.uninformed.n_iter}+{b.informed.n_iter} iterations), equilibrium {b.equilibrium}, hard {b.hard}")
            if baseline:   # the former implementation itself (same defaults: n_mc, 4 blocks; 256 i.i.d. inner draws)
                b0, s0 = timed(former.bayes_optimal_branches, model, 1.2, n_mc=n_mc)
                line += (f"; former solver {s0:6.2f} s ({b0.uninformed.n_iter}+{b0.informed.n_iter} iterations), "
                         f"ratio {s0 / s:5.1f}x; |q_k new - former| = {abs(b.uninformed.q_k - b0.uninformed.q_k):.1e} (uninformed), "
                         f"s.e. {b.uninformed.q_k_se:.1e}")
                ratio(f"Bayes branches: former / new, {model!r}", s0 / s, f"alpha = 1.2, n_mc = {n_mc}")
            print(line, flush=True)
            if not baseline: ratio(f"Bayes branches: 5 s target / time, {model!r}", 5.0 / s, f"alpha = 1.2, n_mc = {n_mc}; > 1 meets it")
