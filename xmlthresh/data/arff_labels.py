"""Label matrices from 0/1 label attributes of an ARFF table (Mulan: nominal ``{0,1}`` or numeric 0/1).

Kept apart from the reader (:mod:`xmlthresh.data.arff`) and the feature encoding
(:mod:`xmlthresh.data.feature_encoding`): labels are read, not encoded, and a missing label value is counted
and read as "not relevant" instead of being imputed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.arff import NOMINAL, NUMERIC, Attribute, format_error


def binary_label_matrix(values: np.ndarray | sp.csr_matrix, attributes: tuple[Attribute, ...] | list[Attribute],
                        source: str = "", row_line: np.ndarray | None = None) -> tuple[sp.csr_matrix, int]:
    """0/1 label attributes (nominal declaring ``1``, or numeric 0/1) -> (CSR bool matrix, missing count).

    A missing label value counts as "not relevant" and is counted. A nominal label must declare the value
    ``1``; a numeric one must hold only 0 and 1 (else :class:`ArffFormatError` with the line).
    """
    positive = np.empty(len(attributes))
    for c, attribute in enumerate(attributes):
        if attribute.kind == NOMINAL:
            if "1" not in attribute.values:
                raise format_error(source, attribute.line, f"label attribute {attribute.name!r} "
                                                     f"{{{','.join(attribute.values)}}} has no value '1'")
            positive[c] = attribute.values.index("1")
        elif attribute.kind == NUMERIC:
            positive[c] = 1.0
        else:
            raise format_error(source, attribute.line, f"label attribute {attribute.name!r} is of type {attribute.kind}; "
                                                 "labels must be nominal {0,1} or numeric 0/1")
    numeric = np.array([a.kind == NUMERIC for a in attributes], dtype=bool)
    if sp.issparse(values):
        coo = values.tocoo()
        row, col, val = coo.row, coo.col, coo.data
        n_missing = int(np.count_nonzero(np.isnan(val)))
        zero_positive = np.flatnonzero(positive == 0)  # value 1 declared first: implicit entries are relevant
        if len(zero_positive):
            dense = values.tocsc()[:, zero_positive].toarray()
            extra_row, extra_c = np.nonzero(dense == 0)  # implicit or explicit code 0 (NaN stays missing)
            keep = ~np.isin(col, zero_positive)
            row = np.concatenate([row[keep], extra_row])
            col = np.concatenate([col[keep], zero_positive[extra_c]])
            val = np.concatenate([val[keep], np.zeros(len(extra_row))])
    else:
        row, col = np.indices(values.shape).reshape(2, -1)
        val = values.ravel()
        n_missing = int(np.count_nonzero(np.isnan(val)))
    missing = np.isnan(val)
    bad = numeric[col] & ~missing & (val != 0) & (val != 1)
    if np.any(bad):
        e = int(np.flatnonzero(bad)[0])
        line = int(row_line[row[e]]) if row_line is not None else None
        raise format_error(source, line, f"label attribute {attributes[col[e]].name!r} has value {val[e]:g}; "
                                   "labels must be 0 or 1")
    hit = ~missing & (val == positive[col])
    labels = sp.csr_matrix((np.ones(int(hit.sum()), dtype=bool), (row[hit], col[hit])),
                           shape=values.shape, dtype=bool)
    labels.sum_duplicates()
    labels.sort_indices()
    return labels, n_missing
