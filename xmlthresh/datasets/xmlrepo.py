"""``xmlrepo``: data sets in the text format of the Extreme Classification Repository (Bhatia et al.).

A data file starts with a header ``N D L`` (documents, features, labels); each of the N following lines is
``l1,l2,... f:v f:v ...`` -- 0-based label indices, then 0-based ``feature:value`` pairs. A line may have
no labels (it then starts with a blank or directly with a ``feature:value`` pair) and no features.

Two layouts:

* ``path`` (one data file) with split files ``train_split`` / ``test_split`` (default ``trSplit.txt`` /
  ``tstSplit.txt`` beside the data file): one line per document of the split, 1-based row numbers of the
  data file, one whitespace-separated column per split variant; ``split_index`` (0-based) picks the column.
  A split keeps the order of its split file.
* ``path_train`` and ``path_test``: two data files with the same D and L.

Paths are absolute or relative to the data directory ($XMLTHRESH_DATA); relative split-file paths are
relative to the data file's folder. A validation split of ``validation_fraction`` of the training documents
is carved with iterative stratification (:mod:`xmlthresh.data.stratify`, seed ``seed``; 0: none). Features are
CSR float64, labels CSR bool, label names the label indices. The parsed result is cached
(:mod:`xmlthresh.data.feature_cache`). Malformed input raises :class:`XMLRepoFormatError` naming the file,
the line and the problem; duplicate labels on a line are merged, a duplicate feature is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.download import DataUnavailableError
from xmlthresh.data.feature_cache import cached_build
from xmlthresh.data.multilabel import MultiLabelData
from xmlthresh.data.score_format import BYTES_PER_LABEL
from xmlthresh.data.stratify import stratified_holdout
from xmlthresh.data.text_encoding import decode_text
from xmlthresh._util.paths import data_dir
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS
from xmlthresh.validation import check_memory

#: bump when the loader's output for the same files and parameters changes (invalidates cache entries)
LOADER_VERSION = 1


class XMLRepoFormatError(ValueError):
    """A file that does not follow the repository's format (message: file, line when known, problem)."""


def _error(source: Path | str, line: int | None, problem: str) -> XMLRepoFormatError:
    return XMLRepoFormatError(f"{source} line {line}: {problem}" if line else f"{source}: {problem}")


@dataclass(frozen=True)
class SparseFile:
    """One parsed data file: features (N x D, CSR float64) and labels (N x L, CSR bool)."""

    features: sp.csr_matrix
    labels: sp.csr_matrix


@DATASETS.register("xmlrepo")
class XMLRepoDataset(Dataset):
    """An Extreme Classification Repository data set (see the module docstring); ``load()`` returns
    :class:`MultiLabelData`."""

    def __init__(self, name: str | None = None, path: str | None = None, train_split: str = "trSplit.txt",
                 test_split: str = "tstSplit.txt", split_index: int = 0, path_train: str | None = None,
                 path_test: str | None = None, validation_fraction: float = 0.25, seed: int = 0,
                 include_predict_all: bool = True, first_n_labels: int | None = None):
        separate = path_train is not None or path_test is not None
        if separate and (path_train is None or path_test is None):
            raise ValueError("xmlrepo: give both path_train and path_test (or path with split files)")
        if separate == (path is not None):
            raise ValueError("xmlrepo: give either path (one data file + split files) or path_train and path_test")
        if not 0.0 <= float(validation_fraction) < 1.0:
            raise ValueError(f"validation_fraction must lie in [0, 1), got {validation_fraction}")
        if int(split_index) < 0:
            raise ValueError(f"split_index is a 0-based column of the split files, got {split_index}")
        default_name = Path(path or path_train or "xmlrepo").stem
        super().__init__(name=name or default_name, include_predict_all=include_predict_all,
                         first_n_labels=first_n_labels)
        self.path, self.path_train, self.path_test = path, path_train, path_test
        self.train_split, self.test_split = train_split, test_split
        self.split_index = int(split_index)
        self.validation_fraction = float(validation_fraction)
        self.seed = int(seed)


    def _load(self) -> MultiLabelData:
        params: dict[str, Any] = {"validation_fraction": self.validation_fraction, "seed": self.seed}
        if self.path is not None:
            data_file = _resolve(self.path)
            splits = {"train": _resolve(self.train_split, data_file.parent),
                      "test": _resolve(self.test_split, data_file.parent)}
            params["split_index"] = self.split_index
            sources = [data_file, splits["train"], splits["test"]]
        else:
            sources = [_resolve(self.path_train), _resolve(self.path_test)]
        return cached_build("xmlrepo", self.name, sources, params, LOADER_VERSION, lambda: self._build(sources))

    def _build(self, sources: list[Path]) -> MultiLabelData:
        info: dict[str, Any] = {"loader": "xmlrepo", "files": [str(p) for p in sources]}
        if self.path is not None:
            data_file, train_file, test_file = sources
            parsed = read_xmlrepo(data_file)
            n_docs = parsed.features.shape[0]
            train_rows = read_split(train_file, self.split_index, n_docs)
            test_rows = read_split(test_file, self.split_index, n_docs)
            overlap = np.intersect1d(train_rows, test_rows)
            if len(overlap):
                raise _error(test_file, None, f"{len(overlap)} documents are in both splits (first: row "
                                              f"{overlap[0] + 1} of {data_file}), column {self.split_index}")
            parts = {"train": (parsed.features[train_rows], parsed.labels[train_rows]),
                     "test": (parsed.features[test_rows], parsed.labels[test_rows])}
            info["split"] = {"files": [str(train_file), str(test_file)], "split_index": self.split_index,
                             "unused_documents": int(n_docs - len(train_rows) - len(test_rows))}
        else:
            train, test = read_xmlrepo(sources[0]), read_xmlrepo(sources[1])
            for what, axis in (("features", 1), ("labels", 1)):
                a, b = getattr(train, what).shape[axis], getattr(test, what).shape[axis]
                if a != b:
                    raise _error(sources[1], 1, f"header declares {b} {what}, but {sources[0]} declares {a}")
            parts = {"train": (train.features, train.labels), "test": (test.features, test.labels)}
        if self.validation_fraction > 0:
            X_train, Y_train = parts["train"]
            keep, held_out = stratified_holdout(Y_train, self.validation_fraction, seed=self.seed)
            parts = {"train": (X_train[keep], Y_train[keep]), "validation": (X_train[held_out], Y_train[held_out]),
                     "test": parts["test"]}
            info["validation_split"] = {"method": "iterative stratification (Sechidis et al. 2011) of the train rows",
                                        "fraction": self.validation_fraction, "seed": self.seed}
        n_labels = parts["test"][1].shape[1]
        return MultiLabelData(name=self.name, X={s: X for s, (X, _) in parts.items()},
                              Y={s: Y for s, (_, Y) in parts.items()},
                              label_names=np.arange(n_labels, dtype=np.int64), info=info)


