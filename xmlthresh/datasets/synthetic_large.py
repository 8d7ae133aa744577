"""``synthetic_large``: ranked lists of a simulated extreme classifier at any scale, drawn directly.

:mod:`.synthetic` scores every (document, label) pair; at 10^6 labels that matrix cannot exist. This
generator draws what the threshold problem needs -- s_k and the ranks of the relevant documents inside each
truncated list -- and never builds anything of size documents x labels: time and memory are O(n_labels +
number of relevant documents drawn), vectorised numpy in blocks of labels (no Python loop over labels).
10^6 labels with 10^7 relevant documents in their lists take a few seconds.

The generative model, fully seeded (same parameters -> same lists):

* **sizes** -- s_k follows a power law in the label's popularity rank (a random permutation of 1..n):
  ``s_k = clip(round(c * rank_k ** -zipf_exponent), 1, num_docs)`` with unbiased stochastic rounding; c is
  calibrated (bisection) so that the expected mean of s_k is ``mean_relevant``. Every label has s_k >= 1.
* **ranker** -- the relevant documents of label k are interleaved with false positives: each gets
  y = s_k * w false positives ranked above it, w ~ Lomax(``quality``) (``u ** (-1 / quality) - 1``), so a
  label's precision profile depends on rank / s_k only (WikiLSHTC-325K with PfastreXML: rank / s_k has
  quantiles 0.15 / 0.37 / 0.92 / 3.1 / 10.5 at 10 / 25 / 50 / 75 / 90 %; Lomax(1) gives 0.11 / 0.33 / 1 / 3 /
  9). Larger ``quality`` = fewer false positives = a better ranker. With the relevant documents sorted by y,
  the j-th (0-based) sits at rank ``j + 1 + floor(y_(j))``: ranks are strictly increasing by construction,
  so no deduplication is needed, and a perfect ranker (y = 0) gives ranks 1..s_k. y is capped at
  ``num_docs - s_k`` (there are no more irrelevant documents), so ranks never exceed num_docs.
* **truncation** -- a list holds the top ``list_length`` = L documents. Only documents with y < L can be in
  it: their number is drawn as Binomial(s_k, P(y < L)) and their y from the conditional law, sorted for
  free as order statistics of uniforms (normalised cumulative sums of exponential spacings) -- no sort;
  those whose rank exceeds L are dropped. The other relevant documents are beyond the list: reachable by
  "predict all" only (when ``include_predict_all``). Complete lists (L = num_docs) hold every relevant
  document (h_k = s_k).

Seeding scheme: one ``numpy.random.default_rng(seed)`` stream draws, in this order, the popularity ranks,
the rounding of the sizes, the in-list counts, then the spacings block after block (``BLOCK_DRAWS``).
The powers, logarithms and exponentials go through :mod:`xmlthresh._util.detmath` (the same bits on every CPU;
numpy's own loops differ between AVX512 and AVX2 machines, and so did the lists), so the same parameters
give the same lists on every machine and thread count (tests/test_determinism.py).
"""

from __future__ import annotations

import numpy as np

from xmlthresh._util import detmath
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.validation import check_int, check_memory, check_number
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS
from xmlthresh._util.jit import cached_njit

#: spacings drawn per block of labels (part of the seeding scheme: changing it changes the data)
BLOCK_DRAWS = 1 << 22


#: peak memory of the generator and its lists: per label, and per expected relevant document (measured at
#: 10^5 labels x 10^5 documents: 191 MB with mean_relevant = 13, 648 MB with 52, 208 MB with list_length =
#: 4000; 690 MB at 4 * 10^5 labels; the model n_labels * (400 + 160 * mean_relevant) bytes is above each)
BYTES_PER_LABEL, BYTES_PER_RELEVANT = 400, 160


