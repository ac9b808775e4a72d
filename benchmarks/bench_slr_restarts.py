"""simulate_erm with K random starts batched into one GEMM per step, against one start of the scipy L-BFGS-B path
(`restarts=None`) on the same data: spiked L = 3, nu = 1, softmax, alpha = 5, lam = 0.1, D = 1000, one thread.
Target (issue 11): K = 8 restarts under 3x the time of one start of the implementation of the time (6.2 s then).

Three timings in one run: one start of the former implementation (`attnstat/slr/simulate.py` at commit FORMER of
bench_slr_paper_size.py, loaded from git history: the baseline of the target), one start of the current implementation,
and K batched starts of the current implementation. Prints both ratios (against the former one start: the target;
against the current one start: stricter) and the distinct minima found.

Usage: python benchmarks/bench_slr_restarts.py [D=1000] [K=8] [--quick]   (--quick: D = 150, K = 2, a few seconds)"""
import sys, time
from threadpoolctl import threadpool_limits
from attnstat.slr import SpikedSLR
from attnstat.slr.simulate import simulate_erm
from _former import load_former
from _bench import QUICK, ratio, load
from bench_slr_paper_size import FORMER

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    D = int(args[0]) if len(args) > 0 else (150 if QUICK else 1000)
    K = int(args[1]) if len(args) > 1 else (2 if QUICK else 8)
    m = SpikedSLR(3, 1.0)
    former = load_former("slr.simulate", FORMER)
    print(f"D = {D}, K = {K}; {load()}", flush=True)
    with threadpool_limits(1):
        t0 = time.perf_counter(); of = former.simulate_erm(m, "softmax", 5.0, 0.1, D, init="random", seed=0); t0f = time.perf_counter() - t0
        print(f"one random start, former implementation ({FORMER[:7]}): {t0f:.1f} s total, L-BFGS {of.seconds:.1f} s, "
              f"{of.n_iter} iterations, test error {of.test_error:.4f}, energy {of.energy:.5f}", flush=True)
        t0 = time.perf_counter(); one = simulate_erm(m, "softmax", 5.0, 0.1, D, init="random", seed=0); t1 = time.perf_counter() - t0
        print(f"one random start, current implementation: {t1:.1f} s total, L-BFGS {one.seconds:.1f} s, {one.n_iter} iterations, "
              f"test error {one.test_error:.4f}, energy {one.energy:.5f}", flush=True)
        t0 = time.perf_counter(); rk = simulate_erm(m, "softmax", 5.0, 0.1, D, options={"restarts": K}, seed=0); tk = time.perf_counter() - t0
    print(f"{K} random starts, batched: {tk:.1f} s total, L-BFGS {rk.seconds:.1f} s, up to {rk.n_iter} iterations; "
          f"{rk.n_minima} distinct minima, energies " + ", ".join(f"{x['energy']:.5f}" for x in rk.minima)
          + "; test errors " + ", ".join(f"{x['test_error']:.4f}" for x in rk.minima))
    print(f"K = {K} batched starts take {tk / t0f:.2f}x the time of one start of the former implementation (target < 3); "
          f"{tk / t1:.2f}x the time of one start of the current implementation")
    ratio(f"restarts: one former start / {K} batched starts", t0f / tk, f"D = {D}; target > 0.33 (K = 8 batched < 3 former starts)")
    ratio("restarts: former one start / current one start", t0f / t1, f"D = {D}")
