"""GAMP for single-location regression: per-iteration overlaps against the state evolution, final error against the
uninformed Nishimori fixed point, and the hard phase (GAMP stops at the uninformed branch)."""
import math, warnings
import numpy as np
import pytest
from attnstat.core import ConvergenceWarning
from attnstat.slr import SpikedSLR, MaxSLR
from attnstat.slr.amp import simulate_amp, state_evolution, gamp, prior_precision
from attnstat.slr.bayes import bayes_optimal_error, bayes_optimal_branches

SEEDS = tuple(range(8))
D_AMP = 1000

@pytest.fixture(scope="module")
def max_runs():
    "GAMP on max-SLR (nu = inf, Delta = 0.1) at alpha = 2, D = 1000, eight seeds (under 1 s each on one core)."
    model = MaxSLR(3, np.inf, noise=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)     # tol = 0: a fixed number of iterations on purpose
        return model, [simulate_amp(model, 2.0, D_AMP, seed=s, max_iter=12, tol=0.0, n_test=1000) for s in SEEDS]

def test_gamp_follows_state_evolution(max_runs):
    # Mean over 8 seeds of each per-iteration overlap (m_k, m_v, q_k, q_v; iterations 0..12) vs the state evolution from
    # the mean initial overlap (mean of four MC seeds of 1e4 sequences). 4 x 12 compared values: a per-point 3 s.e. test
    # with a 3-dof s.e. (the former 4 seeds at D = 2000) gave false alarms (worst gap 2.6 s.e. when it passed). Here the
    # s.e. of each curve is its largest value over the iterations (seed-to-seed spread, 7 dof; MC spread, 3 dof), so a
    # low variance estimate at one iteration cannot make the test fail, and the threshold is 3.5 s.e. (Bonferroni over the
    # 48 values: family-wise false-alarm rate about 2 % for Gaussian errors), plus 1/D for the O(1/D) finite-size bias.
    # Measured (seeds 0-7, MC seeds 10-13): worst gap 2.6 s.e. (m_k, iteration-wise s.e.), per-point s.e. about 0.005;
    # a wrong Onsager term or variance moves the overlaps by O(0.1), far above the 0.03 threshold.
    model, runs = max_runs
    T = 12
    m0 = np.mean([r.result.m[0] for r in runs], 0); q0 = np.mean([r.result.q[0] for r in runs], 0)
    ses = [state_evolution(model, 2.0, np.diag(np.diag(m0)), np.diag(np.diag(q0)), n_iter=T, n_mc=10_000, seed=s)
           for s in (10, 11, 12, 13)]
    worst = 0.0
    for key in ("m_k", "m_v", "q_k", "q_v"):
        sim = np.array([r.result.overlaps[key][:T + 1] for r in runs])
        mean, se = sim.mean(0), sim.std(0, ddof=1).max() / math.sqrt(len(runs))
        th = np.array([s.overlaps[key] for s in ses])
        th_mean, th_se = th.mean(0), th.std(0, ddof=1).max() / math.sqrt(len(ses))
        tol = math.sqrt(se**2 + th_se**2)
        gap = np.abs(mean - th_mean) / tol
        assert np.all(np.abs(mean - th_mean) < 3.5 * tol + 1 / D_AMP), (key, gap)
        worst = max(worst, float(gap.max()))
    print("largest gap in (iteration-maximal) standard errors:", worst)

def test_final_error_matches_uninformed_fixed_point(max_runs):
    # after 12 iterations GAMP is within 1e-3 of its fixed point (state evolution); compare its test error with the
    # uninformed Nishimori branch (block s.e.) and the test-set s.e. of the seed mean; +0.01 for the finite-D bias.
    # Measured (D = 1000, seeds 0-7): GAMP 0.349 vs fixed point 0.317, s.e. 0.012 (threshold 0.046).
    model, runs = max_runs
    bo = bayes_optimal_error(model, 2.0, n_mc=10_000)
    errs = np.array([r.test_error for r in runs])
    se = math.sqrt(errs.var(ddof=1) / len(errs) + bo.error_se**2)
    assert abs(errs.mean() - bo.error) < 3 * se + 0.01, (errs.mean(), bo.error, se)