def generate_ranked_lists_direct(
    n_labels: int = 1_000_000,
    num_docs: int = 1_000_000,
    mean_relevant: float = 13.0,
    list_length: int = 1000,
    quality: float = 1.0,
    zipf_exponent: float = 0.8,
    seed: int = 0,
    include_predict_all: bool = True,
    name: str = "synthetic_large",
) -> RankedLists:
    """Simulated truncated ranked lists of ``n_labels`` labels over ``num_docs`` documents (module docstring).

    ``mean_relevant`` is the expected mean of s_k (in [1, num_docs]); ``list_length`` = L in [1, num_docs];
    ``quality`` > 0 is the Lomax shape of the false positives above each relevant document;
    ``zipf_exponent`` >= 0 shapes the label sizes (0: all labels of the same size).
    """
    _check(n_labels, num_docs, mean_relevant, list_length, quality, zipf_exponent)
    n_labels, num_docs = int(n_labels), int(num_docs)
    rng = np.random.default_rng(seed)
    n_relevant = power_law_sizes(rng, n_labels, num_docs, mean_relevant, zipf_exponent)
    length = int(list_length)

    # P(y < L) for y = s * w, w ~ Lomax(quality): 1 - (1 + L / s) ** -quality; 1 when the cap of y (there
    # are only m - s irrelevant documents) is below L: then every relevant document is in the list
    scale = n_relevant.astype(np.float64)
    max_false = num_docs - n_relevant
    in_reach = np.where(max_false < length, 1.0, -detmath.expm1(-quality * detmath.log1p(length / scale)))
    count = rng.binomial(n_relevant, in_reach)  # relevant documents with fewer than L false positives above

    # blocks of whole labels with about BLOCK_DRAWS spacings each (a label holds count + 1 spacings)
    spacings = np.cumsum(count + (count > 0))
    block_end = np.searchsorted(spacings, np.arange(BLOCK_DRAWS, spacings[-1] + BLOCK_DRAWS, BLOCK_DRAWS),
                                side="right") if spacings[-1] > 0 else np.zeros(0, dtype=np.int64)
    block_end = np.unique(np.r_[block_end, n_labels])
    block_end = block_end[block_end > 0]
    ranks, kept = [], np.zeros(n_labels, dtype=np.int64)
    first = 0
    for last in block_end:  # a loop over blocks of labels (~ draws / 4M iterations), vectorised inside
        block_ranks, block_kept = _block_ranks(
            rng, count[first:last], scale[first:last], in_reach[first:last], max_false[first:last], length,
            quality,
        )
        ranks.append(block_ranks)
        kept[first:last] = block_kept
        first = last
    label_ptr = np.zeros(n_labels + 1, dtype=np.int64)
    np.cumsum(kept, out=label_ptr[1:])
    relevant_rank = np.concatenate(ranks) if ranks else np.zeros(0, dtype=np.int64)
    return RankedLists(
        relevant_rank=relevant_rank,
        label_ptr=label_ptr,
        list_length=np.full(n_labels, length, dtype=np.int64),
        n_relevant=n_relevant,
        num_docs=num_docs,
        include_predict_all=include_predict_all,
        name=name,
    )


def power_law_sizes(rng: np.random.Generator, n_labels: int, num_docs: int, mean_relevant: float,
                    zipf_exponent: float) -> np.ndarray:
    """s_k = clip(stochastic_round(c * rank_k ** -zipf_exponent), 1, num_docs), c such that E[mean s_k] =
    ``mean_relevant`` (exact: E[clip(round(x), 1, m)] = clip(x, 1, m) for unbiased rounding and integer m)."""
    popularity_rank = rng.permutation(n_labels) + 1
    curve = detmath.power(np.arange(1, n_labels + 1, dtype=np.float64), -zipf_exponent)  # decreasing in rank
    c = _calibrate(curve, num_docs, mean_relevant)
    share = c * curve[popularity_rank - 1]
    sizes = np.floor(share + rng.random(n_labels))
    return np.clip(sizes, 1, num_docs).astype(np.int64)


