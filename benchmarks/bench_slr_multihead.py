"""Benchmark of the multi-head SLR dynamics (plain script; prints timings and ratios).

1. Exact frame reduction of online SGD against the literal D-dimensional simulation (same law, tests/test_slr_multihead.py):
   CPU time per step at D = 500 and 2000, 8 seeds, H = K = 2, L = 4. Ratio = literal / frame.
2. The overlap ODE against online SGD at equal accuracy on the head-sum key overlap m_k1,1 + m_k2,1 at t = 4, on the
   symmetric plateau (shaded in the chapter's figure, t < 5), where the symmetric ODE is the D -> infinity mean of the
   simulations. The ODE uses exchange-symmetric draws (mh_draws(..., exchange=True)): with plain draws its Monte Carlo
   error breaks the head symmetry and the replicates leave the plateau at seed-dependent times, which is then what their
   spread measures (an earlier version of this benchmark did that, at t = 8, and found the ODE *dearer* than SGD, ratio
   0.2). The ODE's standard error comes from the spread of 4 independent replicates (3 degrees of freedom: it scatters by
   about 40 %), the SGD's from the seed-to-seed spread of 8 runs at D = 2000; the SGD cost is scaled to the number of seeds
   that gives the ODE's standard error (the 1/n law of a variance, stated as such). Times are CPU seconds of this process
   (time.process_time, one BLAS thread), so that a shared machine's load changes them less than wall-clock times.
   Ratio = SGD / ODE (> 1: the ODE is cheaper). It ignores SGD's O(1/D) bias, which the ODE does not have.

Recorded full run (2026-12-05 13:30 UTC, shared 2-core machine, load average 8.2 before and 8.0 after, niced, CPU times):
   [1] literal / frame per step 1.86 at D = 500, 6.55 at D = 2000 (the frame's cost does not grow with D);
   [2] ODE 3.5 s CPU, head sum 0.5813 +- 0.0232 (4 replicates); SGD at D = 2000, 8 seeds, 3.2 s CPU, 0.5799, spread
   0.0291 per seed (ODE - SGD: 0.05 combined s.e.); 2 seeds reach the ODE's standard error: ratio SGD / ODE = 0.18.
   At equal accuracy the ODE is about 5 times *dearer* than online SGD at D = 2000 (uncertain by a factor of about 2: the
   ODE's error has 3 degrees of freedom). The reason: one replicate's Monte Carlo drift on n sequences is about as noisy
   as one SGD run on as many fresh sequences (here 4 x 2^12 against 16 000 steps), and the ODE evaluates all n of them at
   each of its t / dt = 40 steps. What the ODE buys is the D -> infinity limit itself (no O(1/D) bias, no finite-D escape).
   The former version of this benchmark (plain draws, t = 8, wall clock, load 7.6-8.4) gave literal / frame 2.0 and 7.5
   and SGD / ODE 0.2, the latter from replicates that had left the plateau.

Run: .venv/bin/python benchmarks/bench_slr_multihead.py [--quick]   (--quick: D = 500, t = 2; seconds)
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import math, time
import numpy as np
from attnstat.slr.multihead import MultiFeatureSLR, mh_online_sgd, mh_integrate
from _bench import QUICK, ratio, load

print(f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, {load()}")
RUN = MultiFeatureSLR(4, (4.0, 1.5), 1.0, noise=0.1)


def cpu(fn):
    "(result, CPU seconds) of one call."
    c0 = time.process_time()
    out = fn()
    return out, time.process_time() - c0


def per_step(D, tokens, t=0.2):
    "CPU seconds per online-SGD step of 8 seeds at dimension D (literal tokens or the frame reduction)."
    _, c = cpu(lambda: mh_online_sgd(RUN, "softmax", 2, D, t, eta=0.5, n_seeds=8, seed=1, tokens=tokens, n_out=2))
    return c / round(t * D / 0.5)


for D in ((500,) if QUICK else (500, 2000)):
    a, b = per_step(D, True), per_step(D, False)
    print(f"[1] D = {D}: literal {a * 1e6:.0f} us/step, frame {b * 1e6:.0f} us/step (CPU, 8 seeds)")
    ratio(f"literal / frame SGD step, D = {D}", a / b, "8 seeds, H = K = 2, L = 4")

t_end = 2.0 if QUICK else 4.0
ode, c_ode = cpu(lambda: mh_integrate(RUN, "softmax", (np.zeros((4, 4)), 0.25 * np.eye(4), 0.0), t_end, eta=0.5,
                                      dt=0.1, n_mc=2**12, n_rep=4, seed=3, n_out=2, exchange=True))
q = ode.M[:, -1, 0, 0] + ode.M[:, -1, 1, 0]; se_ode = q.std(ddof=1) / 2
D = 500 if QUICK else 2000
sgd, c_sgd = cpu(lambda: mh_online_sgd(RUN, "softmax", 2, D, t_end, eta=0.5, n_seeds=8, seed=4, n_out=2))
qs = sgd.M[:, -1, 0, 0] + sgd.M[:, -1, 1, 0]; sd = qs.std(ddof=1)
seeds_needed = (sd / se_ode)**2
cost_sgd = c_sgd / 8 * seeds_needed
gap = abs(q.mean() - qs.mean()) / math.hypot(se_ode, sd / math.sqrt(8))
print(f"[2] ODE (exchange-symmetric draws, 4 x 2^12 sequences, dt = 0.1) to t = {t_end:g}: {c_ode:.1f} s CPU "
      f"({ode.seconds:.1f} s wall); head sum {q.mean():.4f} +- {se_ode:.4f}")
print(f"[2] online SGD, D = {D}, 8 seeds: {c_sgd:.1f} s CPU ({sgd.seconds:.1f} s wall); head sum {qs.mean():.4f}, "
      f"seed-to-seed spread {sd:.4f}; ODE - SGD = {gap:.2f} combined standard errors")
print(f"[2] seeds for the ODE's standard error: {seeds_needed:.0f}, SGD cost {cost_sgd:.1f} s CPU; "
      f"ratio SGD / ODE {cost_sgd / c_ode:.1f}")
ratio("online SGD / overlap ODE at equal accuracy", cost_sgd / c_ode,
      f"head-sum key overlap at t = {t_end:g}, D = {D}, CPU seconds, seeds scaled by the 1/n law")
print(load())
