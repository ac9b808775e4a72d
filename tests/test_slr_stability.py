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
    # refused before allocating; the first guard to fire is channel_samples' (it names n_rand) or the sample's (n_mc)
    with pytest.raises(ValueError, match="n_mc|n_rand"):
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
    """Spiked L = 2, nu = 2, alpha = 5, lam = 0.1 (clearly RS-stable): the plain replicon (a mean of J (x) J, whose
    near-cusp contributions have a Pareto tail of index 5/4: infinite variance) gave one seed in eight rho = 1.51 +- 1.04
    and scattered 0.43-0.51 with s.e. up to 0.06 at n_mc = 16384. The tail-corrected estimator (replicon_estimate) gives
    0.457-0.471 with s.e. 0.002-0.009 on seeds 0-7 (measured), every seed 'stable'. Band: 0.43-0.50."""
    rs = seeds_at_alpha5[:8]
    rho = np.array([r.replicon for r in rs])
    assert np.all((rho > 0.43) & (rho < 0.50)), rho
    assert all(r.stability == "stable" for r in rs)

def test_replicon_se_is_calibrated_at_alpha5(seeds_at_alpha5):
    """replicon_se (jackknife over the 4 randomisations of the tail-corrected estimate) against the spread of rho over
    the K = 10 seeds of the shared fixture: s^2 / mean(se^2) ~ F(9, 30) if it is honest; inside the central 99% band
    (in s.e. units 0.42-1.86; measured 0.98 on seeds 0-7). The plain estimator failed this (one seed's se = 1.04)."""
    from scipy.stats import f
    rho = [r.replicon for r in seeds_at_alpha5]; se = [r.replicon_se for r in seeds_at_alpha5]
    ratio = np.var(rho, ddof=1) / np.mean(np.square(se))
    assert f.ppf(0.005, 9, 30) < ratio < f.ppf(0.995, 9, 30), (math.sqrt(ratio), rho, se)

def test_replicon_estimate_on_a_known_heavy_tail():
    """replicon_estimate on synthetic contributions whose mean is known: a body (|N(0,1)| + 1 along one direction) and
    a 10% Pareto(5/4) tail (mean 5, infinite variance) along another, 4 randomisations of 4096, 150 repetitions (~2 s).
    The estimate is unbiased within 3% (measured ~1.5%: the Pareto model above the threshold is exact here, the rest is
    the threshold's own noise); its jackknife s.e. is honest or a little conservative: spread / rms s.e. measured 0.82
    (150 repetitions) and 0.88 (300) with 4 randomisations, 1.00 with 8 (the jackknife of a nonlinear statistic over
    few groups overestimates); required 0.75-1.17 (the upper end: the 99% band of 150 repetitions). The plain mean's
    spread is 5x larger or more."""
    from attnstat.slr.replica import replicon_estimate
    rng = np.random.default_rng(11)
    U1, U2 = np.diag([1.0, 0.2, 0.1]), np.array([[0.3, 0.1, 0.0], [0.1, 0.5, 0.0], [0.0, 0.0, 0.2]])
    def net(n):
        tail = rng.random(n) < 0.1
        w = np.where(tail, rng.random(n) ** (-1 / 1.25), np.abs(rng.standard_normal(n)) + 1.0)
        return w[:, None, None] * np.where(tail[:, None, None], U2 / np.linalg.norm(U2), U1 / np.linalg.norm(U1))
    T = 0.9 * (1 + math.sqrt(2 / math.pi)) * U1 / np.linalg.norm(U1) + 0.1 * 5.0 * U2 / np.linalg.norm(U2)
    truth = np.max(np.abs(np.linalg.eigvals(T)))
    reps = [replicon_estimate([net(4096) for _ in range(4)]) for _ in range(150)]
    est, se, plain = (np.array([d[k] for d in reps]) for k in ("replicon", "replicon_se", "replicon_plain"))
    assert abs(est.mean() / truth - 1) < 0.03, (est.mean(), truth)
    assert 0.75 < est.std(ddof=1) / np.sqrt(np.mean(se**2)) < 1.17, (est.std(ddof=1), np.sqrt(np.mean(se**2)))
    assert plain.std(ddof=1) > 5 * est.std(ddof=1)
    assert all(1.0 < d["tail_index"] < 1.6 for d in reps[:5]) and reps[0]["tail_index_used"] == 1.25
    # a light tail keeps Hill's index (>= 2) and a constant contribution is left as it is
    light = replicon_estimate([np.abs(rng.standard_normal((4096, 1, 1))) * np.eye(3)[None] for _ in range(4)])
    assert light["tail_index_used"] >= 2 and abs(light["replicon"] - math.sqrt(2 / math.pi)) < 4 * light["replicon_se"] + 0.01
    const = replicon_estimate([np.ones((1000, 3, 3))] * 3)
    assert abs(const["replicon"] - 3.0) < 1e-12 and const["replicon_se"] < 1e-12

