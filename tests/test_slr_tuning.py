"""attnstat.slr.tuning: the search for the ridge strength that minimises the replica test error (nbs/02f_slr_tuned_ridge.ipynb).

The known answer: at L = 1 ERM is ridge regression (replica_erm returns the closed form), whose optimum is lambda* = Delta^2 at
every alpha (the posterior mean under the teacher's Gaussian prior). At L = 3 the answer is checked against the same replica
objective on a grid of lambda around lambda* with the same channel sample (common random numbers)."""
import json, math, warnings
import numpy as np
import pytest
from attnstat.core import ConvergenceWarning, ParameterTypeError
from attnstat.slr import SpikedSLR, MaxSLR, replica_erm, channel_samples, ridge_textbook
from attnstat.slr.tuning import TuningOptions, OptimalLambda, optimal_lambda, tuned_curve, _bracket, _golden, _flat_range

@pytest.mark.parametrize("noise,alpha", [(0.3, 0.5), (0.5, 2.0), (1.0, 8.0)])
def test_ridge_optimum_is_noise_variance(noise, alpha):
    "L = 1: lambda* = Delta^2 (closed form, so exact up to xtol), and no grid lambda does better."
    r = optimal_lambda(SpikedSLR(1, 1.0, noise=noise), "softmax", alpha, options=dict(xtol=1e-3))
    assert r.converged and r.stop == "xtol" and not r.at_bound
    assert abs(math.log10(r.lam / noise**2)) < 1e-3
    grid = np.geomspace(1e-3, 1e2, 5001)
    assert r.test_error <= min(ridge_textbook(alpha, l, 1.0, noise**2)["test_error"] for l in grid) + 1e-6   # xtol = 1e-3 in u: second order, < 1e-7

def test_noiseless_ridge_minimum_on_the_bound_warns():
    "Delta = 0: the optimum is lambda -> 0, found on the lower bound, with a warning and converged False."
    with pytest.warns(ConvergenceWarning, match="no interior minimum"):
        r = optimal_lambda(MaxSLR(1, 2.0), "softmax", 3.0, bounds=(1e-3, 10.0))
    assert r.at_bound and not r.converged and r.stop == "bound" and r.lam == pytest.approx(1e-3)

def test_result_dict_is_json_and_has_no_replica():
    r = optimal_lambda(SpikedSLR(1, 1.0, noise=0.5), "softmax", 2.0)
    d = r.to_dict()
    assert "replica" not in d and d["lam"] == r.lam and len(d["evaluations"]) == r.n_iter
    json.dumps(d)
    assert isinstance(r, OptimalLambda) and "evaluations" not in r.as_dict()
    assert r.lam_lo <= r.lam <= r.lam_hi

def test_tuned_curve_keeps_the_alpha_free_optimum_and_warm_starts():
    rs = tuned_curve(SpikedSLR(1, 1.0, noise=0.5), "softmax", [0.5, 2.0, 8.0], options=dict(xtol=1e-3))
    assert all(r.converged and abs(math.log10(r.lam / 0.25)) < 1e-3 for r in rs)
    assert rs[1].n_iter < rs[0].n_iter and rs[2].n_iter < rs[0].n_iter

class _Parabola:
    "Stand-in for the search: E(u) = 0.5 + (u - u0)^2, a constant s.e."
    def __init__(self, u0=0.3, se=0.01): self.u0, self.s, self.done = u0, se, {}
    def f(self, u): self.done[u] = True; return 0.5 + (u - self.u0)**2
    def se(self, u): return self.s

@pytest.mark.parametrize("u0,start", [(0.3, -1.0), (-2.7, -1.0), (1.4, 1.9)])
def test_bracket_and_golden_find_a_parabola_minimum(u0, start):
    p = _Parabola(u0, se=0.0)
    a, b, c = _bracket(p, start, -4.0, 2.0, 0.5)
    assert a < u0 < c and p.f(b) <= min(p.f(a), p.f(c))
    a, b, c, why = _golden(p, a, b, c, TuningOptions(xtol=1e-4, max_eval=100))
    assert why == "xtol" and abs(b - u0) < 1e-4

