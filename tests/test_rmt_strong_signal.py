"""Tests of attnstat.rmt.strong_signal: the signal-dependent Hermite coefficients, the finite-rank
signal kernel, the reduction to the p -> infinity theory of attnstat.rmt.theory, the vector Dyson
equation against the closure it generalises, and theory-vs-simulation checks on the
Gaussian-equivalent kernels the two theories describe."""
import dataclasses
import math

import numpy as np
import pytest
from scipy import special

from attnstat.core import spawn
from attnstat.gaussian import mean_stderr
from attnstat.rmt.hermite import activation, hermite_coefficients
from attnstat.rmt.models import attention_kernel, ridge_errors, signal_plus_noise
from attnstat.rmt.strong_signal import (
    StrongSignalOptions,
    _closure_path,
    _dyson_path,
    _vectors,
    score_signal,
    signal_coefficients,
    signal_kernel,
    strong_signal_error,
    strong_signal_points,
    strong_signal_theory,
)
from attnstat.rmt.theory import attention_theory

MU3 = np.array([math.sqrt(3.0), 0.0])
G4 = np.array([1e-5, 1e-3, 1e-1, 1.0])

def _phi(s): return np.exp(-s**2 / 2) / math.sqrt(2 * math.pi)

def test_coefficients_closed_forms_and_monte_carlo():
    s = np.array([-1.3, 0.0, 0.4, 2.2])
    c = signal_coefficients("sign", s)                  # sign: erf(s/sqrt 2), 2 phi(s), 1
    np.testing.assert_allclose(c.a0, special.erf(s / math.sqrt(2)), atol=1e-10)
    np.testing.assert_allclose(c.a1, 2 * _phi(s), atol=1e-10)
    np.testing.assert_allclose(c.nu, 1.0, atol=1e-10)
    h, t = hermite_coefficients("tanh"), signal_coefficients("tanh", [0.0, 0.7])
    assert abs(t.a0[0]) < 1e-12 and abs(t.a1[0] - h.a1) < 1e-10
    assert abs(t.sigma2[0] - h.sigma2) < 1e-10
    Z = np.random.default_rng(5).standard_normal(1_000_000)
    v = activation("tanh").centred(0.7 + Z)
    for est, draws in ((t.a0[1], v), (t.a1[1], v * Z), (t.nu[1], v * v)):
        m, se = mean_stderr(draws)
        assert abs(est - m) < 4 * se                    # 10^6 draws, seed 5

CASES = [(MU3, MU3, MU3, 0.25), ([1.5, 0, 0], [0.8, 0.3, 0.2], [0.5, -0.6, 0.1], 2.0),
         ([1.0, 0], [0, 1.0], [0.3, 1.0], 0.75)]

@pytest.mark.parametrize("mu,wK,wQ,c", CASES)
def test_limit_is_todays_theory(mu, wK, wQ, c):
    T = strong_signal_theory("tanh", c=c, gamma=G4, mu=mu, w_K=wK, w_Q=wQ)
    R = attention_theory("tanh", c=c, gamma=G4, mu=mu, w_K=wK, w_Q=wQ)
    np.testing.assert_allclose(T.error, R.error, rtol=0, atol=1e-8)
    np.testing.assert_allclose(T.ybar * G4, R.ybar * G4, rtol=0, atol=1e-8)

def test_linear_activation_any_p_and_continuity():
    kw = {"c": 0.25, "gamma": G4, "mu": MU3, "w_K": MU3, "w_Q": MU3}
    T = strong_signal_theory("linear", **kw, p=256, options=StrongSignalOptions(closure=True))
    R = attention_theory("linear", **kw, diag=T.params["diag"])
    np.testing.assert_allclose(T.error, R.error, rtol=0, atol=1e-8)
    far = strong_signal_theory("tanh", **kw, p=10**10)      # eps = 1.2e-4, a_1 even: O(eps^2)
    np.testing.assert_allclose(far.error, strong_signal_theory("tanh", **kw).error, rtol=0,
                               atol=1e-8)                   # measured 8e-10
    z0 = {"mu": [0.0, 0], "w_K": [0.0, 0], "w_Q": [0.0, 0]}  # no signal: today's theory at any p
    for c in (0.25, 0.5):
        z = strong_signal_theory("tanh", c=c, gamma=G4, **z0, p=512)
        np.testing.assert_allclose(z.error, attention_theory("tanh", c=c, gamma=G4, **z0).error,
                                   rtol=0, atol=1e-8)
        assert z.converged.all()

def _averaged(K):
    "The signal kernel with a_1, sigma^2 and the zeroed diagonal replaced by their pair averages."
    S = K.y.size; one = np.ones((S, 1))
    return dataclasses.replace(K, slope_left=one, slope_right=one, slope_sv=np.array([K.a1bar]),
                               sigma2=np.full((S, S), K.sigma2bar),
                               a0_diag=np.full(S, K.diag_mean))

