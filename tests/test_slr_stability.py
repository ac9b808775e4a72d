"""RS stability diagnostics (replicon, jump parts), randomised QMC integration and the guards of the replica solver."""
import math, time
import numpy as np
import pytest
from attnstat.core import ConvergenceError
from attnstat.slr import SpikedSLR, MaxSLR
from attnstat.slr.replica import replica_erm, ridge_textbook, channel_samples
from attnstat.slr.simulate import simulate_erm

@pytest.mark.parametrize("alpha,lam", [(2.0, 0.5), (0.7, 0.3)])
def test_replicon_reduces_to_ridge_condition(alpha, lam):
    """Linear attention with lam_k = 1e4: k = 0 and f = sum_l z_l is ridge on u = sum_l x_l / sqrt(L) (teacher norm 1/L,
    penalty lam/L, noise 1 - 1/L). The replicon must equal the ridge condition alpha V^2 E[(d_omega g)^2] = alpha V^2/(1+V)^2
    with V from the closed form. Tolerance: 3 spreads over the 4 randomisations (measured ~1.5e-4) + 0.5% for the
    O(1/lam_k) leakage of the key (measured difference 5e-4 at alpha = 2)."""
    L = 3
    r = replica_erm(SpikedSLR(L, 1.0), "linear", alpha, lam, lam_k=1e4, init="uninformed", n_mc=8192)
    V = ridge_textbook(alpha, lam / L, rho=1 / L, sigma2=1 - 1 / L)["V"]
    ref = alpha * V**2 / (1 + V)**2
    assert abs(r.replicon - ref) < 3 * r.replicon_se + 5e-3 * ref, (r.replicon, ref)
    assert abs(L * r.V_v - V) < 3 * L * r.V_v_se + 5e-3 * V            # V_ridge = L V_v
    assert r.rs_stable and abs(r.jump_v) < 3 * r.jump_v_se + 1e-3     # a convex channel has no jumps

def test_stability_flags_match_the_landscape():
    """Spiked L=2, nu=2, alpha=2, lam=0.1: flagged stable (measured rho ~ 0.6, jump parts within 1 s.e.), and 8 random
    L-BFGS starts at D = 250 reach one minimum. Spiked L=3, nu=1, alpha=1.5, lam=0.1: flagged unstable (rho ~ 1.13, jump
    part of Vhat_k ~ -0.03 at s.e. 4e-4, i.e. larger than Vhat_k itself); the same 8 starts find >= 3 distinct minima
    (measured 6) whose energies agree within 3% while their test errors spread by > 0.02 (measured 0.05)."""
    ms = SpikedSLR(2, 2.0); mu = SpikedSLR(3, 1.0)
    rs = replica_erm(ms, "softmax", 2.0, 0.1, n_mc=4096)
    ru = replica_erm(mu, "softmax", 1.5, 0.1, n_mc=4096)
    assert rs.rs_stable and rs.replicon < 0.8
    assert not ru.rs_stable and (ru.replicon > 1 or abs(ru.jump_k) > 3 * ru.jump_k_se)
    ss = simulate_erm(ms, "softmax", 2.0, 0.1, 250, restarts=8, seed=1, n_test=4000)
    su = simulate_erm(mu, "softmax", 1.5, 0.1, 250, restarts=8, seed=1, n_test=4000)
    assert ss.n_minima <= 2 and ss.test_error_spread < 0.01
    e = [m["energy"] for m in su.minima]
    assert su.n_minima >= 3 and su.test_error_spread > 0.02 and (max(e) - min(e)) < 0.03 * min(e)

def test_tiny_ridge_fails_fast():
    t0 = time.perf_counter()
    try:
        r = replica_erm(SpikedSLR(3, 2.0), "softmax", alpha=5, lam=1e-12, n_mc=4096)
        assert r.converged
    except ConvergenceError as e:
        assert "lam" in str(e)
    assert time.perf_counter() - t0 < 30

def test_memory_guard():
    with pytest.raises(ValueError, match="n_mc"):
        replica_erm(SpikedSLR(10**6, 1.0), "softmax", 1.0, 0.1)

@pytest.mark.parametrize("model", [SpikedSLR(3, 1.0), MaxSLR(3, np.inf), MaxSLR(2, 2.0)])
def test_rqmc_sample_has_the_model_law(model):
    """The Sobol-mapped sample reproduces the projections' law: compare moments with the model's own i.i.d. sampler
    (n = 2^14 points; tolerances 5 standard errors of the i.i.d. moments, which bound the RQMC error from above)."""
    S = channel_samples(model, 2**14, 3, "rqmc", 1)[0]
    P = model.sample_projections(2**15, 4)
    for a, b in ((S.xi_k, None), (S.xi_v, None), (S.zeta, None)):
        assert abs(a.mean()) < 0.02 and abs(a.var() - 1) < 0.03
    chi_sel = S.chi_star[np.arange(len(S.y)), S.eps]; chi_ref = P.chi_star[np.arange(len(P.y)), P.eps]
    assert abs(chi_sel.mean() - chi_ref.mean()) < 5 * chi_ref.std() / math.sqrt(len(chi_ref))
    assert abs(np.mean(S.chi_star**2) - np.mean(P.chi_star**2)) < 5 * np.std(P.chi_star**2) / math.sqrt(P.chi_star.size)
    assert abs(np.var(S.y) - np.var(P.y)) < 0.05

def test_integration_error_is_reported():
    r = replica_erm(SpikedSLR(2, 2.0), "softmax", 5.0, 0.1, n_mc=4096)
    assert r.n_rand == 4 and r.integration == "rqmc"
    for k in ("m_k_se", "q_k_se", "V_k_se", "m_v_se", "q_v_se", "V_v_se", "energy_se"):
        assert np.isfinite(r.se[k]) and r.se[k] > 0
    assert r.test_error_se > 0 and np.isfinite(r.jump_k_se)
    old = replica_erm(SpikedSLR(2, 2.0), "softmax", 5.0, 0.1, n_mc=4096, integration="mc", n_rand=1)
    assert old.n_rand == 1 and old.n_mc == 4096
    # the two integrations agree within their errors (6 s.e. combined: the mc one reports evaluation noise only)
    assert abs(old.test_error - r.test_error) < 6 * math.hypot(r.test_error_se, old.test_error_se) + 0.01
