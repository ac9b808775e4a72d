"""Benchmark: Gaussian expectations of attnstat.gaussian against plain numpy Gauss-Hermite with cached nodes (what
an expert writes in six lines: nodes, weights and the Cholesky factor computed once, one evaluation of f, one dot),
and against the code of the baseline commit (_bench.BASELINE, issue 33's starting point), in the same process.

[1] gauss_expect_2d, 48 x 48 nodes, a correlated exponential moment: with the self-check off (equal work: target
    within 2x of plain numpy) and on (the default: orders n and 2n, against plain numpy doing both orders).
[2] gauss_expect, one scalar call (64 nodes) and one call on a grid of 1000 means.
Every result is checked against the closed form (error < 1e-10), and today's against the baseline's (difference
< 1e-14 of the integrand's scale E|f|: only the order of the final sum changed). CPU times (time.process_time), best
of several repeats, one BLAS thread. `--quick`: fewer repeats (the same sizes).

Usage: OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_gaussian.py [--quick]
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import math, warnings
import numpy as np
from _bench import BASELINE, QUICK, cpu_best, former, load, ratio
from attnstat.gaussian import gauss_expect, gauss_expect_2d, hermite_rule

print(load())
old = former("gaussian")
NUM, REP = (200, 3) if QUICK else (2000, 7)

# [1] E exp(a.(X, Y)) for (X, Y) ~ N(m, S): closed form exp(a.m + a.S.a/2)
m = np.array([0.2, -0.4]); S = np.array([[1.0, 0.6], [0.6, 2.0]]); a = np.array([0.3, -0.5])
exact = math.exp(a @ m + a @ S @ a / 2)
f = lambda x, y: np.exp(a[0] * x + a[1] * y)
n = 48

def plain_rule(k):
    "The expert's numpy: cached tensor nodes and weights and the Cholesky factor; per call one f and one dot."
    x, w = hermite_rule(k); g1, g2 = np.meshgrid(x, x, indexing="ij"); W = np.outer(w, w); L = np.linalg.cholesky(S)
    return lambda: float(np.vdot(W, f(m[0] + L[0, 0] * g1, m[1] + L[1, 0] * g1 + L[1, 1] * g2)))
plain_n, plain_2n = plain_rule(n), plain_rule(2 * n)
def plain_checked():
    v, v2 = plain_n(), plain_2n()
    if abs(v - v2) > 1e-12 + 1e-9 * abs(v2): warnings.warn("disagree")
    return v

calls = {"plain numpy, n": plain_n, "gauss_expect_2d, check off": lambda: gauss_expect_2d(f, m, S, n=n, check=False),
         "plain numpy, n and 2n": plain_checked, "gauss_expect_2d, check on": lambda: gauss_expect_2d(f, m, S, n=n)}
if old is not None:
    calls["baseline, check off"] = lambda: old.gauss_expect_2d(f, m, S, n=n, check=False)
    calls["baseline, check on"] = lambda: old.gauss_expect_2d(f, m, S, n=n)
t = {}
for name, fn in calls.items():
    assert abs(fn() - exact) < 1e-10 * exact, name
    t[name] = cpu_best(fn, NUM, REP)
print(f"[1] E exp(a.(X, Y)), (X, Y) ~ N(m, S), {n} x {n} nodes (CPU microseconds per call):")
for name, v in t.items(): print(f"    {name:28s} {v * 1e6:8.1f} us")
ratio(f"gauss_expect_2d {n}^2, check off: plain numpy GH / gauss_expect_2d", t["plain numpy, n"] / t["gauss_expect_2d, check off"],
      "target >= 0.5 (within 2x of plain numpy at equal nodes)")
ratio(f"gauss_expect_2d {n}^2, check on (n and 2n): plain numpy GH n and 2n / gauss_expect_2d",
      t["plain numpy, n and 2n"] / t["gauss_expect_2d, check on"], "target >= 0.5; the default self-check")
if old is not None:
    ratio(f"gauss_expect_2d {n}^2, check off: baseline {BASELINE} / today", t["baseline, check off"] / t["gauss_expect_2d, check off"])
    ratio(f"gauss_expect_2d {n}^2, check on: baseline {BASELINE} / today", t["baseline, check on"] / t["gauss_expect_2d, check on"])
    # the same numbers: only the order of the final sum changed (vdot with w w^T instead of einsum)
    rng, worst = np.random.default_rng(0), 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(20 if QUICK else 200):
            A = rng.standard_normal((2, 2)); C = A @ A.T if k % 4 else np.outer(A[0], A[0]); mu = rng.standard_normal(2)
            for g in (f, lambda x, y: np.tanh(x + 2 * y), lambda x, y: np.maximum(x, 0) * y):
                d = abs(gauss_expect_2d(g, mu, C, n=n, check=False) - old.gauss_expect_2d(g, mu, C, n=n, check=False))
                scale = gauss_expect_2d(lambda x, y: np.abs(g(x, y)), mu, C, n=n, check=False)
                worst = max(worst, d / scale if scale > 0 else d)
    print(f"    today vs baseline: max |difference| / E|f| = {worst:.1e} over {20 if QUICK else 200} (m, cov), 3 f")
    assert worst < 1e-14, worst

# [2] one dimension: E cos(mu + s xi) = cos(mu) exp(-s^2/2)
x64, w64 = hermite_rule(64)
means = np.linspace(-2, 2, 1000)
calls = {"plain numpy, scalar": lambda: float(np.cos(0.3 + 0.7 * x64) @ w64),
         "gauss_expect, scalar": lambda: gauss_expect(np.cos, 0.3, 0.49, n=64, check=False),
         "plain numpy, 1000 means": lambda: np.cos(means[:, None] + 0.7 * x64) @ w64,
         "gauss_expect, 1000 means": lambda: gauss_expect(np.cos, means, 0.49, n=64, check=False)}
if old is not None:
    calls["baseline, scalar"] = lambda: old.gauss_expect(np.cos, 0.3, 0.49, n=64, check=False)
    calls["baseline, 1000 means"] = lambda: old.gauss_expect(np.cos, means, 0.49, n=64, check=False)
t = {}
for name, fn in calls.items():
    v = fn(); want = np.cos(means if "means" in name else 0.3) * math.exp(-0.49 / 2)
    assert np.max(np.abs(v - want)) < 1e-12, name
    if old is not None and "baseline" not in name and "plain" not in name:
        assert np.array_equal(v, calls[name.replace("gauss_expect", "baseline")]()), name   # bit for bit
    t[name] = cpu_best(fn, NUM // (10 if "means" in name else 1), REP)
print("[2] E cos(mu + 0.7 xi), 64 nodes (CPU microseconds per call):")
for name, v in t.items(): print(f"    {name:28s} {v * 1e6:8.1f} us")
ratio("gauss_expect scalar, check off: plain numpy / gauss_expect", t["plain numpy, scalar"] / t["gauss_expect, scalar"],
      "the price of the entry checks on one number")
ratio("gauss_expect 1000 means, check off: plain numpy / gauss_expect", t["plain numpy, 1000 means"] / t["gauss_expect, 1000 means"],
      "the price of the entry checks on an array")
if old is not None:
    ratio(f"gauss_expect scalar: baseline {BASELINE} / today", t["baseline, scalar"] / t["gauss_expect, scalar"])
print(load())