@pytest.mark.parametrize("c,p", [(0.25, 512), (0.5, 128), (2.0, 256)])
def test_vector_dyson_with_constant_coefficients_is_the_closure(c, p):
    o = StrongSignalOptions()
    g = G4 if c < 1 else G4[1:]     # c = 2, gamma = 1e-5: 1.2e-8 apart, the Chebyshev rule of mu_c
    K = _averaged(signal_kernel("tanh", MU3, MU3, MU3, p=p))
    ys_v = _dyson_path(K, c, p, g, o)[0]
    ys_c = _closure_path(activation("tanh"), *_vectors(MU3, MU3, MU3), c, p, g, o)[0]
    np.testing.assert_allclose(g * ys_v, g * ys_c, rtol=0, atol=1e-8)

def test_signal_kernel_finite_rank_and_simulated_kernel():
    p, n = 128, 512
    SK = signal_kernel("tanh", MU3, MU3, MU3, p=p)
    rng = np.random.default_rng(3)
    i, j = rng.choice(SK.y.size, (2, 300), p=SK.weight)   # pairs drawn from the token law
    L = np.einsum("ij,jk,ik->i", SK.omega[i], SK.M, SK.omega[j]) / math.sqrt(p)
    recon = (SK.left[i] * SK.sv * SK.right[j]).sum(1)
    np.testing.assert_allclose(recon, signal_coefficients("tanh", L).a0, atol=1e-7)
    Ey = (SK.weight * SK.y) @ SK.left * SK.sv @ ((SK.weight * SK.y) @ SK.right)
    pred = n / math.sqrt(p) * Ey - SK.diag_mean / math.sqrt(p)
    obs = [y @ attention_kernel(X, "tanh", MU3, MU3) @ y / n
           for X, y in (signal_plus_noise(n, p, MU3, r) for r in spawn(11, 4))]
    m, se = mean_stderr(np.array(obs))
    assert abs(m - pred) < 0.05 * abs(pred) + 4 * se    # norm n/sqrt(p) = 45, bulk shift O(1)

def _ge_gap(p, n, trials, seed, gs, entrywise):
    "Paired gap of a Gaussian-equivalent kernel: a_0(L) exact, a_1, sigma^2 entrywise or averaged."
    out = []
    for rng in spawn(seed, trials):
        X, y = signal_plus_noise(n, p, MU3, rng)
        Zp = X.copy(); Zp[0] = 0.0
        u = X[0] * MU3[0]                                # x_i . mu (mu along e_1)
        L = (np.outer(X[0], X[0]) + np.outer(u, u)) / math.sqrt(p)
        sc = signal_coefficients("tanh", np.linspace(L.min(), L.max(), 801))
        a0, a1, nu = (np.interp(L, sc.s, v) for v in (sc.a0, sc.a1, sc.nu))
        N = rng.standard_normal((n, n)); N = (N + N.T) / math.sqrt(2)
        s2 = np.maximum(nu - a0**2 - a1**2, 0.0)
        if not entrywise: a1, s2 = a1.mean(), s2.mean()
        K = (a0 + a1 * (Zp.T @ Zp) / math.sqrt(p) + np.sqrt(s2) * N) / math.sqrt(p)
        np.fill_diagonal(K, 0.0)
        out.append(ridge_errors(X @ K, y, gs) - ridge_errors(X, y, gs))
    return mean_stderr(np.array(out), axis=0)

@pytest.mark.parametrize("entrywise", [False, True])
def test_theory_matches_its_gaussian_equivalent(entrywise):
    gs = np.array([1e-5, 0.1])
    m, se = _ge_gap(128, 256, 24, 2030, gs, entrywise)  # p = 128, n = 256: the gap is about -0.06
    kw = {"c": 0.5, "gamma": gs, "mu": MU3, "w_K": MU3, "w_Q": MU3}
    o = StrongSignalOptions(closure=not entrywise)
    T = strong_signal_theory("tanh", **kw, p=128, options=o)
    assert np.all(np.abs(m - T.difference) < 4 * se + 0.002), (m, se, T.difference)  # + O(1/n)
    L = strong_signal_theory("tanh", **kw)
    assert np.all(np.abs(m - L.difference) > 8 * se)    # the p -> infinity limit misses it

