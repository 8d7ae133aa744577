"""The rankers' score cache: a directory of score files (:mod:`xmlthresh.data.score_format`) under
``cache_dir()/scores/`` (``$XMLTHRESH_CACHE``), one per (data set, ranker, parameters, seed[, folds]).

Why score files and not the keyed store of the parse caches (:mod:`xmlthresh.data.keyed_store`): an entry is
keyed by a hash of the data's *content* (not by source files), and it is a plain score file, so
``dataset=scores dataset.path=<entry>`` reads it back. :func:`cache_key` names what shapes the scores,
:func:`cache_path` where they go, :func:`read_cache` reads an entry back (an unreadable entry or one of another
key is a miss, never an error); entries are written by :func:`xmlthresh.data.score_format.save_scores` (atomic).
Locking against two workers filling one entry is the caller's (:func:`xmlthresh._util.locks.cache_lock`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.multilabel import MultiLabelData, ScoreData
from xmlthresh.data.score_format import ScoreFileError, load_scores, save_scores
from xmlthresh._util.files import jsonable
from xmlthresh._util.paths import CacheNotWritableError, cache_dir, writable_cache_dir

log = logging.getLogger(__name__)

#: bump when the cached content or its meaning changes: old entries are then ignored
CACHE_FORMAT = 1


def data_fingerprint(data: MultiLabelData) -> dict[str, Any]:
    """Shapes of every split's arrays and a BLAKE2 hash of their contents (features, labels, label names)."""
    digest = hashlib.blake2b(digest_size=20)
    shapes: dict[str, Any] = {}
    for split in sorted(data.X):
        X, Y = data.X[split], sp.csr_matrix(data.Y[split])
        shapes[split] = {"X": list(X.shape), "X_sparse": bool(sp.issparse(X)),
                         "X_nnz": int(X.nnz) if sp.issparse(X) else None,
                         "Y": list(Y.shape), "Y_nnz": int(Y.nnz)}
        digest.update(split.encode())
        for array in _arrays_of(X) + _arrays_of(Y.astype(bool)):
            digest.update(str(array.dtype).encode() + str(array.shape).encode())
            digest.update(np.ascontiguousarray(array).view(np.uint8).ravel())
    digest.update(np.asarray(data.label_names).astype(str).tobytes())
    return {"shapes": shapes, "hash": digest.hexdigest()}


def _arrays_of(matrix) -> list[np.ndarray]:
    if sp.issparse(matrix):
        csr = sp.csr_matrix(matrix)
        return [csr.data, csr.indices, csr.indptr]
    return [np.asarray(matrix)]


def cache_key(data: MultiLabelData, ranker_name: str, params: Mapping[str, Any], seed: int,
              extra: Mapping[str, Any] | None = None, scores_version: int = 1) -> str:
    """SHA-256 over (data set name, data fingerprint, ranker name, its parameters, seed, cache format, the
    version of the ranker's scores) and, when given, ``extra`` (what else shapes the scores, e.g. the folds of
    cross-fitting)."""
    payload = {"format": CACHE_FORMAT, "dataset": data.name, "data": data_fingerprint(data),
               "ranker": ranker_name, "params": jsonable(dict(params)), "seed": seed}
    if scores_version != 1:  # version 1 is every key made before rankers had versions
        payload["scores_version"] = scores_version
    if extra:
        payload["extra"] = jsonable(dict(extra))
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def cache_path(dataset_name: str, ranker_name: str, key: str, kind: str = "") -> Path:
    """The cache file of a key; ``kind`` (e.g. ``crossfit5``) tells entries of other procedures apart."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", dataset_name) or "data"
    tag = f"__{kind}" if kind else ""
    return cache_dir() / "scores" / f"{safe}__{ranker_name}{tag}__{key[:32]}.npz"


def read_cache(path: Path, key: str, name: str) -> ScoreData | None:
    """The scores cached in ``path`` when they belong to ``key``, marked ``scores_from_cache``; None (refit) when
    the file is unreadable or malformed (a warning) or belongs to another key."""
    try:
        cached = load_scores(path, name=name)
    except (ScoreFileError, OSError, ValueError) as exc:
        log.warning("ignoring unreadable score cache %s (%s); refitting", path, exc)
        return None
    if cached.info.get("cache_key") != key:
        log.warning("ignoring score cache %s: it belongs to another key; refitting", path)
        return None
    info = {k: v for k, v in cached.info.items() if k != "score_file"}
    info["scores_from_cache"] = True
    info["cache_path"] = str(path)
    return ScoreData(name, cached.splits, info)



def cache_usable(path: Path, cache: bool) -> bool:
    """Whether the score cache can hold ``path``: asked for, and its folder can be made and written. A cache
    that cannot be written costs only the cache: one warning, and the ranker is fitted and its scores used
    (a read-only or full cache stopped the run, while every other cache of the package gives way)."""
    if not cache:
        return False
    try:
        writable_cache_dir(path.parent)
    except CacheNotWritableError as exc:
        log.warning("%s; the ranker's scores are not cached this run", exc)
        return False
    return True


def store_scores(path: Path, result: ScoreData) -> None:
    """Write the cache entry ``path`` of ``result``; a write that fails (a full disk) is one warning and leaves
    no entry behind (:func:`~xmlthresh.data.score_format.save_scores` writes atomically)."""
    try:
        save_scores(path, result)
    except OSError as exc:
        log.warning("could not write the score cache %s (%s); continuing without it", path,
                    getattr(exc, "strerror", None) or exc)
        return
    log.info("scores cached in %s", path)
