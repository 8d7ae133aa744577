"""Imputation of nominal value codes by the most frequent code of each column, for all columns at once.

``SimpleImputer(strategy="most_frequent")`` computes the same values but calls ``scipy.stats.mode`` once per
column, which adds up on data sets with thousands of attributes (bibtex has 1,836 binary ones); here one
``bincount`` counts every column. Imported only when features are encoded (it imports scikit-learn).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin


class MostFrequentCode(TransformerMixin, BaseEstimator):
    """A missing value (NaN) becomes its column's most frequent code among the fitted rows (codes are
    non-negative integers stored as floats; ties go to the smallest code, as SimpleImputer's; a column
    missing in every row gets 0). Dense arrays and CSR matrices (implicit zeros are code 0) are accepted;
    a CSR input gives a CSR output."""

    def fit(self, values: np.ndarray | sp.spmatrix, y: object = None) -> "MostFrequentCode":
        n_rows, n_columns = values.shape
        if sp.issparse(values):
            coo = values.tocoo()
            column, value = coo.col.astype(np.int64), coo.data
            implicit_zeros = n_rows - np.bincount(column, minlength=n_columns)
        else:
            dense = np.asarray(values, dtype=np.float64)
            column = np.broadcast_to(np.arange(n_columns, dtype=np.int64), dense.shape).ravel()
            value = dense.ravel()
            implicit_zeros = np.zeros(n_columns, dtype=np.int64)
        present = ~np.isnan(value)
        column, code = column[present], value[present].astype(np.int64)
        width = int(code.max()) + 1 if code.size else 1
        counts = np.bincount(column * width + code, minlength=n_columns * width).reshape(n_columns, width)
        counts[:, 0] += implicit_zeros
        self.mode_ = np.argmax(counts, axis=1).astype(np.float64)  # argmax: the smallest of equal counts
        self.n_features_in_ = n_columns
        return self

    def transform(self, values: np.ndarray | sp.spmatrix) -> np.ndarray | sp.csr_matrix:
        if sp.issparse(values):
            out = sp.csr_matrix(values, dtype=np.float64, copy=True)
            missing = np.isnan(out.data)
            out.data[missing] = self.mode_[out.indices[missing]]
            return out
        out = np.array(values, dtype=np.float64)
        rows, columns = np.nonzero(np.isnan(out))
        out[rows, columns] = self.mode_[columns]
        return out
