"""Benchmark of the SLR population routines (plain script; prints timings and speed ratios).

1. `optimal_population_risk` for softmax in spiked-SLR (target < 0.2 s), against the same optimisation on the
   Monte Carlo route (2e5 sequences, common random numbers).
2. One risk-vs-nu curve of 50 points for the four activations (target < 10 s CPU), warm starts vs cold starts; the CPU
   time against the target as a ratio (> 1: met), with the load.
3. The Laplace route vs Monte Carlo at the same accuracy 1e-4 on A and B (target ratio > 100), and the
   cost of the Laplace route as L grows (independent of L).
4. `bayes_risk` at large nu: the log-space route (grid independent of nu; target < 1 s and < 50 MB at nu = 1e6)
   against the earlier Gauss-Hermite Laplace route, whose grid grows like nu (36 s and 5.5 GB at nu = 1e4, so
   it is timed here at nu <= 1e3 only), and the softmax optimum at L = 1e6.
5. Finite-nu max-SLR optima of softmax and softplus: the two-denominator Laplace route against the Monte Carlo
   route that was the only one before issue 18 (L = 3, nu = 2; at L = 50, nu = 0.5 against the 304 s measured then).

Run: .venv/bin/python benchmarks/bench_slr_population.py [--quick]   (--quick: the same sections on smaller grids, seconds)

OpenBLAS: on a small, shared machine the BLAS thread pool makes every iteration of scipy's L-BFGS-B several
times slower (thread wake-ups); the script therefore pins one BLAS thread unless OPENBLAS_NUM_THREADS is set.
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import math, time, statistics, warnings
import numpy as np
import tracemalloc
from attnstat.slr import SpikedSLR, optimal_population_risk, optimal_risk_curve, risk_terms, bayes_risk
from attnstat.slr.population import _mc_AB, _MC_CACHE, _laplace_AB
from attnstat.slr.activations import softmax
from _bench import QUICK, ratio, load


def timed(f, repeat=5):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter(); out = f(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


print(f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, {load()}")

# 1. softmax optimum
model = SpikedSLR(3, 2.0)
t_opt, r = timed(lambda: optimal_population_risk(model, "softmax"))
n_mc1 = 20_000 if QUICK else 200_000
t_mc, r_mc = timed(lambda: optimal_population_risk(model, "softmax", method="monte carlo", n_mc=n_mc1, seed=0), repeat=1)
print(f"[1] softmax optimum, spiked L=3 nu=2: {t_opt * 1e3:.1f} ms (target < 200 ms), risk {r.risk:.6f} "
      f"(accuracy {r.err:.1e}); Monte Carlo route {t_mc:.2f} s, risk {r_mc.risk:.4f} ± {r_mc.err:.4f}; "
      f"ratio {t_mc / t_opt:.0f}x")
ratio("softmax optimum, spiked: Monte Carlo route / Laplace route", t_mc / t_opt, f"n_mc = {n_mc1}")

# 2. a 50-point curve for the four activations
nus = np.linspace(0.2, 10.0, 5 if QUICK else 50)
models = [SpikedSLR(3, nu) for nu in nus]
tot_w = tot_c = cpu_w = 0.0
for act in (("softmax", "linear") if QUICK else ("softmax", "linear", "erf", "softplus")):
    c0 = time.process_time()
    t0 = time.perf_counter(); warm = optimal_risk_curve(models, act); tw = time.perf_counter() - t0
    cpu_w += time.process_time() - c0
    t0 = time.perf_counter(); cold = optimal_risk_curve(models, act, warm=False); tc = time.perf_counter() - t0
    dev = max(abs(a.risk - b.risk) for a, b in zip(warm, cold))
    tot_w += tw; tot_c += tc
    print(f"[2] {act:8s} {nus.size} points: warm starts {tw:.2f} s, cold starts {tc:.2f} s, max |warm - cold| = {dev:.1e}")
ratio("risk-vs-nu curve: cold / warm starts", tot_c / tot_w, f"{nus.size} points")
print(f"[2] all activations, {nus.size} points: {tot_w:.2f} s wall ({cpu_w:.2f} s CPU) with warm starts (target < 10 s); "
      f"cold starts {tot_c:.2f} s; ratio {tot_c / tot_w:.1f}x; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
ratio(f"population curve ({'2' if QUICK else '4'} activations x {nus.size} points) CPU: 10 s target / measured",
      10.0 / cpu_w, f"CPU {cpu_w:.2f} s with warm starts (issue 33: < 10 s); {load()}")

# 3. Laplace vs Monte Carlo at accuracy 1e-4
m_k, q_k, target = 1.0, 1.5, 1e-4
if QUICK: target = 1e-3
t_lap, t = timed(lambda: risk_terms(model, "softmax", m_k, q_k, accuracy=False), repeat=20)
t_acc = risk_terms(model, "softmax", m_k, q_k)
a, b = _mc_AB(model, softmax, m_k, q_k, 0.0, 100_000, 99, per_sample=True)
n_req = int(math.ceil(max(a.std(), b.std())**2 / target**2))
_MC_CACHE.clear()
t0 = time.perf_counter(); A, B, eA, eB = _mc_AB(model, softmax, m_k, q_k, 0.0, n_req, 1234); t_mcr = time.perf_counter() - t0
_MC_CACHE.clear()
print(f"[3] Laplace A, B: {t_lap * 1e3:.2f} ms, accuracy {max(t_acc.err_A, t_acc.err_B):.1e}; "
      f"Monte Carlo needs n = {n_req:,} for standard error {target:g}: {t_mcr:.2f} s "
      f"(|A_MC - A| = {abs(A - t.A):.1e}, s.e. {eA:.1e}); ratio {t_mcr / t_lap:.0f}x (target > 100x)")
ratio("A, B at equal accuracy: Monte Carlo / Laplace", t_mcr / t_lap, f"accuracy {target:g}; target > 100")
for L in ((2, 1000) if QUICK else (2, 10, 100, 1000)):
    tL, _ = timed(lambda: risk_terms(SpikedSLR(L, 2.0), "softmax", m_k, q_k, accuracy=False), repeat=10)
    print(f"[3] Laplace route at L = {L:4d}: {tL * 1e3:.2f} ms")


# 4. Bayes risk at large nu: log-space route vs the earlier Gauss-Hermite route (its grid grows with nu)
def traced(f):
    "CPU seconds (not wall: the machine is shared), peak traced memory and the result of f()."
    tracemalloc.start(); t0 = time.process_time(); out = f(); dt = time.process_time() - t0
    peak = tracemalloc.get_traced_memory()[1]; tracemalloc.stop()
    return dt, peak, out
for nu in ((1e2,) if QUICK else (1e2, 1e3)):
    t_new, m_new, b = traced(lambda: bayes_risk(SpikedSLR(3, nu)))
    def old_bayes():   # the earlier bayes_risk: the rule and its refinement (for the error estimate)
        b0 = _laplace_AB(softmax.log_a, nu, nu, {3: 1.0}, complements=True)[3]
        _laplace_AB(softmax.log_a, nu, nu, {3: 1.0}, n=192, ds=0.125, complements=True)
        return b0
    t_old, m_old, old = traced(old_bayes)
    print(f"[4] bayes_risk nu = {nu:g}: log-space route {t_new:.3f} s CPU, peak {m_new / 1e6:.1f} MB (value {b.risk:.6e}); "
          f"earlier Gauss-Hermite route {t_old:.3f} s, peak {m_old / 1e6:.1f} MB (value {old:.6e}); "
          f"ratio {t_old / t_new:.1f}x in time, {m_old / m_new:.1f}x in memory")
    ratio(f"bayes_risk nu = {nu:g}: Gauss-Hermite route / log-space route", t_old / t_new, "CPU time")
for nu in ((1e6,) if QUICK else (1e4, 1e6)):
    t_new, m_new, b = traced(lambda: bayes_risk(SpikedSLR(3, nu)))
    print(f"[4] bayes_risk nu = {nu:g}: {t_new:.3f} s CPU (target < 1 s), peak {m_new / 1e6:.1f} MB, log of the risk "
          f"{b.log_excess:.4f} (the earlier route: 36 s, 5.5 GB and a printed 0 at nu = 1e4; out of memory at 3e4)")
for nu in ((2.0,) if QUICK else (2.0, 8.0)):
    t_opt, _, r = traced(lambda: optimal_population_risk(SpikedSLR(10**6, nu), "softmax"))
    print(f"[4] softmax optimum, L = 1e6, nu = {nu:g}: {t_opt:.2f} s CPU, risk {r.risk:.10f} = Bayes "
          f"{bayes_risk(SpikedSLR(10**6, nu)).risk:.10f} at m_k = {r.m_k:.6f} (c_nu = {math.sqrt(nu):.6f})")

# 5. issue 18: finite-nu max-SLR optima of normalised activations, the two-denominator Laplace route against the
# Monte Carlo route they had before (which also fell below the Bayes risk: the optimiser's curse)
from attnstat.slr import MaxSLR
n_mc5 = 20_000 if QUICK else 200_000
for L, nu in (((3, 2.0),) if QUICK else ((3, 2.0), (50, 0.5))):
    m5 = MaxSLR(L, nu); b5 = bayes_risk(m5)
    for act in ("softmax", "softplus"):
        t0 = time.perf_counter(); r5 = optimal_population_risk(m5, act); t_lap5 = time.perf_counter() - t0
        line = (f"[5] {act} optimum, max-SLR L = {L}, nu = {nu:g}: Laplace {t_lap5:.2f} s, risk {r5.risk:.8f} ± {r5.err:.1e} "
                f"(Bayes {b5.risk:.8f})")
        if L <= 3:   # the Monte Carlo route at L = 50 took 304 s (issue 18): not rerun
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter(); rm = optimal_population_risk(m5, act, method="monte carlo", n_mc=n_mc5, seed=0)
                t_mc5 = time.perf_counter() - t0
            line += f"; Monte Carlo route (n_mc = {n_mc5}) {t_mc5:.2f} s, risk {rm.risk:.5f} ± {rm.err:.1e}"
            ratio(f"max-SLR {act} optimum (L = {L}, nu = {nu:g}): Monte Carlo / Laplace", t_mc5 / t_lap5,
                  f"n_mc = {n_mc5}: error {rm.err:.0e} (and biased low) against {r5.err:.0e}")
        else:
            ratio(f"max-SLR {act} optimum (L = {L}, nu = {nu:g}): 304 s (former, issue 18) / Laplace", 304.0 / t_lap5, "former not rerun")
        print(line, flush=True)
