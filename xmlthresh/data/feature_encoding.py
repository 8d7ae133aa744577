"""The design matrix of an ARFF table's feature attributes, built with scikit-learn and fitted on training rows.

Input: the attribute matrix of :class:`xmlthresh.data.arff.ArffTable` (numbers, nominal value codes, NaN for
a missing value; dense, or CSR for a sparse file). Per attribute:

* numeric: the value; a missing one -> mean of the training rows (``SimpleImputer(strategy="mean")``; 0 when
  every training row misses it);
* nominal with two values: one 0/1 column for :func:`positive_value` (named ``attr`` for numeric ``{0,1}``,
  else ``attr=value``); with another number of values: one indicator column per value (``attr=value``,
  ``OneHotEncoder`` with the declared values as categories, so a value absent from the training rows still
  gets its column); a missing value -> the most frequent value of the training rows, ties to the first
  declared (:class:`~xmlthresh.data.code_imputer.MostFrequentCode`: SimpleImputer's "most_frequent" on the
  codes, which picks the smallest, counted for all columns at once).

One :class:`~sklearn.compose.ColumnTransformer` does the work; its output columns are put back in attribute
order. A sparse input gives a CSR output (indicator columns of nominal attributes other than a 0/1 code are
computed densely and stored sparsely), a dense input a dense float64 array.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.arff import NOMINAL, NUMERIC, Attribute

if TYPE_CHECKING:
    from sklearn.compose import ColumnTransformer


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


def _indicator_of_zero(codes: np.ndarray) -> np.ndarray:
    """1.0 where a 0/1 code is 0, else 0.0."""
    return 1.0 - np.asarray(codes, dtype=np.float64)


def _to_dense(values: np.ndarray | sp.spmatrix) -> np.ndarray:
    """OneHotEncoder takes dense input only; the few nominal columns it encodes are densified first."""
    return values.toarray() if sp.issparse(values) else values


@dataclass
class FeatureEncoder:
    """Numeric design matrix from ARFF feature attributes (see the module docstring), scikit-learn style:
    ``fit`` on the training rows' attribute matrix, ``transform`` any split's."""

    attributes: tuple[Attribute, ...]
    transformer_: "ColumnTransformer" = field(init=False, repr=False)
    feature_names_: np.ndarray = field(init=False, repr=False)
    n_all_missing_: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        unsupported = [a.name for a in self.attributes if a.kind not in (NUMERIC, NOMINAL)]
        if unsupported:
            raise ValueError(f"attributes {unsupported[:5]} are not numeric or nominal and cannot be features")
        self.attributes = tuple(self.attributes)

    def _groups(self) -> dict[str, list[int]]:
        """Attribute indices by encoding: numeric; 0/1 codes (two values, value 1 has code 1: the code is the
        indicator); two values whose positive one has code 0; other nominal attributes (one-hot)."""
        groups: dict[str, list[int]] = {"numeric": [], "codes": [], "flipped": [], "one_hot": []}
        for j, attribute in enumerate(self.attributes):
            if attribute.kind == NUMERIC:
                groups["numeric"].append(j)
            elif len(attribute.values) == 2:
                groups["codes" if positive_value(attribute) == 1 else "flipped"].append(j)
            else:
                groups["one_hot"].append(j)
        return groups

    def _build(self, sparse: bool) -> tuple["ColumnTransformer", np.ndarray]:
        """The transformer and, for each of its output columns, the column it has in attribute order.
        scikit-learn is imported here, not with the module: a load from the feature cache never needs it."""
        from sklearn.compose import ColumnTransformer
        from sklearn.impute import SimpleImputer
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

        from xmlthresh.data.code_imputer import MostFrequentCode

        groups = self._groups()
        width = [1 if a.kind == NUMERIC or len(a.values) == 2 else len(a.values) for a in self.attributes]
        start = np.concatenate([[0], np.cumsum(width)]).astype(np.int64)
        steps = []
        if groups["numeric"]:
            steps.append(("numeric", SimpleImputer(strategy="mean", keep_empty_features=True), groups["numeric"]))
        if groups["codes"]:
            steps.append(("codes", MostFrequentCode(), groups["codes"]))
        if groups["flipped"]:
            # the indicator of code 0 is 1 - code (what a one-hot encoding dropping code 1 gives, without
            # OneHotEncoder's per-column loop: 1,186 such attributes in genbase)
            steps.append(("flipped", make_pipeline(FunctionTransformer(_to_dense, accept_sparse=True),
                                                   MostFrequentCode(), FunctionTransformer(_indicator_of_zero)),
                          groups["flipped"]))
        if groups["one_hot"]:
            categories = [np.arange(float(len(self.attributes[j].values))) for j in groups["one_hot"]]
            encoder = OneHotEncoder(categories=categories, sparse_output=False, dtype=np.float64)
            steps.append(("one_hot", make_pipeline(FunctionTransformer(_to_dense, accept_sparse=True),
                                                   MostFrequentCode(), encoder), groups["one_hot"]))
        position = np.concatenate([np.arange(start[j], start[j + 1]) for _, _, columns in steps for j in columns]
                                  or [np.zeros(0, dtype=np.int64)])
        return ColumnTransformer(steps, remainder="drop", sparse_threshold=1.0 if sparse else 0.0), position

    def fit(self, values: np.ndarray | sp.csr_matrix) -> "FeatureEncoder":
        """Learn the imputation values from the training rows ``values`` (rows x attributes)."""
        n_rows, n_attr = values.shape
        if n_attr != len(self.attributes):
            raise ValueError(f"{n_attr} columns for {len(self.attributes)} attributes")
        transformer, position = self._build(sp.issparse(values))
        self.transformer_ = transformer.fit(values)
        self._order = np.argsort(position)
        data = values.tocoo() if sp.issparse(values) else None
        n_missing = (np.bincount(data.col[np.isnan(data.data)], minlength=n_attr) if data is not None
                     else np.count_nonzero(np.isnan(values), axis=0))
        self.n_all_missing_ = int(np.count_nonzero(n_missing == n_rows)) if n_rows else 0
        names: list[str] = []
        for attribute in self.attributes:
            if attribute.kind == NUMERIC:
                names.append(attribute.name)
            elif len(attribute.values) == 2:
                numeric_01 = sorted(attribute.values) == ["0", "1"]
                names.append(attribute.name if numeric_01 else f"{attribute.name}={attribute.values[positive_value(attribute)]}")
            else:
                names.extend(f"{attribute.name}={value}" for value in attribute.values)
        self.feature_names_ = np.array(names, dtype=str)
        return self

    def transform(self, values: np.ndarray | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
        """The design matrix of ``values`` (rows x attributes): CSR for a sparse input, else dense float64."""
        out = self.transformer_.transform(values)
        if sp.issparse(values):
            out = sp.csr_matrix(out, dtype=np.float64)[:, self._order].tocsr()
            out.eliminate_zeros()
            out.sort_indices()
            return out
        out = out.toarray() if sp.issparse(out) else out
        return np.ascontiguousarray(out[:, self._order], dtype=np.float64)
