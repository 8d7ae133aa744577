"""Pictures of estimated versus true conditional densities for 2-D targets (PNG, matplotlib Agg)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xmlthresh.cde.base import CDEstimator
from xmlthresh.cde.datasets.base import CDEData
from xmlthresh.cde.validation import check_features, check_positive_int


def plot_densities(
    estimator: CDEstimator, dataset: CDEData, xs, path, *, grid_size: int = 100, box=None
) -> Path:
    """One row per x in ``xs``: the estimated density, and the true one when the dataset knows it.

    ``dataset`` supplies the true density (if any), the target names and the plotting box (its declared
    bounds or its data range, unless ``box`` is given). Returns the path of the written PNG.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    if dataset.n_targets != 2 or getattr(estimator, "n_targets_", 2) != 2:
        raise ValueError(f"plot_densities draws 2-D targets only; this dataset has {dataset.n_targets}")
    xs = check_features(xs, n_features=dataset.X_train.shape[1], name="xs")
    n = check_positive_int(grid_size, "grid_size")
    box = dataset.plot_box() if box is None else np.asarray(box, dtype=np.float64)
    g1, g2 = np.linspace(*box[0], n), np.linspace(*box[1], n)
    G1, G2 = np.meshgrid(g1, g2, indexing="xy")
    grid = np.column_stack([G1.ravel(), G2.ravel()])
    est = estimator.density_on_grid(xs, grid).reshape(len(xs), n, n)
    panels = [("estimated", est)]
    if dataset.true_density is not None:
        true = dataset.true_density(np.repeat(xs, len(grid), axis=0), np.tile(grid, (len(xs), 1)))
        panels.append(("true", true.reshape(len(xs), n, n)))
    names = dataset.target_names or ("z1", "z2")
    fig, axes = plt.subplots(len(xs), len(panels), figsize=(4 * len(panels), 3.5 * len(xs)), squeeze=False)
    for i in range(len(xs)):
        top = max(float(values[i].max()) for _, values in panels) or 1.0
        for j, (title, values) in enumerate(panels):
            ax = axes[i, j]
            image = ax.imshow(values[i], origin="lower", extent=(*box[0], *box[1]), aspect="auto", vmin=0, vmax=top)
            ax.set_title(f"{title}, x #{i}")
            ax.set_xlabel(names[0])
            ax.set_ylabel(names[1])
            fig.colorbar(image, ax=ax)
    fig.suptitle(f"{type(estimator).__name__} on {dataset.name or 'data'}")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path