def _calibrate(curve: np.ndarray, num_docs: int, mean_relevant: float) -> float:
    """The c with mean(clip(c * curve, 1, num_docs)) = mean_relevant (curve decreasing, curve[0] = 1); each
    evaluation is O(log n) through prefix sums, the mean being monotone in c."""
    n = len(curve)
    ascending = curve[::-1]
    prefix = np.r_[0.0, np.cumsum(ascending)]

    def mean_at(c: float) -> float:
        low = np.searchsorted(ascending, 1.0 / c, side="left")  # c * curve < 1 below this index
        high = np.searchsorted(ascending, num_docs / c, side="left")  # c * curve >= num_docs from here on
        return (low + c * (prefix[high] - prefix[low]) + (n - high) * num_docs) / n

    lo, hi = 0.0, float(detmath.log(num_docs) - detmath.log(ascending[0]))  # mean_at(e^lo) = 1, mean_at(e^hi) = num_docs
    if mean_relevant <= 1.0:
        return 1.0
    if mean_relevant >= num_docs:
        return float(detmath.exp(hi))
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mean_at(float(detmath.exp(mid))) < mean_relevant:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return float(detmath.exp(0.5 * (lo + hi)))


def _block_ranks(rng, count, scale, in_reach, max_false, length, quality):
    """Ranks of the relevant documents in the lists of one block of labels: (flat ranks, kept per label).

    Label k draws count_k + 1 exponential spacings; their normalised cumulative sums are the sorted
    uniforms u_(1) <= ... <= u_(count_k), mapped through the conditional quantile of y given y < L
    (:func:`_ranks_from_spacings`; its numpy form :func:`_numpy_ranks_from_spacings` gives the same bits)."""
    n = len(count)
    draws = count + (count > 0)
    total = int(draws.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(n, dtype=np.int64)
    cumulative = np.cumsum(rng.standard_exponential(total))
    return _ranks_from_spacings(cumulative, np.ascontiguousarray(count, dtype=np.int64),
                                np.ascontiguousarray(scale, dtype=np.float64),
                                np.ascontiguousarray(in_reach, dtype=np.float64),
                                np.ascontiguousarray(max_false, dtype=np.int64), int(length), float(quality))


@cached_njit
def _ranks_from_spacings(cumulative, count, scale, in_reach, max_false, length, quality):
    """The numba kernel of :func:`_numpy_ranks_from_spacings`: one pass over the order statistics, label by
    label, with the same operations in the same order (detmath's scalar kernels), so the same bits."""
    n = len(count)
    ranks = np.empty(count.sum(), dtype=np.int64)
    kept = np.zeros(n, dtype=np.int64)
    written = 0
    draw_end = 0
    running = np.iinfo(np.int64).min  # np.maximum.accumulate over (false_above + label offset), all labels
    for k in range(n):
        c = count[k]
        if c == 0:
            continue
        draw_start = draw_end
        draw_end = draw_start + c + 1
        before = cumulative[draw_start - 1] if draw_start > 0 else 0.0
        label_total = cumulative[draw_end - 1] - before
        offset = k * (length + 1)
        for j in range(c):
            u = (cumulative[draw_start + j] - before) / label_total
            u = min(u, 1.0)
            y = scale[k] * detmath.expm1_scalar(-detmath.log1p_scalar(-u * in_reach[k]) / quality)
            cap = float(max_false[k])
            capped = y if (y < cap or np.isnan(y)) else cap
            shifted = np.int64(np.floor(capped)) + offset
            if shifted > running:
                running = shifted
            rank = j + 1 + (running - offset)
            if rank <= length:
                ranks[written] = rank
                written += 1
                kept[k] += 1
    return ranks[:written], kept


def _numpy_ranks_from_spacings(cumulative, count, scale, in_reach, max_false, length, quality):
    """The readable form of :func:`_ranks_from_spacings` (numpy, ~4x slower; tests compare the two)."""
    n = len(count)
    draws = count + (count > 0)
    draw_end = np.cumsum(draws)
    draw_start = draw_end - draws
    before = np.where(draw_start > 0, cumulative[np.maximum(draw_start - 1, 0)], 0.0)
    label_total = cumulative[np.maximum(draw_end - 1, 0)] - before
    # drop each label's last spacing (it only normalises): positions of the count_k order statistics
    label_of = np.repeat(np.arange(n), count)
    order_start = np.cumsum(count) - count
    j = np.arange(len(label_of)) - order_start[label_of]  # 0-based order within the label
    u = (cumulative[draw_start[label_of] + j] - before[label_of]) / label_total[label_of]
    u = np.minimum(u, 1.0)
    # conditional quantile of y = s w given y < L: s * ((1 - u P(y < L)) ** (-1 / quality) - 1)
    # (u = 1 with in_reach = 1: y = inf, capped below)
    y = scale[label_of] * detmath.expm1(-detmath.log1p(-u * in_reach[label_of]) / quality)
    false_above = np.floor(np.minimum(y, max_false[label_of])).astype(np.int64)
    # guard monotonicity against rounding: label offset keeps the running maximum inside each label
    offset = label_of * (length + 1)
    false_above = np.maximum.accumulate(false_above + offset) - offset
    rank = j + 1 + false_above
    keep = rank <= length  # a prefix of every label (ranks increase within a label)
    return rank[keep], np.bincount(label_of[keep], minlength=n)


def _check(n_labels, num_docs, mean_relevant, list_length, quality, zipf_exponent) -> None:
    if not (int(n_labels) == n_labels and n_labels >= 1 and int(num_docs) == num_docs and num_docs >= 1):
        raise ValueError(f"need integers n_labels >= 1 and num_docs >= 1, got {n_labels!r} and {num_docs!r}")
    if not (int(list_length) == list_length and 1 <= list_length <= num_docs):
        raise ValueError(f"list_length must be an integer in [1, num_docs = {num_docs}], got {list_length!r}")
    if not (np.isfinite(mean_relevant) and 1 <= mean_relevant <= num_docs):
        raise ValueError(f"mean_relevant must lie in [1, num_docs = {num_docs}], got {mean_relevant!r}")
    if not (np.isfinite(quality) and quality > 0):
        raise ValueError(f"quality (Lomax shape of the false positives) must be > 0, got {quality!r}")
    if not (np.isfinite(zipf_exponent) and zipf_exponent >= 0):
        raise ValueError(f"zipf_exponent must be >= 0, got {zipf_exponent!r}")


@DATASETS.register("synthetic_large")
class SyntheticLargeRankedLists(Dataset):
    """Seeded simulated truncated lists at extreme scale; see :func:`generate_ranked_lists_direct`."""

    def __init__(self, name: str = "synthetic_large", n_labels: int = 1_000_000, num_docs: int = 1_000_000,
                 mean_relevant: float = 13.0, list_length: int = 1000, quality: float = 1.0,
                 zipf_exponent: float = 0.8, seed: int = 0, include_predict_all: bool = True,
                 first_n_labels: int | None = None):
        super().__init__(name=name, include_predict_all=include_predict_all, first_n_labels=first_n_labels)
        self.n_labels = n_labels
        self.num_docs = num_docs
        self.mean_relevant = mean_relevant
        self.list_length = list_length
        self.quality = quality
        self.zipf_exponent = zipf_exponent
        self.seed = seed

    def _check_params(self) -> None:
        super()._check_params()
        n_labels = check_int("dataset.n_labels", self.n_labels, 1)
        num_docs = check_int("dataset.num_docs", self.num_docs, 1)
        check_int("dataset.list_length", self.list_length, 1, num_docs)
        check_int("dataset.seed", self.seed)
        mean = check_number("dataset.mean_relevant", self.mean_relevant, 1, num_docs)
        check_number("dataset.quality", self.quality, 0, strict_minimum=True)
        check_number("dataset.zipf_exponent", self.zipf_exponent, 0)
        check_memory(f"dataset.n_labels = {n_labels:,} labels x ({BYTES_PER_LABEL} + {BYTES_PER_RELEVANT} x "
                     f"dataset.mean_relevant = {mean:g}) bytes",
                     n_labels * (BYTES_PER_LABEL + BYTES_PER_RELEVANT * mean), "lower dataset.n_labels or "
                     "dataset.mean_relevant")

    def _load(self) -> RankedLists:
        return generate_ranked_lists_direct(
            n_labels=int(self.n_labels), num_docs=int(self.num_docs), mean_relevant=float(self.mean_relevant),
            list_length=int(self.list_length), quality=float(self.quality),
            zipf_exponent=float(self.zipf_exponent), seed=int(self.seed),
            include_predict_all=self.include_predict_all, name=self.name,
        )
