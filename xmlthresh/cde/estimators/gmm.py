"""``gmm`` — a Gaussian mixture on (reduced x, z), conditioned on x analytically.

x is standardised and reduced by PCA to a few components; a scikit-learn ``GaussianMixture`` with full
covariances is fitted on the joint vectors (x_r, u) (u standardised working targets). Conditioning
component k on x_r gives a Gaussian in u with mean mu_u + S_ux S_xx^-1 (x_r - mu_x) and covariance
S_uu - S_ux S_xx^-1 S_xu; the components are reweighted by their responsibility for x_r,
pi_k N(x_r; mu_x, S_xx) / sum_l (...). The number of components and of PCA dimensions are tuned on a
validation split by the exact CDE loss of the resulting conditional Gaussian mixtures, and so is the
covariance regularisation ``reg_covar``: it is added to the diagonal of every joint covariance (standardised
units), which bounds every conditional variance from below by it. The grid starts at 1e-2, not at
scikit-learn's 1e-6 or the earlier fixed 1e-3: on XANES sample5 (375 training spectra) 1e-3 won the validation
loss on every seed, yet left components narrow enough to give single test points losses of 1e4-5e5, a mean
loss of +85 and +4326 on two of three seeds; 1e-2 gave -86 to -140 there, and on SURD it costs 0.006 of
relative loss (-0.454 against -0.461).

The conditional mean is linear in x_r, so for a query x far from the training rows it extrapolates without
limit. With a target box that is harmful: a mean at u = -12 (a logit p of 6e-6) puts a component at the
box's edge, where the logit Jacobian (1 / (width p (1 - p)) per coordinate) turns it into a spike of density
~1e5 whose squared norm dominates the CDE loss (one XANES sample5 test point once scored 5e8). So, with
``clip_means`` (the default), the conditional means are clipped to the range of the training targets in
working space, coordinate by coordinate: no component is centred where no training target lies. The mixture
stays normalised; ``clip_means=false`` gives the unclipped conditioning.

Scale: EM costs O(n K p^2) per iteration for every candidate, so the candidates are fitted on a seeded
random subset of at most ``max_tune`` points of the fit split and the chosen mixture on at most ``max_fit``
training points (a mixture of at most 16 components with a few dozen parameters each is estimated well
from 10^4 points; more cost time and change little). Time and memory are then O(n) (the scaler, PCA
transform and the subsets) with a constant that does not grow with n.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.special import logsumexp
from sklearn.decomposition import PCA
from sklearn.mixture import GaussianMixture
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from xmlthresh.cde.base import MixtureCDE, TunedCDE, capped_subset, check_cap
from xmlthresh.cde.mixture import FullGaussianMixture
from xmlthresh.cde.registry import ESTIMATORS
from xmlthresh.cde.tuning import best_cell


def condition_mixture(
    weights: np.ndarray, means: np.ndarray, covariances: np.ndarray, Xr: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Condition a joint GMM over (x, u) on the first Xr.shape[1] coordinates.

    Returns query weights (m, K), conditional means (m, K, d_u) and conditional covariances (K, d_u, d_u).
    """
    dx = Xr.shape[1]
    mx, mu = means[:, :dx], means[:, dx:]
    Sxx, Sxu, Suu = covariances[:, :dx, :dx], covariances[:, :dx, dx:], covariances[:, dx:, dx:]
    gain = np.linalg.solve(Sxx, Sxu)  # (K, dx, du): S_xx^-1 S_xu
    cond_cov = Suu - np.swapaxes(Sxu, 1, 2) @ gain
    cond_cov = 0.5 * (cond_cov + np.swapaxes(cond_cov, 1, 2))
    diff = Xr[:, None, :] - mx[None]  # (m, K, dx)
    cond_means = mu[None] + np.einsum("mkx,kxu->mku", diff, gain)
    chol = np.linalg.cholesky(Sxx)
    y = np.einsum("mkx,kyx->mky", diff, np.linalg.inv(chol))
    log_det = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(-1)
    log_resp = np.log(weights) - 0.5 * (y * y).sum(-1) - 0.5 * log_det
    log_resp -= logsumexp(log_resp, axis=1, keepdims=True)
    return np.exp(log_resp), cond_means, cond_cov


