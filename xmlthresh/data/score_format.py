"""The score-file format: a ranker's scores and the true labels per split in NumPy ``.npz`` archives.

This module is the format only (:func:`save_scores`, :func:`load_scores`, :class:`ScoreFileError`); it knows
nothing about data sets or caches. Its users: the ``scores`` data set (:mod:`xmlthresh.datasets.score_loader`,
``dataset=scores dataset.path=/path/preds.npz``) and the rankers' score cache
(:mod:`xmlthresh.rankers.score_cache`).

File layout
-----------
``path`` is one ``.npz`` archive, or a directory whose ``*.npz`` archives are read together (for example
``validation.npz`` and ``test.npz``; a key may appear in only one of them, except ``label_names``, which must
then be equal, and ``info``, whose objects are merged). Arrays are plain NumPy arrays:
no pickled Python objects (``np.load(..., allow_pickle=False)``).

For each split ``S`` in ``train``, ``validation``, ``test`` (``test`` is required), with m documents and n
labels:

=========================  =====================================================================================
key                        content
=========================  =====================================================================================
``scores_S``               dense scores, float array of shape (m, n), **or** the four CSR components below
``scores_S_data``          float (nnz,): the stored scores; a (document, label) left out is *unscored*
                           (ranks below every scored document of the label; a top-k ranker output)
``scores_S_indices``       int (nnz,): label index (0..n-1) of each stored score, no repeats within a row
``scores_S_indptr``        int (m+1,): row pointer, ``indptr[0] = 0``, non-decreasing, ``indptr[m] = nnz``
``scores_S_shape``         int (2,): ``(m, n)``
``labels_S``               dense 0/1 (or bool) relevance of shape (m, n), **or** the CSR components below
``labels_S_indices``       int: the relevant labels of each document (CSR, like ``scores_S_indices``)
``labels_S_indptr``        int (m+1,)
``labels_S_shape``         int (2,): ``(m, n)``, the same as the scores'
``labels_S_data``          optional 0/1 values (default: every stored entry is relevant)
``label_names``            optional, (n,) str or int array: the label ids (else 0..n-1)
``info``                   optional, 0-d str array holding a JSON object: what produced the scores (kept in
                           ``ScoreData.info``)
``native_threshold``       optional, 0-d float: the producer's own decision threshold on these scores (0.5 for
                           probabilities, 0 for margins), used by ``fallback=native``; left out when unknown
=========================  =====================================================================================

Every split must use the same n. Scores must be finite (NaN or infinite values are reported with their
document and label); unknown keys, missing components, shape mismatches and labels other than 0/1 are
reported as :class:`ScoreFileError` naming the file, the key and the problem.

Example (a sparse top-k prediction matrix ``P`` and a label matrix ``Y`` from any library)::

    from xmlthresh.data.multilabel import ScoreData
    from xmlthresh.data.scores import ScoredSplit
    from xmlthresh.data.score_format import save_scores
    save_scores("preds.npz", ScoreData("mydata", {"validation": ScoredSplit(P_val, Y_val),
                                                  "test": ScoredSplit(P_test, Y_test)}))
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from xmlthresh._util.files import atomic_output
from xmlthresh.data.multilabel import SPLITS, ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.validation import InputError, check_label_names, check_memory

_CSR_PARTS = ("data", "indices", "indptr", "shape")
#: keys that hold one value for every split
_SHARED_KEYS = ("label_names", "info", "native_threshold")
_KEY = re.compile(r"^(scores|labels)_(" + "|".join(SPLITS) + r")(?:_(" + "|".join(_CSR_PARTS) + r"))?$")


class ScoreFileError(ValueError):
    """A malformed score file (the message names the file, the key and the problem)."""


# ---------------------------------------------------------------------- writing
def save_scores(path: str | os.PathLike, data: ScoreData, compress: bool = False) -> Path:
    """Write ``data`` in the layout of this module (atomically, :func:`xmlthresh._util.files.atomic_output`).

    ``.npz`` is appended to ``path`` when missing; returns the path written."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    arrays: dict[str, np.ndarray] = {}
    label_names = None
    natives = {split.native_threshold for split in data.splits.values()}
    if len(natives) > 1:
        raise ValueError(f"the splits of {data.name!r} declare different native thresholds {sorted(natives, key=str)}")
    for split_name, split in data.splits.items():
        if split_name not in SPLITS:
            raise ValueError(f"unknown split {split_name!r}; use {SPLITS}")
        if sp.issparse(split.scores):
            scores = sp.csr_matrix(split.scores)
            arrays.update(_csr_arrays(f"scores_{split_name}", scores, with_data=True))
        else:
            arrays[f"scores_{split_name}"] = np.asarray(split.scores, dtype=np.float64)
        arrays.update(_csr_arrays(f"labels_{split_name}", sp.csr_matrix(split.labels), with_data=False))
        if label_names is None and split.label_names is not None:
            label_names = np.asarray(split.label_names)
    if label_names is not None:
        if label_names.dtype == object:
            label_names = label_names.astype(str)
        arrays["label_names"] = label_names
    native = natives.pop() if natives else None
    if native is not None:
        arrays["native_threshold"] = np.asarray(native, dtype=np.float64)
    if data.info:
        arrays["info"] = np.asarray(json.dumps(data.info, default=_json_default))
    with atomic_output(path) as out:
        (np.savez_compressed if compress else np.savez)(out, **arrays)
    return path


