"""Tests of the shared numerical core: validation, Gaussian expectations, fixed-point solver."""
import math, warnings
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from attnstat.core import check_real, check_positive, check_int, as_generator, spawn, ConvergenceError, ConvergenceWarning
from attnstat.gaussian import gauss_expect, gauss_expect_2d, quad_expect, hermite_rule, QuadratureWarning, mean_stderr
from attnstat.fixed_point import fixed_point, continuation

# ---------------------------------------------------------------- Gaussian expectations
@settings(max_examples=40, deadline=None)
@given(m=st.floats(-2, 2), s=st.floats(0.05, 2.0), a=st.floats(-1.5, 1.5), b=st.floats(-1.5, 1.5))
def test_1d_closed_form(m, s, a, b):
    # E exp(a X) cos(b X), X ~ N(m, s^2) = Re E exp((a + ib) X) = Re exp((a+ib) m + (a+ib)^2 s^2 / 2)
    w = complex(a, b)
    exact = (np.exp(w * m + w * w * s * s / 2)).real
    got = gauss_expect(lambda t: np.exp(a * t) * np.cos(b * t), m, s * s, n=64)
    assert abs(got - exact) <= 1e-10 * max(1.0, abs(exact))

@settings(max_examples=40, deadline=None)
@given(m1=st.floats(-1, 1), m2=st.floats(-1, 1), s1=st.floats(0.2, 1.5), s2=st.floats(0.2, 1.5),
       rho=st.floats(-0.95, 0.95), a=st.floats(-1, 1), b=st.floats(-1, 1))
def test_2d_correlated_closed_form(m1, m2, s1, s2, rho, a, b):
    S = np.array([[s1 * s1, rho * s1 * s2], [rho * s1 * s2, s2 * s2]])
    m, v = np.array([m1, m2]), np.array([a, b])
    exact = math.exp(v @ m + v @ S @ v / 2)
    got = gauss_expect_2d(lambda x, y: np.exp(a * x + b * y), m, S, n=40)
    assert abs(got - exact) <= 1e-10 * exact
    # second moments: E[X Y] = S12 + m1 m2 (a polynomial: exact up to rounding)
    assert abs(gauss_expect_2d(lambda x, y: x * y, m, S, n=8) - (S[0, 1] + m1 * m2)) < 1e-12

def test_kinked_1d_needs_breakpoints():
    mu, s = -0.3, 0.8
    exact = mu * 0.5 * (1 + math.erf(mu / (s * math.sqrt(2)))) + s * math.exp(-mu**2 / (2 * s * s)) / math.sqrt(2 * math.pi)
    assert abs(quad_expect(lambda t: max(t, 0.0), mu, s, breakpoints=[0.0]) - exact) < 1e-11
    with pytest.warns(QuadratureWarning):
        gauss_expect(lambda t: np.maximum(t, 0), mu, s * s, n=20)

