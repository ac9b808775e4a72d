"""Benchmarks of attnstat.rmt (plain script; prints timings and speed ratios).

1. attention_error on a 50-point gamma grid (continuation + implicit derivative) vs a naive baseline
   (each gamma solved from zero, derivative by central finite difference with two extra solves).
2. one ridge_error call (closed form) vs a naive quadrature evaluation of the same deterministic
   equivalent (Stieltjes transform by the Gauss–Chebyshev rule, derivative by finite difference), and vs the
   baseline commit's ridge_error (_bench.BASELINE).
3. theory vs simulation at n = 2048, p = 1024 (c = 1/2), tanh, W = I, ||mu||^2 = 1: the cost of one
   simulated trial (kernel, two Gram matrices, two eigendecompositions) and of the number of trials
   needed for a standard error of 1e-3, against one theory call on the same 50-point grid.

5. the run-time guard of empirical_errors: its estimate against the measured CPU time of small cases (target:
   within 3x), today's calibration and the baseline's.

All times are CPU seconds of this process (time.process_time), single BLAS thread.

Usage: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_rmt.py [--quick]
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before numpy: CPU time = work, no thread spinning
import math, sys, time, timeit
import numpy as np
from attnstat.fixed_point import fixed_point
from attnstat.rmt import attention_error, ridge_error, empirical_errors, mp_rule, activation
from attnstat.rmt import theory as T
from _bench import ratio, load

CLOCK = time.process_time   # CPU time of this process: robust to other jobs on a shared machine
                             # (single-threaded numpy here; run with OPENBLAS_NUM_THREADS=1 for the simulation)
def best(f, repeat=5):
    ts = []
    for _ in range(repeat):
        t = CLOCK(); f(); ts.append(CLOCK() - t)
    return min(ts)

quick = "--quick" in sys.argv
print(load())
g = np.logspace(-5, 1, 50)
kw = dict(c=0.5, gamma=g, mu=[1.0, 0.0], w_K=[0.6, 0.8], w_Q=[1.2, -0.3])
attention_error("tanh", **kw)                                   # warm caches (Hermite, nodes)
def cold(**k):
    T._noise_solution.cache_clear()          # time the full solve, not the cached (delta, eta, theta)
    return attention_error("tanh", **k)
t_theory = best(lambda: cold(**kw))
t_warm = best(lambda: attention_error("tanh", **kw))

def naive():
    act = activation("tanh")
    act_, P = T._problem(act, 0.5, kw["mu"], kw["w_K"], kw["w_Q"], 0.0, None, True)   # same nodes as the fast path
    out = []
    for gi in g:
        ys = []
        for gg in (gi * (1 + 1e-4), gi * (1 - 1e-4)):
            r = fixed_point(lambda x: T._fp_map(x, gg, P.c, P.a1, P.s2, P.d, P.rule), np.zeros(3), atol=1e-13, rtol=1e-13, max_iter=50_000)
            ys.append(T._ybar(r.x, gg, P))
        out.append(-gi * gi * (ys[0] - ys[1]) / (2e-4 * gi))
    return np.array(out)
t_naive = best(naive, repeat=1 if not quick else 1)
gap = np.max(np.abs(naive() - attention_error("tanh", **kw))) if not quick else float("nan")
print(f"[1] attention_error, 50-point gamma grid: {t_theory * 1e3:.0f} ms cold, {t_warm * 1e3:.0f} ms with the "
      f"(mu, w)-independent fixed point cached "
      f"(naive: {t_naive * 1e3:.0f} ms, ratio {t_naive / t_theory:.1f}x; max |difference| {gap:.1e})")
ratio("attention_error, 50 gammas: naive / continuation + implicit derivative", t_naive / t_theory, "cold caches")

# [2] ridge_error: CPU per call, best of several repeats (a single timeit run on a shared machine measured 0.78x once)
from _bench import BASELINE, cpu_best, former
n_call = 1000 if quick else 10000
rr_call = lambda: ridge_error(c=0.5, gamma=1e-3, snr=1.0)
t_rr = cpu_best(rr_call, n_call, 5)
rule = mp_rule(0.5)
def rr_naive(gamma=1e-3, c=0.5, snr=1.0, h=1e-4):
    yb = lambda gg: 1 / (gg * (1 + (snr + c) * rule.integrate(lambda l: 1 / (l + gg))))
    return -gamma**2 * (yb(gamma * (1 + h)) - yb(gamma * (1 - h))) / (2 * h * gamma)
t_rr_naive = cpu_best(rr_naive, n_call // 10, 5)
T_old = former("rmt.theory")
t_rr_old = cpu_best(lambda: T_old.ridge_error(c=0.5, gamma=1e-3, snr=1.0), n_call, 5) if T_old else float("nan")
print(f"[2] ridge_error, one call: {t_rr * 1e6:.1f} us CPU (naive quadrature: {t_rr_naive * 1e6:.1f} us, "
      f"ratio {t_rr_naive / t_rr:.1f}x; baseline {BASELINE}: {t_rr_old * 1e6:.1f} us; "
      f"|difference| {abs(rr_naive() - rr_call()):.1e})")
ratio("ridge_error: naive quadrature / closed form", t_rr_naive / t_rr, "one call, CPU; target >= 1")
if T_old: ratio(f"ridge_error: baseline {BASELINE} / today", t_rr_old / t_rr, "one call, CPU")

n, p, trials = (1024, 512, 2) if quick else (2048, 1024, 3)
t = CLOCK()
e = empirical_errors("tanh", n, p, [1.0], [0.0], [0.0], g, trials, 0)
t_trial = (CLOCK() - t) / trials
sd = float(np.max(e.attention.std(axis=0, ddof=1)))
need = max(1, int(np.ceil((sd / 1e-3)**2)))
need2 = max(1, int(np.ceil((sd / 5e-4)**2)))
t_theory1 = best(lambda: cold(c=p / n, gamma=g, mu=[1.0], w_K=[0.0], w_Q=[0.0]))
print(f"[3] n = {n}, p = {p}: one simulated trial {t_trial:.2f} s vs theory {t_theory1 * 1e3:.0f} ms "
      f"(ratio {t_trial / t_theory1:.0f}x per trial); per-trial s.d. of E_Attn {sd:.4f} -> {need} trials for "
      f"s.e. 1e-3: {need * t_trial:.0f} s, ratio {need * t_trial / t_theory1:.0f}x; {need2} trials for s.e. 5e-4: "
      f"ratio {need2 * t_trial / t_theory1:.0f}x")
ratio("simulation for s.e. 1e-3 / theory call", need * t_trial / t_theory1, f"n = {n}, p = {p}, 50 gammas")

# [4] issue 14: the finite-gamma fixed point at small gamma, Newton (today) vs the damped continuation of the previous
# release (copied here as the baseline), and the ridgeless limit for c near 1 (the baseline raised ConvergenceError)
from attnstat.core import ConvergenceError
from attnstat.fixed_point import continuation
from attnstat.rmt import noise_fixed_point, attention_error_ridgeless

def old_solve(f, c, g):
    "The previous _solve_grid: damped continuation (damping 0.3) from large gamma down, 20,000 iterations per gamma."
    act = activation(f); rule = mp_rule(c); a1, s2 = act.coef.a1, act.coef.sigma2
    order = np.argsort(-g)
    res = continuation(lambda x, gg: T._fp_map(x, gg, c, a1, s2, 0.0, rule), g[order], np.zeros(3), damping=0.3,
                       atol=1e-12, rtol=1e-12, max_iter=20_000, on_fail="warn")
    return sum(r.n_iter for r in res), all(r.converged for r in res)

import warnings
grid = np.array([1e-4, 1e-6, 1e-8])
print("[4] fixed point on gamma = 1e-4, 1e-6, 1e-8 (total map evaluations, CPU time):")
ratios = []
for f, c in ((("tanh", 0.99),) if quick else (("tanh", 0.5), ("tanh", 0.99), ("relu", 0.99), ("relu", 1.1), ("sign", 1.01))):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = CLOCK(); n_old, ok_old = old_solve(f, c, grid); t_old = CLOCK() - t
    t = CLOCK(); fp = noise_fixed_point(f, c=c, gamma=grid); t_new = CLOCK() - t
    print(f"    {f:5s} c = {c:<5g} baseline: {n_old:6d} evaluations, {t_old:6.2f} s, converged {ok_old}; "
          f"Newton: {int(fp.n_iter.sum()):4d} evaluations, {t_new:5.3f} s, converged {bool(fp.converged.all())}; "
          f"time ratio {t_old / t_new:.0f}x")
    ratios.append(t_old / t_new)
ratio("small-gamma fixed point: damped continuation / Newton (smallest over cases)", min(ratios), "gamma = 1e-4, 1e-6, 1e-8")

def old_ridgeless(f, c):
    "The previous ridgeless system: damped iteration (damping 0.5), 2,000 iterations."
    act = activation(f); lam, w = T._mp_nodes(c, T.default_nodes(c)); a1, s2 = act.coef.a1, act.coef.sigma2
    D = s2 * (1 - c) / c
    def F(x):
        m = (a1 / c) * lam - a1 - x[1]; iq = w / ((1 + x[0]) * D + m * m); u = s2 * iq.sum()
        return np.array([u / (1 - u), s2 * (iq * m).sum()])
    try: return fixed_point(F, np.zeros(2), damping=0.5, atol=1e-13, rtol=1e-13).n_iter
    except ConvergenceError: return None
print("[4b] ridgeless limit (baseline iterations or failure -> today's value):")
for f in (("tanh",) if quick else ("tanh", "relu", "sign")):
    row = []
    for c in ((0.9, 0.99) if quick else (0.9, 0.95, 0.99)):
        n = old_ridgeless(f, c)
        row.append(f"c = {c}: {'FAILED' if n is None else n} -> {attention_error_ridgeless(f, c=c, mu=[1.0], w_K=[0.0], w_Q=[0.0]):.5f}")
    print(f"    {f:5s} " + "; ".join(row))

# [5] issue 33: the run-time guard of empirical_errors, estimate / measured CPU (target within 3x; the baseline's
# 4e-9 n^2 (n + p) per trial overestimated 17-73x, refusing sizes that ran in seconds)
from attnstat.rmt.models import _trial_seconds
print(f"[5] empirical_errors guard (tanh, {g.size} gammas, one trial, CPU seconds; {load()}):")
worst = []
for n, p in (((256, 128), (512, 256)) if quick else ((256, 128), (512, 1024), (1024, 512), (2048, 1024))):
    ts = []
    for s in range(2):
        t = CLOCK(); empirical_errors("tanh", n, p, [1.0], [0.5], [0.5], g, 1, s); ts.append(CLOCK() - t)
    est, was = _trial_seconds(n, p, g.size), 4e-9 * n * n * (n + p)
    print(f"    n = {n:5d}, p = {p:5d}: measured {min(ts):7.3f} s, estimate {est:7.3f} s (ratio {est / min(ts):.2f}); "
          f"baseline estimate {was:7.3f} s (ratio {was / min(ts):.1f})")
    worst.append(est / min(ts))
ratio("empirical_errors guard: estimate / measured CPU (farthest from 1)", max(worst, key=lambda r: abs(math.log(r))),
      "not a speed-up: target in [1/3, 3]")
print(load())
