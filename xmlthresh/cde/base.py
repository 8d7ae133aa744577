"""The estimator contract of the CDE package (scikit-learn style) and the shared mixture machinery.

``fit(X, Z)`` validates the data, sets up the target transform (identity, or the logit map of the
declared ``bounds``: see ``transform``) and hands the working-space targets U to the subclass's ``_fit``.
The public methods then work in the original target space z:

* ``predict_density(X, Z_points)`` -> f^(Z_points[i] | X[i]), shape (m,);
* ``density_on_grid(X, grid)``     -> f^(grid[g] | X[i]), shape (m, G);
* ``quadrature(X, n_samples)``     -> a ``Quadrature`` representing f^(. | X[i]) in integrals (metrics);
* ``squared_norm(X)``              -> int f^(z | X[i])^2 dz (closed form when available).

Subclasses of ``MixtureCDE`` only have to return, for query rows X, a batch of Gaussian mixtures in working
space (``_mixture``); densities, sampling and the squared norm follow from it.

Subclasses of ``TunedCDE`` (every registered estimator) inherit the parameters of the validation-split tuning
(``val_fraction``, ``max_val``, ``tune``) and the two the run sets (``bounds``, ``random_state``), with their
checks, and declare only their own parameters and grids.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from xmlthresh._util.notices import IgnoredSettingWarning, warn
from xmlthresh._util.registry import constructor_defaults
from xmlthresh.cde.mixture import DiagKernelMixture, FullGaussianMixture
from xmlthresh.cde.quadrature import Quadrature
from xmlthresh.cde.transform import TargetTransform
from xmlthresh.cde.validation import (
    check_bounds,
    check_features,
    check_grid,
    check_inside,
    check_positive_int,
    check_same_length,
    check_targets,
)

#: default relative bandwidth grid (multiples of the per-coordinate std of the working targets)
DEFAULT_BANDWIDTHS: tuple[float, ...] = tuple(np.round(np.geomspace(0.01, 1.0, 13), 4))
#: fewest training samples with which the validation-split tuning makes sense
MIN_TRAIN = 10


class CDEstimator(BaseEstimator):
    """Base class of all conditional density estimators; subclasses implement ``_fit`` and ``_density``."""

    registry_name: ClassVar[str] = ""
    #: whether declared bounds are handled by the logit transform (FlexCode uses the box directly)
    _uses_logit: ClassVar[bool] = True

    def _check_params(self) -> None:
        """Value checks of the parameters, run by ``Registry.build`` (so a bad value fails before any fit) and
        by ``fit``; subclasses extend it, calling ``super()._check_params()`` first. Nothing to check here."""

    # ------------------------------------------------------------------ public API
    def fit(self, X, Z) -> "CDEstimator":
        """Estimate f(z | x) from rows X[i] (features) and Z[i] (targets, 1 to 3 columns)."""
        X = check_features(X)
        Z = check_targets(Z)
        check_same_length(X, Z)
        self._check_params()
        if X.shape[0] < MIN_TRAIN:
            raise ValueError(f"need at least {MIN_TRAIN} training samples to fit and tune, got {X.shape[0]}")
        bounds = check_bounds(getattr(self, "bounds", None), Z.shape[1])
        if bounds is not None:
            check_inside(Z, bounds)
        self.bounds_ = bounds
        self.transform_ = TargetTransform(bounds if self._uses_logit else None)
        self.n_features_in_ = X.shape[1]
        self.n_targets_ = Z.shape[1]
        self._fit(X, self.transform_.forward(Z))
        return self

    def predict_density(self, X, Z_points) -> np.ndarray:
        """Density of Z_points[i] given X[i] -> shape (m,); 0 outside the declared box."""
        X, Z = self._check_query(X, Z_points, "Z_points")
        check_same_length(X, Z, ("X", "Z_points"))
        return self._density(X, Z[:, None, :])[:, 0]

    def density_on_grid(self, X, grid) -> np.ndarray:
        """Density at every grid point (rows of ``grid``, shape (G, d)) for every X[i] -> shape (m, G)."""
        X, _ = self._check_query(X, None, "grid")
        grid = check_grid(grid, self.n_targets_)
        return self._density(X, grid[None, :, :])

    def quadrature(self, X, n_samples: int = 256, random_state=None) -> Quadrature:
        """Weighted nodes standing for f^(. | X[i]) in integrals (see ``quadrature.Quadrature``)."""
        X, _ = self._check_query(X, None, "")
        return self._quadrature(X, check_positive_int(n_samples, "n_samples"), np.random.default_rng(random_state))

    def squared_norm(
        self, X, *, quadrature: Quadrature | None = None, n_samples: int = 256, random_state=None
    ) -> np.ndarray:
        """int f^(z | X[i])^2 dz -> shape (m,): closed form when available, else from ``quadrature``."""
        X, _ = self._check_query(X, None, "")
        exact = self._squared_norm_exact(X)
        if exact is not None:
            return exact
        if quadrature is None:
            quadrature = self.quadrature(X, n_samples, random_state)
        return quadrature.squared_norm()

    # ------------------------------------------------------------------ subclass hooks
    def _fit(self, X: np.ndarray, U: np.ndarray) -> None:
        raise NotImplementedError

    def _density(self, X: np.ndarray, Zq: np.ndarray) -> np.ndarray:
        """f^(Zq[i, j] | X[i]) for Zq of shape (m or 1, n, d) -> (m, n)."""
        raise NotImplementedError

    def _quadrature(self, X: np.ndarray, n_samples: int, rng: np.random.Generator) -> Quadrature:
        raise NotImplementedError

    def _squared_norm_exact(self, X: np.ndarray) -> np.ndarray | None:
        return None

    # ------------------------------------------------------------------ helpers
    def _check_query(self, X, Z, z_name: str) -> tuple[np.ndarray, np.ndarray | None]:
        check_is_fitted(self, "transform_")
        X = check_features(X, n_features=self.n_features_in_)
        if Z is not None:
            Z = check_targets(Z, n_targets=self.n_targets_, name=z_name)
        return X, Z


class MixtureCDE(CDEstimator):
    """Estimators whose f^(u | x) is a Gaussian mixture in working space (subclasses define ``_mixture``)."""

    def _mixture(self, X: np.ndarray) -> DiagKernelMixture | FullGaussianMixture:
        raise NotImplementedError

    def sample(self, X, n_samples: int = 1, random_state=None) -> np.ndarray:
        """``n_samples`` draws of z from f^(. | X[i]) for every row -> shape (m, n_samples, d)."""
        X, _ = self._check_query(X, None, "")
        n = check_positive_int(n_samples, "n_samples")
        rng = np.random.default_rng(random_state)
        mix = self._mixture(X)
        if mix.shared:
            U = mix.sample(X.shape[0] * n, rng).reshape(X.shape[0], n, -1)
        else:
            U = mix.sample(n, rng)
        return self.transform_.inverse(U)

    def _density(self, X: np.ndarray, Zq: np.ndarray) -> np.ndarray:
        inside = self.transform_.inside(Zq)
        U = self.transform_.forward(Zq)
        dens = self.transform_.density_to_z(self._mixture(X).pdf(U), U, inside)
        return np.broadcast_to(dens, (X.shape[0], Zq.shape[1])).copy()

    def _quadrature(self, X: np.ndarray, n_samples: int, rng: np.random.Generator) -> Quadrature:
        # Own draws with weights 1/n; components are picked by systematic sampling (unbiased, less noisy).
        mix = self._mixture(X)
        m = X.shape[0]
        pool = max(64 * n_samples, 1 << 16)
        if mix.shared and m * n_samples <= pool:  # few queries: independent draws are cheaper
            U = mix.sample(m * n_samples, rng, stratified=True)[0, rng.permutation(m * n_samples)]
            U = U.reshape(m, n_samples, -1)
            density = self.transform_.density_to_z(mix.pdf(U), U)
            points = self.transform_.inverse(U)
        elif mix.shared:
            # One mixture for all queries: evaluate a large common pool once and give each query its own
            # random subset. The pool's own Monte Carlo error is common to all queries (it does not average
            # out over test points), so the pool is large (2^16 draws at least) and stratified.
            U = mix.sample(pool, rng, stratified=True)
            dens = self.transform_.density_to_z(mix.pdf(U), U)[0]
            pick = rng.integers(0, pool, size=(m, n_samples))
            points, density = self.transform_.inverse(U[0])[pick], dens[pick]
        else:
            U = mix.sample(n_samples, rng, stratified=True)
            density = self.transform_.density_to_z(mix.pdf(U), U)
            points = self.transform_.inverse(U)
        return Quadrature(points, np.full((m, n_samples), 1.0 / n_samples), density)

    def _squared_norm_exact(self, X: np.ndarray) -> np.ndarray | None:
        if not self.transform_.is_identity:
            return None  # the Jacobian breaks the Gaussian closed form: use Monte Carlo
        return np.broadcast_to(self._mixture(X).squared_norm(), (X.shape[0],)).copy()


@dataclass(eq=False, repr=False, kw_only=True)
class TunedCDE(CDEstimator):
    """Base of the estimators that tune hyper-parameter grids by the CDE loss on a validation split.

    Every estimator chooses its hyper-parameters the same way: it holds out a seeded random share of the
    training rows (``validation_split``), scores each cell of its grids (``tuned_grids``) by the CDE loss on
    them and keeps the best cell. The parameters of that procedure, and the two that the run sets for every
    estimator, are declared here once, so that their names, defaults, meaning and checks cannot drift apart
    between estimators: they are the same keys of every ``conf/estimator/*.yaml``.

    Parameters
    ----------
    val_fraction : float, default 0.25
        Share of the training rows held out to score the grid cells, in (0, 1).
    max_val : int or None, default 500
        Cap on the held-out rows (None: no cap); the validation loss costs time in proportion to them.
    tune : bool, default True
        False: nothing is tuned, every grid of ``tuned_grids`` must hold exactly one value, the one used
        (``fixed``), and an estimator that needs no held-out rows then makes no split.
    bounds : array-like of shape (d, 2) or None, default None
        The box [lo, hi] of each target coordinate when the targets are bounded (see ``CDEstimator.fit``);
        the run sets it from the data set.
    random_state : int or None, default 0
        Seed of the validation split and of the estimator's other random draws; the run sets its seed.

    Notes
    -----
    A subclass is declared with ``@dataclass(eq=False, repr=False)``: the generated ``__init__`` stores every
    parameter under its own name, as scikit-learn's ``get_params`` / ``clone`` require, while equality and
    ``repr`` stay those of ``BaseEstimator`` (an estimator is compared by identity and printed with the
    parameters that differ from their defaults). Its own parameters are annotated class attributes with
    defaults; they come first and may be passed by position, the shared ones here are keyword-only. A
    subclass names a shared parameter again only to change its default, as
    ``max_val: int | None = field(default=1000, kw_only=True)``.
    """

    val_fraction: float = 0.25
    max_val: int | None = 500
    tune: bool = True
    bounds: Sequence[Sequence[float]] | None = None  # (d, 2): a list of pairs or an array
    random_state: int | None = 0

    #: the hyper-parameter grids tuned by the validation CDE loss; with ``tune=False`` each holds one value
    tuned_grids: ClassVar[tuple[str, ...]] = ()
    #: of ``tuned_grids``, the grids of counts (neighbours, components, basis functions): positive integers
    count_grids: ClassVar[tuple[str, ...]] = ()
    #: of ``tuned_grids``, the grids of scales (bandwidth factors, learning rates): positive numbers; every
    #: other grid must hold finite numbers, its estimator checks the range it needs
    positive_grids: ClassVar[tuple[str, ...]] = ()
    #: scalar parameters that count something (neighbours, basis functions, iterations): integers >= 1
    count_params: ClassVar[tuple[str, ...]] = ()

    def _check_params(self) -> None:
        """The checks shared by every tuned estimator: ``tune`` is a boolean; with ``tune=False`` every grid
        holds exactly one value; every grid holds finite numbers (positive integers for ``count_grids``,
        positive numbers for ``positive_grids``); ``val_fraction`` lies in (0, 1); ``max_val`` is None or a
        positive integer. A violation is a one-line ValueError naming the estimator and the parameter."""
        super()._check_params()
        owner = self.registry_name or type(self).__name__
        if self.tune is False:
            sizes = {g: int(np.size(getattr(self, g))) for g in self.tuned_grids}
            bad = {g: n for g, n in sizes.items() if n != 1}
            if bad:
                example = next(iter(bad))
                raise ValueError(
                    f"{owner}: tune=false fixes the hyper-parameters, so every "
                    f"grid needs exactly one value: {', '.join(f'{g} has {n}' for g, n in bad.items())} "
                    f"(e.g. estimator.{example}=[{np.ravel(getattr(self, example))[len(np.ravel(getattr(self, example))) // 2]}])"
                )
        elif self.tune is not True:
            raise ValueError(f"tune must be true or false, got {self.tune!r}")
        for grid in self.tuned_grids:
            kind = "count" if grid in self.count_grids else "positive" if grid in self.positive_grids else "finite"
            check_grid_values(getattr(self, grid), f"{owner}: {grid}", kind)
        if not _is_real(self.val_fraction) or not 0.0 < self.val_fraction < 1.0:  # NaN fails the comparison
            raise ValueError(f"{owner}: val_fraction must be in (0, 1), got {self.val_fraction!r}")
        check_cap(self.max_val, f"{owner}: max_val", 1)
        for name in self.count_params:  # 0 ran anyway: max_basis=0 was taken as 1 with a warning
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{owner}: {name} must be an integer >= 1, got {value!r}")

    def grid_values(self) -> list[list[Any]]:
        """The values of every grid of ``tuned_grids``, in that order (integers for ``count_grids``, floats for
        the others); only the first of each with ``tune=False``: the grids a grid search visits."""
        grids = [[int(v) if grid in self.count_grids else float(v) for v in np.ravel(getattr(self, grid))]
                 for grid in self.tuned_grids]
        return grids if self.tune else [values[:1] for values in grids]

    def _standardised(self, X: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """X and U centred and scaled per column (:func:`target_scale`), the means and scales kept as
        ``x_mean_``, ``x_scale_``, ``u_mean_``, ``u_scale_`` to map queries and densities back."""
        self.x_mean_, self.x_scale_ = X.mean(axis=0), target_scale(X)
        self.u_mean_, self.u_scale_ = U.mean(axis=0), target_scale(U)
        return (X - self.x_mean_) / self.x_scale_, (U - self.u_mean_) / self.u_scale_

    def fixed(self, grid: str) -> Any:
        """The single value of ``grid`` (``tune=False``)."""
        return np.ravel(getattr(self, grid))[0].item()

    def capped_counts(self, grid: str, values: Any, cap: int, what: str) -> list[int]:
        """The counts ``values`` of ``grid`` (neighbours, components), each at most ``cap`` (the rows there
        are, ``what`` says which) and at least 1, sorted and distinct. A grid the user set with a value above
        the cap is said once (a warning naming the grid, the values and what was used): ``k_grid=[5000]`` on
        150 rows ran with k = 150 and said so only in ``k_grid_`` (the default grid adapts to small data
        silently, as documented)."""
        given = [int(value) for value in np.ravel(values)]
        cut = [value for value in given if value > cap]
        default = constructor_defaults(type(self)).get(grid)
        if cut and (default is None or list(np.ravel(default)) != list(np.ravel(getattr(self, grid)))):
            warn(f"{type(self).registry_name or type(self).__name__}: {grid} value(s) {cut} exceed {what} "
                 f"({cap}); used as {cap}", IgnoredSettingWarning)
        return sorted({max(1, min(value, cap)) for value in given})

    def _validation_split(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The seeded (fit, validation) index split of ``n`` training rows on which the grids are scored."""
        return validation_split(n, self.val_fraction, self.max_val, self.random_state)


def validation_split(n: int, val_fraction: float, max_val: int | None, random_state) -> tuple[np.ndarray, np.ndarray]:
    """Random (fit, validation) index split used to tune hyper-parameters by the CDE loss."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction!r}")
    perm = np.random.default_rng(random_state).permutation(n)
    n_val = int(round(val_fraction * n))
    if max_val is not None:
        n_val = min(n_val, int(max_val))
    n_val = min(max(n_val, 1), n - 2)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def target_scale(U: np.ndarray) -> np.ndarray:
    """Per-coordinate standard deviation of the working targets (1 for a constant coordinate)."""
    scale = U.std(axis=0)
    return np.where(scale > 0, scale, 1.0)


def capped_subset(idx: np.ndarray, cap: int | None, rng: np.random.Generator) -> np.ndarray:
    """``idx`` itself, or a sorted seeded random subset of ``cap`` of its entries (the estimators' size caps)."""
    if cap is None or idx.size <= int(cap):
        return idx
    return np.sort(rng.choice(idx, size=int(cap), replace=False))


def check_cap(cap, what: str, least: int) -> None:
    """A size cap is None or an integer >= ``least``; else ValueError naming ``what``."""
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, np.integer)) or cap < least):
        raise ValueError(f"{what} must be None or an integer >= {least}, got {cap!r}")


#: what each kind of grid must hold (``TunedCDE.count_grids``, ``positive_grids``, any other grid)
_GRID_KINDS = {"count": "positive integers", "positive": "positive numbers", "finite": "finite numbers"}


def _is_real(value: Any) -> bool:
    """A real number that is not a boolean (YAML's true/false are no sizes or factors)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_grid_values(values: Any, what: str, kind: str) -> None:
    """A grid (list, tuple, array or a single number) holds at least one value, each a finite real number that
    is a positive integer (``kind="count"``), positive (``"positive"``) or anything finite (``"finite"``);
    else ValueError naming ``what``."""
    items = np.ravel(np.asarray(values, dtype=object)).tolist()
    ok = bool(items) and all(_is_real(v) and np.isfinite(v) for v in items)
    if ok and kind == "count":
        ok = all(float(v).is_integer() and v >= 1 for v in items)
    elif ok and kind == "positive":
        ok = all(v > 0 for v in items)
    if not ok:
        raise ValueError(f"{what} must hold {_GRID_KINDS[kind]}, got {values!r}")