def test_entry_checks():
    ok = {"c": 0.25, "gamma": 1e-2, "mu": MU3, "w_K": MU3, "w_Q": MU3}
    bad = [({"c": "a"}, TypeError), ({"c": -1.0}, ValueError), ({"gamma": 0.0}, ValueError),
           ({"gamma": True}, TypeError), ({"mu": [1.0, 0, 0]}, ValueError), ({"p": 1}, ValueError),
           ({"p": 2.5}, TypeError), ({"options": "fast"}, TypeError), ({"mu": None}, TypeError)]
    for change, exc in bad:
        with pytest.raises(exc): strong_signal_theory("tanh", **{**ok, **change})
    with pytest.raises(TypeError): strong_signal_theory(3, **ok)
    with pytest.raises(ValueError): StrongSignalOptions(fd_step=1.0)
    with pytest.raises(TypeError): StrongSignalOptions(closure=1)
    with pytest.raises(ValueError): StrongSignalOptions(max_iter=1)
    with pytest.raises(TypeError): score_signal(MU3, MU3, MU3, "512")
    with pytest.raises(TypeError): strong_signal_points(quick=1)
    assert isinstance(strong_signal_error("tanh", **ok, p=512), float)
    assert abs(score_signal(MU3, MU3, MU3, 512) - 12 / math.sqrt(512)) < 1e-14

WEAK = dict(c=0.25, mu=[1.0, 0.0], w_K=[1.0, 0.0], w_Q=[1.0, 0.0])  # SNR 1, w = mu: eps = 2/sqrt(p)

def test_weak_signal_point_against_paired_simulation():
    # issue 30's weak-signal point (p = 512, eps = 0.088): the 48-trial paired simulation (seed
    # 30023) against the finite-p theory and the p -> infinity limit, at every gamma of the grid
    from attnstat import data_path
    from attnstat.rmt.strong_signal import STRONG_SIGNAL_GAMMAS, load_strong_signal_sims
    rows = [r for r in load_strong_signal_sims(data_path("strong_signal_sims.csv"))
            if (r["c"], r["snr"], r["w"], r["p"], r["seed"]) == (0.25, 1.0, 1.0, 512, 30023)]
    assert [r["gamma"] for r in rows] == list(STRONG_SIGNAL_GAMMAS)
    g = np.array(STRONG_SIGNAL_GAMMAS)
    fin = strong_signal_theory("tanh", gamma=g, p=512, **WEAK).difference
    lim = strong_signal_theory("tanh", gamma=g, **WEAK).difference
    sim, se = np.array([r["gap"] for r in rows]), np.array([r["gap_se"] for r in rows])
    assert np.all(np.abs(sim - fin) < 3 * se), (sim, se, fin)       # measured |z| <= 0.5
    assert np.all(np.abs(sim - lim) > 3 * se), (sim, se, lim)       # measured |z| >= 4.1

def test_finite_p_theory_approaches_the_limit():
    g = np.array([1e-5, 1.0])
    lim = strong_signal_theory("tanh", gamma=g, **WEAK).difference
    # growing p at the weak point: the correction is O(E L^2) = O(1/p) (p * correction ~ -1.2)
    pc = [p * (strong_signal_theory("tanh", gamma=g, p=p, **WEAK).difference - lim)
          for p in (2048, 8192)]
    np.testing.assert_allclose(pc[0], pc[1], rtol=0.05)
    assert np.all(np.abs(pc[1]) < 2)
    # fixed p = 4096, mu = w_K = w_Q = t e_1 with t -> 0 (eps = t^2 (1 + t^2)/sqrt(p) -> 0): at
    # gamma = 1e-5 the correction vanishes (measured 3.0e-4, 3.3e-5, 3.7e-6, 3e-7); at gamma = 1 an
    # O(r/p) residual (measured 1.1e-5 = 0.045/p) stays from the noise coordinate in the span
    p, out = 4096, []
    for t in (1.0, 0.5, 0.25, 0.1):
        v = [t, 0.0]
        out.append(strong_signal_theory("tanh", c=0.25, gamma=g, mu=v, w_K=v, w_Q=v, p=p).difference
                   - strong_signal_theory("tanh", c=0.25, gamma=g, mu=v, w_K=v, w_Q=v).difference)
    d0 = np.abs([o[0] for o in out])
    assert np.all(d0[1:] < d0[:-1] / 5) and d0[-1] < 1e-6, d0
    assert all(abs(o[1]) < 0.1 / p for o in out[2:]), out

# --- the fresh-token (test) error, the readouts, the import cost (chapter 03g, later sections) ---
from attnstat.rmt.generalisation import attention_test_theory
from attnstat.rmt.multihead import multihead_theory
from attnstat.rmt.strong_signal import (
    STRONG_SIGNAL_TEST_GAMMAS,
    strong_signal_readout_theory,
    strong_signal_test_error,
    strong_signal_test_theory,
)

G3 = np.array(STRONG_SIGNAL_TEST_GAMMAS)