def test_hard_phase_gamp_stops_at_uninformed():
    # spiked-SLR L = 3, nu = 0.5, Delta = 0 at alpha = 1.3: the branches coexist and the informed one (perfect recovery
    # of v*) is the equilibrium. GAMP from a random start stays at the uninformed branch's error.
    model = SpikedSLR(3, 0.5)
    br = bayes_optimal_branches(model, 1.3, n_mc=10_000)
    assert br.coexist and br.hard and br.informed.perfect_v and not br.uninformed.perfect_v
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # near the spinodal GAMP creeps; checked below instead
        sims = [simulate_amp(model, 1.3, 1000, seed=s, max_iter=60, n_test=1000) for s in (0, 1)]
    assert all(s.result.delta[-1] < 1e-5 for s in sims)        # settled: mean-square change per coordinate below 1e-5
    e = np.mean([s.test_error for s in sims]); se = max(s.test_error_se for s in sims)
    assert abs(e - br.uninformed.error) < 3 * se + 0.03
    assert e > br.informed.error + 0.05
    assert all(s.q_v < 0.999 for s in sims)

def test_gamp_spiked_small_nu_tracks_state_evolution():
    # spiked-SLR at small nu (undamped, non-centred tokens are a weak perturbation): one seed, D = 1000, loose 0.03
    model = SpikedSLR(3, 0.2, noise=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = simulate_amp(model, 2.5, 1000, seed=0, damping=0.0, max_iter=10, tol=0.0, n_test=200)
    se = state_evolution(model, 2.5, np.diag(np.diag(r.result.m[0])), np.diag(np.diag(r.result.q[0])), n_iter=10, n_mc=20_000)
    for key in ("m_k", "m_v"):
        assert np.max(np.abs(r.result.overlaps[key] - se.overlaps[key])) < 0.05

def test_amp_as_dict_and_errors():
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        r = simulate_amp(MaxSLR(2, 1.0), 1.0, 200, seed=0, max_iter=2, tol=0.0, n_test=100)
    d = r.as_dict()
    assert {"test_error", "test_error_se", "m_k", "q_v", "n_iter", "converged"} <= set(d)
    with pytest.raises(TypeError, match="model"): simulate_amp(None, 1.0, 100)
    with pytest.raises(ValueError, match="D"): simulate_amp(MaxSLR(2, 1.0), 1.0, 1)
    with pytest.raises(ValueError, match="damping"): simulate_amp(MaxSLR(2, 1.0), 1.0, 100, damping=1.0)

def test_prior_precision_and_gamp_arguments():
    # Lambda = diag(alpha nu, 0) in spiked-SLR, 0 in max-SLR; wrong types raise TypeError, bad values ValueError, naming the parameter
    np.testing.assert_array_equal(prior_precision(SpikedSLR(3, 2.0), 1.5), np.diag([3.0, 0.0]))
    np.testing.assert_array_equal(prior_precision(MaxSLR(3, 2.0), 1.5), np.zeros((2, 2)))
    with pytest.raises(TypeError, match="model"): prior_precision("spiked", 1.0)
    with pytest.raises(TypeError, match="alpha"): prior_precision(SpikedSLR(2, 1.0), "0.1")
    with pytest.raises(ValueError, match="alpha"): prior_precision(SpikedSLR(2, 1.0), float("nan"))
    with pytest.raises(ValueError, match="alpha"): prior_precision(SpikedSLR(2, 1.0), -1.0)
    X, y, mask = np.zeros((4, 2, 3)), np.zeros(4), np.ones((4, 2), bool)
    with pytest.raises(TypeError, match="model"): gamp(None, X, y, mask, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="W0"): gamp(MaxSLR(2, 1.0), X, y, mask, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="y"): gamp(MaxSLR(2, 1.0), X, np.zeros(5), mask, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="damping"): gamp(MaxSLR(2, 1.0), X, y, mask, np.zeros((3, 2)), damping=1.0)
    with pytest.raises(TypeError, match="max_iter"): gamp(MaxSLR(2, 1.0), X, y, mask, np.zeros((3, 2)), max_iter=2.5)

def test_spiked_test_error_is_own_overlap_error_plus_test_noise():
    # Issue 12: GAMP's direct test error in spiked-SLR (L = 3, nu = 1, Delta = 0, alpha = 2, D = 1000, seeds 0-3,
    # n_test = 20000) against (i) the exact law of the test fields given the estimate (Gaussian fields at the run's own
    # 2x2 overlaps m, q; Monte Carlo with 1e6 sequences, s.e. below 1e-3 and common to all runs: MC seeds 7, 8, 9 differ
    # by 0.0015) and (ii) the uninformed Nishimori branch (closed form). Test-set s.e. of the 4-seed mean: 0.0035.
    # Measured: direct - own = +0.0027 (MC seed 7; +0.0015, +0.0012 with seeds 8, 9), own - branch = -0.0007 +- 0.0004
    # (seeds); thresholds 3 combined s.e. (0.011 and 0.0032). An error in the test prediction (e.g. the tilt or the
    # value field) or a finite-D offset of GAMP's overlaps of the size once suspected (0.01-0.03) fails them.
    from attnstat.slr.amp import _se_error
    from attnstat.slr.bayes import nishimori_sample
    model, alpha = SpikedSLR(3, 1.0), 2.0
    T = nishimori_sample(model, 1_000_000, 7)
    se_T = 1 / math.sqrt(1_000_000)                 # per-sequence squared error has standard deviation below 1
    runs = [simulate_amp(model, alpha, 1000, seed=s, n_test=20_000) for s in range(4)]
    assert all(r.converged for r in runs)
    direct = np.array([r.test_error for r in runs])
    own = np.array([_se_error(model, r.result.m[-1], r.result.q[-1], r.result.Sigma, T, 16) for r in runs])
    se_test = math.sqrt(sum(r.test_error_se**2 for r in runs)) / len(runs)
    assert abs((direct - own).mean()) < 3 * math.sqrt(se_test**2 + se_T**2), (direct, own, se_test)
    bo = bayes_optimal_error(model, alpha, init="uninformed", n_mc=20_000)
    se_seed = own.std(ddof=1) / math.sqrt(len(own))
    assert abs(own.mean() - bo.error) < 3 * math.sqrt(se_seed**2 + se_T**2), (own, bo.error, se_seed)

def test_damping_near_one_is_not_convergence():
    """Issue 29: with damping 0.999999 the damped step moves W by 1e-12 and GAMP stopped after one iteration with
    converged = True (test error 1.034 instead of 0.402). The test is now the undamped map's change: no convergence
    within max_iter, a ConvergenceWarning; and a moderate damping reaches the undamped fixed point."""
    model = MaxSLR(2, 2.0)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        r = simulate_amp(model, 2.0, 60, seed=0, n_test=2000, damping=0.999999)
    assert not r.converged and r.n_iter == 100 and r.result.delta[-1] > 1e-9
    d = model.sample(120, 60, seed=1)
    rng = np.random.default_rng(2)
    W0, xi = 0.1 * rng.standard_normal((60, 2)), rng.standard_normal((64, 2))
    a = gamp(model, d.X, d.y, d.mask, W0, max_iter=400, tol=1e-12, xi=xi)
    b = gamp(model, d.X, d.y, d.mask, W0, max_iter=400, tol=1e-12, damping=0.5, xi=xi)
    assert a.converged and b.converged and b.n_iter > a.n_iter
    assert np.max(np.abs(a.W - b.W)) < 1e-4          # the same fixed point (residual 1e-12 per coordinate)
