"""Spectral rules, the (delta, eta, theta) fixed point, the assembly, derivatives, special cases and input checks."""
import math, time
import numpy as np
import pytest
from attnstat.core import ConvergenceError
from attnstat.rmt import (mp_rule, spiked_rule, mp_stieltjes, bbp_outlier, kernel_stieltjes, noise_fixed_point,
                          attention_theory, attention_error, attention_error_ridgeless, ridgeless_fixed_point,
                          ridge_error, ridge_error_ridgeless, hermite_coefficients, attention_kernel,
                          signal_plus_noise, ridge_errors, vectors_from_gram)

# one BLAS thread per test: see tests/conftest.py


Z3 = np.zeros(3)

@pytest.mark.parametrize("c", [0.25, 0.5, 2.0, 4.0])
def test_masses(c):
    assert abs(mp_rule(c).total_mass - 1) < 1e-12
    for snr in (0.0, 0.3 * math.sqrt(c), 1.2 * math.sqrt(c), 4.0):                 # both sides of BBP
        assert abs(spiked_rule(c, snr).total_mass - 1) < 1e-9
    assert bbp_outlier(c, 0.9 * math.sqrt(c))[0] is None and bbp_outlier(c, 1.1 * math.sqrt(c))[0] is not None

def test_quadrature_converged():
    # N vs 2N nodes at the hardest setting of the spec (c = 2, gamma = 1e-5): the peaked integrands
    kw = dict(c=2.0, gamma=[1e-5, 1e-2], mu=[1.0, 0], w_K=[0.6, 0.8], w_Q=[1.0, -0.2])
    e1 = attention_error("tanh", **kw); e2 = attention_error("tanh", options={"n_nodes": 8000}, **kw)   # default 1000
    assert np.allclose(e1, e2, rtol=1e-6, atol=1e-9)

def test_noise_fixed_point_reference():
    fp = noise_fixed_point("tanh", c=0.5, gamma=0.1)        # spec §5.6
    assert fp.converged[0]
    assert abs(fp.delta[0] - 0.388186) < 1e-6 and abs(fp.eta[0] - 0.0549614) < 1e-7
    assert abs(fp.theta[0] - 0.0106112) < 1e-7 and abs(fp.trace[0] - 7.07972) < 1e-5
    # the residual is the undamped one over all three unknowns
    assert fp.residual[0] <= 1e-12 * (1 + fp.delta[0])

def test_trace_against_simulated_kernel():
    # tr Q/n for the real tanh kernel (zero diagonal), p = 512, n = 1024, 3 trials. Across trials the
    # s.d. of tr Q/n is ~1e-3 relative; the spec reports 1e-3 relative agreement: we allow 3e-3.
    p, n, g = 512, 1024, 0.1
    vals = []
    for seed in range(3):
        X, _ = signal_plus_noise(n, p, [0.0], seed=seed)
        Phi = X @ attention_kernel(X, "tanh")
        lam = np.linalg.eigvalsh(Phi @ Phi.T / n)
        vals.append((np.sum(1 / (lam + g)) + (n - p) / g) / n)            # n - p zero eigenvalues
    th = noise_fixed_point("tanh", c=0.5, gamma=g).trace[0]
    assert abs(np.mean(vals) / th - 1) < 3e-3, (np.mean(vals), th)

def test_kernel_stieltjes_against_spectrum():
    h = hermite_coefficients("erf")
    X, _ = signal_plus_noise(800, 400, [0.0], seed=5)
    ev = np.linalg.eigvalsh(attention_kernel(X, "erf"))
    z = np.array([-0.5, 0.0, 0.5]) + 0.25j
    emp = np.array([np.mean(1 / (ev - zi)) for zi in z])
    assert np.max(np.abs(emp - kernel_stieltjes(z, 0.5, h.a1, h.sigma2))) < 1e-2

