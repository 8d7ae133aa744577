"""``synthetic_xmc``: a simulated extreme-classification ranker's scores (validation and test), as ScoreData.

The generative model, fully seeded (same parameters -> same data):

* **labels** -- label frequencies follow a power law: a random permutation gives every label a popularity
  rank r and a draw probability proportional to ``r ** -zipf_exponent``. A document has ``1 + Poisson(
  labels_per_doc - 1)`` label draws from that distribution; repeated draws collapse, so head labels make
  documents a little smaller than ``labels_per_doc`` on average.
* **ranker** -- every relevant (document, label) pair scores ``signal + N(0, 1)``, every irrelevant pair
  ``N(0, 1)``: ``signal`` is the ranker's quality (0 = random, 3 = strong).
  - ``top_k = None``: dense scores, every (document, label) pair scored (at most ``MAX_DENSE_CELLS`` per split).
  - ``top_k = k``: a retrieval ranker. Its candidates for a document are its true labels plus
    ``n_distractors`` other labels (a share ``distractor_popularity`` drawn by label popularity, the rest
    uniformly); the k best-scored candidates are kept as a sparse CSR row. A dense (m x n) matrix never
    exists: memory is O(m * (labels_per_doc + n_distractors)), generated in blocks of documents.

Validation and test are independent draws of ``num_validation_docs`` (default ``num_docs``) and ``num_docs``
documents over the same labels. 10^5 labels x 10^5 documents with top-20 scores take about a second per split.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xmlthresh._util import detmath
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.validation import check_int, check_memory, check_number
from xmlthresh.datasets.registry import DATASETS
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.synthetic_xmc_posterior import XmcPopulation, popularity_weights, xmc_label_prior
from xmlthresh._util.jit import cached_njit

#: dense scores (top_k = None) of more (document, label) cells than this per split are refused
MAX_DENSE_CELLS = 50_000_000
#: documents generated per block; part of the seeding scheme (changing it changes the data)
BLOCK_DOCS = 1 << 15
#: peak memory of the generator (both splits), measured: per document 525 bytes with top_k = 20 (and 40
#: distractors), 1868 with top_k = 80 (160), per label about 92 bytes (10^6 labels x 10^4 documents: 98 MB),
#: dense scores 8.5 bytes per cell of both splits (2000 labels x 2 x 20000 documents: 683 MB). The models below
#: are above each: per document 8 bytes per scored candidate (top_k + n_distractors), 16 per label drawn and
#: 48; per label 128; per dense cell 16
BYTES_PER_CANDIDATE, BYTES_PER_DRAW, BYTES_PER_DOC, BYTES_PER_LABEL, BYTES_PER_DENSE_CELL = 8, 16, 48, 128, 16
_SPLIT_STREAM = {"validation": 1, "test": 2}
#: candidate lists up to this length are sorted by insertion (fast for the usual few dozen)
_INSERTION_SORT_MAX = 96


def generate_xmc_scores(
    n_labels: int = 10_000,
    num_docs: int = 10_000,
    num_validation_docs: int | None = None,
    labels_per_doc: float = 5.0,
    zipf_exponent: float = 1.1,
    signal: float = 2.0,
    top_k: int | None = 20,
    n_distractors: int | None = None,
    distractor_popularity: float = 0.5,
    seed: int = 0,
    name: str = "synthetic_xmc",
) -> ScoreData:
    """Simulated scores and labels of a validation and a test split (see the module docstring)."""
    num_validation_docs = num_docs if num_validation_docs is None else num_validation_docs
    n_distractors = (2 * top_k if top_k is not None else 0) if n_distractors is None else n_distractors
    _check(n_labels, num_docs, num_validation_docs, labels_per_doc, zipf_exponent, top_k, n_distractors,
           distractor_popularity)
    popularity_rank = np.random.default_rng([seed, 0]).permutation(n_labels) + 1
    alias = _alias_table(popularity_weights(popularity_rank, zipf_exponent))
    splits = {}
    for split, m in (("validation", num_validation_docs), ("test", num_docs)):
        scores, labels = _generate_split(m, n_labels, alias, labels_per_doc, signal, top_k, n_distractors,
                                         distractor_popularity, seed, _SPLIT_STREAM[split])
        splits[split] = ScoredSplit(scores, labels, name=f"{name}/{split}")
    test_labels = splits["test"].labels
    info = {
        "generator": "synthetic_xmc", "n_labels": n_labels, "num_docs": num_docs,
        "num_validation_docs": num_validation_docs, "labels_per_doc": labels_per_doc,
        "zipf_exponent": zipf_exponent, "signal": signal, "top_k": top_k, "n_distractors": n_distractors,
        "distractor_popularity": distractor_popularity, "seed": seed,
        "test_mean_labels_per_doc": float(test_labels.nnz / max(1, num_docs)),
        "test_labels_without_documents": int(np.count_nonzero(splits["test"].n_relevant == 0)),
    }
    return ScoreData(name, splits, info)


def _check(n_labels, num_docs, num_validation_docs, labels_per_doc, zipf_exponent, top_k, n_distractors,
           distractor_popularity) -> None:
    if not 1 <= n_labels < 2**31 or num_docs < 1 or num_validation_docs < 1:
        raise ValueError(f"need 1 <= n_labels < 2^31 and num_docs, num_validation_docs >= 1, got {n_labels}, "
                         f"{num_docs}, {num_validation_docs}")
    if not labels_per_doc >= 1:
        raise ValueError(f"labels_per_doc must be >= 1 (every document has a label), got {labels_per_doc}")
    if not zipf_exponent >= 0:
        raise ValueError(f"zipf_exponent must be >= 0, got {zipf_exponent}")
    if top_k is not None and not (isinstance(top_k, (int, np.integer)) and top_k >= 1):
        raise ValueError(f"top_k must be a positive integer or null (dense scores), got {top_k!r}")
    if not (isinstance(n_distractors, (int, np.integer)) and n_distractors >= 0):
        raise ValueError(f"n_distractors must be a non-negative integer, got {n_distractors!r}")
    if not 0.0 <= distractor_popularity <= 1.0:
        raise ValueError(f"distractor_popularity must lie in [0, 1], got {distractor_popularity}")
    if top_k is None and max(num_docs, num_validation_docs) * n_labels > MAX_DENSE_CELLS:
        raise ValueError(f"dense scores of {max(num_docs, num_validation_docs)} documents x {n_labels} labels exceed "
                         f"{MAX_DENSE_CELLS:,} cells; set top_k (sparse top-k scores)")


def _generate_split(m, n_labels, alias, labels_per_doc, signal, top_k, n_distractors, distractor_popularity,
                    seed, stream) -> tuple[np.ndarray | sp.csr_matrix, sp.csr_matrix]:
    label_blocks, score_blocks = [], []
    for block, start in enumerate(range(0, m, BLOCK_DOCS)):
        rows = min(BLOCK_DOCS, m - start)
        rng = np.random.default_rng([seed, stream, block])
        true_ptr, true_label = _draw_labels(rng, rows, n_labels, alias, labels_per_doc)
        label_blocks.append(sp.csr_matrix((np.ones(len(true_label), dtype=bool), true_label.astype(np.int32),
                                           true_ptr.astype(np.int32)), shape=(rows, n_labels)))
        if top_k is None:
            dense = rng.standard_normal((rows, n_labels))
            dense[np.repeat(np.arange(rows), np.diff(true_ptr)), true_label] += signal
            score_blocks.append(dense)
            continue
        true_score = signal + rng.standard_normal(len(true_label))
        distractor_label = rng.integers(0, n_labels, size=(rows, n_distractors))
        by_popularity = rng.random((rows, n_distractors)) < distractor_popularity
        distractor_label[by_popularity] = _draw_by_popularity(rng, int(np.count_nonzero(by_popularity)), alias)
        distractor_score = rng.standard_normal((rows, n_distractors))
        indptr, indices, data = _top_k_candidates(true_ptr, true_label, true_score, distractor_label,
                                                  distractor_score, int(top_k), n_labels)
        # int32 indices (labels < 2^31, a block's nnz < 2^31): half the memory; vstack widens when it must
        score_blocks.append(sp.csr_matrix((data, indices.astype(np.int32), indptr.astype(np.int32)),
                                          shape=(rows, n_labels)))
    labels = sp.vstack(label_blocks, format="csr") if len(label_blocks) > 1 else label_blocks[0]
    if top_k is None:
        scores = np.vstack(score_blocks) if len(score_blocks) > 1 else score_blocks[0]
    else:
        scores = sp.vstack(score_blocks, format="csr") if len(score_blocks) > 1 else score_blocks[0]
    return scores, labels


def _draw_by_popularity(rng: np.random.Generator, size: int, alias: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """``size`` labels drawn with the popularity weights (Walker's alias method: O(1) per draw)."""
    accept, other = alias
    label = rng.integers(0, len(accept), size=size)
    return np.where(rng.random(size) < accept[label], label, other[label])


def _draw_labels(rng, rows, n_labels, alias, labels_per_doc) -> tuple[np.ndarray, np.ndarray]:
    """CSR (indptr, sorted unique label indices) of the relevant labels of ``rows`` documents."""
    n_draws = 1 + rng.poisson(labels_per_doc - 1.0, size=rows)
    draws = _draw_by_popularity(rng, int(n_draws.sum()), alias)
    keys = np.repeat(np.arange(rows, dtype=np.int64), n_draws) * n_labels + draws
    keys.sort()
    keep = np.ones(len(keys), dtype=bool)
    keep[1:] = keys[1:] != keys[:-1]  # repeated draws of a label collapse
    doc, label = np.divmod(keys[keep], n_labels)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc, minlength=rows), out=indptr[1:])
    return indptr, label


