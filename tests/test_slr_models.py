"""SLR data models and activations: validation, sampler laws, Jacobians, masking, user-registered activations.

Tolerances are 5 Monte Carlo standard errors (fixed seeds) unless the comparison is exact."""
import math
import numpy as np
import pytest
from attnstat.slr import (SpikedSLR, MaxSLR, teacher, softmax, linear, erf, softplus, ACTIVATIONS, get_activation,
                          register_activation, NormalisedActivation, ElementwiseActivation, attention_predict,
                          log_softplus, risk_terms, population_risk)

UNIF3 = {1: 1 / 3, 2: 1 / 3, 3: 1 / 3}


@pytest.mark.parametrize("make, match", [
    (lambda: SpikedSLR(3, -0.5), "nu"),
    (lambda: MaxSLR(3, -1.0), "nu"),
    (lambda: SpikedSLR(3, np.inf), "nu"),
    (lambda: SpikedSLR(0, 1.0), "L must be an integer in \\[1"),
    (lambda: MaxSLR(-2, 1.0), "L must be an integer in \\[1"),
    (lambda: SpikedSLR({}, 1.0), "non-empty"),
    (lambda: MaxSLR({1: 0.5, 2: 0.4}, 1.0), "sum to 1"),
    (lambda: MaxSLR({0: 0.5, 2: 0.5}, 1.0), "L \\(a length"),
    (lambda: SpikedSLR({1: -0.5, 2: 1.5}, 1.0), "probability"),
    (lambda: SpikedSLR(2, 1.0, noise=-1.0), "noise"),
    (lambda: get_activation("relu"), "activation must be one of"),
    (lambda: risk_terms(SpikedSLR(2, 1.0), "softmax", 1.0, 0.5), "q_k must satisfy q_k >= m_k\\^2"),
    (lambda: population_risk(SpikedSLR(2, 1.0), "tanh", 0.0, 1.0, 1.0, 1.0), "activation"),
    (lambda: SpikedSLR(2, 1.0).sample(10, 1, seed=0), "D must be an integer"),
])
def test_bad_inputs_name_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("make, match", [
    (lambda: SpikedSLR("3", 1.0), "L must be an int"),
    (lambda: SpikedSLR(3.0, 1.0), "L must be an int"),
    (lambda: SpikedSLR(True, 1.0), "L must be an int"),
    (lambda: SpikedSLR(3, "2"), "nu must be a real number"),
    (lambda: MaxSLR(3, 1.0, noise=[0.1]), "noise must be a real number"),
    (lambda: SpikedSLR({2: "0.5", 3: 0.5}, 1.0), "probability"),
    (lambda: SpikedSLR(3, 1.0).sample_projections(10.0), "n must be an integer"),
    (lambda: SpikedSLR(3, 1.0).sample(10, "50"), "D must be an integer"),
    (lambda: teacher(50.5), "D must be an integer"),
    (lambda: get_activation(None), "activation must be a name"),
    (lambda: register_activation("softmax"), "act must be a NormalisedActivation"),
    (lambda: attention_predict(np.zeros((2, 3, 4)), np.ones(4), np.ones(4), "softmax", batch_size=2.0), "batch_size must be an integer"),
    (lambda: attention_predict(np.array([[["a"]]]), np.ones(1), np.ones(1), "softmax"), "X must be a numeric array"),
])
def test_wrong_types_raise_type_error(make, match):
    with pytest.raises(TypeError, match=match):
        make()


def test_sizes_are_checked_before_allocating():
    """L = 1e6 cases: the samplers refuse sizes whose arrays would not fit (ValueError naming the sizes)."""
    with pytest.raises(ValueError, match=r"n \* L is too large"):
        SpikedSLR(10**6, 2.0).sample_projections(10**7)
    with pytest.raises(ValueError, match=r"n \* L \* D is too large"):
        MaxSLR(10**6, np.inf).sample(1000, 50)
    P = SpikedSLR(10**6, 2.0).sample_projections(2, seed=0)      # small n at huge L is fine
    assert P.chi_star.shape == (2, 10**6)