@pytest.mark.parametrize("c", [0.5, 2.0])
def test_derivative_methods_agree(c):
    kw = dict(c=c, gamma=np.array([1e-4, 1e-2, 0.3, 3.0]), mu=[1.0, 0.0], w_K=[0.5, 0.7], w_Q=[1.1, -0.4])
    imp = attention_theory("tanh", options={"derivative": "implicit"}, **kw).error
    tan = attention_theory("tanh", options={"derivative": "complex"}, **kw).error
    fd = attention_theory("tanh", options={"derivative": "fd"}, **kw).error
    assert np.allclose(imp, tan, rtol=1e-9, atol=1e-12)
    assert np.allclose(imp, fd, rtol=1e-6, atol=1e-9)          # central difference: O(eps^2) = 1e-8

def test_orthogonal_weights_give_identity_error():
    g = np.logspace(-4, 0, 5)
    base = attention_error("tanh", c=0.5, gamma=g, mu=[1.0, 0, 0], w_K=Z3, w_Q=Z3)
    orth = attention_error("tanh", c=0.5, gamma=g, mu=[1.0, 0, 0], w_K=[0, 2.0, 0.3], w_Q=[0, -0.5, 1.0])
    assert np.allclose(base, orth, rtol=1e-12, atol=1e-14)

def test_mu_zero_is_pure_spectral():
    # mu = 0: ybar = c delta/sigma^2 exactly, and E = -gamma^2 d/dgamma (c delta/sigma^2)
    g = np.logspace(-4, 0, 6)
    th = attention_theory("tanh", c=2.0, gamma=g, mu=Z3, w_K=[1.0, 0, 0], w_Q=[0.3, 1.0, 0])
    s2 = hermite_coefficients("tanh").sigma2
    assert np.allclose(th.ybar, 2.0 * th.delta / s2, rtol=1e-9)
    h = 1e-5
    up = noise_fixed_point("tanh", c=2.0, gamma=g * (1 + h)).trace; dn = noise_fixed_point("tanh", c=2.0, gamma=g * (1 - h)).trace
    assert np.allclose(th.error, -g * g * (up - dn) / (2 * h * g), rtol=1e-6)

def test_only_the_gram_matters():
    G = np.array([[1.5, 0.4, -0.2], [0.4, 1.0, 0.3], [-0.2, 0.3, 2.0]])
    m, k, q = vectors_from_gram(G)
    R = np.linalg.qr(np.random.default_rng(0).standard_normal((7, 7)))[0][:, :3]   # isometric embedding in R^7
    e3 = attention_error("tanh", c=0.5, gamma=[1e-3, 1.0], mu=m, w_K=k, w_Q=q)
    e7 = attention_error("tanh", c=0.5, gamma=[1e-3, 1.0], mu=R @ m, w_K=R @ k, w_Q=R @ q)
    assert np.allclose(e3, e7, rtol=1e-10)

def test_linear_activation_is_exact_linear_attention():
    # sigma^2 = 0: no self-energies; the theory is linear attention on W. For c < 1 and gamma -> 0 the
    # readout spans the same space as the tokens, so the error equals the ridge error's limit.
    th = attention_theory("linear", c=0.5, gamma=[1e-9], mu=[1.0], w_K=[0.5], w_Q=[0.5])
    assert th.delta[0] == 0 and th.eta[0] == 0 and th.theta[0] == 0
    # m(lambda) vanishes inside the bulk (lambda = c), so the approach is slower than O(gamma): 2e-5 at 1e-7, 3e-9 at 1e-9
    assert abs(th.error[0] - ridge_error_ridgeless(c=0.5, snr=1.0)) < 1e-7

def test_a1_zero_contrast():
    # cos with zero diagonal: theta = 0, ybar = 1/(gamma (1 + eta)), independent of mu and W (spec §5.4)
    g = np.array([1e-3, 0.1, 1.0])
    a = attention_theory("cos", c=0.5, gamma=g, mu=[2.0, 0], w_K=[1.0, 0], w_Q=[1.0, 0], require_a1=False)
    b = attention_theory("cos", c=0.5, gamma=g, mu=[0.0, 0], w_K=[0.0, 0], w_Q=[0.0, 0], require_a1=False)
    assert np.allclose(a.theta, 0, atol=1e-12) and np.allclose(a.ybar, 1 / (g * (1 + a.eta)), rtol=1e-10)
    assert np.allclose(a.error, b.error, rtol=1e-10)
    with pytest.raises(ValueError, match="a_1"):
        attention_error("cos", c=0.5, gamma=0.1, mu=[1.0], w_K=[0.0], w_Q=[0.0])

