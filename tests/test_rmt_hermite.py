"""Hermite coefficients of the named activations against the closed forms of the spec (rmt.md §2.4)."""
import math, warnings
import numpy as np
import pytest
from attnstat.rmt import (hermite_coefficients, activation, nonlinearity_names, CentringWarning, Nonlinearity,
                          NonlinearityFamily, NONLINEARITIES, register_nonlinearity)

E = math.e
EXACT = {  # (name, level): (a0, a1, a2, nu) exact closed forms; None where the spec gives only digits
    ("tanh", None): (0.0, None, 0.0, None),
    ("erf", None): (0.0, 2 / math.sqrt(3 * math.pi), 0.0, 2 / math.pi * math.asin(2 / 3)),
    ("sign", None): (0.0, math.sqrt(2 / math.pi), 0.0, 1.0),
    ("relu", None): (1 / math.sqrt(2 * math.pi), 0.5, 1 / (2 * math.sqrt(math.pi)), 0.5 - 1 / (2 * math.pi)),
    ("exp", None): (math.sqrt(E), math.sqrt(E), math.sqrt(E / 2), E * E - E),
    ("sin", None): (0.0, math.exp(-0.5), 0.0, (1 - math.exp(-2)) / 2),
    ("cos", None): (math.exp(-0.5), 0.0, -math.exp(-0.5) / math.sqrt(2), (1 + math.exp(-2)) / 2 - math.exp(-1)),
    ("linear", None): (0.0, 1.0, 0.0, 1.0),
}
SIX_DIGITS = {  # the spec's printed values (six decimals): tolerance 6e-7
    ("tanh", None): (0.0, 0.605706, 0.0, 0.394294, 0.027415),
    ("clipped_relu", 2.0): (0.390452, 0.477250, 0.243917, 0.307816, 0.080049),
    ("clipped_relu", 1.0): (0.315627, 0.341345, 0.110996, 0.158409, 0.041893),
    ("exp_truncated", 2.0): (1.555245, 1.387143, 0.698763, 2.517856, 0.593691),
    ("exp_truncated", 1.0): (1.255630, 0.824361, 0.117815, 0.768018, 0.088447),
    ("sign", None): (0.0, 0.797885, 0.0, 1.0, 0.363380),
    ("erf", None): (0.0, 0.651470, 0.0, 0.464559, 0.040146),
    ("cos", None): (0.606531, 0.0, -0.428882, 0.199788, 0.199788),
}

@pytest.mark.parametrize("key", list(EXACT))
def test_exact_closed_forms(key):
    c = hermite_coefficients(key[0], level=key[1])
    for got, want in zip((c.a0, c.a1, c.a2, c.nu), EXACT[key]):
        if want is not None: assert abs(got - want) <= 1e-8, (key, got, want)
    assert abs(c.sigma2 - (c.nu - c.a1**2)) < 1e-14

@pytest.mark.parametrize("key", list(SIX_DIGITS))
def test_spec_table_digits(key):
    c = hermite_coefficients(key[0], level=key[1])
    got = (c.a0, c.a1, c.a2, c.nu, c.sigma2)
    assert np.allclose(got, SIX_DIGITS[key], atol=6e-7, rtol=0), (key, got)

@pytest.mark.parametrize("name", nonlinearity_names())
def test_parseval(name):
    c = hermite_coefficients(name)
    assert c.nu >= c.a1**2 + c.a2**2 + c.a3**2 - 1e-12 and c.sigma2 >= 0

def test_callable_with_breakpoints_matches_named():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = hermite_coefficients(lambda t: min(max(t, 0.0), 2.0), breakpoints=[0.0, 2.0])
    assert any(issubclass(i.category, CentringWarning) for i in w)      # not centred: warned
    ref = hermite_coefficients("clipped_relu", level=2.0)
    assert np.allclose([c.a0, c.a1, c.a2, c.nu], [ref.a0, ref.a1, ref.a2, ref.nu], atol=1e-9)

def test_centred_callable_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", CentringWarning)
        hermite_coefficients(np.tanh)

def test_bad_input():
    with pytest.raises(ValueError, match="square-integrable"): hermite_coefficients(lambda t: np.exp(t * t))
    with pytest.raises(ValueError, match="f must be one of"): hermite_coefficients("softplus2")
    with pytest.raises(ValueError, match="level must lie in"): hermite_coefficients("exp_truncated", level=0.0)
    with pytest.raises(ValueError, match="level applies only"): hermite_coefficients("tanh", level=1.0)
    with pytest.raises(TypeError, match="f must be a name"): hermite_coefficients(3.0)
    with pytest.raises(TypeError, match="level must be a real number"): hermite_coefficients("clipped_relu", level="2")
    with pytest.raises(TypeError, match="warn must be"): hermite_coefficients("tanh", warn="no")
    with pytest.raises(TypeError, match="breakpoints must be"): hermite_coefficients(np.tanh, breakpoints="0")
    with pytest.raises(ValueError, match="breakpoints apply only"): hermite_coefficients("relu", breakpoints=[0.0])
    with pytest.raises(ValueError, match="level applies only"): activation(activation("tanh"), level=1.0)

