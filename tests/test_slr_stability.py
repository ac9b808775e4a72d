"""RS stability diagnostics (replicon, jump parts), randomised QMC integration and the guards of the replica solver."""
import math, time
import numpy as np
import pytest
from attnstat.core import ConvergenceError
from attnstat.slr import SpikedSLR, MaxSLR
from attnstat.slr.replica import replica_erm, ridge_textbook, channel_samples, channel_update, _fields
from attnstat.slr.simulate import simulate_erm

@pytest.mark.parametrize("alpha,lam", [(2.0, 0.5), (0.7, 0.3)])
def test_replicon_reduces_to_ridge_condition(alpha, lam):
    """Linear attention with lam_k = 1e4: k = 0 and f = sum_l z_l is ridge on u = sum_l x_l / sqrt(L) (teacher norm 1/L,
    penalty lam/L, noise 1 - 1/L). The replicon must equal the ridge condition alpha V^2 E[(d_omega g)^2] = alpha V^2/(1+V)^2
    with V from the closed form. Tolerance: 3 spreads over the 4 randomisations (measured ~1.5e-4) + 0.5% for the
    O(1/lam_k) leakage of the key (measured difference 5e-4 at alpha = 2)."""
    L = 3
    r = replica_erm(SpikedSLR(L, 1.0), "linear", alpha, lam, lam_k=1e4, init="uninformed", options=dict(n_mc=8192))
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
    rs = replica_erm(ms, "softmax", 2.0, 0.1, options=dict(n_mc=4096))
    ru = replica_erm(mu, "softmax", 1.5, 0.1, options=dict(n_mc=4096))
    assert rs.rs_stable is True and rs.stability == "stable" and rs.replicon < 0.8
    assert ru.rs_stable is False and ru.stability == "unstable" and (ru.replicon > 1 or abs(ru.jump_k) > 3 * ru.jump_k_se)
    ss = simulate_erm(ms, "softmax", 2.0, 0.1, 250, restarts=8, seed=1, n_test=4000)
    su = simulate_erm(mu, "softmax", 1.5, 0.1, 250, restarts=8, seed=1, n_test=4000)
    assert ss.n_minima <= 2 and ss.test_error_spread < 0.01
    e = [m["energy"] for m in su.minima]
    assert su.n_minima >= 3 and su.test_error_spread > 0.02 and (max(e) - min(e)) < 0.03 * min(e)

def test_tiny_ridge_fails_fast():
    t0 = time.perf_counter()
    try:
        r = replica_erm(SpikedSLR(3, 2.0), "softmax", alpha=5, lam=1e-12, options=dict(n_mc=4096))
        assert r.converged
    except ConvergenceError as e:
        assert "lam" in str(e)
    assert time.perf_counter() - t0 < 30

def test_memory_guard():
    with pytest.raises(ValueError, match="n_mc"):
        replica_erm(SpikedSLR(10**6, 1.0), "softmax", 1.0, 0.1)

@pytest.mark.parametrize("model", [MaxSLR(3, np.inf), MaxSLR(2, 2.0)])
def test_rqmc_sample_has_the_model_law(model):
    """The Sobol-mapped sample reproduces the projections' law: compare moments with the model's own i.i.d. sampler
    (n = 2^14 points; tolerances 5 standard errors of the i.i.d. moments, which bound the RQMC error from above)."""
    S = channel_samples(model, 2**14, 3, "rqmc", 1)[0]
    assert S.form == "full"
    P = model.sample_projections(2**15, 4)
    for a, b in ((S.xi_k, None), (S.xi_v, None), (S.zeta, None)):
        assert abs(a.mean()) < 0.02 and abs(a.var() - 1) < 0.03
    chi_sel = S.chi_star[np.arange(len(S.y)), S.eps]; chi_ref = P.chi_star[np.arange(len(P.y)), P.eps]
    assert abs(chi_sel.mean() - chi_ref.mean()) < 5 * chi_ref.std() / math.sqrt(len(chi_ref))
    assert abs(np.mean(S.chi_star**2) - np.mean(P.chi_star**2)) < 5 * np.std(P.chi_star**2) / math.sqrt(P.chi_star.size)
    assert abs(np.var(S.y) - np.var(P.y)) < 0.05

X_TEST = np.array([0.9, 1.6, 2.5, 1.05, 1.2, 0.4])    # overlaps (m_k, q_k, V_k, m_v, q_v, V_v) near a spiked fixed point

