"""xmlthresh.detmath: machine-independent elementary functions, within a few ulp of numpy / scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr

from xmlthresh import detmath


def max_ulp(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want) / np.spacing(np.maximum(np.abs(want), np.finfo(float).tiny))))


RNG = np.random.default_rng(0)


@pytest.mark.parametrize("name, x, reference, ulps", [
    ("exp", RNG.uniform(-700, 700, 20_000), np.exp, 2),
    ("exp", RNG.uniform(-1, 1, 20_000), np.exp, 2),
    ("expm1", RNG.uniform(-3, 3, 20_000), np.expm1, 3),
    ("expm1", 10.0 ** RNG.uniform(-300, -1, 20_000), np.expm1, 3),
    ("log", 10.0 ** RNG.uniform(-300, 300, 20_000), np.log, 3),
    ("log", RNG.uniform(0.5, 2.0, 20_000), np.log, 4),
    ("log1p", 10.0 ** RNG.uniform(-20, 5, 20_000), np.log1p, 5),
    ("log1p", -(10.0 ** RNG.uniform(-20, -0.01, 20_000)), np.log1p, 5),
])
def test_accurate_to_a_few_ulp(name, x, reference, ulps):
    assert max_ulp(getattr(detmath, name)(x), reference(x)) <= ulps


def test_power_relative_error_scales_with_y_log_x():
    x = RNG.uniform(1.0, 1e6, 20_000)
    assert max_ulp(detmath.power(x, -0.8), x ** -0.8) <= 20  # |y log x| <= 11


def test_sin_cos_and_ndtr_absolute_error():
    x = RNG.uniform(-20, 20, 20_000)
    assert np.max(np.abs(detmath.sin(x) - np.sin(x))) <= 3e-16
    assert np.max(np.abs(detmath.cos(x) - np.cos(x))) <= 3e-16
    z = RNG.uniform(-12, 12, 20_000)
    assert np.max(np.abs(detmath.ndtr(z) - ndtr(z))) <= 3e-15


def test_special_values():
    assert detmath.exp([0.0])[0] == 1.0
    np.testing.assert_array_equal(detmath.exp([-np.inf, np.inf, 710.0, -746.0]), [0.0, np.inf, np.inf, 0.0])
    assert np.isnan(detmath.exp([np.nan])[0])
    got = detmath.log([0.0, 1.0, np.inf, -1.0, np.nan])
    np.testing.assert_array_equal(got[:3], [-np.inf, 0.0, np.inf])
    assert np.isnan(got[3:]).all()
    np.testing.assert_array_equal(detmath.log1p([-1.0, 0.0, 1e-300]), [-np.inf, 0.0, 1e-300])
    np.testing.assert_array_equal(detmath.ndtr([0.0, -9.0, 9.0]), [0.5, 0.0, 1.0])
    with pytest.raises(ValueError, match="sin/cos"):
        detmath.sin([1e6])


@pytest.mark.parametrize("name", ["exp", "expm1", "log", "log1p", "sin", "cos", "ndtr"])
def test_each_element_depends_on_itself_only(name):
    """The same input gives the same bits alone, in a long array or in another shape (no blocking effects)."""
    function = getattr(detmath, name)
    x = RNG.uniform(0.01, 8.0, 1001)
    whole = function(x)
    single = np.array([function(x[i:i + 1])[0] for i in range(0, 1001, 97)])
    np.testing.assert_array_equal(whole[::97], single)
    np.testing.assert_array_equal(function(x[:1000].reshape(10, 100)).ravel(), whole[:1000])