def _csr_arrays(prefix: str, matrix: sp.csr_matrix, with_data: bool) -> dict[str, np.ndarray]:
    matrix.sort_indices()
    arrays = {
        f"{prefix}_indices": matrix.indices.astype(np.int32 if matrix.shape[1] < 2**31 else np.int64),
        f"{prefix}_indptr": matrix.indptr.astype(np.int64),
        f"{prefix}_shape": np.asarray(matrix.shape, dtype=np.int64),
    }
    if with_data:
        arrays[f"{prefix}_data"] = np.asarray(matrix.data, dtype=np.float64)
    return arrays


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


# ---------------------------------------------------------------------- reading
def load_scores(path: str | os.PathLike, name: str = "") -> ScoreData:
    """Read a score file (or a directory of them) in the layout of this module, with clear errors."""
    path = Path(path)
    files = sorted(path.glob("*.npz")) if path.is_dir() else [path]
    if not files:
        raise ScoreFileError(f"{path}: directory holds no .npz score file")
    arrays: dict[str, np.ndarray] = {}
    origin: dict[str, Path] = {}
    infos: list[str] = []
    for file in files:
        for key, value in _read_npz(file).items():
            if key == "info":
                infos.append(str(value))
                continue
            if key in ("label_names", "native_threshold") and key in arrays:
                if not np.array_equal(arrays[key], value):
                    raise ScoreFileError(f"{file}: {key} differs from the one in {origin[key]}")
                continue
            if key in arrays:
                raise ScoreFileError(f"{file}: key {key!r} is also in {origin[key]}; each key may appear once "
                                     "(label_names, native_threshold and info excepted)")
            arrays[key] = value
            origin[key] = file
    where = str(path)

    unknown = sorted(key for key in arrays if key not in _SHARED_KEYS and not _KEY.match(key))
    if unknown:
        raise ScoreFileError(
            f"{where}: unknown key(s) {', '.join(unknown)}; expected scores_<split> (or scores_<split>_data/indices/"
            f"indptr/shape), labels_<split> (or labels_<split>_indices/indptr/shape[/data]), label_names, info, "
            f"native_threshold "
            f"with <split> in {', '.join(SPLITS)}"
        )
    present = [split for split in SPLITS if any(_KEY.match(k) and _KEY.match(k).group(2) == split for k in arrays)]
    if "test" not in present:
        raise ScoreFileError(f"{where}: no 'test' split (keys scores_test and labels_test are required); "
                             f"found {', '.join(sorted(arrays)) or 'no keys'}")
    info: dict[str, Any] = {}
    for text in infos:  # several files: their info objects are merged in file-name order
        try:
            part = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScoreFileError(f"{where}: key 'info' is not a JSON object: {exc}") from None
        if not isinstance(part, dict):
            raise ScoreFileError(f"{where}: key 'info' must hold a JSON object, got {type(part).__name__}")
        info.update(part)
    label_names = arrays.get("label_names")
    native = _read_native_threshold(arrays.get("native_threshold"), where)

    splits: dict[str, ScoredSplit] = {}
    n_labels: int | None = None
    for split in present:
        scores = _read_matrix(arrays, f"scores_{split}", where, kind="scores")
        labels = _read_matrix(arrays, f"labels_{split}", where, kind="labels")
        if scores.shape != labels.shape:
            raise ScoreFileError(f"{where}: split {split!r}: scores have shape {scores.shape} "
                                 f"but labels {labels.shape}")
        if n_labels is not None and scores.shape[1] != n_labels:
            raise ScoreFileError(f"{where}: split {split!r} has {scores.shape[1]} labels, other splits {n_labels}")
        n_labels = scores.shape[1]
        _check_finite(scores, f"{where}: split {split!r}")
        labels = _as_relevance(labels, f"{where}: key labels_{split}")
        if label_names is not None:
            try:
                label_names = check_label_names(label_names, n_labels, what="key 'label_names'")
            except InputError as exc:
                raise ScoreFileError(f"{where}: {exc}") from None
        splits[split] = ScoredSplit(scores, labels, name=f"{name}/{split}" if name else split, label_names=label_names,
                                    native_threshold=native)
    return ScoreData(name or path.stem, splits, {**info, "score_file": where})