@pytest.mark.parametrize("model", [SpikedSLR(2, 2.0), SpikedSLR(3, 1.0, noise=0.5)])
def test_conditioned_sample_has_the_law_of_the_fields(model):
    """The conditioned (spiked) sample gives the fields (omega^k, omega^v, y) the prox sees the same joint law as the
    full i.i.d. construction omega = m h* + sqrt(q - m^2) xi: first and second moments per token, within 5 standard
    errors of the i.i.d. moments (n = 2^16 i.i.d. points; the RQMC error of the 2^14-point net is far smaller)."""
    S = channel_samples(model, 2**14, 3, "rqmc", 1)[0]
    assert S.form == "conditioned" and S.z_star is None
    F = channel_samples(model, 2**16, 4, "mc", 1)[0]
    L = model.L_max
    def feats(S):
        omk, omv, _, _ = _fields(X_TEST, S)
        rows = np.arange(len(S.y)); oth = (np.arange(L)[None, :] != S.eps[:, None])
        ke, ve = omk[rows, S.eps], omv[rows, S.eps]
        ko, vo = omk[oth], omv[oth]
        return dict(ke=ke, ke2=ke**2, ve2=ve**2, vey=ve * S.y, y2=S.y**2, ko=ko, ko2=ko**2, vo2=vo**2, kv=ke * ve)
    a, b = feats(S), feats(F)
    for k in a:
        se = b[k].std() / math.sqrt(len(b[k]))
        assert abs(a[k].mean() - b[k].mean()) < 5 * se, (k, a[k].mean(), b[k].mean(), se)

@pytest.mark.parametrize("model", [SpikedSLR(2, 2.0), SpikedSLR(3, 1.0, noise=0.5)])
def test_conditioned_estimators_match_the_full_ones(model):
    """The six conjugates at fixed overlaps from the conditioned form (conditional expectations of the teacher fields
    and noises given the prox fields, Stein weights A = E[xi | fields]/sqrt(q - m^2)) agree with the definition, the
    full form on i.i.d. draws (16 samples of 2^14; their spread gives the s.e.): within 4 combined standard errors."""
    full = [channel_update("softmax", X_TEST, S, 5.0)[0] for S in channel_samples(model, 16 * 2**14, 5, "mc", 16)]
    cond = [channel_update("softmax", X_TEST, S, 5.0)[0] for S in channel_samples(model, 4 * 2**14, 6, "rqmc", 4)]
    mf, sf = np.mean(full, 0), np.std(full, 0, ddof=1) / math.sqrt(16)
    mc, sc = np.mean(cond, 0), np.std(cond, 0, ddof=1) / math.sqrt(4)
    assert np.all(np.abs(mf - mc) < 4 * np.hypot(sf, sc)), (mf, mc, sf, sc)
    assert np.all(sc[[0, 2, 3, 5]] < sf[[0, 2, 3, 5]] / 1.5)      # m-hats and V-hats: less integration noise (measured 2-11x)

@pytest.fixture(scope="module")
def seeds_at_alpha5():
    """Spiked L = 2, nu = 2, alpha = 5, lam = 0.1 softmax at seeds 0-9, n_mc = 16384, with the diagnostics (they do not
    change the fixed point): shared by the s.e. calibration and the heavy-tail test (about 25 s CPU once, not twice)."""
    return [replica_erm(SpikedSLR(2, 2.0), "softmax", 5.0, 0.1, seed=s, options=dict(n_mc=16384)) for s in range(10)]

def test_reported_se_matches_the_spread_over_seeds(seeds_at_alpha5):
    """The reported test_error_se (and m_k_se, q_v_se) is the spread of the n_rand = 4 randomisations over sqrt(4); over
    K = 10 independent seeds the measured spread s (K - 1 = 9 degrees of freedom) and the mean of the K reported se^2
    (each with 3 degrees of freedom: 30 in all) must agree: s^2 / mean(se^2) ~ F(9, 30) if the s.e. is honest, and
    we require it inside the central 99% interval of that law, [0.18, 3.45] in variance, [0.42, 1.86] in s.e. (10 seeds,
    not fewer: with 8 the band is 0.36-2.00 in s.e. and no longer excludes the factor 1.9 of issue 18)."""
    from scipy.stats import f
    lo, hi = f.ppf(0.005, 9, 30), f.ppf(0.995, 9, 30)
    rs = seeds_at_alpha5
    for key in ("test_error", "m_k", "q_v"):
        vals = [getattr(r, key) for r in rs]
        ses = [getattr(r, key + "_se") for r in rs]
        ratio = np.var(vals, ddof=1) / np.mean(np.square(ses))
        assert lo < ratio < hi, (key, ratio, lo, hi)

