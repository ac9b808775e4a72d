"""Finite-alpha Bayes-optimal error (Nishimori RS equations): checks against closed forms and direct Monte Carlo."""
import numpy as np
import pytest
from attnstat.slr import SpikedSLR, MaxSLR, bayes_risk
from attnstat.slr.bayes import bayes_optimal_error

def test_bayes_optimal_spiked():
    m = SpikedSLR(3, 2.0)
    res = [bayes_optimal_error(m, a, n_mc=20_000) for a in (0.5, 1.0, 3.0, 10.0, 50.0)]
    errs = [r.error for r in res]
    assert all(a > b for a, b in zip(errs, errs[1:]))                     # decreasing in alpha
    EB = bayes_risk(m).risk
    assert EB < errs[-1] < EB + 0.02                                      # tends to the population Bayes risk
    for r in res:
        if r.q_v > 1 - 1e-7:                                              # perfect recovery of v*: q_k = alpha nu / (1 + alpha nu)
            assert abs(r.q_k - r.alpha * 2.0 / (1 + r.alpha * 2.0)) < 1e-6
    assert res[-1].q_v > 1 - 1e-7

def test_bayes_optimal_closed_form_matches_posterior_mean_mc():
    r = bayes_optimal_error(SpikedSLR(3, 1.0), 1.0, n_mc=40_000)
    assert abs(r.error - r.error_mc) < 4 * r.error_se     # closed channel form vs direct MC error of the posterior mean

def test_bayes_optimal_max_inf_decreases_to_zero():
    m = MaxSLR(3, np.inf)
    errs = [bayes_optimal_error(m, a, n_mc=3000, n_gh=32, atol=1e-6).error for a in (1.0, 4.0, 30.0)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 0.05

def test_bayes_optimal_errors():
    with pytest.raises(ValueError, match="alpha"): bayes_optimal_error(SpikedSLR(2, 1.0), 0.0)