#: peak memory of a fit per label of a sparse score matrix, measured with 2 documents and 10^7 labels (about
#: 440 bytes), rounded up: what a declared label count costs whatever the number of stored scores
BYTES_PER_LABEL = 500


def _read_native_threshold(value: np.ndarray | None, where: str) -> float | None:
    """The file's ``native_threshold`` (a 0-d or one-element real array holding a finite number), or None."""
    if value is None:
        return None
    array = np.asarray(value)
    if array.size != 1 or array.dtype.kind not in "iuf" or not np.isfinite(array.reshape(-1)[0]):
        raise ScoreFileError(f"{where}: key 'native_threshold' must hold one finite real number (the producer's "
                             f"decision threshold, e.g. 0.5 for probabilities), got {array.dtype} of shape {array.shape}")
    return float(array.reshape(-1)[0])


#: the first bytes of an .npz archive (a zip; an empty one has only its end record) and of a single .npy array
_NPZ_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_NPY_MAGIC = b"\x93NUMPY"


def _read_npz(file: Path) -> dict[str, np.ndarray]:
    if not file.is_file():
        beside = file.with_name(file.name + ".npz")
        if file.suffix != ".npz" and beside.is_file():  # save_scores("out", ...) wrote out.npz, as it says
            raise ScoreFileError(f"{file} does not exist, but {beside} does: save_scores adds .npz to a name "
                                 f"without it; load {beside}")
        raise ScoreFileError(f"{file} does not exist")
    with open(file, "rb") as handle:
        head = handle.read(6)
    if not head.startswith(_NPZ_MAGIC) and head != _NPY_MAGIC:
        # np.load falls back to unpickling anything else and then blamed "Python objects (pickled)"
        if not head:
            kind = "an empty file"
        elif all(32 <= byte < 127 or byte in b"\t\r\n" for byte in head):
            kind = "a text file"
        else:
            kind = "not a zip archive"
        raise ScoreFileError(f"{file}: not an .npz archive ({kind}); write score files with "
                             "xmlthresh.data.score_format.save_scores or np.savez")
    try:
        archive = np.load(file, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ScoreFileError(f"{file}: a single .npy array, not an .npz archive of named arrays; use np.savez")
        with archive:
            arrays = {}
            for key in archive.files:
                try:
                    arrays[key] = archive[key]
                except ValueError as exc:
                    if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                        raise ScoreFileError(_pickled_message(file, key)) from None
                    raise
            return arrays
    except ScoreFileError:
        raise
    except ValueError as exc:
        raise ScoreFileError(f"{file}: cannot read as .npz: {exc}") from None
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ScoreFileError(f"{file}: not a readable .npz archive ({exc}): it is corrupt or truncated (a copy cut "
                             "short?); write it again with save_scores or np.savez") from None


def _pickled_message(file: Path, key: str) -> str:
    """What to do about key ``key`` holding a pickled Python object (refused: loading it would run code)."""
    if key.startswith(("scores_", "labels_")):
        return (f"{file}: key {key!r} holds a Python object (pickled), e.g. a scipy sparse matrix given to np.savez; "
                f"store a sparse matrix as its parts {key}_data, {key}_indices, {key}_indptr, {key}_shape "
                "(save_scores writes them) or a dense array as numbers")
    if key == "label_names":
        return (f"{file}: key 'label_names' holds Python objects (pickled); store the names as a string array, "
                "np.asarray(names, dtype=str)")
    return f"{file}: key {key!r} holds Python objects (pickled), which are never loaded; store it as numbers or text"


def _read_matrix(arrays: dict[str, np.ndarray], key: str, where: str, kind: str) -> np.ndarray | sp.csr_matrix:
    parts = {part: arrays.get(f"{key}_{part}") for part in _CSR_PARTS}
    given = [part for part, value in parts.items() if value is not None]
    if key in arrays:
        if given:
            raise ScoreFileError(f"{where}: both the dense {key!r} and its CSR components "
                                 f"{', '.join(f'{key}_{p}' for p in given)}; keep one form")
        dense = arrays[key]
        if dense.ndim != 2:
            raise ScoreFileError(f"{where}: key {key!r} must be 2-D (documents x labels), got shape {dense.shape}")
        if not (np.issubdtype(dense.dtype, np.number) or dense.dtype == bool) or np.iscomplexobj(dense):
            raise ScoreFileError(f"{where}: key {key!r} must hold real numbers, got dtype {dense.dtype}")
        return dense
    if not given:
        other = "labels" if kind == "scores" else "scores"
        raise ScoreFileError(f"{where}: key {key!r} missing (dense array or CSR components {key}_indices/indptr/shape"
                             f"{'/data' if kind == 'scores' else ''}) while the {other} of its split are present")
    required = _CSR_PARTS if kind == "scores" else ("indices", "indptr", "shape")
    missing = [f"{key}_{part}" for part in required if parts[part] is None]
    if missing:
        raise ScoreFileError(f"{where}: CSR {kind} incomplete: {', '.join(f'{key}_{p}' for p in given)} given "
                             f"but {', '.join(missing)} missing")
    shape = np.asarray(parts["shape"]).ravel()
    if shape.shape != (2,) or not np.issubdtype(shape.dtype, np.integer) or np.any(shape < 0):
        raise ScoreFileError(f"{where}: {key}_shape must be two non-negative integers (documents, labels), "
                             f"got {parts['shape']!r}")
    m, n = int(shape[0]), int(shape[1])
    try:
        check_memory(f"{where}: {key}_shape declares {n:,} labels; the fit's per-label arrays", n * BYTES_PER_LABEL,
                     f"check {key}_shape (the second number is the label count)")
    except InputError as exc:
        raise ScoreFileError(str(exc)) from None
    indices, indptr = np.asarray(parts["indices"]).ravel(), np.asarray(parts["indptr"]).ravel()
    if not (np.issubdtype(indices.dtype, np.integer) and np.issubdtype(indptr.dtype, np.integer)):
        raise ScoreFileError(f"{where}: {key}_indices and {key}_indptr must be integer arrays")
    if len(indptr) != m + 1:
        raise ScoreFileError(f"{where}: {key}_indptr has length {len(indptr)}, needs documents + 1 = {m + 1}")
    if indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] != len(indices):
        raise ScoreFileError(f"{where}: {key}_indptr must start at 0, never decrease and end at "
                             f"len({key}_indices) = {len(indices)} (ends at {indptr[-1]})")
    if len(indices) and (indices.min() < 0 or indices.max() >= n):
        raise ScoreFileError(f"{where}: {key}_indices must lie in [0, {n}) (the label count of {key}_shape), "
                             f"found {indices.min()}..{indices.max()}")
    data = parts["data"]
    if data is None:
        data = np.ones(len(indices), dtype=bool)
    data = np.asarray(data).ravel()
    if len(data) != len(indices):
        raise ScoreFileError(f"{where}: {key}_data has {len(data)} values for {len(indices)} indices")
    if not (np.issubdtype(data.dtype, np.number) or data.dtype == bool) or np.iscomplexobj(data):
        raise ScoreFileError(f"{where}: {key}_data must hold real numbers, got dtype {data.dtype}")
    row = np.repeat(np.arange(m, dtype=np.int64), np.diff(indptr))
    keys = np.sort(row * max(n, 1) + indices)
    repeated = np.flatnonzero(keys[1:] == keys[:-1])
    if len(repeated):
        first = keys[repeated[0]]
        raise ScoreFileError(f"{where}: {key} holds {len(repeated)} repeated (document, label) entr(y/ies), "
                             f"e.g. document {first // max(n, 1)}, label {first % max(n, 1)}")
    return sp.csr_matrix((data, indices, indptr), shape=(m, n))


