"""Binary cache of loaded feature data sets (:class:`MultiLabelData`) in the derived-cache directory.

Parsing the ARFF or text files of a feature data set, encoding its attributes and carving its validation
split takes seconds; loading the result takes milliseconds. One cache entry is one uncompressed ``.npz``
under ``<cache_dir>/features/`` (``xmlthresh.paths.cache_dir()``, i.e. ``$XMLTHRESH_CACHE``):

* its **name** is derived from what was asked: the loader, the resolved source paths and every loader
  parameter that changes the content (split fractions, seed, ...) plus the loader's and this module's
  format versions -- different parameters never share an entry;
* its **metadata** record each source's name, size and modification time (ns): a changed source is a miss
  and the entry is rebuilt in place; plus a CRC-32 of every array;
* it is written only after the data were built completely, and **atomically** (a temporary file in the
  same directory, then a rename): a malformed source, an error or a full disk leaves no entry behind; a
  failed write only costs the cache (a warning), never the load;
* an entry that cannot be read or fails its checksums is deleted with a warning and rebuilt.

``first_n_labels`` and similar views are not part of an entry: ``Dataset.load`` applies them after loading.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from ..paths import cache_dir
from .multilabel import MultiLabelData
from .npz_entries import READ_ERRORS, CorruptEntryError, discard, read_entry, source_stamp, write_entry

log = logging.getLogger(__name__)

#: bump when the stored layout changes (loaders version their own semantics through ``version``)
FORMAT_VERSION = 1


def entry_path(loader: str, name: str, sources: Sequence[Path], params: Mapping[str, Any], version: int) -> Path:
    """The cache file of this loader, sources and parameters (a readable stem plus a digest)."""
    request = {"loader": loader, "sources": [str(Path(p).resolve()) for p in sources], "params": dict(params),
               "version": version, "format": FORMAT_VERSION}
    digest = hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()[:24]
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{loader}-{name}")
    return cache_dir() / "features" / f"{stem}-{digest}.npz"


def cached_build(loader: str, name: str, sources: Sequence[Path], params: Mapping[str, Any], version: int,
                 build: Callable[[], MultiLabelData]) -> MultiLabelData:
    """The data set from its cache entry when every source is unchanged, else ``build()`` and store it.

    ``info["cache"]`` tells which happened (``hit``) and where the entry is."""
    sources = [Path(p) for p in sources]
    stamps = [source_stamp(p) for p in sources]
    entry = entry_path(loader, name, sources, params, version)
    data = load_entry(entry, stamps)
    if data is not None:
        log.debug("%s loaded from cache %s", name, entry)
        data.info["cache"] = {"hit": True, "path": str(entry)}
        return data
    data = build()
    stored = store_entry(entry, data, stamps)
    data.info["cache"] = {"hit": False, "path": str(entry) if stored else None}
    return data


def load_entry(entry: Path, stamps: list[dict[str, Any]]) -> MultiLabelData | None:
    """The data stored in ``entry``, or None when it is missing, stale (other sources or format) or corrupt
    (then it is deleted, with a warning)."""
    try:
        meta, arrays = read_entry(entry)
        if meta.get("format") != FORMAT_VERSION or meta.get("sources") != stamps:
            log.info("cache %s is stale (a source changed): rebuilding", entry)
            return None
        return _from_arrays(meta, arrays)
    except FileNotFoundError:
        return None
    except (CorruptEntryError, *READ_ERRORS) as exc:
        discard(entry, exc)
        return None


def store_entry(entry: Path, data: MultiLabelData, stamps: list[dict[str, Any]]) -> bool:
    """Write ``data`` to ``entry`` atomically; on an OS error log a warning, leave nothing behind and return
    False."""
    meta, arrays = _to_arrays(data)
    meta.update(format=FORMAT_VERSION, sources=stamps)
    return write_entry(entry, meta, arrays)


# ---------------------------------------------------------------------------------------------- internals
def _to_arrays(data: MultiLabelData) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    arrays: dict[str, np.ndarray] = {"label_names": _plain(data.label_names)}
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


def _from_arrays(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> MultiLabelData:
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
