"""``flow`` -- a conditional normalizing flow: a neural spline flow over z whose every transform sees x.

x and the working targets u (z, or its logit when the data set declares a box; see
``xmlthresh.cde.transform``) are standardised. The density of u given x is a masked autoregressive flow of
``transforms`` monotonic rational-quadratic spline transforms (``bins`` bins on [-5, 5], linear tails;
Durkan et al. 2019) on a standard normal base, built with ``zuko.flows.NSF``: the spline parameters of
coordinate k are the output of an MLP (``n_layers`` layers of ``hidden`` units) of the coordinates before k
and of x, so f(u | x) is exact, normalised for every x and can be sampled. It is trained by the negative
log-likelihood with Adam (mini-batches of ``batch_size``, learning rate ``lr``, L2 weight decay
``weight_decay``) on the fit split and stopped early on the validation split: the weights of the epoch with
the lowest validation NLL are kept; training ends after ``patience`` epochs without improvement or at
``max_epochs``.

Tuning follows the built-in estimators: every combination of ``transforms_grid`` x ``hidden_grid`` x
``lr_grid`` x ``weight_decay_grid`` is trained and scored by the CDE loss int f^2 - 2 f(u_i | x_i) on the
validation split, in standardised working space; int f^2 = E_f[f] has no closed form for a flow and is the
mean density of ``n_mc`` seeded draws from each validation row's flow. The best flow is the estimate (it is
not refitted: its stopping epoch was chosen on the validation split). ``tune=False`` trains the one
combination the grids hold.

Reproducibility: every candidate starts from the same torch seed drawn from ``random_state`` and every
sampling call from a seed drawn from the caller's generator, each inside ``torch.random.fork_rng`` (the
global torch RNG is left as it was); mini-batches are shuffled by a seeded ``torch.Generator``; fitting and
prediction run on ``n_threads`` CPU threads (1 by default: bit-identical densities for the same seed). The
trained flow is evaluated in float64.

Scale: the fit split is capped at ``max_fit`` points (a seeded subset); an epoch costs
O(n_fit * transforms * hidden^2); memory is O(n) plus one block of (rows x points) evaluations; densities
and draws are computed in blocks of at most ``EVAL_BLOCK`` (row, point) pairs.
"""

from __future__ import annotations

import contextlib
import importlib.util
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np
from xmlthresh.cde.base import TunedCDE, capped_subset, check_cap, check_grid_values
from xmlthresh.cde.quadrature import Quadrature
from xmlthresh.cde.registry import ESTIMATORS
from xmlthresh.cde.tuning import grid_search, minibatch_rows
from xmlthresh.cde.validation import check_positive_int

#: shown by ``xmlthresh list --check`` and raised when the estimator is built without PyTorch or zuko
INSTALL_HINT = (
    "pip install torch==2.13.0 (the CPU wheel on this machine's disk; a bare 'pip install torch' fetches a CUDA "
    "build of several GB), then pip install zuko==1.6.0 and pip install -e plugins/xmlthresh-flow --no-deps"
)
#: (row, point) pairs evaluated by the flow at once: bounds the temporaries of prediction and sampling
EVAL_BLOCK = 1 << 15


def _check_positive_ints(values: Any, what: str) -> None:
    check_grid_values(values, f"flow: {what}", "count")


