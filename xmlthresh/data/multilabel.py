"""Containers for the two other kinds of input besides ranked lists.

* :class:`MultiLabelData` -- features and labels per split (Mulan, HMC, Extreme Classification Repository):
  a first-stage ranker turns it into scores.
* :class:`ScoreData` -- a ranker's scores and the labels per split (a user's own ranker output, synthetic
  rankers, or a ranker's cached output): strategies fit on one split and are evaluated on another.

Split names are ``train``, ``validation`` and ``test``. Label matrices are sparse CSR, bool.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from xmlthresh._util.lazy_imports import lazy_module
from xmlthresh.data.scores import ScoredSplit

sp = lazy_module("scipy.sparse")  # loaded on first use: ranked-list runs never need it

SPLITS = ("train", "validation", "test")


class MultiLabelDataError(ValueError):
    """Inconsistent multi-label data (message: data set, split and problem)."""


def _check_first(n: int) -> int:
    n = int(n)
    if n < 1:
        raise MultiLabelDataError(f"first_n_labels must be >= 1, got {n}")
    return n


@dataclass(frozen=True)
class MultiLabelData:
    """Features ``X[split]`` (documents x features, dense or CSR) and labels ``Y[split]`` (CSR bool)."""

    name: str
    X: dict[str, np.ndarray | sp.csr_matrix]
    Y: dict[str, sp.csr_matrix]
    label_names: np.ndarray
    feature_names: np.ndarray | None = None
    info: dict = field(default_factory=dict)  # loader facts worth logging (imputed values, dropped rows, ...)

    def __post_init__(self) -> None:
        if set(self.X) != set(self.Y):
            raise MultiLabelDataError(f"{self.name}: feature splits {sorted(self.X)} != label splits {sorted(self.Y)}")
        unknown = set(self.X) - set(SPLITS)
        if unknown:
            raise MultiLabelDataError(f"{self.name}: unknown split(s) {sorted(unknown)}; use {SPLITS}")
        n_labels = len(self.label_names)
        n_features = None
        for split in self.X:
            X, Y = self.X[split], self.Y[split]
            if X.shape[0] != Y.shape[0]:
                raise MultiLabelDataError(f"{self.name}/{split}: {X.shape[0]} feature rows but {Y.shape[0]} label rows")
            if Y.shape[1] != n_labels:
                raise MultiLabelDataError(f"{self.name}/{split}: {Y.shape[1]} label columns for {n_labels} label names")
            if n_features is not None and X.shape[1] != n_features:
                raise MultiLabelDataError(f"{self.name}/{split}: {X.shape[1]} features, other splits {n_features}")
            n_features = X.shape[1]

    @property
    def n_labels(self) -> int:
        return len(self.label_names)

    def first_labels(self, n: int) -> "MultiLabelData":
        """The data restricted to its first ``n`` labels (experiments that grow the label set)."""
        n = _check_first(n)
        if n >= self.n_labels:
            return self
        return MultiLabelData(name=self.name, X=dict(self.X), Y={split: Y[:, :n] for split, Y in self.Y.items()},
                              label_names=self.label_names[:n], feature_names=self.feature_names,
                              info={**self.info, "first_n_labels": n, "n_labels_total": self.n_labels})

    @property
    def n_features(self) -> int:
        return next(iter(self.X.values())).shape[1]

    def training_union(self) -> "MultiLabelData":
        """The data with ``train`` and ``validation`` joined into one ``train`` split (train rows first, then
        the validation rows); ``test`` is unchanged. Cross-fitting uses all training documents this way,
        whether the loader carved the validation split (Mulan, xmlrepo) or read it (HMC)."""
        if "train" not in self.X:
            raise MultiLabelDataError(f"{self.name}: no 'train' split to join, got {sorted(self.X)}")
        if "validation" not in self.X:
            return self
        parts = ("train", "validation")
        features = [self.X[split] for split in parts]
        if any(sp.issparse(X) for X in features):
            X_train = sp.vstack([sp.csr_matrix(X) for X in features], format="csr")
        else:
            X_train = np.vstack(features)
        Y_train = sp.vstack([sp.csr_matrix(self.Y[split]) for split in parts], format="csr")
        X = {split: X for split, X in self.X.items() if split not in parts}
        Y = {split: Y for split, Y in self.Y.items() if split not in parts}
        return MultiLabelData(name=self.name, X={"train": X_train, **X}, Y={"train": Y_train, **Y},
                              label_names=self.label_names, feature_names=self.feature_names,
                              info={**self.info, "training_union": {split: int(self.Y[split].shape[0])
                                                                    for split in parts}})


@dataclass(frozen=True)
class ScoreData:
    """A ranker's output: one :class:`ScoredSplit` per split (at least ``test``; ``validation`` for holdout)."""

    name: str
    splits: dict[str, ScoredSplit]
    info: dict = field(default_factory=dict)  # e.g. ranker quality (P@k) and whether scores came from cache

    def first_labels(self, n: int) -> "ScoreData":
        """The score data restricted to the first ``n`` label columns of every split."""
        n = _check_first(n)
        splits = {}
        for key, split in self.splits.items():
            if n >= split.n_labels:
                return self
            names = None if split.label_names is None else split.label_names[:n]
            splits[key] = replace(split, scores=split.scores[:, :n], labels=split.labels[:, :n], label_names=names)
        return ScoreData(self.name, splits, {**self.info, "first_n_labels": n})

    def with_native_threshold(self, native_threshold: float | None) -> "ScoreData":
        """The same data with every split declaring the ranker's own decision threshold ``native_threshold``."""
        splits = {key: split.with_native_threshold(native_threshold) for key, split in self.splits.items()}
        if all(splits[key] is self.splits[key] for key in splits):
            return self
        return ScoreData(self.name, splits, {**self.info, "native_threshold": native_threshold})

    def with_predict_all(self, include_predict_all: bool) -> "ScoreData":
        """The same data with every split's ``include_predict_all`` set (the data set's problem definition)."""
        splits = {key: split.with_predict_all(include_predict_all) for key, split in self.splits.items()}
        if all(splits[key] is self.splits[key] for key in splits):
            return self
        return ScoreData(self.name, splits, dict(self.info))

    def __post_init__(self) -> None:
        if "test" not in self.splits:
            raise MultiLabelDataError(f"{self.name}: score data needs a 'test' split, got {sorted(self.splits)}")
        shapes = {split.n_labels for split in self.splits.values()}
        if len(shapes) != 1:
            raise MultiLabelDataError(f"{self.name}: splits disagree on the number of labels: {sorted(shapes)}")
