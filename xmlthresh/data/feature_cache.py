"""The cache of loaded feature data sets (:class:`MultiLabelData`): :func:`cached_build` is a loader's build
through the keyed store (:mod:`xmlthresh.data.keyed_store`, kind ``features``).

Parsing the ARFF or text files of a feature data set, encoding its attributes and carving its validation
split takes seconds; loading the result takes milliseconds. The store keys the entry by the loader, the
resolved source paths, every loader parameter that changes the content (split fractions, seed, ...) and
the loader's and this module's format versions; a changed source (size or modification time) rebuilds the
entry in place; an entry is written only after the data were built completely, atomically; a corrupt entry
is deleted with a warning and rebuilt; an unwritable cache costs only the cache.

This module adds the codec: splits as dense or CSR arrays, labels as CSR structure (bool), names as numpy
string arrays, ``info`` as JSON. ``first_n_labels`` and similar views are not part of an entry:
``Dataset.load`` applies them after loading.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.keyed_store import Arrays, CorruptEntryError, cached
from xmlthresh.data.multilabel import MultiLabelData

#: bump when the stored layout changes (loaders version their own semantics through ``version``)
FORMAT_VERSION = 2  # 1: the .npz entries of xmlthresh.data.npz_entries


def cached_build(loader: str, name: str, sources: Sequence[Path], params: Mapping[str, Any], version: int,
                 build: Callable[[], MultiLabelData]) -> MultiLabelData:
    """The data set from its cache entry when every source is unchanged, else ``build()`` and store it.

    ``info["cache"]`` tells which happened (``hit``) and where the entry is (None when it could not be
    written)."""
    sources = [Path(p) for p in sources]
    key = {"loader": loader, "sources": [str(p.resolve()) for p in sources], "params": dict(params),
           "version": version, "format": FORMAT_VERSION}
    result = cached("features", f"{loader}-{name}", key, sources, build, _to_arrays, _from_arrays)
    data = result.value
    data.info["cache"] = {"hit": result.hit, "path": None if result.path is None else str(result.path)}
    return data


# ---------------------------------------------------------------------------------------------- codec
def _to_arrays(data: MultiLabelData) -> tuple[dict[str, Any], Arrays]:
    arrays: Arrays = {"label_names": _plain(data.label_names)}
    if data.feature_names is not None:
        arrays["feature_names"] = _plain(data.feature_names)
    splits: dict[str, dict[str, Any]] = {}
    for split, X in data.X.items():
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            arrays[f"X__{split}__data"] = X.data
            arrays[f"X__{split}__indices"] = X.indices
            arrays[f"X__{split}__indptr"] = X.indptr
            splits[split] = {"X": "csr", "X_shape": list(X.shape)}
        else:
            arrays[f"X__{split}"] = np.ascontiguousarray(X)
            splits[split] = {"X": "dense", "X_shape": list(X.shape)}
        Y = sp.csr_matrix(data.Y[split], dtype=bool)
        Y.eliminate_zeros()
        Y.sort_indices()
        arrays[f"Y__{split}__indices"] = Y.indices
        arrays[f"Y__{split}__indptr"] = Y.indptr
        splits[split]["Y_shape"] = list(Y.shape)
    meta = {"name": data.name, "splits": splits, "info": data.info}
    json.dumps(meta)  # fail here, before writing, when a loader put something non-JSON into info
    return meta, arrays


def _from_arrays(meta: dict[str, Any], arrays: Arrays) -> MultiLabelData:
    X: dict[str, Any] = {}
    Y: dict[str, sp.csr_matrix] = {}
    for split, layout in meta["splits"].items():
        if layout["X"] == "csr":
            X[split] = sp.csr_matrix((arrays[f"X__{split}__data"], arrays[f"X__{split}__indices"],
                                      arrays[f"X__{split}__indptr"]), shape=tuple(layout["X_shape"]))
        else:
            X[split] = arrays[f"X__{split}"]
            if list(X[split].shape) != layout["X_shape"]:
                raise CorruptEntryError(f"X[{split}] has shape {X[split].shape}, {layout['X_shape']} expected")
        indices = arrays[f"Y__{split}__indices"]
        Y[split] = sp.csr_matrix((np.ones(len(indices), dtype=bool), indices, arrays[f"Y__{split}__indptr"]),
                                 shape=tuple(layout["Y_shape"]))
    return MultiLabelData(name=meta["name"], X=X, Y=Y, label_names=arrays["label_names"],
                          feature_names=arrays.get("feature_names"), info=dict(meta["info"]))


def _plain(names: np.ndarray) -> np.ndarray:
    """Names as a numpy string or number array (storable without pickle)."""
    names = np.asarray(names)
    if names.dtype == object:
        names = names.astype(str)
    return names