def test_attributes():
    m = SpikedSLR(UNIF3, 4.0, noise=0.1)
    assert (m.L_max, m.variable_length, m.c_nu, m.kind, m.noise) == (3, True, 2.0, "spiked", 0.1)
    assert MaxSLR(5, np.inf).c_nu == np.inf and MaxSLR(5, 2.5).c_nu == 2.5
    assert SpikedSLR(2, 1.0) == SpikedSLR(2, 1.0) and SpikedSLR(2, 1.0) != MaxSLR(2, 1.0)


def test_spiked_projection_law():
    n, nu = 200_000, 3.0
    P = SpikedSLR(4, nu).sample_projections(n, seed=11)
    sel = P.chi_star[np.arange(n), P.eps]
    assert abs(sel.mean() - math.sqrt(nu)) < 5 / math.sqrt(n)
    assert abs(sel.var() - 1) < 5 * math.sqrt(2 / n)
    others = (P.chi_star.sum(1) - sel) / 3
    assert abs(others.mean()) < 5 / math.sqrt(3 * n)
    assert np.abs(np.bincount(P.eps) / n - 0.25).max() < 5 * math.sqrt(0.25 * 0.75 / n)
    np.testing.assert_array_equal(P.y, P.z_star[np.arange(n), P.eps])


def test_max_projection_law():
    n = 200_000
    m = MaxSLR(3, 1.0, noise=0.5)
    P = m.sample_projections(n, seed=12)
    # tokens are exactly i.i.d. N(0,1) marginally
    assert abs(P.chi_star.mean()) < 5 / math.sqrt(3 * n) and abs(P.chi_star.var() - 1) < 5 * math.sqrt(2 / (3 * n))
    # the location is drawn from the posterior: E[chi*_eps] = E[sum_l p_l chi*_l]
    post = m.posterior(P.chi_star, P.mask)
    est = P.chi_star[np.arange(n), P.eps] - (post * P.chi_star).sum(1)
    assert abs(est.mean()) < 5 * est.std() / math.sqrt(n)
    resid = P.y - P.z_star[np.arange(n), P.eps]
    assert abs(resid.std() - 0.5) < 5 * 0.5 / math.sqrt(2 * n)
    P = MaxSLR(UNIF3, np.inf).sample_projections(10_000, seed=13)
    np.testing.assert_array_equal(P.eps, np.where(P.mask, P.chi_star, -np.inf).argmax(1))


def test_variable_length_masks():
    P = SpikedSLR({1: 0.2, 3: 0.8}, 2.0).sample_projections(50_000, seed=14)
    assert set(np.unique(P.lengths)) == {1, 3}
    assert np.all(P.mask.sum(1) == P.lengths) and np.all(P.eps < P.lengths)
    assert np.all(P.chi_star[~P.mask] == 0) and np.all(P.z_star[~P.mask] == 0)
    assert abs((P.lengths == 1).mean() - 0.2) < 5 * math.sqrt(0.16 / 50_000)