def test_psd_and_bad_inputs():
    # a singular but PSD covariance is accepted (X = Y): E[(X - Y)^2] = 0
    assert abs(gauss_expect_2d(lambda x, y: (x - y)**2, (0.0, 0.0), [[2.0, 2.0], [2.0, 2.0]])) < 1e-12
    with pytest.raises(ValueError, match="cov must be positive semi-definite"):
        gauss_expect_2d(lambda x, y: x, (0, 0), [[1.0, 1.5], [1.5, 1.0]])
    with pytest.raises(ValueError, match="cov must be symmetric"):
        gauss_expect_2d(lambda x, y: x, (0, 0), [[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="var must be"):
        gauss_expect(np.cos, 0.0, -0.1)
    with pytest.raises(ValueError, match="n must be an integer"):
        hermite_rule(0)

def test_mean_stderr_coverage():
    # the standard error is honest: over 400 repetitions, |mean - truth| < 2 se about 95% of the time
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(400):
        m, se = mean_stderr(rng.exponential(size=200))
        hits += abs(m - 1.0) < 2 * se
    assert 0.90 < hits / 400 < 0.99

# ---------------------------------------------------------------- fixed point
def test_converges_on_contraction():
    A = np.array([[0.3, 0.2], [-0.1, 0.4]]); b = np.array([1.0, -2.0])
    r = fixed_point(lambda x: A @ x + b, np.zeros(2), damping=0.0, atol=1e-13, rtol=0)
    exact = np.linalg.solve(np.eye(2) - A, b)
    assert r.converged and np.allclose(r.x, exact, atol=1e-12)
    assert r.residual == pytest.approx(np.max(np.abs(A @ r.x + b - r.x)), abs=1e-16)

def test_nonconvergence_reported():
    with pytest.raises(ConvergenceError) as e:
        fixed_point(lambda x: -1.5 * x + 1.0, 0.3, damping=0.0, max_iter=100)
    assert e.value.n_iter == 100 and e.value.residual > 1.0
    with pytest.warns(ConvergenceWarning):
        r = fixed_point(lambda x: -1.5 * x + 1.0, 0.3, damping=0.0, max_iter=100, on_fail="warn")
    assert not r.converged

def test_undamped_residual_not_fooled_by_damping():
    # x -> x/2 + 1 (fixed point 2), damping 0.99: the damped step is 0.01 * 0.5 * |2 - x|, so a
    # damped-step test with atol 1e-5 stops once |2 - x| < 2e-3, a hundred times too early. The
    # undamped test needs 0.5 |2 - x| < 1e-5, i.e. |2 - x| < 2e-5.
    F = lambda x: 0.5 * x + 1.0
    r = fixed_point(F, np.array([0.0]), damping=0.99, atol=1e-5, rtol=0, max_iter=100_000, history=True)
    assert r.converged and abs(r.x[0] - 2.0) < 2.0001e-5
    damped_stop = next(x for x, res in r.history if 0.01 * res < 1e-5)   # where a damped test would stop
    assert abs(damped_stop[0] - 2.0) > 1e-3
    # and a budget that ends between the two points is reported as non-converged
    n_damped = next(i for i, (x, res) in enumerate(r.history) if 0.01 * res < 1e-5) + 1
    with pytest.warns(ConvergenceWarning):
        r2 = fixed_point(F, np.array([0.0]), damping=0.99, atol=1e-5, rtol=0, max_iter=n_damped + 10, on_fail="warn")
    assert not r2.converged

def test_residual_covers_all_unknowns():
    # the first unknown converges at once, the second slowly: convergence waits for both
    F = lambda x: np.array([1.0, 0.9 * x[1] + 0.1])
    r = fixed_point(F, np.array([0.0, 0.0]), damping=0.0, atol=1e-8, rtol=0)
    assert r.converged and abs(r.x[1] - 1.0) < 1e-7 and r.n_iter > 100

def test_continuation_up_and_down_agree_on_unique_branch():
    ps = np.linspace(0.2, 0.9, 8)
    up = continuation(lambda x, a: a * np.tanh(x) + 1.0, ps, 0.0, damping=0.0, atol=1e-12, rtol=0)
    down = continuation(lambda x, a: a * np.tanh(x) + 1.0, ps, 0.0, reverse=True, damping=0.0, atol=1e-12, rtol=0)
    assert np.allclose([r.x for r in up], [r.x for r in down], atol=1e-10)

# ---------------------------------------------------------------- validation and seeds
@pytest.mark.parametrize("call, msg", [
    (lambda: check_positive("c", -1.0), "c must lie in (0.0, inf]"),
    (lambda: check_real("alpha", "2"), "alpha must be a real number"),
    (lambda: check_int("L", 0, lo=1), "L must be an integer in [1, inf]"),
    (lambda: fixed_point(np.cos, 0.0, damping=-0.1), "damping must lie in [0.0, 1.0)"),
    (lambda: fixed_point(np.cos, 0.0, atol=0, rtol=0), "atol and rtol"),
])
def test_bad_input_names_parameter(call, msg):
    with pytest.raises(ValueError) as e: call()
    assert msg in str(e.value)

def test_seeds_are_reproducible():
    assert np.array_equal(as_generator(7).normal(size=5), as_generator(7).normal(size=5))
    a = [g.normal() for g in spawn(11, 4)]; b = [g.normal() for g in spawn(11, 4)]
    assert a == b and len(set(a)) == 4

# ---------------------------------------------------------------- wrong types, memory guard
@pytest.mark.parametrize("call, name", [
    (lambda: check_real("gamma", "0.1"), "gamma"), (lambda: check_real("nu", None), "nu"),
    (lambda: check_int("L", 2.5, lo=1), "L"), (lambda: check_int("n", True), "n"),
    (lambda: __import__("attnstat.core", fromlist=["x"]).check_array("mu", ["a", "b"]), "mu"),
    (lambda: as_generator(1.5, "mc_seed"), "mc_seed"),
])
def test_wrong_types_raise_type_error(call, name):
    "Wrong types raise TypeError (ParameterTypeError, also a ValueError so that older callers still catch it)."
    from attnstat.core import ParameterTypeError
    with pytest.raises(TypeError) as e: call()
    assert isinstance(e.value, (ValueError, ParameterTypeError)) and str(e.value).startswith(name)

def test_check_memory_names_parameter(monkeypatch):
    from attnstat.core import check_memory, memory_limit
    with pytest.raises(ValueError, match=r"^n_mc \* L is too large: .* GiB .*ATTNSTAT_MAX_MEMORY"):
        check_memory("n_mc * L", 1e15)
    monkeypatch.setenv("ATTNSTAT_MAX_MEMORY", "1MiB")
    assert memory_limit() == 2**20
    with pytest.raises(ValueError, match="D is too large"): check_memory("D", 2**21)
    assert check_memory("D", 2**19) == 2**19
