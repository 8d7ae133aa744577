"""First-stage rankers: features -> scores per (document, label), registered by name in ``RANKERS``.

``ranker_scores(data, ranker_name, params, seed)`` fits a ranker on the train split of a
:class:`~xmlthresh.data.multilabel.MultiLabelData` and returns the (cached) scores of validation and test as
:class:`~xmlthresh.data.multilabel.ScoreData`. Rankers with a missing optional dependency stay registered and
are listed by ``unavailable_rankers()``. ``crossfit_scores(data, ranker_name, params, seed, folds, fold_seed)``
gives out-of-fold scores of every training document instead (``protocol=crossfit``).
"""

from xmlthresh.rankers.base import Ranker, RankerUnavailableError
from xmlthresh.rankers.crossfit import crossfit_scores, out_of_fold_scores
from xmlthresh.rankers.quality import precision_at_k, ranking_loss
from xmlthresh.rankers.registry import RANKERS, available_rankers, unavailable_rankers
from xmlthresh.rankers.scoring import make_ranker, ranker_quality, ranker_scores

__all__ = [
    "RANKERS",
    "Ranker",
    "RankerUnavailableError",
    "available_rankers",
    "crossfit_scores",
    "make_ranker",
    "out_of_fold_scores",
    "precision_at_k",
    "ranker_quality",
    "ranker_scores",
    "ranking_loss",
    "unavailable_rankers",
]
