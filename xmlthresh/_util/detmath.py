"""Elementary functions that give the same bits on every machine, for the seeded data generators.

Why: numpy picks the inner loop of ``np.exp``, ``np.log``, ``np.log1p``, ``np.expm1``, ``np.power`` (and
``tanh``, ``arctan2``) by the CPU it runs on (AVX512 / AVX2 / baseline builds), and the choices differ in the
last bit; ``np.sin``, ``np.cos`` and scipy's ``ndtr`` call glibc, which picks FMA or non-FMA variants by the
CPU. A generator that floors, rounds or compares such values then draws different data on a machine with
other CPU features: ``synthetic_large`` at 10^6 labels gave 6,240,609 Pareto candidates with numpy's AVX512
loops and 6,240,711 without them.

How: only IEEE operations that are correctly rounded everywhere (+, -, *, /, ``np.rint``, ``np.frexp``,
``np.ldexp``, comparisons) on float64 numpy arrays, in a fixed order: range reduction by powers of two or
multiples of pi/2 (Cody-Waite constants of fdlibm), then fixed polynomials (Taylor series, Horner). Each
result depends only on its own input element (never on the other elements or the array length), and is
within a few ulp of the correctly rounded value (tests/test_detmath.py). No FMA: numpy never fuses.

Two forms with the same bits: ``exp``, ``expm1``, ``log``, ``log1p`` and ``power`` run as numba kernels (one
pass, element by element, no fastmath: numba never contracts a * b + c into an FMA without it, checked on
the machine code by tests/test_detmath.py), ~10x faster than their numpy forms ``_numpy_<name>`` (15-40
array passes each), which stay as the readable reference: the tests prove both give identical bits.
``sin``, ``cos`` and ``ndtr`` (the CDE generators, small arrays) are numpy only.
"""

from __future__ import annotations

import math

import numpy as np
from xmlthresh._util.jit import cached_njit

# fdlibm: ln2 split so that k * LN2_HI is exact for |k| < 2^11
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e00
# fdlibm: pi/2 split in 33 + 53 bits (k * PIO2_1 exact for |k| < 2^20)
PIO2_1 = 1.57079632673412561417e00
PIO2_1T = 6.07710050650619224932e-11
TWO_OVER_PI = 6.36619772367581382433e-01
SQRT_HALF = 0.70710678118654752440
#: largest |x| for sin / cos (the two-part reduction keeps ~1e-16 absolute accuracy up to here)
MAX_TRIG_ARGUMENT = 1.0e5
#: exp(x) overflows above, is 0 below
EXP_MAX, EXP_MIN = 709.782712893384, -745.1332191019412

_EXP_TAYLOR = tuple(1.0 / math.factorial(i) for i in range(15))  # |r| <= ln2 / 2: error < 1e-19
_EXPM1_TAYLOR = tuple(1.0 / math.factorial(i) for i in range(1, 19))  # |x| < 1/2: error < 1e-21