def test_ridgeless_system_matches_small_gamma():
    r = ridgeless_fixed_point("tanh", c=0.5)
    # the finite-gamma solution approaches the ridgeless one like O(gamma) with a constant ~ 1/(lambda_- D_hat) ~ 20
    fp = noise_fixed_point("tanh", c=0.5, gamma=[1e-9])
    assert abs(fp.eta[0] - r.x[0]) < 1e-7 and abs(fp.theta[0] - r.x[1]) < 1e-7
    assert abs(1e-9 * (1 + fp.eta[0]) * fp.delta[0] - r.param) < 1e-7 * r.param
    for w in ([0.0, 0.0], [1.0, 0.0], [0.6, 0.8]):
        e0 = attention_error_ridgeless("tanh", c=0.5, mu=[1.0, 0.0], w_K=w, w_Q=w)
        e = attention_error("tanh", c=0.5, gamma=1e-7, mu=[1.0, 0.0], w_K=w, w_Q=w)
        assert abs(e0 - e) < 1e-5, (w, e0, e)

def test_ridge_limits_and_closed_form():
    for snr in (0.0, 1.0, 3.0):
        assert abs(ridge_error(c=0.25, gamma=1e-10, snr=snr) - 0.75 / (1 + snr)) < 1e-8
        assert ridge_error(c=2.0, gamma=1e-10, snr=snr) < 1e-8
        assert ridge_error_ridgeless(c=0.25, snr=snr) == 0.75 / (1 + snr)
    assert abs(ridge_error(c=0.5, gamma=1e9, snr=1.0) - 1) < 1e-8
    # the closed form equals the generic deterministic equivalent -gamma^2 d/dgamma [1/(gamma (1 + s^2 m(-gamma)))]
    g, c, snr, h = 0.3, 0.5, 1.0, 1e-6
    yb = lambda gg: 1 / (gg * (1 + (snr + c) * mp_stieltjes(-gg, c)))
    assert abs(ridge_error(c=c, gamma=g, snr=snr) + g * g * (yb(g + h) - yb(g - h)) / (2 * h)) < 1e-8

def test_ridge_against_simulation():
    # n = 1024, p = 512, ||mu||^2 = 1, 8 trials: 3 standard errors plus O(1/n) = 2e-3 finite-size allowance
    # (at gamma -> 0 the finite-n mean is (n - p + 1)/(n (1 + snr)), i.e. 1/n above the limit)
    g = np.array([1e-3, 0.1, 1.0])
    E = []
    for seed in range(8):
        X, y = signal_plus_noise(1024, 512, [1.0], seed=100 + seed)
        E.append(ridge_errors(X, y, g))
    E = np.array(E); m, se = E.mean(0), E.std(0, ddof=1) / np.sqrt(len(E))
    th = ridge_error(c=0.5, gamma=g, snr=1.0)
    assert np.all(np.abs(m - th) <= 3 * se + 2e-3), (m, se, th)