@ESTIMATORS.register("flow")
@dataclass(eq=False, repr=False)
class FlowCDE(TunedCDE):
    """Conditional neural spline flow (zuko, PyTorch) over the working targets, conditioned on x.

    Parameters: ``transforms_grid`` (autoregressive spline transforms), ``hidden_grid`` (units per hidden
    layer of each transform's MLP), ``lr_grid`` (Adam learning rates), ``weight_decay_grid`` (Adam L2 weight
    decay) -- the grids tuned by the validation CDE loss; ``bins`` (spline bins), ``n_layers`` (hidden layers
    per MLP), ``max_epochs``, ``patience`` (early stopping on the validation NLL), ``batch_size``,
    ``max_batches`` (at most this many mini-batches per epoch: a larger fit split gets larger batches; None:
    always ``batch_size``), ``n_mc``
    (draws per validation row for int f^2 in the tuning loss), ``max_fit`` (cap on the fit-split points; None:
    all), ``n_threads`` (torch CPU threads while fitting and predicting; None: torch's setting), and the
    tuning parameters of ``TunedCDE`` (``val_fraction``, ``max_val`` (default 1000: these rows also stop the
    training), ``tune``, ``bounds``, ``random_state``). Fitted: ``transforms_``, ``hidden_``, ``lr_``,
    ``weight_decay_``, ``n_epochs_``, ``best_epoch_``, ``val_nll_`` (validation NLL in standardised working
    space), ``tuning_losses_``, ``flow_`` (the trained ``zuko.flows.NSF``, float64).
    """

    transforms_grid: Sequence[int] = (1, 2)
    hidden_grid: Sequence[int] = (16, 32)
    lr_grid: Sequence[float] = (3e-3,)
    weight_decay_grid: Sequence[float] = (1e-5,)
    bins: int = 8
    n_layers: int = 2
    max_epochs: int = 200
    patience: int = 15
    batch_size: int = 256
    max_batches: int | None = 32
    n_mc: int = 64
    max_fit: int | None = 10000
    n_threads: int | None = 1
    max_val: int | None = field(default=1000, kw_only=True)

    tuned_grids = ("transforms_grid", "hidden_grid", "lr_grid", "weight_decay_grid")
    count_grids = ("transforms_grid", "hidden_grid")
    positive_grids = ("lr_grid",)

    @staticmethod
    def unavailable_reason() -> str | None:
        """None when PyTorch and zuko can be imported, else what is missing and how to install it (no import)."""
        missing = []
        for module in ("torch", "zuko"):
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                missing.append(module)
        return None if not missing else f"{' and '.join(missing)} not installed; {INSTALL_HINT}"

    def _check_params(self) -> None:
        """Value checks, run by ``Registry.build`` before any fit (one-line ``ValueError``)."""
        super()._check_params()
        check_grid_values(self.weight_decay_grid, "flow: weight_decay_grid", "finite")
        if any(v < 0 for v in np.ravel(self.weight_decay_grid).tolist()):
            raise ValueError(f"flow: weight_decay_grid must hold non-negative numbers, got {self.weight_decay_grid!r}")
        for name in ("bins", "n_layers", "max_epochs", "patience", "batch_size", "n_mc"):
            _check_positive_ints([getattr(self, name)], name)
        check_cap(self.max_fit, "flow: max_fit", 10)
        if self.max_batches is not None:
            _check_positive_ints([self.max_batches], "max_batches")
        if self.n_threads is not None:
            _check_positive_ints([self.n_threads], "n_threads")

    # ------------------------------------------------------------------ torch set-up
    @contextlib.contextmanager
    def _torch(self) -> Iterator[Any]:
        """torch, on ``n_threads`` CPU threads for the duration (restored afterwards)."""
        try:
            import torch
        except ImportError as exc:
            raise ImportError(f"flow needs PyTorch ({exc}); install it: {INSTALL_HINT}") from exc
        old = torch.get_num_threads()
        if self.n_threads is not None:
            torch.set_num_threads(int(self.n_threads))
        try:
            yield torch
        finally:
            torch.set_num_threads(old)

    def _build(self, transforms: int, hidden: int, n_features: int, n_targets: int):
        try:
            import zuko
        except ImportError as exc:
            raise ImportError(f"flow needs zuko ({exc}); install it: {INSTALL_HINT}") from exc
        return zuko.flows.NSF(
            n_targets, context=n_features, bins=int(self.bins), transforms=int(transforms),
            hidden_features=(int(hidden),) * int(self.n_layers),
        )

    # ------------------------------------------------------------------ fitting
    def _fit(self, X: np.ndarray, U: np.ndarray) -> None:
        with self._torch() as torch:
            self._tune_and_fit(torch, X, U)

    def _tune_and_fit(self, torch, X: np.ndarray, U: np.ndarray) -> None:
        Xs, Us = self._standardised(X, U)
        rng = np.random.default_rng(self.random_state)
        torch_seed = int(rng.integers(2**31 - 1))
        mc_seed = int(rng.integers(2**31 - 1))
        fit_idx, val_idx = self._validation_split(len(U))
        fit_idx = capped_subset(fit_idx, self.max_fit, rng)
        data = [torch.as_tensor(a, dtype=torch.float32) for a in (Xs[fit_idx], Us[fit_idx], Xs[val_idx], Us[val_idx])]
        grids = self.grid_values()
        Xv, Uv = (torch.as_tensor(a, dtype=torch.float64) for a in (Xs[val_idx], Us[val_idx]))

        def fit_one(transforms: int, hidden: int, lr: float, wd: float):
            trained = self._train(torch, data, transforms, hidden, lr, wd, torch_seed)
            with torch.no_grad():
                cross = torch.exp(_log_prob(trained[0], Xv, Uv[:, None, :])[:, 0]).numpy()
                _, dens = _draw(torch, trained[0], Xv, int(self.n_mc), mc_seed)
            return trained, float(np.mean(dens.mean(axis=1) - 2.0 * cross))

        cell, chosen, losses = grid_search(grids, fit_one)
        self.flow_, self.n_epochs_, self.best_epoch_, self.val_nll_ = chosen
        self.transforms_, self.hidden_, self.lr_, self.weight_decay_ = (g[i] for g, i in zip(grids, cell))
        self.tuning_losses_ = losses

    def _train(self, torch, data, transforms: int, hidden: int, lr: float, wd: float, seed: int):
        """One candidate: Adam on the NLL, early stopping on the validation NLL -> (float64 flow with the best
        weights, epochs run, best epoch, best validation NLL)."""
        Xf, Uf, Xv, Uv = data
        n, p = Xf.shape
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            flow = self._build(transforms, hidden, p, Uf.shape[1])
            shuffle = torch.Generator().manual_seed(seed)
            opt = torch.optim.Adam(flow.parameters(), lr=lr, weight_decay=wd)
            best_nll, best_state, best_epoch, epoch = np.inf, None, 0, 0
            batch = minibatch_rows(n, self.batch_size, self.max_batches)
            for epoch in range(1, int(self.max_epochs) + 1):
                flow.train()
                order = torch.randperm(n, generator=shuffle)
                for start in range(0, n, batch):
                    idx = order[start:start + batch]
                    loss = -flow(Xf[idx]).log_prob(Uf[idx]).mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                flow.eval()
                with torch.no_grad():
                    val = float(-flow(Xv).log_prob(Uv).mean())
                if not np.isfinite(val):
                    break  # diverged: keep the best weights so far
                if val < best_nll - 1e-6 or best_state is None:
                    best_nll, best_epoch = val, epoch
                    best_state = {k: t.detach().clone() for k, t in flow.state_dict().items()}
                elif epoch - best_epoch >= int(self.patience):
                    break
        if best_state is not None:
            flow.load_state_dict(best_state)
        flow = flow.double().eval()
        for param in flow.parameters():
            param.requires_grad_(False)
        return flow, epoch, best_epoch, best_nll

    # ------------------------------------------------------------------ prediction
    def _standard_x(self, torch, X: np.ndarray):
        return torch.as_tensor((X - self.x_mean_) / self.x_scale_, dtype=torch.float64)

    def _log_density_u(self, X: np.ndarray, U: np.ndarray) -> np.ndarray:
        """log f(U[i, j] | X[i]) in (unstandardised) working space for U of shape (m or 1, n, d) -> (m, n)."""
        with self._torch() as torch, torch.no_grad():
            C = self._standard_x(torch, X)
            Us = torch.as_tensor((U - self.u_mean_) / self.u_scale_, dtype=torch.float64)
            m, n = C.shape[0], U.shape[1]
            out = np.empty((m, n))
            rows = max(1, min(m, EVAL_BLOCK // max(n, 1)))
            cols = max(1, min(n, EVAL_BLOCK // rows))
            for r in range(0, m, rows):
                for c in range(0, n, cols):
                    pts = Us[:, c:c + cols] if Us.shape[0] == 1 else Us[r:r + rows, c:c + cols]
                    out[r:r + rows, c:c + cols] = _log_prob(self.flow_, C[r:r + rows], pts).numpy()
        return out - np.log(self.u_scale_).sum()

    def _density(self, X: np.ndarray, Zq: np.ndarray) -> np.ndarray:
        inside = self.transform_.inside(Zq)
        U = self.transform_.forward(Zq)
        dens = self.transform_.density_to_z(np.exp(self._log_density_u(X, U)), U, inside)
        return np.broadcast_to(dens, (X.shape[0], Zq.shape[1])).copy()

    def _draws(self, X: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` draws u from each row's flow and their densities, in working space -> (m, n, d), (m, n)."""
        seed = int(rng.integers(2**31 - 1))
        with self._torch() as torch, torch.no_grad():
            U, dens = _draw(torch, self.flow_, self._standard_x(torch, X), n, seed)
        return U * self.u_scale_ + self.u_mean_, dens / np.prod(self.u_scale_)

    def _quadrature(self, X: np.ndarray, n_samples: int, rng: np.random.Generator) -> Quadrature:
        U, dens_u = self._draws(X, n_samples, rng)
        density = self.transform_.density_to_z(dens_u, U)
        return Quadrature(self.transform_.inverse(U), np.full(dens_u.shape, 1.0 / n_samples), density)

    def sample(self, X, n_samples: int = 1, random_state=None) -> np.ndarray:
        """``n_samples`` draws of z from f^(. | X[i]) for every row -> shape (m, n_samples, d)."""
        X, _ = self._check_query(X, None, "")
        n = check_positive_int(n_samples, "n_samples")
        U, _ = self._draws(X, n, np.random.default_rng(random_state))
        return self.transform_.inverse(U)


def _log_prob(flow, C, U):
    """log f(U[i, j] | C[i]) in standardised space for U (rows or 1, n, d) -> torch (rows, n)."""
    pts = U.transpose(0, 1)  # (n, rows or 1, d): the flow's batch is the query rows, broadcast over points
    return flow(C).log_prob(pts).transpose(0, 1)


def _draw(torch, flow, C, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` seeded draws from each row's flow and their densities (standardised space) -> (m, n, d), (m, n)."""
    m = C.shape[0]
    rows = max(1, EVAL_BLOCK // n)
    U, dens = [], []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for r in range(0, m, rows):
            draws, log_p = flow(C[r:r + rows]).rsample_and_log_prob((n,))
            U.append(draws.transpose(0, 1).numpy())
            dens.append(torch.exp(log_p).transpose(0, 1).numpy())
    return np.concatenate(U), np.concatenate(dens)