def _array(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _horner(coefficients: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    """sum_i coefficients[i] * x**i, by Horner's rule (highest degree first)."""
    result = np.full_like(x, coefficients[-1])
    for c in coefficients[-2::-1]:
        result = result * x + c
    return result


def _numpy_exp(x) -> np.ndarray:
    """e**x: x = k ln2 + r with |r| <= ln2 / 2, exp(r) by a degree-14 Taylor polynomial, times 2**k."""
    x = _array(x)
    clipped = np.clip(np.where(np.isnan(x), 0.0, x), EXP_MIN, EXP_MAX)
    k = np.rint(clipped * INV_LN2)
    r = (clipped - k * LN2_HI) - k * LN2_LO
    # two steps of ldexp: 2**k alone is subnormal or infinite near the ends of the range
    half = np.trunc(k / 2)
    result = np.ldexp(np.ldexp(_horner(_EXP_TAYLOR, r), half.astype(np.int64)), (k - half).astype(np.int64))
    result = np.where(x > EXP_MAX, np.inf, np.where(x < EXP_MIN, 0.0, result))
    return np.where(np.isnan(x), np.nan, result)


def _numpy_expm1(x) -> np.ndarray:
    """e**x - 1, accurate near 0: a degree-18 Taylor polynomial for |x| < 1/2, ``exp(x) - 1`` beyond."""
    x = _array(x)
    small = np.abs(x) < 0.5
    near_zero = x * _horner(_EXPM1_TAYLOR, np.where(small, x, 0.0))
    return np.where(small, near_zero, _numpy_exp(x) - 1.0)


def _numpy_log(x) -> np.ndarray:
    """Natural logarithm: x = m 2**e with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m-1)/(m+1)
    (|s| < 0.172: a series of 12 terms in s**2), plus e ln2. log(0) = -inf, log(x < 0) = nan."""
    x = _array(x)
    positive = np.isfinite(x) & (x > 0)
    m, e = np.frexp(np.where(positive, x, 1.0))
    low = m < SQRT_HALF
    m = np.where(low, 2.0 * m, m)
    e = (e - low).astype(np.float64)
    f = m - 1.0  # exact (Sterbenz)
    s = f / (2.0 + f)
    s2 = s * s
    series = _horner(tuple(1.0 / (2 * i + 1) for i in range(13)), s2)
    log_m = 2.0 * s * series
    result = e * LN2_HI + (e * LN2_LO + log_m)
    result = np.where(x == 0, -np.inf, np.where(x == np.inf, np.inf, result))
    return np.where(positive | (x == 0) | (x == np.inf), result, np.nan)


def _numpy_log1p(x) -> np.ndarray:
    """log(1 + x), accurate near 0: u = 1 + x rounded, log(u) * x / (u - 1) (Goldberg's correction; u - 1
    is exact)."""
    x = _array(x)
    u = 1.0 + x
    denominator = u - 1.0
    exact = denominator == 0
    ratio = x / np.where(exact, 1.0, denominator)
    return np.where(exact, x, _numpy_log(u) * ratio)


def _numpy_power(x, y) -> np.ndarray:
    """x**y for x > 0 as exp(y log x) (relative error ~ |y log x| * 1e-16; x = 0 gives 0 for y > 0 and inf
    for y < 0)."""
    x, y = _array(x), _array(y)
    return _numpy_exp(y * _numpy_log(x))


def _reduce_half_pi(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(r, quadrant): x = quadrant * pi/2 + r, |r| <= ~pi/4; refuses |x| > MAX_TRIG_ARGUMENT."""
    if x.size and not np.all(np.abs(x[np.isfinite(x)]) <= MAX_TRIG_ARGUMENT):
        raise ValueError(f"detmath sin/cos take |x| <= {MAX_TRIG_ARGUMENT:g}")
    k = np.rint(x * TWO_OVER_PI)
    r = (x - k * PIO2_1) - k * PIO2_1T
    return r, np.mod(k, 4.0)


_SIN_TAYLOR = tuple(((-1.0) ** i) / math.factorial(2 * i + 1) for i in range(10))  # |r| <= pi/4: < 1e-22
_COS_TAYLOR = tuple(((-1.0) ** i) / math.factorial(2 * i) for i in range(11))


def _sin_cos_reduced(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r2 = r * r
    return r * _horner(_SIN_TAYLOR, r2), _horner(_COS_TAYLOR, r2)


def sin(x) -> np.ndarray:
    """sin x for |x| <= MAX_TRIG_ARGUMENT: reduction by pi/2, then Taylor polynomials on |r| <= pi/4."""
    r, quadrant = _reduce_half_pi(_array(x))
    s, c = _sin_cos_reduced(r)
    return np.select([quadrant == 0, quadrant == 1, quadrant == 2], [s, c, -s], -c)


def cos(x) -> np.ndarray:
    """cos x for |x| <= MAX_TRIG_ARGUMENT (see :func:`sin`)."""
    r, quadrant = _reduce_half_pi(_array(x))
    s, c = _sin_cos_reduced(r)
    return np.select([quadrant == 0, quadrant == 1, quadrant == 2], [c, -s, -c], s)


#: beyond |x| = 8.5 the normal CDF is within 1e-17 of 0 or 1
_NDTR_CUTOFF = 8.5
_NDTR_MAX_TERMS = 400


def ndtr(x) -> np.ndarray:
    """The standard normal CDF, Phi(x) = 1/2 + phi(x) sum_n x**(2n+1) / (1 * 3 * ... * (2n+1)) (Marsaglia's
    series: positive terms, no cancellation), each element summed until its own next term no longer
    changes its sum; 0 or 1 beyond |x| = 8.5. Absolute error ~1e-15 (what a generator needs: Phi here
    maps to (0, 1), the relative accuracy of tiny tail values does not matter)."""
    x = _array(x)
    flat = np.clip(x.ravel(), -_NDTR_CUTOFF, _NDTR_CUTOFF)
    total = flat.copy()
    term = flat.copy()
    square = flat * flat
    active = np.flatnonzero(term != 0)
    for n in range(1, _NDTR_MAX_TERMS):
        if active.size == 0:
            break
        term[active] = term[active] * square[active] / (2 * n + 1)
        new_total = total[active] + term[active]
        changed = new_total != total[active]
        total[active] = new_total
        active = active[changed]
    density = exp(-0.5 * square) * 0.398942280401432677940  # 1 / sqrt(2 pi)
    result = 0.5 + density * total
    result = np.where(x.ravel() > _NDTR_CUTOFF, 1.0, np.where(x.ravel() < -_NDTR_CUTOFF, 0.0, result))
    result = np.where(np.isnan(x.ravel()), np.nan, result)
    return result.reshape(x.shape)


# ---------------------------------------------------------------------------------------------- numba kernels
# The numpy forms above, element by element, operation for operation (same constants, same order). The
# ``*_scalar`` functions are jitted scalars for other numba kernels (synthetic_large calls them).
_EXP_TAYLOR_ARRAY = np.array(_EXP_TAYLOR)
_EXPM1_TAYLOR_ARRAY = np.array(_EXPM1_TAYLOR)
_LOG_SERIES = np.array(tuple(1.0 / (2 * i + 1) for i in range(13)))


@cached_njit
def _horner1(coefficients: np.ndarray, x: float) -> float:
    result = coefficients[-1]
    for i in range(len(coefficients) - 2, -1, -1):
        result = result * x + coefficients[i]
    return result


@cached_njit
def exp_scalar(x: float) -> float:
    if np.isnan(x):
        return np.nan
    if x > EXP_MAX:
        return np.inf
    if x < EXP_MIN:
        return 0.0
    k = np.rint(x * INV_LN2)
    r = (x - k * LN2_HI) - k * LN2_LO
    half = np.trunc(k / 2)
    return math.ldexp(math.ldexp(_horner1(_EXP_TAYLOR_ARRAY, r), int(half)), int(k - half))


@cached_njit
def expm1_scalar(x: float) -> float:
    if abs(x) < 0.5:
        return x * _horner1(_EXPM1_TAYLOR_ARRAY, x)
    return exp_scalar(x) - 1.0


@cached_njit
def log_scalar(x: float) -> float:
    if not (np.isfinite(x) and x > 0):
        if x == 0:
            return -np.inf
        if x == np.inf:
            return np.inf
        return np.nan
    m, e = math.frexp(x)
    if m < SQRT_HALF:
        m = 2.0 * m
        e -= 1
    ef = float(e)
    f = m - 1.0
    s = f / (2.0 + f)
    s2 = s * s
    log_m = 2.0 * s * _horner1(_LOG_SERIES, s2)
    return ef * LN2_HI + (ef * LN2_LO + log_m)


@cached_njit
def log1p_scalar(x: float) -> float:
    u = 1.0 + x
    denominator = u - 1.0
    if denominator == 0:
        return x
    return log_scalar(u) * (x / denominator)


@cached_njit
def _exp_kernel(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = exp_scalar(x[i])
    return out


@cached_njit
def _expm1_kernel(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = expm1_scalar(x[i])
    return out


@cached_njit
def _log_kernel(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = log_scalar(x[i])
    return out


@cached_njit
def _log1p_kernel(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = log1p_scalar(x[i])
    return out


@cached_njit
def _power_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = exp_scalar(y[i] * log_scalar(x[i]))
    return out


def _elementwise(kernel, x) -> np.ndarray:
    x = _array(x)
    return kernel(np.ascontiguousarray(x).reshape(-1)).reshape(x.shape)


def exp(x) -> np.ndarray:
    """e**x: x = k ln2 + r with |r| <= ln2 / 2, exp(r) by a degree-14 Taylor polynomial, times 2**k
    (numba kernel; the bits of :func:`_numpy_exp`)."""
    return _elementwise(_exp_kernel, x)


def expm1(x) -> np.ndarray:
    """e**x - 1, accurate near 0: a degree-18 Taylor polynomial for |x| < 1/2, ``exp(x) - 1`` beyond
    (numba kernel; the bits of :func:`_numpy_expm1`)."""
    return _elementwise(_expm1_kernel, x)


def log(x) -> np.ndarray:
    """Natural logarithm by 2 atanh((m - 1) / (m + 1)) on the mantissa (numba kernel; the bits of
    :func:`_numpy_log`). log(0) = -inf, log(x < 0) = nan."""
    return _elementwise(_log_kernel, x)


def log1p(x) -> np.ndarray:
    """log(1 + x), accurate near 0 (Goldberg's correction; numba kernel, the bits of :func:`_numpy_log1p`)."""
    return _elementwise(_log1p_kernel, x)


def power(x, y) -> np.ndarray:
    """x**y for x > 0 as exp(y log x), broadcasting x and y (numba kernel; the bits of
    :func:`_numpy_power`)."""
    x, y = np.broadcast_arrays(_array(x), _array(y))
    flat_x = np.ascontiguousarray(x).reshape(-1)
    return _power_kernel(flat_x, np.ascontiguousarray(y).reshape(-1)).reshape(x.shape)


#: each kernel's numpy form (the reference the tests compare bit for bit)
NUMPY_FORMS = {"exp": _numpy_exp, "expm1": _numpy_expm1, "log": _numpy_log, "log1p": _numpy_log1p,
               "power": _numpy_power}
