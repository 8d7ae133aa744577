"""xmlthresh._util.detmath: machine-independent elementary functions, within a few ulp of numpy / scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr

from xmlthresh._util import detmath


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


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all((a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))))


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e-310, -1.0, -1.0 + 1e-16, 0.5, -0.5,
                    0.49999999999999994, detmath.EXP_MAX, 709.79, detmath.EXP_MIN, -745.2, 1.0, 2.0,
                    detmath.SQRT_HALF, np.nextafter(detmath.SQRT_HALF, 0.0)])


@pytest.mark.parametrize("name", ["exp", "expm1", "log", "log1p"])
def test_numba_kernels_give_the_bits_of_their_numpy_forms(name):
    """The fast kernels are the numpy forms element by element: identical bits over the whole float range,
    the branch points and the special values (the pinned generator digests rest on this)."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-750, 750, 50_000), rng.uniform(-1, 1, 50_000),
                        10.0 ** rng.uniform(-320, 308, 50_000), -(10.0 ** rng.uniform(-320, 308, 20_000)), SPECIAL])
    with np.errstate(all="ignore"):
        assert _same_bits(getattr(detmath, name)(x), detmath.NUMPY_FORMS[name](x))


def test_numba_power_gives_the_bits_of_its_numpy_form_and_broadcasts():
    rng = np.random.default_rng(8)
    x, y = 10.0 ** rng.uniform(-5, 6, 50_000), rng.uniform(-3, 3, 50_000)
    assert _same_bits(detmath.power(x, y), detmath.NUMPY_FORMS["power"](x, y))
    grid = detmath.power(x[:12].reshape(3, 4), -0.8)
    assert grid.shape == (3, 4) and _same_bits(grid, detmath.NUMPY_FORMS["power"](x[:12].reshape(3, 4), -0.8))


FMA_PROBE = """
import numpy as np
from xmlthresh._util import detmath
from xmlthresh.datasets import synthetic_large
detmath.power(np.array([2.0]), np.array([0.5]))
detmath.expm1(np.array([0.1]))
detmath.log1p(np.array([0.1]))
synthetic_large._ranks_from_spacings(np.array([1.0, 2.0]), np.array([1]), np.array([1.0]), np.array([0.5]),
                                     np.array([3]), 10, 1.0)
kernels = (detmath._power_kernel, detmath._expm1_kernel, detmath._log1p_kernel,
           synthetic_large._ranks_from_spacings)
print("".join(text for kernel in kernels for text in kernel.inspect_asm().values()).lower())
"""


@pytest.mark.slow
def test_numba_kernels_contain_no_fused_multiply_add(tmp_path):
    """numba without fastmath never contracts a * b + c: the machine code, compiled for this CPU in a fresh
    process with an empty cache (cached code cannot be inspected), has no FMA instruction (an FMA would round
    once where the numpy forms round twice)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", FMA_PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    code = done.stdout
    assert "mulsd" in code or "vmulsd" in code or "mulpd" in code  # floating-point code was printed
    assert not any(op in code for op in ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub")), "an FMA in the kernels"


def test_synthetic_large_kernel_gives_the_bits_of_its_numpy_form():
    from xmlthresh.datasets import synthetic_large as sl

    rng = np.random.default_rng(9)
    count = rng.integers(0, 30, 400)
    count[::7] = 0
    scale = rng.integers(1, 500, 400).astype(np.float64)
    in_reach = np.where(rng.random(400) < 0.2, 1.0, rng.uniform(0.05, 1.0, 400))
    max_false = rng.integers(0, 3000, 400)
    cumulative = np.cumsum(rng.standard_exponential(int((count + (count > 0)).sum())))
    for length in (5, 60, 1000):
        fast = sl._ranks_from_spacings(cumulative, count, scale, in_reach, max_false, length, 1.3)
        slow = sl._numpy_ranks_from_spacings(cumulative, count, scale, in_reach, max_false, length, 1.3)
        np.testing.assert_array_equal(fast[0], slow[0])
        np.testing.assert_array_equal(fast[1], slow[1])