def test_bad_input():
    kw = dict(c=0.5, gamma=0.1, mu=[1.0], w_K=[0.0], w_Q=[0.0])
    for bad, match in ((dict(c=0.0), "c must lie in"), (dict(c=-1.0), "c must lie in"), (dict(gamma=0.0), "gamma must lie in"),
                       (dict(gamma=[0.1, -1.0]), "gamma must lie in"), (dict(w_K=[0.0, 1.0]), "same length")):
        with pytest.raises(ValueError, match=match): attention_error("tanh", **{**kw, **bad})
    with pytest.raises(ValueError, match="square-integrable"): attention_error(lambda t: np.exp(t * t), **kw)
    with pytest.raises(ValueError, match="gamma must lie in"): ridge_error(c=0.5, gamma=-1.0, snr=1.0)
    with pytest.raises(ValueError, match="c must lie in"): ridge_error(c=0.0, gamma=1.0, snr=1.0)
    with pytest.raises(ValueError, match="snr must lie in"): ridge_error(c=0.5, gamma=1.0, snr=-1.0)
    assert attention_error_ridgeless("tanh", c=2.0, mu=[1.0], w_K=[0.0], w_Q=[0.0]) == 0.0     # p > n: interpolation

def test_grid_speed():
    # 50-point grid: well under a second (benchmarks/bench_rmt.py reports the timings)
    from attnstat.rmt import theory
    g = np.logspace(-5, 1, 50)
    attention_error("tanh", c=0.5, gamma=g, mu=[1.0, 0], w_K=[0.6, 0.8], w_Q=[1.0, 0.0])
    theory._noise_solution.cache_clear()              # time the full solve
    t = time.perf_counter()
    attention_error("tanh", c=0.5, gamma=g, mu=[1.0, 0], w_K=[0.6, 0.8], w_Q=[1.0, 0.0])
    assert time.perf_counter() - t < 5.0      # generous: CI machines are shared; the benchmark gives the number

def test_exact_identities_on_random_instances():
    # E = gamma^2 y^T Q^2 y/n = -gamma^2 d/dgamma (y^T Q y/n) = direct ridge solve, for p < n and p > n
    rng = np.random.default_rng(3)
    for p, n in ((20, 35), (35, 20)):
        Phi, y = rng.standard_normal((p, n)), rng.choice([-1.0, 1.0], n)
        Q = lambda g: np.linalg.inv(Phi.T @ Phi / n + g * np.eye(n))
        for g in (1e-4, 0.3, 5.0):
            w = np.linalg.solve(Phi @ Phi.T + n * g * np.eye(p), Phi @ y)
            direct = np.mean((y - Phi.T @ w)**2)
            assert abs(ridge_errors(Phi, y, [g])[0] - direct) < 1e-12
            assert abs(g * g * y @ Q(g) @ Q(g) @ y / n - direct) < 1e-12
            h = 1e-5 * g
            assert abs(-g * g * (y @ Q(g + h) @ y - y @ Q(g - h) @ y) / (2 * h * n) - direct) < 1e-7


# --- issue 14: a robust ridgeless limit and a fast finite-gamma solver -------------------------------------------

CS = [0.5, 0.9, 0.95, 0.99, 1.0, 1.01, 1.1, 2.0]

@pytest.mark.parametrize("f", ["tanh", "relu", "sign"])
def test_ridgeless_limit_every_c(f):
    # the ridgeless system (c < 1; 0 for c >= 1) against the finite-gamma solver at gamma = 1e-10: measured
    # differences <= 2.2e-10 for c != 1 (O(gamma/lambda_-) for c < 1, O(gamma) for c > 1); at c = 1 the error
    # vanishes like 1.9 sqrt(gamma) (1.9e-4 at 1e-10), so c = 1 is compared at gamma = 1e-14
    for c in CS:
        for w in ([0.0, 0.0], [1.0, 0.0]):
            e0 = attention_error_ridgeless(f, c=c, mu=[1.0, 0.0], w_K=w, w_Q=w)
            g = 1e-14 if c == 1.0 else 1e-10
            e = attention_error(f, c=c, gamma=g, mu=[1.0, 0.0], w_K=w, w_Q=w)
            assert np.isfinite(e0) and abs(e - e0) < 1e-4, (f, c, w, e0, e)
            if c < 1: assert 0 < e0 < 1 - c + 1e-12           # at most the rank bound 1 - c (mu = e1 helps)