@ESTIMATORS.register("gmm")
@dataclass(eq=False, repr=False)
class GMMCDE(MixtureCDE, TunedCDE):
    """Conditioned joint Gaussian mixture.

    Parameters: ``n_components_grid``, ``n_pca_grid`` (PCA dimensions of x tried; capped at the number of
    features), ``reg_covar_grid`` (the covariance regularisation of GaussianMixture, added to the diagonal of
    every joint covariance in standardised units; it bounds each conditional variance from below) and
    ``max_iter`` (GaussianMixture), ``clip_means`` (clip the conditional means
    to the training targets' range in working space; see the module's docstring), ``max_tune`` / ``max_fit`` (caps on the
    points of the candidate fits / the final fit; None: all), and the tuning parameters of ``TunedCDE``
    (``val_fraction``, ``max_val``, ``tune`` (False: no candidates, each grid holds the one value used),
    ``bounds``, ``random_state``). Fitted: ``n_components_``, ``n_pca_``, ``reg_covar_``, ``pca_``, ``mixture_``,
    ``tuning_losses_``, ``u_low_`` / ``u_high_`` (the clipping range, standardised working space).
    """

    n_components_grid: Sequence[int] = (1, 2, 4, 8, 16)
    n_pca_grid: Sequence[int] = (3, 6, 12)
    reg_covar_grid: Sequence[float] = (1e-2, 1e-1)
    max_iter: int = 200
    clip_means: bool = True
    max_tune: int | None = 4000
    max_fit: int | None = 20000

    tuned_grids = ("n_components_grid", "n_pca_grid", "reg_covar_grid")
    count_params = ("max_iter",)
    count_grids = ("n_components_grid", "n_pca_grid")
    positive_grids = ("reg_covar_grid",)

    def _check_params(self) -> None:
        """The caps are None or integers >= 10 (checked by ``Registry.build`` before any fit)."""
        super()._check_params()
        for name in ("max_tune", "max_fit"):
            check_cap(getattr(self, name), f"gmm: {name}", 10)
        if not isinstance(self.clip_means, (bool, np.bool_)):
            raise ValueError(f"gmm: clip_means must be true or false, got {self.clip_means!r}")

    def _fit_joint(
        self, Xs: np.ndarray, Us: np.ndarray, n_pca: int, n_components: int, reg_covar: float, pca: PCA | None = None
    ) -> tuple[PCA, GaussianMixture]:
        if pca is None:
            pca = PCA(n_components=n_pca, random_state=self.random_state).fit(Xs)
        gm = GaussianMixture(
            n_components=n_components,
            covariance_type="full",
            reg_covar=reg_covar,
            max_iter=self.max_iter,
            init_params="k-means++",  # seeding only: a full KMeans fit per candidate is slow and not needed
            random_state=self.random_state,
        ).fit(np.hstack([pca.transform(Xs), Us]))
        return pca, gm

    def _fit(self, X: np.ndarray, U: np.ndarray) -> None:
        # EM works on tiny (d x d) matrices: multi-threaded BLAS only adds synchronisation (and, on a
        # loaded machine, makes each small triangular solve take milliseconds), so use one thread.
        with threadpool_limits(limits=1, user_api="blas"):
            self._tune_and_fit(X, U)

    def _tune_and_fit(self, X: np.ndarray, U: np.ndarray) -> None:
        self.scaler_ = StandardScaler().fit(X)
        Xs = self.scaler_.transform(X)
        self.u_mean_, self.u_scale_ = U.mean(axis=0), np.where(U.std(axis=0) > 0, U.std(axis=0), 1.0)
        Us = (U - self.u_mean_) / self.u_scale_
        self.u_low_, self.u_high_ = Us.min(axis=0), Us.max(axis=0)
        rng = np.random.default_rng(self.random_state)
        if not self.tune:
            final = capped_subset(np.arange(len(U)), self.max_fit, rng)
            self.n_pca_ = self.capped_counts("n_pca_grid", [self.fixed("n_pca_grid")], min(X.shape[1], final.size - 1),
                                             "the features (and rows) there are")[0]
            self.n_components_ = self.capped_counts("n_components_grid", [self.fixed("n_components_grid")],
                                                    final.size // 2, "half the training rows")[0]
            self.reg_covar_ = float(self.fixed("reg_covar_grid"))
            self.pca_, self.mixture_ = self._fit_joint(
                Xs[final], Us[final], self.n_pca_, self.n_components_, self.reg_covar_)
            return
        fit_idx, val_idx = self._validation_split(len(U))
        fit_idx = capped_subset(fit_idx, self.max_tune, rng)
        max_pca = min(X.shape[1], fit_idx.size - 1)
        pcas = self.capped_counts("n_pca_grid", self.n_pca_grid, max_pca, "the features (and rows) there are")
        comps = self.capped_counts("n_components_grid", self.n_components_grid, fit_idx.size // 2,
                                   "half the rows the grid is fitted on")
        regs = sorted({float(r) for r in np.ravel(self.reg_covar_grid)})
        low, high = Us[fit_idx].min(axis=0), Us[fit_idx].max(axis=0)
        losses = np.full((len(pcas), len(comps), len(regs)), np.inf)
        for ip, n_pca in enumerate(pcas):
            pca = PCA(n_components=n_pca, random_state=self.random_state).fit(Xs[fit_idx])
            Xr_val = pca.transform(Xs[val_idx])
            for (ik, n_comp), (ir, reg) in itertools.product(enumerate(comps), enumerate(regs)):
                _, gm = self._fit_joint(Xs[fit_idx], Us[fit_idx], n_pca, n_comp, reg, pca=pca)
                w, means, covs = condition_mixture(gm.weights_, gm.means_, gm.covariances_, Xr_val)
                mix = FullGaussianMixture(w, self._clip(means, low, high), covs)
                losses[ip, ik, ir] = np.mean(mix.squared_norm() - 2.0 * mix.pdf(Us[val_idx][:, None, :])[:, 0])
        self.tuning_losses_ = losses
        ip, ik, ir = best_cell(losses)
        self.n_pca_, self.n_components_, self.reg_covar_ = pcas[ip], comps[ik], regs[ir]
        final = capped_subset(np.arange(len(U)), self.max_fit, rng)  # after the tuning subset: same draws as ever
        self.pca_, self.mixture_ = self._fit_joint(Xs[final], Us[final], self.n_pca_, self.n_components_, self.reg_covar_)

    def _clip(self, means: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """The conditional means clipped to [low, high] per coordinate (``clip_means``), else as they are."""
        return np.clip(means, low, high) if self.clip_means else means

    def _mixture(self, X: np.ndarray) -> FullGaussianMixture:
        Xr = self.pca_.transform(self.scaler_.transform(X))
        gm = self.mixture_
        w, means, covs = condition_mixture(gm.weights_, gm.means_, gm.covariances_, Xr)
        means = self._clip(means, self.u_low_, self.u_high_)
        s = self.u_scale_
        return FullGaussianMixture(w, means * s + self.u_mean_, covs * np.outer(s, s))
