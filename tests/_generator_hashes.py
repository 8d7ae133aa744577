"""Print, as JSON, the sha256 of every seeded generator's output at small sizes (run in a fresh process by
tests/test_determinism.py, under different thread counts and CPU code paths)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import scipy.sparse as sp


def digest(*arrays) -> str:
    """sha256 over the dtype, shape and bytes of each array (CSR matrices: their data, indices, indptr)."""
    h = hashlib.sha256()
    for array in arrays:
        if sp.issparse(array):
            array = array.tocsr()
            parts = (array.data, array.indices.astype(np.int64), array.indptr.astype(np.int64))
        else:
            parts = (np.asarray(array),)
        for part in parts:
            part = np.ascontiguousarray(part)
            h.update(f"{part.dtype.str}{part.shape}".encode())
            h.update(part.tobytes())
    return h.hexdigest()


def score_data_digest(data) -> str:
    return digest(*[array for split in data.splits.values() for array in (split.scores, split.labels)])


def cde_digest(data) -> str:
    return digest(data.X_train, data.Z_train, data.X_test, data.Z_test)


def generator_hashes(small: bool = False) -> dict[str, str]:
    """Digests of the pinned instances, or with ``small`` of smaller ones (in-process checks, ~0.3 s)."""
    from xmlthresh.cde.registry import CDE_DATASETS
    from xmlthresh.datasets.synthetic import generate_ranked_lists
    from xmlthresh.datasets.synthetic_large import generate_ranked_lists_direct
    from xmlthresh.datasets.synthetic_xmc import generate_xmc_scores

    n = 10 if small else 1
    return {
        "synthetic": generate_ranked_lists(n_labels=300 // n, num_docs=500, list_length=100).digest(),
        "synthetic_large": generate_ranked_lists_direct(n_labels=100_000 // n, num_docs=100_000,
                                                        list_length=300).digest(),
        "synthetic_xmc_topk": score_data_digest(generate_xmc_scores(n_labels=5000 // n, num_docs=2000 // n,
                                                                    top_k=20)),
        "synthetic_xmc_dense": score_data_digest(generate_xmc_scores(n_labels=200 // n, num_docs=300, top_k=None)),
        "surd": cde_digest(CDE_DATASETS.get("surd")(nz=3, d=(0.1, 1.0, 0.5), alpha=(0.3, 0.3, 0.1)).load(seed=3)),
        "fork": cde_digest(CDE_DATASETS.get("fork")(m=3).load(seed=3)),
    }


def numpy_hashes() -> dict[str, str]:
    """Hashes of numpy's / glibc's own CPU-dispatched functions (to show a variant process takes other paths)."""
    x = np.random.default_rng(1).uniform(0.001, 10.0, 100_000)
    return {"np.log1p": digest(np.log1p(x)), "np.power": digest(x ** -0.8), "np.sin": digest(np.sin(x))}


if __name__ == "__main__":
    print(json.dumps({"generators": generator_hashes(), "numpy": numpy_hashes()}))