@pytest.mark.parametrize("f", ["tanh", "relu", "sign"])
def test_finite_gamma_solver_fast_at_small_gamma(f):
    # the damped iteration needed up to 14,537 iterations (relu, c = 1.1, gamma = 1e-8) or failed (c >= 1);
    # Newton in (log delta, log(1 + eta), theta) with decade continuation: about 15 map evaluations per decade, so
    # < 300 for the whole path from gamma = 10 to 1e-10 (measured: at most ~200) (n_iter of a point counts the steps since the previous one)
    for c in CS:
        fp = noise_fixed_point(f, c=c, gamma=[1e-6, 1e-8, 1e-10])
        assert fp.converged.all() and fp.n_iter.sum() < 300, (f, c, fp.n_iter)
        assert np.all(fp.residual <= 1e-12 * (1 + np.abs(np.c_[fp.delta, fp.eta, fp.theta]).max(1)))

def test_damped_path_still_agrees():
    # the old plain iteration stays reachable (method="damped") and gives the same numbers where it converges
    g = np.logspace(-3, 1, 5)
    a = attention_theory("tanh", c=0.5, gamma=g, mu=[1.0, 0], w_K=[0.6, 0.8], w_Q=[1.0, 0.0])
    b = attention_theory("tanh", c=0.5, gamma=g, mu=[1.0, 0], w_K=[0.6, 0.8], w_Q=[1.0, 0.0], options={"method": "damped"})
    assert np.allclose(a.error, b.error, rtol=1e-9, atol=1e-12)

def test_extremes_give_limits():
    kw = dict(mu=[1.0], w_K=[0.0], w_Q=[0.0])
    e0 = attention_error_ridgeless("tanh", c=0.5, **kw)
    e = attention_theory("tanh", c=0.5, gamma=[1e-300, 1e-160, 1e300], **kw)
    assert e.converged.all() and np.all(np.isfinite(e.error))
    assert abs(e.error[0] - e0) < 1e-12 and abs(e.error[1] - e0) < 1e-12 and abs(e.error[2] - 1) < 1e-12
    # SNR -> infinity: the errors go to 0 like 1/SNR (SNR = 1e10 gives 5e-11)
    for s in (1e10, 1e12):
        assert 0 <= attention_error("tanh", c=0.5, gamma=0.1, mu=[s**0.5], w_K=[0.0], w_Q=[0.0]) < 10 / s
    with pytest.raises(ValueError, match="mu must have squared norm"):
        attention_error("tanh", c=0.5, gamma=0.1, mu=[1e100], w_K=[0.0], w_Q=[0.0])
    with pytest.raises(ValueError, match="w_K must have squared norm"):
        attention_error("tanh", c=0.5, gamma=0.1, mu=[1.0], w_K=[1e100], w_Q=[0.0])
    # large weights: the error tends to a limit (identical to 1e-7 for |w| = 1e3 and 1e6)
    a = attention_error("tanh", c=0.5, gamma=[1e-5, 1.0], mu=[1.0, 0], w_K=[1e3, 0], w_Q=[1e3, 0])
    b = attention_error("tanh", c=0.5, gamma=[1e-5, 1.0], mu=[1.0, 0], w_K=[1e6, 0], w_Q=[1e6, 0])
    assert np.allclose(a, b, atol=1e-7)
    # ridge: no OverflowError, no negative values, correct limits at any finite SNR and gamma
    for c in (0.25, 1.0, 2.0):
        for g in (1e-300, 1e-10, 1.0, 1e300):
            for s in (0.0, 1.0, 1e20, 1e160, 1e200):
                v = ridge_error(c=c, gamma=g, snr=s)
                assert np.isfinite(v) and 0 <= v <= 1, (c, g, s, v)
    assert ridge_error(c=0.5, gamma=1e300, snr=1e200) == pytest.approx(1.0)
    assert ridge_error(c=0.5, gamma=0.1, snr=1e200) < 1e-199

