"""The orthonormal cosine basis of the unit box, used by FlexCode (expansion) and RFCDE (split targets).

On [0, 1] the functions phi_0 = 1, phi_j(t) = sqrt(2) cos(pi j t) are orthonormal and complete; their
tensor products phi_{j_1}(t_1) ... phi_{j_d}(t_d) are an orthonormal basis of L2([0, 1]^d). Features are
ordered lexicographically in (j_1, ..., j_d) (last coordinate fastest) so that a coefficient vector of
length n^d reshapes to an (n, ..., n) tensor, which lets sums over tensor grids be done coordinate by
coordinate instead of over all grid points at once.
"""

from __future__ import annotations

import itertools

import numpy as np

_SQRT2 = float(np.sqrt(2.0))


def cosine_1d(t: np.ndarray, n: int) -> np.ndarray:
    """phi_0..phi_{n-1} at t (any shape) -> shape t.shape + (n,)."""
    out = _SQRT2 * np.cos(np.pi * np.asarray(t, dtype=np.float64)[..., None] * np.arange(n))
    out[..., 0] = 1.0
    return out


def tensor_features(T: np.ndarray, n: int) -> np.ndarray:
    """All n^d tensor-product functions at points T (..., d) in the unit box -> (..., n^d)."""
    feats = cosine_1d(T[..., 0], n)
    for k in range(1, T.shape[-1]):
        nxt = cosine_1d(T[..., k], n)
        feats = (feats[..., :, None] * nxt[..., None, :]).reshape(feats.shape[:-1] + (-1,))
    return feats


def tensor_frequencies(n: int, d: int) -> np.ndarray:
    """(n^d, d) frequencies (j_1, ..., j_d) of ``tensor_features`` in the same order."""
    return np.array(list(itertools.product(range(n), repeat=d)), dtype=np.int64).reshape(-1, d)


def low_degree_features(T: np.ndarray, degree: int) -> np.ndarray:
    """Tensor cosines with 1 <= j_1 + ... + j_d <= degree at T (n, d) -> (n, n_features)."""
    d = T.shape[1]
    freqs = tensor_frequencies(degree + 1, d)
    keep = (freqs.sum(axis=1) >= 1) & (freqs.sum(axis=1) <= degree)
    return tensor_features(T, degree + 1)[:, keep]


def tensor_on_grid(C: np.ndarray, bases: list[np.ndarray]) -> np.ndarray:
    """sum_j C[m, j_1..j_d] prod_k bases[k][g_k, j_k] -> (m, G_1, ..., G_d) for coefficient tensors C.

    One coordinate at a time: each step contracts the next coefficient axis with its (G_k, n) basis
    matrix and appends the grid axis, so the cost is that of d matrix products, not of the full grid.
    """
    out = C
    for basis in bases:
        out = np.tensordot(out, basis, axes=([1], [1]))
    return out
