"""The contract of a dataset plugin: constructor parameters come from its option
``xmlthresh/conf/dataset/<option>.yaml``, ``load()`` returns the data: :class:`RankedLists`,
:class:`ScoreData` (a ranker's scores per split) or :class:`MultiLabelData` (features, ranked by a
first-stage ranker)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from xmlthresh.data.multilabel import MultiLabelData, ScoreData
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.validation import InputError, check_bool, check_int

Data = RankedLists | ScoreData | MultiLabelData


class Dataset(ABC):
    """A source of threshold problems. ``name`` is the data set's display name (logged as ``dataset``)."""

    registry_name: ClassVar[str] = ""

    def __init__(self, name: str | None = None, include_predict_all: bool = True, first_n_labels: int | None = None):
        self.name = name or self.registry_name
        self.include_predict_all = include_predict_all
        self.first_n_labels = first_n_labels

    def population(self) -> object | None:
        """The data set's generative model in closed form, when it has one (dense ``synthetic_xmc``: an
        :class:`~xmlthresh.datasets.synthetic_xmc_posterior.XmcPopulation`); None by default."""
        return None

    @abstractmethod
    def _load(self) -> Data:
        """Read or generate the full data."""

    def _check_params(self) -> None:
        """Value checks of the parameters (run by ``DATASETS.build`` before any work, and by :meth:`load`): a
        float where an integer belongs, or a string where a boolean belongs, is an error naming the
        parameter -- never truncated (4.5 -> 4) or taken as true (``maybe``). Subclasses extend it."""
        check_bool("dataset.include_predict_all", self.include_predict_all)
        check_int("dataset.first_n_labels", self.first_n_labels, 1, optional=True)

    def load(self) -> Data:
        """The data, restricted to the first ``first_n_labels`` labels when that is set; score data carry the
        data set's ``include_predict_all`` on every split (ranked lists get it from their loader)."""
        self._check_params()
        data = self._load()
        if self.first_n_labels is not None:
            n_total = _n_labels(data)
            if int(self.first_n_labels) > n_total:  # never a silent cap: 128 of 80 labels is not "128 labels"
                raise InputError(f"dataset.first_n_labels={self.first_n_labels} is above the {n_total} labels of "
                                 f"{self.name}: use at most {n_total}, or null for all labels")
            data = data.first_labels(int(self.first_n_labels))
        if isinstance(data, ScoreData):
            data = data.with_predict_all(self.include_predict_all)
        return data


def _n_labels(data: Data) -> int:
    """The number of labels of loaded data of any of the three kinds (score data: of its first split)."""
    if isinstance(data, ScoreData):
        return next(iter(data.splits.values())).n_labels
    return int(data.n_labels)
