"""The in-memory model of a ranker's output as ranked lists with relevance.

For every label k the ranker orders the documents; what the threshold problem needs of that order is
lossless in three numbers per label plus one flat array (CSR layout, never Python lists per label):

* ``relevant_rank[label_ptr[k]:label_ptr[k+1]]`` -- 1-based positions of the relevant documents in
  label k's order, strictly increasing;
* ``list_length[k]`` -- how many documents of the order are known (L_k; a truncated list has L_k < m);
* ``n_relevant[k]`` -- s_k, the number of relevant documents of label k in the whole evaluation set;
* ``num_docs`` -- m, the number of documents in the evaluation set (the true one, even for truncated lists);
* ``tie_end`` (optional, parallel to ``relevant_rank``) -- when the ranker's scores tie, a threshold can only
  cut between distinct score values: the last position of the group of equal scores that holds each
  relevant document. ``None`` means no ties (every position is a possible cut).

Conventions (docs/theory.md#conventions), enforced or applied here and by ``candidates``:

* s_k >= h_k (relevant documents in the list); a complete list (L_k = m) may still hold fewer than s_k
  relevant documents when the ranker left some documents of the evaluation set unranked (ESP Game: one
  image of 2081 is missing from the 2080-document lists) -- those are reachable only by "predict all";
* labels with s_k = 0 have no recall and are excluded from every average (``with_relevant_only``);
* ``include_predict_all``: whether "predict all m documents" (tp = s_k, p = s_k / m, r = 1) is a
  candidate threshold -- a property of the problem definition, so it travels with the data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np


class RankedListsError(ValueError):
    """Inconsistent ranked-list data (the message names the label and the problem)."""


#: how many affected labels an error message names
NAMED_LABELS = 5


def name_labels(label_ids: np.ndarray, bad_label: np.ndarray) -> str:
    """``label 7 (index 2)`` or ``labels 7, 9, 12, 30, 31 and 26 more (first at index 2)``: the first few
    labels of the mask ``bad_label``, for error messages."""
    index = np.flatnonzero(bad_label)
    ids = np.asarray(label_ids)[index[:NAMED_LABELS]].tolist()  # Python scalars: 7, not np.int64(7)
    if len(index) == 1:
        return f"label {ids[0]!r} (index {index[0]})"
    shown = ", ".join(repr(label) for label in ids)
    more = f" and {len(index) - NAMED_LABELS} more" if len(index) > NAMED_LABELS else ""
    return f"labels {shown}{more} (first at index {index[0]})"


@dataclass(frozen=True)
class RankedLists:
    """Ranked lists with relevance for n labels over m documents (see module docstring)."""

    relevant_rank: np.ndarray
    label_ptr: np.ndarray
    list_length: np.ndarray
    n_relevant: np.ndarray
    num_docs: int
    label_ids: np.ndarray = field(default=None)  # type: ignore[assignment]
    include_predict_all: bool = True
    name: str = ""
    tie_end: np.ndarray | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen dataclass: normalise dtypes once at the boundary
        set_(self, "relevant_rank", np.ascontiguousarray(self.relevant_rank, dtype=np.int64))
        set_(self, "label_ptr", np.ascontiguousarray(self.label_ptr, dtype=np.int64))
        set_(self, "list_length", np.ascontiguousarray(self.list_length, dtype=np.int64))
        set_(self, "n_relevant", np.ascontiguousarray(self.n_relevant, dtype=np.int64))
        set_(self, "num_docs", int(self.num_docs))
        if self.tie_end is not None:
            set_(self, "tie_end", np.ascontiguousarray(self.tie_end, dtype=np.int64))
        if self.label_ids is None:
            set_(self, "label_ids", np.arange(len(self.list_length), dtype=np.int64))
        else:
            set_(self, "label_ids", np.asarray(self.label_ids))
        self._validate()

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def from_relevance_lists(
        cls,
        relevance: list[list[int]] | list[np.ndarray],
        n_relevant: list[int] | np.ndarray,
        num_docs: int,
        **kwargs,
    ) -> "RankedLists":
        """Build from per-label 0/1 relevance sequences in ranker order (small data, tests, examples)."""
        ranks, ptr, lengths = [], [0], []
        for seq in relevance:
            seq = np.asarray(seq, dtype=np.int64)
            ranks.append(np.flatnonzero(seq) + 1)
            ptr.append(ptr[-1] + len(ranks[-1]))
            lengths.append(len(seq))
        flat = np.concatenate(ranks) if ranks else np.zeros(0, dtype=np.int64)
        return cls(flat, np.asarray(ptr), np.asarray(lengths), np.asarray(n_relevant), num_docs, **kwargs)

    # ------------------------------------------------------------------ properties
    @property
    def n_labels(self) -> int:
        return len(self.list_length)

    @property
    def n_relevant_in_list(self) -> np.ndarray:
        """h_k: how many relevant documents label k's (possibly truncated) list contains."""
        return np.diff(self.label_ptr)

    @property
    def cut_of_relevant(self) -> np.ndarray:
        """The smallest admissible cut that includes each relevant document (its tie group's end)."""
        return self.relevant_rank if self.tie_end is None else self.tie_end

    # ------------------------------------------------------------------ label selection
    def select_labels(self, index: np.ndarray) -> "RankedLists":
        """A new instance restricted to the labels ``index`` (integer indices or a boolean mask)."""
        index = np.asarray(index)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        starts, stops = self.label_ptr[index], self.label_ptr[index + 1]
        counts = stops - starts
        ptr = np.zeros(len(index) + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        # Gather the CSR rows without a Python loop: source position of every output element.
        source = np.repeat(starts - ptr[:-1], counts) + np.arange(ptr[-1])
        return replace(
            self,
            relevant_rank=self.relevant_rank[source],
            tie_end=None if self.tie_end is None else self.tie_end[source],
            label_ptr=ptr,
            list_length=self.list_length[index],
            n_relevant=self.n_relevant[index],
            label_ids=self.label_ids[index],
        )

    def digest(self) -> str:
        """sha256 of what defines the threshold problem (ranks, label pointers, list lengths, s_k, m and the
        predict-all flag): two lists with the same digest give the same candidates and the same optimum, so a
        benchmark records it next to its numbers (and a generator's determinism test compares it)."""
        h = hashlib.sha256()
        for array in (self.relevant_rank, self.label_ptr, self.list_length, self.n_relevant):
            array = np.ascontiguousarray(array, dtype=np.int64)
            h.update(str(array.shape).encode())
            h.update(array.tobytes())
        h.update(f"{int(self.num_docs)} {bool(self.include_predict_all)}".encode())
        return h.hexdigest()

    def with_relevant_only(self) -> tuple["RankedLists", int]:
        """Drop the labels with s_k = 0 (their recall is undefined); returns (kept lists, number dropped)."""
        keep = self.n_relevant > 0
        n_dropped = int(np.count_nonzero(~keep))
        return (self if n_dropped == 0 else self.select_labels(keep)), n_dropped

    def first_labels(self, n: int) -> "RankedLists":
        """The first ``n`` labels (used by experiments that grow the label set)."""
        if n < 1:
            raise RankedListsError(f"first_labels needs n >= 1, got {n}")
        return self.select_labels(np.arange(min(n, self.n_labels)))

    # ------------------------------------------------------------------ validation
    def _validate(self) -> None:
        n = len(self.list_length)
        where = f" in {self.name!r}" if self.name else ""
        if self.label_ptr.shape != (n + 1,) or self.n_relevant.shape != (n,):
            raise RankedListsError(
                f"shape mismatch{where}: {n} list lengths, {len(self.n_relevant)} sizes, "
                f"{len(self.label_ptr)} label pointers (need n+1)"
            )
        if len(self.label_ids) != n:
            raise RankedListsError(f"{len(self.label_ids)} label ids for {n} labels{where}")
        if self.num_docs < 1:
            raise RankedListsError(f"no documents{where} (num_docs = {self.num_docs}): a split needs at least one "
                                   "document; check the scores' and labels' shape (documents x labels)")
        if n == 0:
            raise RankedListsError(f"no label has a relevant document{where}: there is nothing to fit thresholds for "
                                   "or to score (labels without a relevant document are left out of F-macro); check "
                                   "the labels (documents x labels, 1 = relevant)")
        if self.label_ptr[0] != 0 or self.label_ptr[-1] != len(self.relevant_rank):
            raise RankedListsError(f"label_ptr must start at 0 and end at len(relevant_rank){where}")
        counts = np.diff(self.label_ptr)
        self._check_labels(counts < 0, "label_ptr decreases")
        self._check_labels(self.list_length < 0, "negative list length")
        self._check_labels(self.list_length > self.num_docs, f"list longer than num_docs = {self.num_docs}")
        self._check_labels(self.n_relevant < counts, "size smaller than the number of relevant documents in its list")
        self._check_labels(self.n_relevant > self.num_docs,
                           f"size (relevant documents of the label) larger than num_docs = {self.num_docs}, the "
                           "number of documents; num_docs is too small or the sizes are wrong")
        if len(self.relevant_rank):
            label_of = np.repeat(np.arange(n), counts)
            self._check_labels_at(label_of, self.relevant_rank < 1, "relevant rank < 1")
            self._check_labels_at(
                label_of, self.relevant_rank > self.list_length[label_of], "relevant rank beyond the list length"
            )
            same_label = label_of[1:] == label_of[:-1]
            bad = np.zeros(len(self.relevant_rank), dtype=bool)
            bad[1:] = same_label & (self.relevant_rank[1:] <= self.relevant_rank[:-1])
            self._check_labels_at(label_of, bad, "relevant ranks not strictly increasing")
            if self.tie_end is not None:
                if self.tie_end.shape != self.relevant_rank.shape:
                    raise RankedListsError(f"tie_end needs one entry per relevant document{where}")
                self._check_labels_at(label_of, self.tie_end < self.relevant_rank, "tie group ends before its document")
                self._check_labels_at(
                    label_of, self.tie_end > self.list_length[label_of], "tie group ends beyond the list length"
                )
                bad[1:] = same_label & (self.tie_end[1:] < self.tie_end[:-1])
                self._check_labels_at(label_of, bad, "tie group ends decrease")

    def _check_labels(self, bad_label: np.ndarray, problem: str) -> None:
        """Raise naming the first few affected labels (ids and the index of the first) and their count."""
        if np.any(bad_label):
            where = f" in {self.name!r}" if self.name else ""
            raise RankedListsError(f"{name_labels(self.label_ids, bad_label)}{where}: {problem} "
                                   f"({int(np.count_nonzero(bad_label))} label(s) affected)")

    def _check_labels_at(self, label_of: np.ndarray, bad_element: np.ndarray, problem: str) -> None:
        if np.any(bad_element):
            mask = np.zeros(len(self.list_length), dtype=bool)
            mask[label_of[bad_element]] = True
            self._check_labels(mask, problem)