def _check_finite(scores: np.ndarray | sp.csr_matrix, where: str) -> None:
    if sp.issparse(scores):
        bad = np.flatnonzero(~np.isfinite(scores.data))
        if len(bad):
            doc = int(np.searchsorted(scores.indptr, bad[0], side="right") - 1)
            raise ScoreFileError(f"{where}: {len(bad)} score(s) are NaN or infinite, e.g. document {doc}, label "
                                 f"{int(scores.indices[bad[0]])}; leave unscored entries out of the CSR instead")
        return
    bad = ~np.isfinite(scores)
    if np.any(bad):
        doc, label = np.argwhere(bad)[0]
        raise ScoreFileError(f"{where}: {int(np.count_nonzero(bad))} score(s) are NaN or infinite, e.g. document "
                             f"{doc}, label {label}; clean the ranker output or store top-k scores as CSR")


def _as_relevance(labels: np.ndarray | sp.csr_matrix, where: str) -> sp.csr_matrix:
    values = labels.data if sp.issparse(labels) else labels
    if values.dtype != bool:
        bad = (values != 0) & (values != 1)
        if np.any(bad):
            raise ScoreFileError(f"{where}: labels must be 0/1, found {int(np.count_nonzero(bad))} other value(s), "
                                 f"e.g. {values[bad].ravel()[0]!r}")
    return sp.csr_matrix(labels, dtype=bool)
