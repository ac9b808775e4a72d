"""Benchmark of attnstat.rmt.multihead (plain script; prints timings and ratios).

Theory against simulation, the comparison the chapter 03f_rmt_multihead rests on: the three readouts (XK, X(I + K),
[X; XK]) of a heterogeneous, non-symmetric H-head tanh layer, c = 1/2, ||mu||^2 = 1, on a 3-point gamma grid.
- theory: multihead_theory for the three readouts (noise fixed point, concatenated fixed point, 2H x 2H assembly),
  cold caches;
- simulation (the baseline): simulate_multihead with the same readouts, the CPU time of the trials that give a
  standard error of 1e-3 on the error, extrapolated from the measured trials (s.e. ~ 1/sqrt(trials)).
Also the 2H assembly against the H = 1 call of attention_theory, to show what the extra heads cost, and the
run-time guard of simulate_multihead (its cost model `_mh_trial_seconds`) against the simulation it timed (issue 33:
within a factor 3).

All times are CPU seconds of this process (time.process_time), single BLAS thread.
Usage: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_rmt_multihead.py [--quick]
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import sys, time
import numpy as np
from attnstat.gaussian import mean_stderr
from attnstat.rmt import theory as T
from attnstat.rmt.theory import attention_theory
from attnstat.rmt.multihead import multihead_theory, simulate_multihead, head_family, SimulationOptions, _mh_trial_seconds
from _bench import ratio, load, QUICK

CLOCK = time.process_time
print(load())
H = 4 if not QUICK else 2
p, trials = (512, 6) if not QUICK else (64, 2)
g = np.array([0.01, 0.1, 1.0])
mu, WK, WQ = head_family("hetero", H)

def theory():
    T._noise_solution.cache_clear()
    return {r: multihead_theory("tanh", c=0.5, gamma=g, mu=mu, W_K=WK, W_Q=WQ, residual=r).error for r in ("none", "sum", "concat")}
theory()                                                       # warm the Hermite coefficients and the nodes
t0 = CLOCK(); th = theory(); t_th = CLOCK() - t0
t0 = CLOCK()
opts = SimulationOptions(readouts=("none", "sum", "concat"))
sim = simulate_multihead("tanh", 2 * p, p, mu, WK, WQ, g, trials, 7, options=opts)
t_sim = CLOCK() - t0
t_est = trials * _mh_trial_seconds(2 * p, p, H, 0, g.size, opts.readouts)
print(f"run-time guard of simulate_multihead: estimate {t_est:.2f} s, measured {t_sim:.2f} s (ratio {t_est / t_sim:.2f}; "
      f"target within [1/3, 3])")
ratio(f"simulate_multihead guard: estimate / measured CPU (p = {p})", t_est / t_sim, "target in [1/3, 3]; > 1: cautious")
se = max(float(mean_stderr(sim.train[r], axis=0)[1].max()) for r in ("none", "sum", "concat"))
t_needed = t_sim * (se / 1e-3)**2                               # trials for s.e. 1e-3 at this p
print(f"theory, 3 readouts x 3 gammas, H = {H}: {t_th * 1e3:.0f} ms; simulation p = {p}: {t_sim / trials:.2f} s per trial, "
      f"s.e. {se:.4f} from {trials} trials, {t_needed:.0f} s for s.e. 1e-3")
ratio(f"multihead: simulation (s.e. 1e-3, p = {p}) / theory", t_needed / t_th, f"H = {H}, 3 readouts, 3 gammas")

def one_head():
    T._noise_solution.cache_clear()
    return attention_theory("tanh", c=0.5, gamma=g, mu=[1.0, 0, 0], w_K=[1.2, 0.9, 0], w_Q=[0.3, 0, 1.0]).error
def h_heads():
    T._noise_solution.cache_clear()
    return multihead_theory("tanh", c=0.5, gamma=g, mu=mu, W_K=WK, W_Q=WQ).error
ts = {}
for nm, fn in (("one", one_head), ("H", h_heads)):
    fn(); best = []
    for _ in range(3):
        t0 = CLOCK(); fn(); best.append(CLOCK() - t0)
    ts[nm] = min(best)
print(f"attention_theory (H = 1): {ts['one'] * 1e3:.0f} ms; multihead_theory (H = {H}): {ts['H'] * 1e3:.0f} ms")
ratio(f"attention_theory (H = 1) / multihead_theory (H = {H})", ts["one"] / ts["H"], "the cost of the 2H assembly (< 1: slower)")
