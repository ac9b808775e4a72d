"""Hermite coefficients of the named activations against the closed forms of the spec (rmt.md §2.4)."""
import math, warnings
import numpy as np
import pytest
from attnstat.rmt import hermite_coefficients, activation, ACTIVATIONS, CentringWarning

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

@pytest.mark.parametrize("name", ACTIVATIONS)
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
    with pytest.raises(ValueError, match="f must be a name"): hermite_coefficients(3.0)
