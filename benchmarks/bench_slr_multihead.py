"""Benchmark of the multi-head SLR dynamics (plain script; prints timings and ratios).

1. Exact frame reduction of online SGD against the literal D-dimensional simulation (same law, tests/test_slr_multihead.py):
   time per step at D = 500 and 2000, 8 seeds, H = K = 2, L = 4. Ratio = literal / frame.
2. The overlap ODE against online SGD at equal accuracy on the head-sum key overlap m_k1,1 + m_k2,1 at t = 8 (the
   symmetric plateau, where the ODE is the mean of the simulations): the ODE's standard error comes from the spread of
   its replicates, the SGD's from the seed-to-seed spread at D = 2000; the SGD cost is scaled to the number of seeds that
   gives the ODE's standard error (1/n law of a variance, stated as such). Ratio = SGD / ODE.

Run: .venv/bin/python benchmarks/bench_slr_multihead.py [--quick]
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import sys, time
import numpy as np
from attnstat.slr.multihead import MultiFeatureSLR, mh_online_sgd, mh_integrate

QUICK = "--quick" in sys.argv
RUN = MultiFeatureSLR(4, (4.0, 1.5), 1.0, noise=0.1)

def per_step(D, tokens, t=0.2):
    s = mh_online_sgd(RUN, "softmax", 2, D, t, eta=0.5, n_seeds=8, seed=1, tokens=tokens, n_out=2)
    return s.seconds / round(t * D / 0.5)

for D in ((500,) if QUICK else (500, 2000)):
    a, b = per_step(D, True), per_step(D, False)
    print(f"D = {D}: literal {a * 1e6:.0f} us/step, frame {b * 1e6:.0f} us/step, ratio {a / b:.1f}")

t_end = 2.0 if QUICK else 8.0
ode = mh_integrate(RUN, "softmax", (np.zeros((4, 4)), 0.25 * np.eye(4), 0.0), t_end, eta=0.5, dt=0.1,
                   n_mc=2**12, n_rep=4, seed=3, n_out=2)
q = ode.M[:, -1, 0, 0] + ode.M[:, -1, 1, 0]; se_ode = q.std(ddof=1) / 2
D = 500 if QUICK else 2000
sgd = mh_online_sgd(RUN, "softmax", 2, D, t_end, eta=0.5, n_seeds=8, seed=4, n_out=2)
qs = sgd.M[:, -1, 0, 0] + sgd.M[:, -1, 1, 0]; sd = qs.std(ddof=1)
seeds_needed = (sd / se_ode)**2
cost_sgd = sgd.seconds / 8 * seeds_needed
print(f"ODE to t = {t_end}: {ode.seconds:.1f} s, s.e. {se_ode:.4f} (value {q.mean():.4f}); SGD D = {D}: "
      f"{sgd.seconds:.1f} s for 8 seeds, spread {sd:.4f} (mean {qs.mean():.4f}); seeds for equal s.e. {seeds_needed:.0f}, "
      f"cost {cost_sgd:.1f} s; ratio SGD/ODE {cost_sgd / ode.seconds:.1f}")
print("load", os.getloadavg()[0])