def test_types_and_empty_vectors():
    kw = dict(c=0.5, gamma=0.1, mu=[1.0], w_K=[0.0], w_Q=[0.0])
    for bad in (dict(gamma="0.1"), dict(gamma=True), dict(gamma=None), dict(c="0.5"), dict(mu="1"), dict(mu=[True])):
        with pytest.raises(TypeError, match=list(bad)[0]): attention_error("tanh", **{**kw, **bad})
    with pytest.raises(ValueError, match="mu must not be empty"):
        attention_error("tanh", c=0.5, gamma=0.1, mu=[], w_K=[], w_Q=[])
    with pytest.raises(ValueError, match="gamma must contain only finite numbers"): attention_error("tanh", **{**kw, "gamma": float("nan")})
    with pytest.raises(TypeError, match="gamma"): ridge_error(c=0.5, gamma="0.1", snr=1.0)
    with pytest.raises(TypeError, match="snr"): ridge_error(c=0.5, gamma=0.1, snr="1")
    with pytest.raises(ValueError, match="method"): attention_error("tanh", **kw, options={"method": "bogus"})


def test_mp_stieltjes_near_zero_c_above_one():
    "c > 1, z -> 0^-: the atom (1 - 1/c) at 0 dominates; m_c is formed without cancellation (was 20 % off at 1e-16)."
    from decimal import Decimal, getcontext
    from attnstat.rmt.theory import mp_stieltjes_derivative
    from attnstat.rmt.sweeps import ridge_effective_dof
    getcontext().prec = 60
    def m60(z, c):      # the positive root of c z m^2 - (1 - c - z) m + 1 = 0 for z < 0, in 60-digit arithmetic
        z, c = Decimal(z), Decimal(c); b = 1 - c - z
        return (b - (b * b - 4 * c * z).sqrt()) / (2 * c * z)
    for c in (1.5, 2.0, 10.0, 1e6):
        for g in (1e-30, 1e-16, 1e-10, 1e-3, 1.0):
            assert abs(mp_stieltjes(-g, c) / float(m60(-g, c)) - 1) < 1e-14, (c, g)
            h = Decimal(g) * Decimal("1e-25")       # m'(z) by a central difference in 60 digits (error ~1e-50)
            ref = float((m60(-Decimal(g) + h, c) - m60(-Decimal(g) - h, c)) / (2 * h))
            assert abs(mp_stieltjes_derivative(-g, c) / ref - 1) < 1e-13, (c, g)
    # the consequences named in issue 29: ridge's effective dof at c = 2 tends to min(1, c) = 1 (was 0.799 at 1e-16)
    for g in (1e-16, 1e-10):
        assert abs(ridge_effective_dof(c=2.0, gamma=g) - 1) < 1e-9
    # the atom split off by hand: m_c(-g) - (1 - 1/c)/g -> the bulk's m at 0, int dmu_bulk(l)/l = 1/(c (c - 1))
    for c in (2.0, 4.0):
        assert abs(mp_stieltjes(-1e-9, c) - (1 - 1 / c) / 1e-9 - 1 / (c * (c - 1))) < 1e-6

def test_attention_theory_honours_max_iter():
    "max_iter bounds the map evaluations per gamma (Newton's and the continuation's included): issue 29."
    from attnstat.core import ConvergenceError
    kw = dict(c=0.5, gamma=[0.01, 0.1], mu=[1.0], w_K=[0.5], w_Q=[0.5])
    ref = attention_theory("tanh", **kw)
    for mi in (1, 10, 30):
        with pytest.raises(ConvergenceError): attention_theory("tanh", **kw, options={"max_iter": mi})
    th = attention_theory("tanh", **kw, options={"max_iter": int(ref.n_iter.max())})
    assert np.all(th.n_iter <= ref.n_iter.max()) and np.allclose(th.error, ref.error, rtol=1e-10, atol=0)
    with pytest.raises(ConvergenceError):
        attention_theory("tanh", **kw, options={"max_iter": 5, "method": "damped"})
    with pytest.raises(TypeError, match="options has no field"): attention_theory("tanh", **kw, options={"maxiter": 5})
    with pytest.raises(ValueError, match="max_iter"): attention_theory("tanh", **kw, options={"max_iter": 0})