def test_randomisations_on_two_branches_are_resolved():
    """Spiked L = 3, nu = 2, linear, alpha = 5, seed 6: one of the four Sobol nets, started from the informed overlaps,
    reaches another branch of the RS equations (m_k = 0.03, test error 4.55, ERM energy 0.674 against 0.643), and the
    mean of the four was 1.75 +- 0.89 in the cached sweep. replica_erm now solves such a net again from the most
    central net's fixed point and keeps the lower energy: 0.988 +- 0.014, m_k = 0.580 +- 0.002 (measured; the other
    seeds give 0.97-1.00), verdict 'stable'. About 20 s."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no 'different branches' warning either
        r = replica_erm(SpikedSLR(3, 2.0), "linear", 5.0, 0.1, seed=6, on_fail="warn", options=dict(n_mc=16384))
    assert 0.95 < r.test_error < 1.02 and r.test_error_se < 0.03 and abs(r.m_k - 0.58) < 0.01, (r.test_error, r.m_k)
    assert r.stability == "stable"

CAL_POINTS = [("spiked", 2, 2.0, "softmax", a) for a in (1.5, 2.0, 5.0)] + [("spiked", 2, 1.0, "softmax", 1.5),
              ("spiked", 3, 2.0, "softmax", 3.0), ("spiked", 2, 2.0, "linear", 2.0), ("spiked", 3, 2.0, "linear", 5.0),
              ("max", 3, np.inf, "softmax", 2.0), ("max", 2, np.inf, "linear", 5.0)]

def _calibration_rows():
    from attnstat.data import data_path
    from attnstat.sweep import read_sweep
    return read_sweep(data_path("slr_replica_calibration.csv"))

def test_calibration_sweep_is_current_and_calibrated():
    """The calibration sweep of 02a (data/slr_replica_calibration.csv, made by its slow cell: 9 points x 8 or 16 seeds,
    n_mc = 16384, 4 Sobol nets each) replaces the former fresh 8-seed runs (150 s): two of its rows are recomputed
    here and must be reproduced to 1e-7 (the cache is the current code's, ~10 s), then at every point, for test_error,
    m_k, q_v and the replicon, spread over seeds / rms reported s.e. must lie inside the family-wise 99% band of
    F(K - 1, 3K) (Bonferroni over the 36 ratios). Same statistical power as the fresh runs, 15x cheaper."""
    from scipy.stats import f
    header, rows = _calibration_rows()
    assert header["params"]["replicon"].startswith("tail-corrected") and header["params"]["n_mc"] == 16384
    for key in (("spiked", 2, 2.0, "linear", 2.0, 0), ("spiked", 2, 2.0, "softmax", 5.0, 1)):
        row = next(r for r in rows if (r["model"], r["L"], r["nu"], r["act"], r["alpha"], r["seed"]) == key)
        fresh = replica_erm(SpikedSLR(key[1], key[2]), key[3], key[4], 0.1, seed=key[5], on_fail="warn", options=dict(n_mc=16384))
        for q in ("test_error", "m_k", "q_v", "replicon", "replicon_se"):
            assert abs(getattr(fresh, q) - row[q]) <= 1e-7 * (1 + abs(row[q])), (key, q, getattr(fresh, q), row[q])
        assert fresh.stability == row["stability"]
    n_ratios = 4 * len(CAL_POINTS)
    for pt in CAL_POINTS:
        R = [r for r in rows if (r["model"], r["L"], r["nu"], r["act"], r["alpha"]) == pt]
        K = len(R); assert K >= 8, (pt, K)
        lo, hi = f.ppf(0.005 / n_ratios, K - 1, 3 * K), f.ppf(1 - 0.005 / n_ratios, K - 1, 3 * K)
        for q in ("test_error", "m_k", "q_v", "replicon"):
            ratio = np.var([r[q] for r in R], ddof=1) / np.mean(np.square([r[q + "_se"] for r in R]))
            assert lo < ratio < hi, (pt, q, math.sqrt(ratio), math.sqrt(lo), math.sqrt(hi))
