"""``xanes`` — real data: Fe K-edge XANES spectra of FeSiO4 and the structure parameters behind them.

From the pyFitIt examples (Martini, Guda, Guda et al., Comput. Phys. Commun. 250 (2020) 107064; GPL-3.0):
for each ``sampleN``, ``spectra.txt`` holds a header of energies ``e_<eV>`` and 500 simulated spectra of
293 points, ``params.txt`` a header of structure-parameter names and the 500 parameter rows in the same
order. The task is the conditional density of a few parameters (``targets``, default r1 and r2) given
the spectrum. The files are fetched from the pinned GitHub commit with sha256 verification into
``$XMLTHRESH_DATA/xanes_fesio4/sampleN/`` (``xmlthresh.data.download``).

``load(seed)`` makes a seeded train/test split, reduces the spectra by a PCA fitted on the training
spectra only, and declares the target box as the training range widened by ``margin`` (a fraction of the
range per side) so that bounded estimators can keep all their mass inside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
from sklearn.decomposition import PCA

from xmlthresh._util.notices import IgnoredSettingWarning, warn
from xmlthresh.data.download import RemoteFile, ensure_file
from xmlthresh.cde.registry import CDE_DATASETS
from xmlthresh.cde.datasets.base import CDEData

BASE_URL = (
    "https://raw.githubusercontent.com/gudasergey/pyFitIt/7bdf56ae59180604d54bdc78bdbbbf522b2a4d3c/"
    "Examples/FeSiO4%20descriptors/samples"
)
FOLDER = "xanes_fesio4"
#: sha256 of every file, per sample (from the shared dataset cache's SHA256SUMS)
SHA256 = {
    "sample2": {
        "params.txt": "91356be585fd1cad604e1c1f11875988db4b89f89768d41c224dc786fadaa604",
        "spectra.txt": "c3e7eee87dc2459a434babc7f60acc58382ba05a70bd8e8c209e4aa2a53c5676",
    },
    "sample3": {
        "params.txt": "26b5050e93dd231aa28b6d8f8f69ec01f2ea10e3b7d74b9537086de75a4dd058",
        "spectra.txt": "1b56518378985b22c3fa0c613d7f55b0cc869dae68d95bce42798f4ce1a3ca56",
    },
    "sample4": {
        "params.txt": "c4e58ba6902579050b9df31a792b887ec4bd3bfb2b8cf28a779ed1bd2801dbe6",
        "spectra.txt": "20348a884e4329309a38d053ceb84001610023dc75d6e5eab3318a1cb5cee556",
    },
    "sample5": {
        "params.txt": "363cfecab22a93cc80deea92e216f5af513f5fa07843aac16e91c9109c905025",
        "spectra.txt": "5948594fb36a7ffab3d89a9a08564bdcd0fcdc9e8f5d5004e4a0d7523f62fccb",
    },
    "sample6": {
        "params.txt": "d2a9eae7f9ab40473843c9fb86a8cce8327533c4de74f17e5c06dc7b467fc5c6",
        "spectra.txt": "fcc2302f83ff0d732373829dc2dd52dc7d01e83decaa5bff6a5a04a1a634d81f",
    },
}


def remote_files(sample: str, base_url: str = BASE_URL) -> dict[str, RemoteFile]:
    """The two files of ``sample`` (``spectra.txt``, ``params.txt``) with URL and checksum.

    ``base_url`` replaces the pinned GitHub location (a mirror holding ``<sample>/<file>``); the checksums
    stay the same, so a mirror cannot change the data.
    """
    if sample not in SHA256:
        raise ValueError(f"unknown XANES sample {sample!r}; available: {', '.join(sorted(SHA256))}")
    base_url = base_url.rstrip("/")
    return {
        name: RemoteFile(f"{FOLDER}/{sample}/{name}", f"{base_url}/{sample}/{name}", digest)
        for name, digest in SHA256[sample].items()
    }


def read_spectra(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(energies (P,), spectra (N, P)) from a ``spectra.txt`` whose header names the energies ``e_<eV>``."""
    with open(path) as handle:
        header = handle.readline().split()
    if not header or not all(tok.startswith("e_") for tok in header):
        raise ValueError(f"{path}: expected a header of energies 'e_<eV>', got {header[:3]}...")
    energies = np.array([float(tok[2:]) for tok in header])
    spectra = np.loadtxt(path, skiprows=1, ndmin=2)
    if spectra.shape[1] != energies.size:
        raise ValueError(f"{path}: {spectra.shape[1]} columns but {energies.size} energies in the header")
    return energies, spectra