def test_registry_of_nonlinearities():
    "A nonlinearity registered once is resolved by name everywhere; the deprecated names are the same objects."
    import attnstat.rmt.hermite as H
    assert H.ACTIVATIONS is NONLINEARITIES and H.Activation is Nonlinearity
    assert nonlinearity_names()[:4] == ("tanh", "erf", "sign", "relu")
    fam = NonlinearityFamily("test_softsign", lambda L: (lambda t: t / (1 + np.abs(t))))
    try:
        register_nonlinearity(fam)
        assert "test_softsign" in nonlinearity_names() and activation("test_softsign") is activation(fam)
        # softsign is odd: a0 = a2 = 0; a1 = E[xi f(xi)] = 2 int_0^inf x^2/(1 + x) phi(x) dx (scipy quad on the half line)
        from scipy.integrate import quad
        a1 = 2 * quad(lambda x: x * x / (1 + x) * math.exp(-x * x / 2) / math.sqrt(2 * math.pi), 0, np.inf, epsabs=1e-14)[0]
        c = hermite_coefficients("test_softsign")
        assert c.a0 == 0 and c.a2 == 0 and abs(c.a1 - a1) < 1e-10
        with pytest.raises(ValueError, match="registered"):
            register_nonlinearity(NonlinearityFamily("test_softsign", lambda L: np.tanh))
        register_nonlinearity(NonlinearityFamily("test_softsign", lambda L: np.tanh), overwrite=True)
        assert abs(hermite_coefficients("test_softsign").a1 - hermite_coefficients("tanh").a1) < 1e-14
    finally:
        NONLINEARITIES.pop("test_softsign", None)
    with pytest.raises(TypeError, match="family must be"): register_nonlinearity("tanh")
    with pytest.raises(ValueError, match="default_level"): NonlinearityFamily("x", lambda L: np.tanh, default_level=-1.0)

@pytest.mark.parametrize("where", [lambda t: t > 0.3, lambda t: (t > 0.3) & (t < 1.0)])
def test_nan_activation_is_named(where):
    "An activation that returns NaN is reported as such (naming f), not as 'not square-integrable'."
    with pytest.raises(ValueError) as e: hermite_coefficients(lambda t: np.where(where(t), np.nan, np.tanh(t)))
    assert str(e.value).startswith("f returned NaN at t = ") and "square-integrable" not in str(e.value), str(e.value)

def _gh(g, n=160):
    "E g(xi) by Gauss-Hermite (independent of the package's adaptive quadrature)."
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return float(np.sum(w * g(x)) / np.sum(w))

@pytest.mark.parametrize("name", ["tanh", "erf", "sin"])
def test_stein_formula_smooth(name):
    # a1 = E f'(xi), a2 = E f''(xi)/sqrt 2, a3 = E f^(3)(xi)/sqrt 6, with finite-difference derivatives under Gauss-Hermite
    c = hermite_coefficients(name); f = activation(name)
    h = 1e-3
    d1 = lambda t: (f(t + h) - f(t - h)) / (2 * h)
    d2 = lambda t: (f(t + h) - 2 * f(t) + f(t - h)) / h**2
    d3 = lambda t: (f(t + 2 * h) - 2 * f(t + h) + 2 * f(t - h) - f(t - 2 * h)) / (2 * h**3)
    assert abs(c.a1 - _gh(d1)) < 1e-6 and abs(c.a2 - _gh(d2) / math.sqrt(2)) < 1e-5
    assert abs(c.a3 - _gh(d3) / math.sqrt(6)) < 1e-4      # O(h^2) truncation and rounding of the stencils

def test_mehler_covariance_erf():
    # Cov(erf xi, erf xi') = (2/pi) asin(2 rho/3); Mehler: sum_k a_k^2 rho^k. With a4 = 0 (odd f) the third-order
    # truncation is off by a5^2 rho^5 + ... < 1e-6 at |rho| <= 0.1
    c = hermite_coefficients("erf")
    for rho in (-0.1, 0.05, 0.1):
        exact = 2 / math.pi * math.asin(2 * rho / 3)
        assert abs(c.a1**2 * rho + c.a2**2 * rho**2 + c.a3**2 * rho**3 - exact) < 1e-6
    assert abs(2 / math.pi * math.asin(2 / 3) - c.nu) < 1e-10        # rho = 1: the full energy


# ---- argument checks of attnstat.rmt.models (chapter 03b): memory guard, p = 1, types ----
from attnstat.rmt.models import (empirical_errors, signal_plus_noise, fplr_weights, aligned_vectors, attention_kernel,
                                 gaussian_equivalent_kernel, ridge_errors, balanced_labels)

G1 = [0.1, 1.0]