@pytest.mark.parametrize("mu,wK,wQ,c", [(MU3, MU3, MU3, 0.25), ([1.0, 0], [0, 0.0], [0, 0.0], 0.5),
                                        ([1.0, 0], [1.0, 0], [1.0, 0], 2.0)])
def test_fresh_token_limit_is_03e(mu, wK, wQ, c):
    T = strong_signal_test_theory("tanh", c=c, gamma=G3, mu=mu, w_K=wK, w_Q=wQ)
    R = attention_test_theory("tanh", c=c, gamma=G3, mu=mu, w_K=wK, w_Q=wQ)
    np.testing.assert_allclose(T.error, R.error, rtol=0, atol=1e-8)   # measured <= 4e-10
    np.testing.assert_allclose(T.ridge, R.ridge, rtol=0, atol=1e-12)

def test_fresh_token_continuity_in_p():
    kw = {"c": 0.25, "gamma": G3, "mu": MU3, "w_K": MU3, "w_Q": MU3}
    lim = strong_signal_test_theory("tanh", **kw).error
    d8, d10, d12 = (np.abs(strong_signal_test_theory("tanh", **kw, p=p).error - lim).max()
                    for p in (10**8, 10**10, 10**12))
    assert d12 < 1e-8 and d8 > 30 * d10            # O(eps^2) = O(1/p) until rounding

def test_fresh_token_against_real_kernel():
    "p = 128, n = 512, w = mu, SNR 3: the theory against 24 paired trials (control variate)."
    from attnstat.rmt.generalisation import simulate_test_errors_cv
    g = np.array([0.1, 1.0])
    T = strong_signal_test_theory("tanh", c=0.25, gamma=g, mu=MU3, w_K=MU3, w_Q=MU3, p=128)
    L = strong_signal_test_theory("tanh", c=0.25, gamma=g, mu=MU3, w_K=MU3, w_Q=MU3)
    e = simulate_test_errors_cv("tanh", 512, 128, MU3, MU3, MU3, g, 24, 31_200, n_test=1000)
    m, se = e.stats("attention")
    assert np.all(np.abs(m - T.error) < 3 * se + 0.003)     # + O(1/p) beyond the theory
    assert np.all(np.abs(m - L.error) > 5 * se)             # the p -> infinity theory misses

def test_fresh_token_refusals():
    kw = {"c": 0.25, "gamma": 0.1, "mu": MU3, "w_K": MU3, "w_Q": MU3, "p": 256}
    with pytest.raises(ValueError, match="closure"):
        strong_signal_test_theory("tanh", **kw, options=StrongSignalOptions(closure=True))
    with pytest.raises(ValueError, match="gamma"):
        strong_signal_test_theory("tanh", **{**kw, "gamma": 0.0})
    assert isinstance(strong_signal_test_error("tanh", **kw), float)

@pytest.mark.parametrize("heads,residual",
                         [("average", "none"), ("sum", "none"), ("average", "sum"), ("sum", "sum")])
def test_readouts_limit_is_03f(heads, residual):
    WK, WQ = np.array([[1.0, 0.5], [0.0, 0.8]]), np.array([[1.0, 0.2], [0.0, 1.0]])
    kw = {"c": 0.5, "gamma": G3, "mu": [1.0, 0.0], "W_K": WK, "W_Q": WQ, "heads": heads,
          "residual": residual}
    np.testing.assert_allclose(strong_signal_readout_theory("tanh", **kw).error,
                               multihead_theory("tanh", **kw).error, rtol=0, atol=1e-8)

def test_readouts_one_head_and_refusals():
    kw = {"c": 0.25, "gamma": G3, "mu": MU3, "p": 256}
    one = strong_signal_readout_theory("tanh", W_K=MU3, W_Q=MU3, **kw)
    ref = strong_signal_theory("tanh", w_K=MU3, w_Q=MU3, **kw)
    np.testing.assert_allclose(one.error, ref.error, rtol=0, atol=1e-10)
    for bad, word in [({"residual": "concat"}, "residual"), ({"residual": "sum", "error": "test"},
                       "residual"), ({"alpha": [0.5]}, "alpha"), ({"heads": "max"}, "heads")]:
        with pytest.raises(ValueError, match=word):
            strong_signal_readout_theory("tanh", W_K=MU3, W_Q=MU3, **kw, **bad)
    with pytest.raises(ValueError, match="W_K"):
        strong_signal_readout_theory("tanh", c=0.25, gamma=0.1, mu=[1.0, 0, 0, 0], p=256,
                                     W_K=np.eye(4)[:, :2], W_Q=np.eye(4)[:, 2:])

def test_modules_import_without_scipy():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-X", "importtime", "-c",
                          "import attnstat.rmt.strong_signal, attnstat.rmt.sweeps"],
                         capture_output=True, text=True, check=True).stderr
    assert "scipy" not in out