def read_params(path: Path) -> tuple[list[str], np.ndarray]:
    """(parameter names, values (N, n_params)) from a ``params.txt`` with a header line of names."""
    with open(path) as handle:
        names = handle.readline().split()
    values = np.loadtxt(path, skiprows=1, ndmin=2)
    if values.shape[1] != len(names):
        raise ValueError(f"{path}: {values.shape[1]} columns but {len(names)} names in the header")
    return names, values


@CDE_DATASETS.register("xanes")
class XanesFeSiO4:
    """XANES FeSiO4 conditional density task; ``load(seed)`` returns a ``CDEData`` with ``bounds``.

    Parameters: ``sample`` (sample2..sample6), ``targets`` (1 to 3 parameter names of that sample),
    ``n_components`` (PCA dimensions of the spectra), ``test_fraction``, ``margin`` (box widening as a
    fraction of the training range per side), ``base_url`` (download location, default the pinned commit).
    """

    def __init__(
        self,
        sample: str = "sample3",
        targets: Sequence[str] = ("r1", "r2"),
        n_components: int = 10,
        test_fraction: float = 0.25,
        margin: float = 0.05,
        base_url: str = BASE_URL,
    ) -> None:
        remote_files(sample)  # validates the sample name
        targets = (targets,) if isinstance(targets, str) else tuple(targets)
        if not 1 <= len(targets) <= 3 or len(set(targets)) != len(targets):
            raise ValueError(f"targets must be 1 to 3 distinct parameter names, got {list(targets)}")
        if not 0.0 < test_fraction < 1.0:
            raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
        if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
            raise ValueError(f"n_components must be a positive integer, got {n_components!r}")
        if not margin > 0:
            raise ValueError(f"margin must be positive (targets must lie strictly inside the box), got {margin!r}")
        self.sample, self.targets, self.n_components = sample, targets, int(n_components)
        self.test_fraction, self.margin, self.base_url = float(test_fraction), float(margin), base_url

    def read(self) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
        """(energies, spectra, parameter names, parameter values), downloading the files if needed."""
        files = remote_files(self.sample, self.base_url)
        energies, spectra = read_spectra(ensure_file(files["spectra.txt"]))
        names, params = read_params(ensure_file(files["params.txt"]))
        if spectra.shape[0] != params.shape[0]:
            raise ValueError(f"{self.sample}: {spectra.shape[0]} spectra but {params.shape[0]} parameter rows")
        return energies, spectra, names, params

    def load(self, seed: int = 0) -> CDEData:
        """Seeded split, PCA of the spectra fitted on train only, target box from train with a margin."""
        energies, spectra, names, params = self.read()
        unknown = [t for t in self.targets if t not in names]
        if unknown:
            raise ValueError(
                f"unknown target(s) {unknown} for XANES {self.sample}; available parameters: {', '.join(names)}"
            )
        Z = params[:, [names.index(t) for t in self.targets]]
        perm = np.random.default_rng(seed).permutation(len(Z))
        n_test = max(1, int(round(self.test_fraction * len(Z))))
        test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
        n_comp = min(self.n_components, len(train) - 1, spectra.shape[1])
        if n_comp < self.n_components:  # capped by the data: said, and recorded in info
            warn(f"cde_dataset.n_components={self.n_components} is more than the data allow (the spectra have "
                 f"{spectra.shape[1]} energies, the train split {len(train)} rows): {n_comp} components are used",
                 IgnoredSettingWarning)
        pca = PCA(n_components=n_comp, random_state=seed).fit(spectra[train])
        lo, hi = Z[train].min(axis=0), Z[train].max(axis=0)
        pad = self.margin * np.where(hi > lo, hi - lo, np.maximum(np.abs(lo), 1.0))
        return CDEData(
            pca.transform(spectra[train]), Z[train], pca.transform(spectra[test]), Z[test],
            bounds=np.column_stack([lo - pad, hi + pad]),
            target_names=self.targets,
            name="xanes",
            info={
                "seed": seed,
                "sample": self.sample,
                "energies": energies,
                "explained_variance": pca.explained_variance_ratio_,
                "n_components": n_comp,
            },
        )