@pytest.mark.parametrize("call, param", [
    (lambda: empirical_errors("tanh", 10**6, 10, [1.0], [0.0], [0.0], G1, 2, 0), "n"),     # 'rmt simulate --n 1e6 --p 10'
    (lambda: empirical_errors("tanh", 64, 10**10, [1.0], [0.0], [0.0], G1, 2, 0), "p"),
    (lambda: signal_plus_noise(10**7, 10**6, [1.0], seed=0), "n"),
    (lambda: fplr_weights([1.0], [1.0], p=10**7), "p"),
    (lambda: balanced_labels(10**13), "n"),
])
def test_memory_guard_before_allocating(call, param):
    with pytest.raises(ValueError, match=rf"^{param} is too large: the call needs about .* GiB.*ATTNSTAT_MAX_MEMORY"):
        call()

def test_p_equal_one():
    # the CLI documents p >= 1: with the default geometry (everything on e1) p = 1 works ...
    mu, wk, wq = aligned_vectors(1.0)
    e = empirical_errors("tanh", 40, 1, mu, wk, wq, G1, 3, 0)
    assert e.attention.shape == (3, 2) and np.all((e.attention > 0) & (e.attention <= 1 + 1e-12))
    # ... and a geometry that needs a second coordinate is refused with a message naming p
    mu, wk, wq = aligned_vectors(1.0, phi=0.4)
    with pytest.raises(ValueError, match="does not fit in dimension p = 1"):
        empirical_errors("tanh", 40, 1, mu, wk, wq, G1, 3, 0)

@pytest.mark.parametrize("call, name", [
    (lambda: empirical_errors("tanh", "64", 32, [1.0], [0.0], [0.0], G1, 2, 0), "n"),
    (lambda: empirical_errors("tanh", 64, 32.0, [1.0], [0.0], [0.0], G1, 2, 0), "p"),
    (lambda: empirical_errors("tanh", 64, 32, [1.0], [0.0], [0.0], G1, 1.5, 0), "trials"),
    (lambda: empirical_errors("tanh", 64, 32, "mu", [0.0], [0.0], G1, 2, 0), "mu"),
    (lambda: empirical_errors("tanh", 64, 32, [1.0], [0.0], [0.0], "0.1", 2, 0), "gammas"),
    (lambda: empirical_errors(3.0, 64, 32, [1.0], [0.0], [0.0], G1, 2, 0), "f"),
    (lambda: aligned_vectors("1"), "snr"),
    (lambda: attention_kernel(None, "tanh"), "X"),
    (lambda: gaussian_equivalent_kernel(np.ones((3, 4)), "tanh", a2_term="yes"), "a2_term"),
    (lambda: ridge_errors(np.ones((3, 4)), np.ones(4), None), "gammas"),
])
def test_wrong_types_raise_type_error(call, name):
    with pytest.raises(TypeError, match=rf"^{name} must be"):
        call()

@pytest.mark.parametrize("call, words", [
    (lambda: empirical_errors("tanh", 1, 32, [1.0], [0.0], [0.0], G1, 2, 0), "n must be an integer in [2"),
    (lambda: empirical_errors("tanh", 64, 0, [1.0], [0.0], [0.0], G1, 2, 0), "p must be an integer in [1"),
    (lambda: empirical_errors("tanh", 64, 32, [1.0], [0.0], [0.0], [0.1, np.nan], 2, 0), "gammas must contain only finite"),
    (lambda: empirical_errors("tanh", 64, 32, [1.0], [0.0], [0.0], [], 2, 0), "gammas must not be empty"),
    (lambda: empirical_errors("tanh", 64, 32, [1.0], [0.0], [0.0], [-1.0], 2, 0), "gammas must lie in (0, inf)"),
    (lambda: empirical_errors("tanh", 64, 32, [1.0], [0.0], [0.0], G1, 2, 0, kernel="exact"), "kernel must be one of"),
    (lambda: aligned_vectors(-1.0), "snr must lie in"),
])
def test_bad_values_raise_value_error(call, words):
    with pytest.raises(ValueError) as e:
        call()
    assert words in str(e.value), str(e.value)


def test_named_nonlinearity_needs_no_quadrature_nor_scipy_integrate():
    "The built-ins' stored coefficients are what the quadrature gives; naming one imports no scipy.integrate (issue 33)."
    import subprocess, sys
    from attnstat.rmt.hermite import _KNOWN_COEF, _breakpoints, _coefficients, _vectorised
    for fam in NONLINEARITIES.values():
        if (fam, fam.default_level) not in _KNOWN_COEF: continue   # a family registered by another test
        L = fam.default_level
        fresh = _coefficients(_vectorised(fam.build(L)), _breakpoints(fam.breakpoints(L))).as_dict()
        stored = _KNOWN_COEF[fam, L].as_dict()
        assert all(abs(stored[k] - fresh[k]) <= 1e-15 * math.sqrt(fresh["nu"]) for k in fresh), fam.name
    code = ("import sys, attnstat.rmt.hermite as H\nfor f in H.nonlinearity_names(): H.activation(f)\n"
            "print(sorted(m for m in sys.modules if m in ('scipy.integrate', 'scipy.optimize', 'scipy.stats')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
