"""``mdn`` -- a mixture density network: an MLP mapping x to a K-component diagonal Gaussian mixture over z.

Bishop's MDN (1994). x and the working targets u (z, or its logit when the data set declares a box; see
``xmlthresh.cde.transform``) are standardised. An MLP with ``n_layers`` tanh layers of ``hidden`` units
outputs, per row, K mixture logits, K means and K raw scales in d dimensions; the scales are
``softplus(raw) + min_scale`` so that no component collapses onto one training target. It is trained by
the negative log-likelihood with Adam (mini-batches of ``batch_size``, learning rate ``lr``, L2 weight decay
``weight_decay``) on the fit split, and stopped early on the validation split: the weights of the epoch with
the lowest validation NLL are kept, training ends after ``patience`` epochs without improvement or at
``max_epochs``.

Tuning follows the built-in estimators: every combination of ``n_components_grid`` x ``hidden_grid`` x
``lr_grid`` x ``weight_decay_grid`` is trained on the fit split and scored by the exact CDE loss
(int f^2 - 2 f(u_i | x_i), closed form for diagonal Gaussian mixtures) on the validation split; the best
network is the estimate (it is not refitted on all data: its stopping epoch was chosen on the validation
split). ``tune=False`` trains the one combination the grids hold (still stopped early on the split).

Reproducibility: every candidate starts from the same torch seed drawn from ``random_state`` (inside
``torch.random.fork_rng``: the global torch RNG is left as it was), mini-batches are shuffled by a seeded
``torch.Generator``, and training runs on ``n_threads`` CPU threads (1 by default: bit-identical results
for the same seed, and polite on a shared machine; None keeps torch's setting). PyTorch is only needed to
fit: prediction is a numpy forward pass of the stored weights, in blocks of rows.

Scale: the fit split is capped at ``max_fit`` points (a seeded random subset), an epoch has at most
``max_batches`` mini-batches (larger batches for larger splits) and costs O(n_fit * hidden^2), memory is
O(n) (the data and one mini-batch of activations); prediction is O(m K d).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from xmlthresh.cde.base import MixtureCDE, TunedCDE, capped_subset, check_cap
from xmlthresh.cde.registry import ESTIMATORS
from xmlthresh.cde.tuning import grid_search, minibatch_rows

from .mixture import DiagGaussianMixture

#: shown by ``xmlthresh list --check`` and raised when the estimator is built without PyTorch
TORCH_HINT = (
    "pip install torch==2.13.0 (the CPU wheel on this machine's disk; a bare 'pip install torch' "
    "fetches a CUDA build of several GB), then pip install -e plugins/xmlthresh-mdn"
)
#: rows of one block of the numpy forward pass (the (rows x hidden) temporaries stay small)
PREDICT_BLOCK = 8192


def _softplus(a: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, a)


def _positive_ints(values, what: str) -> None:
    vals = np.ravel(values)
    if vals.size == 0 or any(isinstance(v, (bool, np.bool_)) or int(v) != v or v < 1 for v in vals.tolist()):
        raise ValueError(f"mdn: {what} must hold positive integers, got {values!r}")


def _nonneg_floats(values, what: str, positive: bool) -> None:
    vals = np.ravel(np.asarray(values, dtype=object))
    ok = vals.size > 0 and all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        and np.isfinite(v) and (v > 0 if positive else v >= 0)
        for v in vals.tolist()
    )
    if not ok:
        raise ValueError(f"mdn: {what} must hold {'positive' if positive else 'non-negative'} numbers, got {values!r}")


@ESTIMATORS.register("mdn")
@dataclass(eq=False, repr=False)
class MDNCDE(MixtureCDE, TunedCDE):
    """Mixture density network (PyTorch) with diagonal Gaussian components.

    Parameters: ``n_components_grid``, ``hidden_grid`` (units per hidden layer), ``lr_grid`` (Adam learning
    rates), ``weight_decay_grid`` (Adam L2 weight decay) -- the grids tuned by the validation CDE loss;
    ``n_layers`` (hidden layers), ``max_epochs``, ``patience`` (early stopping on the validation NLL),
    ``batch_size``, ``max_batches`` (at most this many mini-batches per epoch: a larger fit split gets larger
    batches; None: always ``batch_size``), ``min_scale`` (floor of the component scales, in units of the target std), ``max_fit``
    (cap on the fit-split points; None: all), ``n_threads`` (torch CPU threads while fitting; None: torch's
    setting), and the tuning parameters of ``TunedCDE`` (``val_fraction``, ``max_val`` (default 1000 here,
    not 500: these held-out rows also stop the training early), ``tune`` (False: each grid holds the one
    value used), ``bounds``, ``random_state``). Fitted: ``n_components_``, ``hidden_``, ``lr_``,
    ``weight_decay_``, ``n_epochs_`` (epochs trained), ``best_epoch_``, ``val_nll_`` (validation NLL in
    standardised working space), ``tuning_losses_`` (grid of validation CDE losses), ``layers_`` (the
    network's weights as numpy arrays).
    """

    n_components_grid: Sequence[int] = (3, 10)
    hidden_grid: Sequence[int] = (32, 128)
    lr_grid: Sequence[float] = (3e-3,)
    weight_decay_grid: Sequence[float] = (1e-5,)
    n_layers: int = 2
    max_epochs: int = 300
    patience: int = 20
    batch_size: int = 256
    max_batches: int | None = 32
    min_scale: float = 1e-3
    max_fit: int | None = 20000
    n_threads: int | None = 1
    # a shared parameter named again only for its default, which differs from TunedCDE's
    max_val: int | None = field(default=1000, kw_only=True)

    tuned_grids = ("n_components_grid", "hidden_grid", "lr_grid", "weight_decay_grid")
    count_grids = ("n_components_grid", "hidden_grid")
    positive_grids = ("lr_grid",)

    @staticmethod
    def unavailable_reason() -> str | None:
        """None when PyTorch can be imported, else why not and how to install it (no import is done)."""
        try:
            found = importlib.util.find_spec("torch") is not None
        except (ImportError, ValueError):
            found = False
        return None if found else f"torch not installed; {TORCH_HINT}"

    def _check_params(self) -> None:
        """Value checks, run by ``Registry.build`` before any fit (one-line ``ValueError``)."""
        super()._check_params()  # the grids' counts and scales among them
        _nonneg_floats(self.weight_decay_grid, "weight_decay_grid", positive=False)
        for name in ("n_layers", "max_epochs", "patience", "batch_size"):
            _positive_ints([getattr(self, name)], name)
        if self.max_batches is not None:
            _positive_ints([self.max_batches], "max_batches")
        _nonneg_floats([self.min_scale], "min_scale", positive=True)
        check_cap(self.max_fit, "mdn: max_fit", 10)
        if self.n_threads is not None:
            _positive_ints([self.n_threads], "n_threads")

    # ------------------------------------------------------------------ fitting
    def _fit(self, X: np.ndarray, U: np.ndarray) -> None:
        try:
            import torch
        except ImportError as exc:
            raise ImportError(f"mdn needs PyTorch ({exc}); install it: {TORCH_HINT}") from exc
        old_threads = torch.get_num_threads()
        if self.n_threads is not None:
            torch.set_num_threads(int(self.n_threads))
        try:
            self._tune_and_fit(torch, X, U)
        finally:
            torch.set_num_threads(old_threads)

    def _tune_and_fit(self, torch, X: np.ndarray, U: np.ndarray) -> None:
        Xs, Us = self._standardised(X, U)
        rng = np.random.default_rng(self.random_state)
        torch_seed = int(rng.integers(2**31 - 1))
        fit_idx, val_idx = self._validation_split(len(U))
        fit_idx = capped_subset(fit_idx, self.max_fit, rng)
        data = [torch.as_tensor(a, dtype=torch.float32) for a in (Xs[fit_idx], Us[fit_idx], Xs[val_idx], Us[val_idx])]
        grids = self.grid_values()
        def fit_one(K: int, hidden: int, lr: float, wd: float):
            trained = self._train(torch, data, K, hidden, lr, wd, torch_seed)
            mix = self._forward(trained[0], K, Xs[val_idx])
            return trained, np.mean(mix.squared_norm() - 2.0 * mix.pdf(Us[val_idx][:, None, :])[:, 0])

        # the first smallest finite loss, as for the other estimators
        cell, chosen, losses = grid_search(grids, fit_one)
        self.layers_, self.n_epochs_, self.best_epoch_, self.val_nll_ = chosen
        self.n_components_, self.hidden_, self.lr_, self.weight_decay_ = (g[i] for g, i in zip(grids, cell))
        self.tuning_losses_ = losses

    def _train(self, torch, data, K: int, hidden: int, lr: float, wd: float, seed: int):
        """One candidate: Adam on the NLL, early stopping on the validation NLL -> (numpy layers, epochs run,
        best epoch, best validation NLL)."""
        Xf, Uf, Xv, Uv = data
        n, p = Xf.shape
        d = Uf.shape[1]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = _build_net(torch, p, hidden, self.n_layers, K * (1 + 2 * d))
            shuffle = torch.Generator().manual_seed(seed)
            opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=wd)
            best_nll, best_state, best_epoch, epoch = np.inf, None, 0, 0
            batch = minibatch_rows(n, self.batch_size, self.max_batches)
            for epoch in range(1, int(self.max_epochs) + 1):
                net.train()
                order = torch.randperm(n, generator=shuffle)
                for start in range(0, n, batch):
                    idx = order[start:start + batch]
                    loss = _nll(torch, net(Xf[idx]), Uf[idx], K, self.min_scale).mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                net.eval()
                with torch.no_grad():
                    val = float(_nll(torch, net(Xv), Uv, K, self.min_scale).mean())
                if val < best_nll - 1e-6 or best_state is None:
                    best_nll, best_epoch = val, epoch
                    best_state = [t.detach().clone() for t in net.state_dict().values()]
                elif epoch - best_epoch >= int(self.patience):
                    break
        arrays = [t.double().numpy() for t in best_state]
        layers = [(arrays[i].T.copy(), arrays[i + 1].copy()) for i in range(0, len(arrays), 2)]
        return layers, epoch, best_epoch, best_nll

    # ------------------------------------------------------------------ prediction (numpy only)
    def _forward(self, layers, K: int, Xs: np.ndarray) -> DiagGaussianMixture:
        """The mixtures in standardised working space for standardised rows Xs, in blocks of rows."""
        m, d = Xs.shape[0], len(self.u_mean_)
        logits, means, scales = np.empty((m, K)), np.empty((m, K, d)), np.empty((m, K, d))
        for start in range(0, m, PREDICT_BLOCK):
            sl = slice(start, min(m, start + PREDICT_BLOCK))
            h = Xs[sl]
            for W, b in layers[:-1]:
                h = np.tanh(h @ W + b)
            W, b = layers[-1]
            out = h @ W + b
            logits[sl] = out[:, :K]
            means[sl] = out[:, K:K + K * d].reshape(-1, K, d)
            scales[sl] = _softplus(out[:, K + K * d:]).reshape(-1, K, d) + self.min_scale
        logits -= logits.max(axis=1, keepdims=True)
        w = np.exp(logits)
        w /= w.sum(axis=1, keepdims=True)
        return DiagGaussianMixture(w, means, scales)

    def _mixture(self, X: np.ndarray) -> DiagGaussianMixture:
        mix = self._forward(self.layers_, self.n_components_, (X - self.x_mean_) / self.x_scale_)
        s = self.u_scale_
        return DiagGaussianMixture(mix.weights, mix.means * s + self.u_mean_, mix.scales * s)


def _build_net(torch, p: int, hidden: int, n_layers: int, n_out: int):
    mods, width = [], p
    for _ in range(n_layers):
        mods += [torch.nn.Linear(width, hidden), torch.nn.Tanh()]
        width = hidden
    mods.append(torch.nn.Linear(width, n_out))
    return torch.nn.Sequential(*mods)


def _nll(torch, out, U, K: int, min_scale: float):
    """Per-row negative log-likelihood of targets U (n, d) under the mixtures the outputs ``out`` encode."""
    d = U.shape[1]
    log_w = torch.log_softmax(out[:, :K], dim=1)
    mu = out[:, K:K + K * d].reshape(-1, K, d)
    sd = torch.nn.functional.softplus(out[:, K + K * d:]).reshape(-1, K, d) + min_scale
    z = (U[:, None, :] - mu) / sd
    log_n = -0.5 * (z * z).sum(-1) - torch.log(sd).sum(-1) - 0.5 * d * float(np.log(2 * np.pi))
    return -torch.logsumexp(log_w + log_n, dim=1)
