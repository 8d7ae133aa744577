"""The design matrix of an ARFF table's feature attributes, fitted on training rows (one-hot nominal
attributes, mean / most frequent value imputation): :class:`FeatureEncoder`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .arff import NOMINAL, NUMERIC, Attribute


def positive_value(attribute: Attribute) -> int:
    """Code of the value a two-valued nominal attribute encodes as 1: the larger number when both values are
    numbers (``{0,1}`` -> ``1``), the yes/true one of yes/no-like pairs, else the second declared value."""
    first, second = attribute.values
    try:
        return int(float(second) > float(first))
    except ValueError:
        pass
    for code, value in enumerate(attribute.values):
        if value.lower() in ("yes", "y", "true", "t"):
            return code
    return 1


@dataclass
class FeatureEncoder:
    """A numeric design matrix from ARFF attributes, fitted on the training rows (scikit-learn style).

    * numeric: one column, missing values -> mean of the training rows (0 when all are missing);
    * nominal with two values: one 0/1 column (1 = :func:`positive_value`; named ``attr`` for numeric
      ``{0,1}``, else ``attr=value``); more values: one indicator column per value (``attr=value``);
      missing values -> the most frequent value of the training rows (ties: first declared).

    A sparse input gives a CSR output (one-hot columns of nominal attributes with more than two values, or
    whose value 1 is not code 1, are dense columns inside it); a dense input a dense float64 array.
    """

    attributes: tuple[Attribute, ...]
    fill_: np.ndarray = field(init=False, repr=False)
    feature_names_: np.ndarray = field(init=False, repr=False)
    n_all_missing_: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        unsupported = [a.name for a in self.attributes if a.kind not in (NUMERIC, NOMINAL)]
        if unsupported:
            raise ValueError(f"attributes {unsupported[:5]} are not numeric or nominal and cannot be features")
        self.attributes = tuple(self.attributes)
        self._copy = np.array([a.kind == NUMERIC or (len(a.values) == 2 and positive_value(a) == 1)
                               for a in self.attributes], dtype=bool)

    def fit(self, values: np.ndarray | sp.csr_matrix) -> "FeatureEncoder":
        n_rows = values.shape[0]
        n_attr = len(self.attributes)
        if values.shape[1] != n_attr:
            raise ValueError(f"{values.shape[1]} columns for {n_attr} attributes")
        if sp.issparse(values):
            coo = values.tocoo()
            col, val = coo.col, coo.data
        else:
            col = np.tile(np.arange(n_attr), n_rows)
            val = values.ravel()
        present = ~np.isnan(val)
        n_missing = np.bincount(col[~present], minlength=n_attr)
        n_present = n_rows - n_missing
        total = np.bincount(col[present], weights=val[present], minlength=n_attr)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n_present > 0, total / np.maximum(n_present, 1), 0.0)
        fill = mean.copy()
        nominal = [j for j, a in enumerate(self.attributes) if a.kind == NOMINAL]
        if nominal:
            width = max(len(self.attributes[j].values) for j in nominal)
            is_nominal = np.zeros(n_attr, dtype=bool)
            is_nominal[nominal] = True
            keep = present & is_nominal[col]
            counts = np.bincount(col[keep] * width + val[keep].astype(np.int64), minlength=n_attr * width)
            counts = counts.reshape(n_attr, width)
            if sp.issparse(values):  # implicit entries are code 0
                stored = np.bincount(col, minlength=n_attr)
                counts[:, 0] += n_rows - stored
            fill[nominal] = np.argmax(counts[nominal], axis=1)
        self.n_all_missing_ = int(np.count_nonzero((n_present == 0) & (n_rows > 0)))
        self.fill_ = fill
        names: list[str] = []
        for attribute in self.attributes:
            if attribute.kind == NUMERIC:
                names.append(attribute.name)
            elif len(attribute.values) == 2:
                positive = positive_value(attribute)
                numeric_01 = sorted(attribute.values) == ["0", "1"]
                names.append(attribute.name if numeric_01 else f"{attribute.name}={attribute.values[positive]}")
            else:
                names.extend(f"{attribute.name}={value}" for value in attribute.values)
        self.feature_names_ = np.array(names, dtype=str)
        return self

    def transform(self, values: np.ndarray | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
        n_rows = values.shape[0]
        copy_cols = np.flatnonzero(self._copy)
        widths = np.array([1 if self._copy[j] or len(a.values) == 2 else len(a.values)
                           for j, a in enumerate(self.attributes)], dtype=np.int64)
        start = np.concatenate([[0], np.cumsum(widths)])
        n_out = int(start[-1])
        expanded = [j for j in range(len(self.attributes)) if not self._copy[j]]
        if sp.issparse(values):
            csc = values.tocsc()
            block = csc[:, copy_cols]
            block.data = np.where(np.isnan(block.data), self.fill_[copy_cols][np.repeat(
                np.arange(len(copy_cols)), np.diff(block.indptr))], block.data)
            parts = [block]
            positions = [start[copy_cols]]
            if expanded:
                dense = np.asarray(csc[:, expanded].toarray())
                parts.append(sp.csc_matrix(self._expand(dense, expanded)))
                positions.append(np.concatenate([np.arange(start[j], start[j + 1]) for j in expanded]))
            stacked = sp.hstack(parts, format="csc")
            order = np.empty(n_out, dtype=np.int64)
            order[np.concatenate(positions)] = np.arange(n_out)
            out = stacked[:, order].tocsr()
            out.eliminate_zeros()
            out.sort_indices()
            return out
        out = np.empty((n_rows, n_out))
        block = values[:, copy_cols]
        out[:, start[copy_cols]] = np.where(np.isnan(block), self.fill_[copy_cols][None, :], block)
        if expanded:
            dense = self._expand(values[:, expanded], expanded)
            out[:, np.concatenate([np.arange(start[j], start[j + 1]) for j in expanded])] = dense
        return out

    def _expand(self, codes: np.ndarray, attributes: list[int]) -> np.ndarray:
        """Indicator columns of the attributes that are not copied (codes: rows x len(attributes))."""
        columns = []
        for c, j in enumerate(attributes):
            code = np.where(np.isnan(codes[:, c]), self.fill_[j], codes[:, c])
            attribute = self.attributes[j]
            if len(attribute.values) == 2:
                columns.append((code == positive_value(attribute))[:, None])
            else:
                columns.append(code[:, None] == np.arange(len(attribute.values))[None, :])
        return np.hstack(columns).astype(np.float64) if columns else np.empty((codes.shape[0], 0))