def test_integration_error_is_reported():
    r = replica_erm(SpikedSLR(2, 2.0), "softmax", 5.0, 0.1, options=dict(n_mc=4096))
    assert r.n_rand == 4 and r.integration == "rqmc"
    for k in ("m_k_se", "q_k_se", "V_k_se", "m_v_se", "q_v_se", "V_v_se", "energy_se"):
        assert np.isfinite(r.se[k]) and r.se[k] > 0
    assert r.test_error_se > 0 and np.isfinite(r.jump_k_se)
    old = replica_erm(SpikedSLR(2, 2.0), "softmax", 5.0, 0.1, options=dict(n_mc=4096, integration="mc", n_rand=1))
    assert old.n_rand == 1 and old.n_mc == 4096
    # the two integrations agree within their errors (6 s.e. combined: the mc one reports evaluation noise only)
    assert abs(old.test_error - r.test_error) < 6 * math.hypot(r.test_error_se, old.test_error_se) + 0.01
    # the Monte Carlo test error on the conditioned sample (key field m_k mu + sqrt(q_k) zeta) against the quadrature
    # value at the same overlaps: the evaluation noise of 4096 points is ~5e-3 relative; allow 4 of its s.e.
    mc = replica_erm(SpikedSLR(2, 2.0), "softmax", 5.0, 0.1, options=dict(n_mc=4096, test_method="monte carlo", diagnostics=False))
    assert np.allclose(mc.x, r.x, atol=1e-5)
    from attnstat.slr.replica import _mc_test_error, channel_samples as _cs
    from attnstat.slr.activations import get_activation
    te_mc, se_mc = _mc_test_error(get_activation("softmax"), r.x, _cs(SpikedSLR(2, 2.0), 4096, 0)[0], 0.0, 0.0)
    assert abs(te_mc - r.test_error) < 4 * se_mc, (te_mc, r.test_error, se_mc)

def test_verdict_is_three_way_and_backward_compatible():
    """`stability` is rs_verdict of the replicon and jump parts; `rs_stable` is True / False / None for stable / unstable /
    undetermined; without diagnostics nothing is known (undetermined). The as_dict row carries both."""
    from attnstat.slr.replica import rs_verdict
    r = replica_erm(SpikedSLR(2, 2.0), "softmax", 5.0, 0.1, options=dict(n_mc=4096))
    assert r.stability == rs_verdict(r.replicon, r.replicon_se, [(r.jump_k, r.jump_k_se, r.lam_k + r.Vhat_k), (r.jump_v, r.jump_v_se, r.lam_v + r.Vhat_v)])
    assert {"stable": True, "unstable": False, "undetermined": None}[r.stability] is r.rs_stable
    row = r.as_dict(); assert row["stability"] == r.stability and row["rs_stable"] is r.rs_stable
    n = replica_erm(SpikedSLR(2, 2.0), "softmax", 5.0, 0.1, options=dict(n_mc=4096, diagnostics=False))
    assert n.stability == "undetermined" and n.rs_stable is None
    # a replicon within two standard errors of 1 is undetermined, whatever its side of 1
    assert rs_verdict(1.09, 0.09) == "undetermined" and rs_verdict(0.95, 0.03) == "undetermined"
    assert rs_verdict(1.09, 0.02) == "unstable" and rs_verdict(0.9, 0.02) == "stable"

@pytest.mark.slow
def test_replicon_has_no_heavy_tail_at_a_stable_point(seeds_at_alpha5):
    """Spiked L = 2, nu = 2, alpha = 5, lam = 0.1 (clearly RS-stable): with the old two-start prox one seed in eight gave
    rho = 1.51 +- 1.04 (the others 0.44-0.48): a few samples left in a metastable prox minimum next to its spinodal, where
    the prox Hessian is nearly singular and the Jacobian J = -(I + K V)^-1 K explodes. With the global prox (prox_global
    guarding every fixed point) all eight seeds give rho in 0.44-0.48 at the default n_mc and 0.43-0.51 at n_mc = 16384
    (measured; the latter is run here, 4x cheaper, on the shared fixture's seeds 0-7), each 'stable'. Band: 0.40-0.53."""
    rs = seeds_at_alpha5[:8]
    rho = np.array([r.replicon for r in rs])
    assert np.all((rho > 0.40) & (rho < 0.53)), rho
    assert all(r.stability == "stable" for r in rs)

@pytest.mark.slow
@pytest.mark.parametrize("model,act,alpha", [(SpikedSLR(2, 2.0), "softmax", 2.0), (SpikedSLR(2, 2.0), "linear", 2.0)])
def test_reported_se_is_calibrated_at_small_alpha(model, act, alpha):
    """The calibration of the s.e. at small alpha and for linear attention (two points of the sweep cached
    in data/slr_replica_calibration.csv, same seeds 0-7, n_mc = 16384): spread over K = 8 seeds against the mean
    reported se^2 (8 x 3 degrees of freedom), inside the central 99% band of F(7, 24) (in s.e. units 0.36-2.00; the
    sweep measured 0.61-1.73 at these two points; max-SLR, 4x costlier, is left to the sweep)."""
    from scipy.stats import f
    lo, hi = f.ppf(0.005, 7, 24), f.ppf(0.995, 7, 24)
    rs = [replica_erm(model, act, alpha, 0.1, seed=s, options=dict(n_mc=16384)) for s in range(8)]
    for key in ("test_error", "m_k", "q_v"):
        ratio = np.var([getattr(r, key) for r in rs], ddof=1) / np.mean(np.square([getattr(r, key + "_se") for r in rs]))
        assert lo < ratio < hi, (key, math.sqrt(ratio), math.sqrt(lo), math.sqrt(hi))