def _resolve(path: str, base: Path | None = None) -> Path:
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = (base if base is not None else data_dir()) / candidate
    if candidate.is_dir():
        raise DataUnavailableError(f"{candidate} is a folder; give the data file itself (the file whose first line "
                                   "is 'N D L')")
    if not candidate.is_file():
        where = f"beside the data file in {base}" if base is not None else f"under the data directory {data_dir()}"
        raise DataUnavailableError(f"{candidate} does not exist (relative paths are looked up {where}; "
                                   "set XMLTHRESH_DATA or give an absolute path)")
    return candidate


def _uncompressed(path: Path) -> bytes:
    """The bytes of a data file, gunzipped when it is gzip (the repository ships some as ``.gz``; read as text,
    byte 0x8b was "not UTF-8")."""
    import gzip
    import zlib

    raw = path.read_bytes()
    if raw[:2] != b"\x1f\x8b":
        if raw[:4] == b"PK\x03\x04":
            raise _error(path, None, "is a zip archive; extract the data file from it and give that file")
        return raw
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error) as exc:
        raise _error(path, None, f"is a gzip file that cannot be read ({exc}): cut short? download it again") from None


def read_xmlrepo(path: Path) -> SparseFile:
    """Parse one data file of the repository's format (see the module docstring)."""
    path = Path(path)
    lines = decode_text(_uncompressed(path), str(path)).splitlines()
    header_at = next((i for i, line in enumerate(lines) if line.strip()), None)
    if header_at is None:
        raise _error(path, None, "the file is empty (expected a header 'N D L')")
    header = lines[header_at].split()
    if len(header) != 3 or not all(token.isdigit() for token in header):
        raise _error(path, header_at + 1, f"header {lines[header_at].strip()[:40]!r} is not 'N D L' "
                                          "(documents, features, labels)")
    n_docs, n_features, n_labels = (int(token) for token in header)
    check_memory(f"{path} line {header_at + 1}: the header declares {n_labels:,} labels and {n_features:,} features; "
                 "the per-label and per-feature arrays", (n_labels + n_features) * BYTES_PER_LABEL,
                 "check the header 'N D L' (documents, features, labels)")
    body = lines[header_at + 1:]
    while body and not body[-1].strip():
        body.pop()
    if len(body) != n_docs:
        raise _error(path, None, f"header declares {n_docs} documents, the file has {len(body)} lines after it")
    first_line = header_at + 2
    label_tokens: list[str] = []
    label_count: list[int] = []
    index_tokens: list[str] = []
    value_tokens: list[str] = []
    feature_count: list[int] = []
    for r, line in enumerate(body):
        line = line.rstrip()
        if not line or line[0].isspace():
            head, rest = "", line
        else:
            parts = line.split(None, 1)
            head, rest = (parts[0], parts[1] if len(parts) == 2 else "")
            if ":" in head:
                head, rest = "", line
        if head:
            labels = head.split(",")
            if any(not label for label in labels):
                raise _error(path, first_line + r, f"empty label in {head[:40]!r}")
            label_tokens.extend(labels)
            label_count.append(len(labels))
        else:
            label_count.append(0)
        tokens = rest.replace(":", " ").split()
        n_pairs = rest.count(":")
        if len(tokens) != 2 * n_pairs:
            bad = next((t for t in rest.split() if t.count(":") != 1), rest.strip())
            raise _error(path, first_line + r, f"feature {bad[:40]!r} is not 'index:value'")
        index_tokens.extend(tokens[0::2])
        value_tokens.extend(tokens[1::2])
        feature_count.append(n_pairs)
    row_of_label = np.repeat(np.arange(n_docs), label_count)
    row_of_feature = np.repeat(np.arange(n_docs), feature_count)
    labels = _integers(label_tokens, row_of_label, path, first_line, "label")
    columns = _integers(index_tokens, row_of_feature, path, first_line, "feature index")
    try:
        values = np.array(value_tokens, dtype=np.float64)
    except ValueError:
        for e, token in enumerate(value_tokens):
            try:
                float(token)
            except ValueError:
                raise _error(path, first_line + int(row_of_feature[e]), f"feature value {token!r} is not a number") from None
        raise
    _check_range(labels, n_labels, row_of_label, path, first_line, "label", "labels")
    _check_range(columns, n_features, row_of_feature, path, first_line, "feature index", "features")
    if not np.all(np.isfinite(values)):
        e = int(np.flatnonzero(~np.isfinite(values))[0])
        raise _error(path, first_line + int(row_of_feature[e]), f"feature value {value_tokens[e]!r} is not finite")
    key = row_of_feature * max(n_features, 1) + columns
    order = np.argsort(key, kind="stable")
    duplicate = np.flatnonzero(np.diff(key[order]) == 0)
    if len(duplicate):
        e = int(order[duplicate[0]])
        raise _error(path, first_line + int(row_of_feature[e]), f"feature {columns[e]} appears twice")
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(feature_count, out=indptr[1:])
    features = sp.csr_matrix((values, columns, indptr), shape=(n_docs, n_features))
    features.sort_indices()
    label_indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(label_count, out=label_indptr[1:])
    label_matrix = sp.csr_matrix((np.ones(len(labels), dtype=bool), labels, label_indptr), shape=(n_docs, n_labels))
    label_matrix.sum_duplicates()  # a label listed twice on a line counts once
    label_matrix.sort_indices()
    return SparseFile(features, label_matrix)