@cached_njit
def _alias_table(weight):
    """Walker/Vose alias table of the distribution ``weight`` (positive): draw j uniformly, keep it with
    probability accept[j], else take other[j]."""
    n = len(weight)
    scaled = weight * (n / weight.sum())
    accept = np.ones(n, dtype=np.float64)
    other = np.arange(n)
    small = np.empty(n, dtype=np.int64)
    large = np.empty(n, dtype=np.int64)
    n_small = 0
    n_large = 0
    for j in range(n):
        if scaled[j] < 1.0:
            small[n_small] = j
            n_small += 1
        else:
            large[n_large] = j
            n_large += 1
    while n_small > 0 and n_large > 0:
        n_small -= 1
        s = small[n_small]
        g = large[n_large - 1]
        accept[s] = scaled[s]
        other[s] = g
        scaled[g] = (scaled[g] + scaled[s]) - 1.0
        if scaled[g] < 1.0:
            n_large -= 1
            small[n_small] = g
            n_small += 1
    return accept, other


@cached_njit
def _top_k_candidates(true_ptr, true_label, true_score, distractor_label, distractor_score, k, n_labels):
    """Per document: candidates = its true labels plus its distractors not already among them; keep the k
    best-scored. Returns CSR (indptr, label index sorted within a row, score)."""
    n_docs = len(true_ptr) - 1
    n_distractors = distractor_label.shape[1]
    seen_in_doc = np.full(n_labels, -1, dtype=np.int64)
    max_true = 0
    for d in range(n_docs):
        max_true = max(max_true, true_ptr[d + 1] - true_ptr[d])
    cand_label = np.empty(max_true + n_distractors, dtype=np.int64)
    cand_score = np.empty(max_true + n_distractors, dtype=np.float64)
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    out_label = np.empty(n_docs * k, dtype=np.int64)
    out_score = np.empty(n_docs * k, dtype=np.float64)
    nnz = 0
    for d in range(n_docs):
        count = 0
        for j in range(true_ptr[d], true_ptr[d + 1]):
            seen_in_doc[true_label[j]] = d
            cand_label[count] = true_label[j]
            cand_score[count] = true_score[j]
            count += 1
        for j in range(n_distractors):
            label = distractor_label[d, j]
            if seen_in_doc[label] != d:
                seen_in_doc[label] = d
                cand_label[count] = label
                cand_score[count] = distractor_score[d, j]
                count += 1
        # candidates by decreasing score, stable (ties keep true labels first)
        if count <= _INSERTION_SORT_MAX:  # the usual few dozen: insertion sort, no allocation
            for i in range(1, count):
                label, score = cand_label[i], cand_score[i]
                j = i - 1
                while j >= 0 and cand_score[j] < score:
                    cand_label[j + 1] = cand_label[j]
                    cand_score[j + 1] = cand_score[j]
                    j -= 1
                cand_label[j + 1] = label
                cand_score[j + 1] = score
        else:
            order = np.argsort(-cand_score[:count], kind="mergesort")
            cand_label[:count] = cand_label[:count][order]
            cand_score[:count] = cand_score[:count][order]
        keep = min(k, count)
        # the kept ones in label order (sorted CSR indices)
        for i in range(keep):
            label, score = cand_label[i], cand_score[i]
            j = nnz + i - 1
            while j >= nnz and out_label[j] > label:
                out_label[j + 1] = out_label[j]
                out_score[j + 1] = out_score[j]
                j -= 1
            out_label[j + 1] = label
            out_score[j + 1] = score
        nnz += keep
        indptr[d + 1] = nnz
    return indptr, out_label[:nnz].copy(), out_score[:nnz].copy()