def test_d_dimensional_sampler_matches_projections():
    m = MaxSLR(UNIF3, 2.0, noise=0.2)
    d = m.sample(3000, 64, seed=15)
    G = np.array([[d.k_star @ d.k_star, d.k_star @ d.v_star], [0, d.v_star @ d.v_star]]) / 64
    np.testing.assert_allclose(G, [[1, 0], [0, 1]], atol=1e-12)
    chi = d.X @ d.k_star / 8
    assert np.all(d.X[~d.mask] == 0)
    # the location follows the posterior of the realised chi*: E[chi*_eps - p.chi*] = 0
    post = m.posterior(chi, d.mask)
    est = chi[np.arange(3000), d.eps] - (post * np.where(d.mask, chi, 0)).sum(1)
    assert abs(est.mean()) < 5 * est.std() / math.sqrt(3000)
    k, v = teacher(64, seed=1)
    d2 = m.sample(10, 64, seed=16, k_star=k, v_star=v)
    np.testing.assert_array_equal(d2.k_star, k)
    with pytest.raises(ValueError, match="orthogonal"):
        m.sample(10, 64, seed=16, k_star=k, v_star=k)
    assert m.sample(5, 64, seed=3, dtype=np.float32).X.dtype == np.float32


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_jacobians_by_finite_differences(name):
    act = get_activation(name)
    rng = np.random.default_rng(0)
    chi = 2 * rng.normal(size=(6, 4)); mask = rng.random((6, 4)) < 0.7; mask[:, 0] = True
    c, h = 0.4, 1e-6
    J = act.jacobian(chi, mask, c=c)
    for m in range(4):
        e = np.zeros(4); e[m] = h
        fd = (act.value(chi + e, mask, c=c) - act.value(chi - e, mask, c=c)) / (2 * h)
        np.testing.assert_allclose(J[..., m], fd * mask[:, [m]], atol=1e-8)   # O(h^2) + O(eps/h) ~ 1e-10
    dchi, g = rng.normal(size=(2, 6, 4))
    np.testing.assert_allclose(act.jvp(chi, dchi, mask, c=c), np.einsum("nij,nj->ni", J, dchi), atol=1e-12)
    np.testing.assert_allclose(act.vjp(chi, g, mask, c=c), np.einsum("nji,nj->ni", J, g), atol=1e-12)
    w = act.value(chi, mask, c=c)
    assert np.all(w[~mask] == 0)
    if act.normalised:
        np.testing.assert_allclose(w.sum(1), 1.0, atol=1e-14)


def test_numerical_stability():
    big = np.array([[1e4, 1e4 - 1, -1e4]])
    np.testing.assert_allclose(softmax.value(big), [[1 / (1 + math.e**-1), math.e**-1 / (1 + math.e**-1), 0]], atol=1e-15)
    tiny = np.array([[-1e3, -1e3 - 1]])
    np.testing.assert_allclose(softplus.value(tiny), [[1 / (1 + math.e**-1), math.e**-1 / (1 + math.e**-1)]], atol=1e-12)
    u = np.array([-50.0, -30.0, -29.0, 0.0, 40.0])
    np.testing.assert_allclose(log_softplus(u), np.log(np.log1p(np.exp(u))), rtol=1e-13)


def test_attention_predict_batches_and_masks():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(7, 3, 30)); k, v = rng.normal(size=(2, 30)); mask = rng.random((7, 3)) < 0.6; mask[:, 0] = True
    for name in ACTIVATIONS:
        chi, z = X @ k / math.sqrt(30), X @ v / math.sqrt(30)
        ref = [get_activation(name).value(chi[i][mask[i]], c=0.3) @ z[i][mask[i]] for i in range(7)]
        np.testing.assert_allclose(attention_predict(X, k, v, name, mask, c=0.3, batch_size=3), ref, atol=1e-12)


def test_registered_activation_works_in_population_routines():
    """A user activation goes through the Laplace route (normalised) or Gauss-Hermite (element-wise);
    both agree with Monte Carlo (5 standard errors)."""
    sq = NormalisedActivation("test_softplus2", lambda u: 2 * log_softplus(u),
                              lambda u: 2 * np.exp(-np.logaddexp(0, -u) - log_softplus(u)))
    th = ElementwiseActivation("test_tanh", lambda u, c: 1 + np.tanh(u + c), lambda u, c: 1 / np.cosh(u + c)**2,
                               has_offset=True)
    try:
        register_activation(sq); register_activation(th)
        with pytest.raises(ValueError, match="already registered"):
            register_activation(NormalisedActivation("softmax", np.asarray, np.ones_like))
        for name, model, route in [("test_softplus2", SpikedSLR(3, 2.0), "laplace"),
                                   ("test_tanh", SpikedSLR(UNIF3, 2.0), "gauss-hermite"),
                                   ("test_tanh", MaxSLR(3, np.inf), "gauss-hermite")]:
            t = risk_terms(model, name, 1.1, 1.5, c=0.2)
            mc = risk_terms(model, name, 1.1, 1.5, c=0.2, method="monte carlo", n_mc=100_000, seed=4)
            assert t.method == route
            assert abs(t.A - mc.A) < 5 * mc.err_A and abs(t.B - mc.B) < 5 * mc.err_B
            # the MC route itself: same seed, same value (common random numbers)
            assert risk_terms(model, name, 1.1, 1.5, c=0.2, method="monte carlo", n_mc=100_000, seed=4).A == mc.A
    finally:
        ACTIVATIONS.pop("test_softplus2", None); ACTIVATIONS.pop("test_tanh", None)