def test_noise_stop_and_flatness():
    "Ends within one s.e. of the middle stop the search; the flat range is |u - u0| <= sqrt(se)."
    p = _Parabola(0.3, se=0.01)
    a, b, c, why = _golden(p, -1.0, 0.0, 1.0, TuningOptions())
    assert why == "noise"
    p2 = _Parabola(0.3, se=0.01)
    for u in [*np.linspace(-1, 1, 201), 0.3]: p2.f(float(u))
    lo, hi = _flat_range(p2, 0.3)
    assert abs(math.log10(lo) - 0.2) < 1e-3 and abs(math.log10(hi) - 0.4) < 1e-3

def test_l3_minimum_beats_a_grid_on_the_same_sample():
    """Spiked-SLR L = 3, nu = 2, alpha = 5, small Monte Carlo: the error at lambda* is no larger than at lambda*/3 and 3 lambda*
    (same channel sample, so only the fixed-point tolerance 1e-5 separates them) and lies inside the flat range."""
    m, ro = SpikedSLR(3, 2.0), dict(n_mc=1024, n_rand=2, atol=1e-5, max_iter=200)
    r = optimal_lambda(m, "softmax", 5.0, bounds=(0.01, 30.0), options=dict(replica=ro, lam0=1.0, xtol=0.1))
    assert r.converged and r.stop in ("xtol", "noise") and r.n_iter <= 25
    S = channel_samples(m, 1024, 0, "rqmc", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in (1 / 3, 3.0):
            e = replica_erm(m, "softmax", 5.0, r.lam * f, sample=S, init=r.replica, options=ro).test_error
            assert r.test_error <= e + 1e-4, (f, r.test_error, e)
    assert r.lam_lo <= r.lam <= r.lam_hi

_M = SpikedSLR(1, 1.0, noise=0.5)

@pytest.mark.parametrize("kw,exc,word", [
    (dict(model="spiked"), TypeError, "model"),
    (dict(alpha=0.0), ValueError, "alpha"),
    (dict(alpha=True), ParameterTypeError, "alpha"),
    (dict(alpha=float("nan")), ValueError, "alpha"),
    (dict(bounds=(1.0, 0.1)), ValueError, "bounds"),
    (dict(bounds=(0.0, 1.0)), ValueError, "bounds[0]"),
    (dict(bounds=(1e-3, float("inf"))), ValueError, "bounds"),
    (dict(bounds="wide"), ParameterTypeError, "bounds"),
    (dict(bounds=(1.0,)), ValueError, "bounds"),
    (dict(init="best"), ValueError, "init"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(activation="tanh-ish"), ValueError, "activation"),
    (dict(options=dict(xtol=-1.0)), ValueError, "options.xtol"),
    (dict(options=dict(max_eval=2)), ValueError, "options.max_eval"),
    (dict(options=dict(noise_stop=1)), ParameterTypeError, "options.noise_stop"),
    (dict(options=dict(speed=1)), ParameterTypeError, "speed"),
    (dict(options=dict(replica=dict(n_mc=10))), ValueError, "options.n_mc"),
    (dict(options=3), ParameterTypeError, "options"),
])
def test_entry_checks_name_the_parameter(kw, exc, word):
    args = dict(model=_M, activation="softmax", alpha=2.0)
    args.update({k: v for k, v in kw.items() if k in args})
    rest = {k: v for k, v in kw.items() if k not in args}
    with pytest.raises(exc, match=word.replace("[", r"\[").replace(".", r"\.")):
        optimal_lambda(args["model"], args["activation"], args["alpha"], **rest)

@pytest.mark.parametrize("alphas,exc", [([], ValueError), ("1,2", ParameterTypeError), ([1.0, -1.0], ValueError),
                                        ([[1.0, 2.0]], ValueError)])
def test_tuned_curve_checks_alphas(alphas, exc):
    with pytest.raises(exc, match="alphas"):
        tuned_curve(_M, "softmax", alphas)