def _integers(tokens: list[str], row_of: np.ndarray, path: Path, first_line: int, what: str) -> np.ndarray:
    try:
        return np.array(tokens, dtype=np.int64) if tokens else np.zeros(0, dtype=np.int64)
    except ValueError:
        for e, token in enumerate(tokens):
            if not token.strip().isdigit():
                raise _error(path, first_line + int(row_of[e]), f"{what} {token!r} is not a non-negative integer") from None
        raise


def _check_range(values: np.ndarray, bound: int, row_of: np.ndarray, path: Path, first_line: int, what: str,
                 declared: str) -> None:
    bad = (values < 0) | (values >= bound)
    if np.any(bad):
        e = int(np.flatnonzero(bad)[0])
        raise _error(path, first_line + int(row_of[e]), f"{what} {values[e]} outside the {bound} {declared} of "
                                                        "the header (indices are 0-based)")


def read_split(path: Path, column: int, n_docs: int) -> np.ndarray:
    """0-based rows of one split variant (``column``) of a split file (1-based row numbers)."""
    rows: list[list[str]] = []
    line_of: list[int] = []
    for i, line in enumerate(Path(path).read_text().splitlines()):
        if line.strip():
            rows.append(line.split())
            line_of.append(i + 1)
    if not rows:
        raise _error(path, None, "the split file is empty")
    width = len(rows[0])
    for r, tokens in enumerate(rows):
        if len(tokens) != width:
            raise _error(path, line_of[r], f"{len(tokens)} columns, the first line has {width}")
    if column >= width:
        raise _error(path, None, f"split_index {column} but the file has {width} column(s) (0..{width - 1})")
    picked = [tokens[column] for tokens in rows]
    for r, token in enumerate(picked):
        if not token.isdigit():
            raise _error(path, line_of[r], f"row number {token!r} is not a positive integer")
    index = np.array(picked, dtype=np.int64)
    bad = (index < 1) | (index > n_docs)
    if np.any(bad):
        r = int(np.flatnonzero(bad)[0])
        raise _error(path, line_of[r], f"row number {index[r]} outside 1..{n_docs} (1-based rows of the data file)")
    order = np.argsort(index, kind="stable")
    duplicate = np.flatnonzero(np.diff(index[order]) == 0)
    if len(duplicate):
        r = int(order[duplicate[0] + 1])
        raise _error(path, line_of[r], f"row number {index[r]} appears twice in column {column}")
    return index - 1