def test_models_are_immutable_and_keep_their_identity():
    "Issue 28: frozen models (m.L = 7 raises), pickling, hash/key and repr unchanged (they feed the caches)."
    import dataclasses, pickle
    from attnstat.slr.models import SLRModel, check_model
    m = SpikedSLR(3, 2.0, noise=0.1)
    for name, value in (("L", 7), ("noise", -1), ("nu", 5.0), ("prior", None), ("new", 1)):
        with pytest.raises(dataclasses.FrozenInstanceError, match="immutable"):
            setattr(m, name, value)
    with pytest.raises(AttributeError): del m.nu
    assert (m.L, m.noise, repr(m)) == (3, 0.1, "SpikedSLR(L=3, nu=2.0, noise=0.1)")
    mx = MaxSLR({2: 0.5, 3: 0.5}, 1.5, bias=lambda l: -np.arange(l, dtype=float))
    for x in (m, mx, SpikedSLR(3, [0.5, 2.0, 4.5], prior=[0.6, 0.3, 0.1])):
        y = pickle.loads(pickle.dumps(x))
        assert y == x and hash(y) == hash(x) and y.key == x.key and repr(y) == repr(x)
        assert np.array_equal(y.sample_projections(20, seed=1).chi_star, x.sample_projections(20, seed=1).chi_star)
    assert m.key == ("spiked", ((3, 1.0),), 2.0, 0.1) and mx.kind == "max"
    with pytest.raises(ValueError, match="read-only"): mx.bias[2][0] = 5.0     # the tables are frozen too
    # an unknown model type is refused by name
    for bad in (SLRModel(3, 1.0), "spiked", None):
        with pytest.raises(TypeError, match="model must be a SpikedSLR or MaxSLR"): check_model(bad)
    with pytest.raises(ValueError, match="noise"): SpikedSLR(3, 1.0, noise=1e300)     # Delta^2 overflows


def test_models_carry_their_formulas():
    "The model-specific pieces are methods: spiked-SLR's closed forms, max-SLR's limits."
    sp, mx, am = SpikedSLR(3, 2.0), MaxSLR(3, 2.0), MaxSLR(3, np.inf)
    assert sp.planted_location and not mx.planted_location
    assert am.is_noiseless_limit and not mx.is_noiseless_limit and not sp.is_noiseless_limit
    assert (sp.channel_method, mx.channel_method, am.channel_method) == ("closed channel", "monte carlo", "gauss-hermite")
    assert mx.needs_inner_draws and not am.needs_inner_draws and not sp.needs_inner_draws
    assert sp.bayes_logit_law() == (2.0, 2.0) and mx.bayes_logit_law() == (0.0, 4.0)
    assert mx.linear_terms(1.0, 1.0) is None and sp.linear_start() == pytest.approx(math.sqrt(2) * 2 / 3)
    # the closed-form linear terms agree with Monte Carlo (5 standard errors)
    P = sp.sample_projections(200_000, seed=3)
    s = 1 + 0.7 * P.chi_star
    A, B = sp.linear_terms(0.7, 0.49)
    a, b = s[np.arange(len(P.eps)), P.eps], np.sum(s * s, 1)
    assert abs(a.mean() - A) < 5 * a.std() / math.sqrt(len(a)) and abs(b.mean() - B) < 5 * b.std() / math.sqrt(len(b))