@DATASETS.register("synthetic_xmc")
class SyntheticXMC(Dataset):
    """Seeded simulated extreme-classification scores; see :func:`generate_xmc_scores` for the parameters."""

    def __init__(self, name: str = "synthetic_xmc", n_labels: int = 10_000, num_docs: int = 10_000,
                 num_validation_docs: int | None = None, labels_per_doc: float = 5.0, zipf_exponent: float = 1.1,
                 signal: float = 2.0, top_k: int | None = 20, n_distractors: int | None = None,
                 distractor_popularity: float = 0.5, seed: int = 0, include_predict_all: bool = True,
                 first_n_labels: int | None = None):
        super().__init__(name=name, include_predict_all=include_predict_all, first_n_labels=first_n_labels)
        self.n_labels = n_labels
        self.num_docs = num_docs
        self.num_validation_docs = num_validation_docs
        self.labels_per_doc = labels_per_doc
        self.zipf_exponent = zipf_exponent
        self.signal = signal
        self.top_k = top_k
        self.n_distractors = n_distractors
        self.distractor_popularity = distractor_popularity
        self.seed = seed

    def _check_params(self) -> None:
        super()._check_params()
        n_labels = check_int("dataset.n_labels", self.n_labels, 1, 2**31 - 1)
        num_docs = check_int("dataset.num_docs", self.num_docs, 1)
        validation = check_int("dataset.num_validation_docs", self.num_validation_docs, 1, optional=True)
        top_k = check_int("dataset.top_k", self.top_k, 1, optional=True)
        distractors = check_int("dataset.n_distractors", self.n_distractors, 0, optional=True)
        check_int("dataset.seed", self.seed)
        per_doc = check_number("dataset.labels_per_doc", self.labels_per_doc, 1)
        check_number("dataset.zipf_exponent", self.zipf_exponent, 0)
        check_number("dataset.signal", self.signal)
        check_number("dataset.distractor_popularity", self.distractor_popularity, 0, 1)
        docs = num_docs + (num_docs if validation is None else validation)
        if top_k is None:
            check_memory(f"dense scores of {docs:,} documents (both splits) x dataset.n_labels = {n_labels:,} x "
                         f"{BYTES_PER_DENSE_CELL} bytes", docs * n_labels * BYTES_PER_DENSE_CELL,
                         "set dataset.top_k (sparse top-k scores) or lower the sizes")
            return
        candidates = top_k + (2 * top_k if distractors is None else distractors)
        need = docs * (BYTES_PER_CANDIDATE * candidates + BYTES_PER_DRAW * per_doc + BYTES_PER_DOC) + \
            n_labels * BYTES_PER_LABEL
        check_memory(f"{docs:,} documents (both splits) x {candidates:,} scored candidates (top_k + n_distractors) "
                     f"and {n_labels:,} labels", need, "lower dataset.num_docs, dataset.top_k or dataset.n_labels")

    def _load(self) -> ScoreData:
        return generate_xmc_scores(
            n_labels=self.n_labels, num_docs=self.num_docs, num_validation_docs=self.num_validation_docs,
            labels_per_doc=self.labels_per_doc, zipf_exponent=self.zipf_exponent, signal=self.signal,
            top_k=self.top_k, n_distractors=self.n_distractors, distractor_popularity=self.distractor_popularity,
            seed=self.seed, name=self.name,
        )

    def population(self):
        """The closed-form population model (:class:`xmlthresh.datasets.synthetic_xmc_posterior.XmcPopulation`) of dense scores;
        None for top-k scores (the top-k selection couples labels: no closed form)."""
        if self.top_k is not None:
            return None

        prior = xmc_label_prior(int(self.n_labels), float(self.labels_per_doc), float(self.zipf_exponent),
                                int(self.seed))
        if self.first_n_labels is not None:
            prior = prior[: int(self.first_n_labels)]
        return XmcPopulation(prior, float(self.signal))
