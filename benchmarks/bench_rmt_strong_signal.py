"""Benchmark of attnstat.rmt.strong_signal: the finite-p theory against the simulation it replaces.

At the issue's point (p = 512, n = 2048, c = 1/4, tanh with zeroed diagonal, w_K = w_Q = mu,
SNR 3, gamma = 1e-5) the finite-p theory (vector Dyson equation, notebook 03g) is within 0.001 of
the paired simulation (-0.0379 against -0.0369 +- 0.0011); the closure it replaces missed by 0.004.
A simulation matches those accuracies when the standard error of its paired gap reaches 0.004 and
0.001. The ratio is the CPU time of those trials over the CPU time of one theory call on the same
four-point gamma grid (> 1: the theory is faster).

All times are CPU seconds of this process (time.process_time), single BLAS thread.

Usage: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_rmt_strong_signal.py [--quick]
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import math
import time

import numpy as np
from _bench import QUICK, load, ratio

from attnstat.core import spawn
from attnstat.rmt.models import empirical_errors
from attnstat.rmt.strong_signal import STRONG_SIGNAL_GAMMAS, strong_signal_theory

CLOCK = time.process_time
print(load())
p, c = (256, 0.25) if QUICK else (512, 0.25)
n = int(p / c)
mu = np.array([math.sqrt(3.0), 0.0])
g = np.array(STRONG_SIGNAL_GAMMAS)
kw = {"c": c, "gamma": g, "mu": mu, "w_K": mu, "w_Q": mu, "p": p}
strong_signal_theory("tanh", **kw)                         # warm the caches (Hermite, nodes)
ts = []
for _ in range(3):
    t = CLOCK()
    T = strong_signal_theory("tanh", **kw)
    ts.append(CLOCK() - t)
t_theory = min(ts)
trials = 4 if QUICK else 16                   # enough for the per-trial s.d.
t = CLOCK()
sims = [empirical_errors("tanh", n, p, mu, mu, mu, g, 1, rng, diag="zero")
        for rng in spawn(2026, trials)]
t_trial = (CLOCK() - t) / trials
gap = np.array([e.difference[0, 0] for e in sims])        # paired gap per trial at gamma = 1e-5
sd = float(np.std(gap, ddof=1))
print(f"p = {p}, n = {n}: theory {t_theory:.3f} s (gap {T.difference[0]:+.4f}); "
      f"one simulated trial {t_trial:.2f} s (gap {gap.mean():+.4f} "
      f"+- {sd / math.sqrt(trials):.4f}, per-trial s.d. {sd:.4f})")
for target in (0.004, 0.001):
    need = max(1, math.ceil((sd / target)**2))
    ratio(f"strong-signal: simulation to s.e. {target:g} / finite-p theory",
          need * t_trial / t_theory,
          f"p = {p}, n = {n}, {need} trials, tanh, w = mu, SNR 3, 4 gammas")
