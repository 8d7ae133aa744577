"""``synthetic``: ranked lists of a simulated ranker, generated in-process (the embedded default data set).

Labels get power-law frequencies; each label's relevant documents are drawn at random; the ranker scores a
document by ``signal * relevant + noise`` (standard normal noise, one independent draw per label and
document) and ranks by that score. ``list_length`` < ``num_docs`` truncates every list like an extreme
classifier that only returns its top documents. Fully seeded: the same parameters give the same lists.
"""

from __future__ import annotations

import numpy as np

from xmlthresh._util import detmath
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.validation import check_int, check_memory, check_number
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS


#: peak memory per (document, label) cell of the generator's dense matrices (uniforms, their sorted copy, the
#: relevance, the scores and their argsort; measured: 33.1-33.4 bytes per cell at 100 x 80000 and 1000 x 8000;
#: rounded up)
BYTES_PER_CELL = 40


def generate_ranked_lists(
    n_labels: int = 200,
    num_docs: int = 2000,
    signal: float = 1.5,
    zipf_exponent: float = 1.1,
    max_label_share: float = 0.2,
    list_length: int | None = None,
    seed: int = 0,
    include_predict_all: bool = True,
    name: str = "synthetic",
) -> RankedLists:
    """Simulated ranked lists (vectorised: one (num_docs x n_labels) score matrix, one argsort)."""
    if n_labels < 1 or num_docs < 1:
        raise ValueError(f"need n_labels >= 1 and num_docs >= 1, got {n_labels} and {num_docs}")
    if list_length is not None and not 1 <= list_length <= num_docs:
        raise ValueError(f"list_length must lie in [1, num_docs = {num_docs}], got {list_length}")
    rng = np.random.default_rng(seed)
    rank_of_label = rng.permutation(n_labels) + 1
    share = max_label_share * detmath.power(rank_of_label.astype(float), -zipf_exponent)  # same bits on every CPU
    n_relevant = np.maximum(1, np.round(share * num_docs)).astype(np.int64)
    # relevant[d, k]: document d is relevant to label k (exactly n_relevant[k] documents per label)
    noise_for_choice = rng.random((num_docs, n_labels))
    threshold = np.sort(noise_for_choice, axis=0)[n_relevant - 1, np.arange(n_labels)]
    relevant = noise_for_choice <= threshold
    scores = signal * relevant + rng.standard_normal((num_docs, n_labels))
    order = np.argsort(-scores, axis=0, kind="stable")
    length = num_docs if list_length is None else list_length
    ranked_relevance = np.take_along_axis(relevant, order[:length], axis=0).T  # (labels, positions)
    label_of, position = np.nonzero(ranked_relevance)
    label_ptr = np.zeros(n_labels + 1, dtype=np.int64)
    np.cumsum(np.bincount(label_of, minlength=n_labels), out=label_ptr[1:])
    return RankedLists(
        relevant_rank=position + 1,
        label_ptr=label_ptr,
        list_length=np.full(n_labels, length),
        n_relevant=n_relevant,
        num_docs=num_docs,
        include_predict_all=include_predict_all,
        name=name,
    )


@DATASETS.register("synthetic")
class SyntheticRankedLists(Dataset):
    """Seeded simulated ranker output; see :func:`generate_ranked_lists` for the parameters."""

    def __init__(self, name: str = "synthetic", n_labels: int = 200, num_docs: int = 2000, signal: float = 1.5,
                 zipf_exponent: float = 1.1, max_label_share: float = 0.2, list_length: int | None = None,
                 seed: int = 0, include_predict_all: bool = True, first_n_labels: int | None = None):
        super().__init__(name=name, include_predict_all=include_predict_all, first_n_labels=first_n_labels)
        self.n_labels = n_labels
        self.num_docs = num_docs
        self.signal = signal
        self.zipf_exponent = zipf_exponent
        self.max_label_share = max_label_share
        self.list_length = list_length
        self.seed = seed

    def _check_params(self) -> None:
        super()._check_params()
        n_labels = check_int("dataset.n_labels", self.n_labels, 1)
        num_docs = check_int("dataset.num_docs", self.num_docs, 1)
        check_int("dataset.list_length", self.list_length, 1, num_docs, optional=True)
        check_int("dataset.seed", self.seed)
        check_number("dataset.signal", self.signal)
        check_number("dataset.zipf_exponent", self.zipf_exponent, 0)
        check_number("dataset.max_label_share", self.max_label_share, 0, 1, strict_minimum=True)
        check_memory(f"dataset.n_labels x dataset.num_docs = {n_labels:,} x {num_docs:,} cells x {BYTES_PER_CELL} bytes",
                     n_labels * num_docs * BYTES_PER_CELL,
                     "lower them (synthetic_large draws millions of labels without a documents x labels matrix)")

    def _load(self) -> RankedLists:
        return generate_ranked_lists(
            n_labels=self.n_labels, num_docs=self.num_docs, signal=self.signal, zipf_exponent=self.zipf_exponent,
            max_label_share=self.max_label_share, list_length=self.list_length, seed=self.seed,
            include_predict_all=self.include_predict_all, name=self.name,
        )
