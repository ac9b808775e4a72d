"""Benchmark: 2-D Gaussian expectation by Gauss-Hermite (attnstat) vs scipy.integrate.dblquad.

Both are run to the same accuracy (error < 1e-10 against the closed form of a correlated
exponential moment) and the speed ratio is printed. `--quick`: fewer repeats (the same sizes).
"""
import math, time
import numpy as np
from _bench import QUICK, ratio, load
from scipy import integrate
from attnstat.gaussian import gauss_expect_2d

m = np.array([0.2, -0.4]); S = np.array([[1.0, 0.6], [0.6, 2.0]]); a = np.array([0.3, -0.5])
exact = math.exp(a @ m + a @ S @ a / 2)
f = lambda x, y: np.exp(a[0] * x + a[1] * y)
Si = np.linalg.inv(S); det = np.linalg.det(S)

def dens(y, x):
    d = np.array([x, y]) - m
    return math.exp(a[0] * x + a[1] * y - 0.5 * d @ Si @ d) / (2 * math.pi * math.sqrt(det))

def timeit(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter(); v = fn(); best = min(best, time.perf_counter() - t)
    return v, best

print(load())
gh, t_gh = timeit(lambda: gauss_expect_2d(f, m, S, n=24, check=False), 5 if QUICK else 50)
dq, t_dq = timeit(lambda: integrate.dblquad(dens, -12, 12, -14, 14, epsabs=1e-12, epsrel=1e-12)[0], 1 if QUICK else 3)
print(f"closed form       {exact:.14f}")
print(f"Gauss-Hermite 24^2 {gh:.14f}  error {abs(gh - exact):.1e}  time {t_gh * 1e6:9.1f} us")
print(f"dblquad           {dq:.14f}  error {abs(dq - exact):.1e}  time {t_dq * 1e6:9.1f} us")
assert abs(gh - exact) < 1e-10 and abs(dq - exact) < 1e-10, "not at equal accuracy"
print(f"speed ratio dblquad / Gauss-Hermite: {t_dq / t_gh:.0f}x")
ratio("2-d Gaussian expectation: dblquad / Gauss-Hermite 24^2", t_dq / t_gh, "error < 1e-10 both")

# The cost of the input checks (types, finiteness, memory guard, NaN scan of the integrand values) that
# gauss_expect adds to a bare Gauss-Hermite sum, on a grid of 1000 means (a typical vectorised call).
from attnstat.gaussian import gauss_expect, hermite_rule
means = np.linspace(-2, 2, 1000); x, w = hermite_rule(64)
bare = lambda: np.cos(means[:, None] + 0.7 * x) @ w
ge, t_ge = timeit(lambda: gauss_expect(np.cos, means, 0.49, n=64, check=False), 20 if QUICK else 200)
br, t_br = timeit(bare, 20 if QUICK else 200)
assert np.max(np.abs(ge - br)) < 1e-14
print(f"gauss_expect on 1000 means, 64 nodes: {t_ge * 1e6:.1f} us; bare sum {t_br * 1e6:.1f} us; "
      f"checks cost {100 * (t_ge / t_br - 1):.0f}% ({(t_ge - t_br) * 1e6:.1f} us per call)")
ratio("gauss_expect: bare sum / checked call (1000 means, 64 nodes)", t_br / t_ge, "the price of the input checks; < 1")
