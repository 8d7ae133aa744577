"""Corel5k on the reference label set of 260 labels, ranked by a weighted nearest-neighbour
vote on the published TagProp neighbour lists (``dataset=corel5k_tagprop260``).

The reference work's Corel5k experiments (Tables 3-4, Fig. 3.1) use 260 labels and TagProp's predictions on
the test images; those predictions are not published. What is published (``$XMLTHRESH_DATA/
corel5k_tagprop260/tagprop_demo_corel5k.mat``, from the TagProp demo) is, for each of the 4500 training
images, its 100 nearest training images (``NN``, 100 x 4500, 1-based, the image itself never among them) and
the training labels (``Y``, 260 x 4500, in the .mat's own image order). So this data set **stands in** for the
reference lists: it scores every training image by a weighted vote of its neighbours' labels, leave-one-out
(an image never votes for itself), score_k(i) = sum_{r=1..K} w_r Y[k, NN[r, i]] with rank weights
w_r = exp(-(r - 1) / decay) (``decay: null``: equal weights), and returns these scores with the true labels
as the ``test`` split of score data (4500 documents, 260 labels). TagProp itself learns its weights and a
per-label sigmoid; the ranking of each label depends only on the vote, so this is the same *kind* of ranker
with fixed instead of learned weights: the numbers are not the reference work's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.download import DataUnavailableError
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS
from xmlthresh._util.paths import data_dir
from xmlthresh.validation import check_int, check_number

MAT_FILE = "tagprop_demo_corel5k.mat"


def nn_vote_scores(neighbours: np.ndarray, labels: np.ndarray, n_neighbours: int,
                   decay: float | None) -> np.ndarray:
    """Leave-one-out vote scores (documents x labels): ``neighbours`` (K0 x n, 0-based indices of each
    document's nearest other documents, nearest first), ``labels`` (n x L, 0/1); the first ``n_neighbours``
    vote with weights exp(-(r - 1) / decay) (1 when ``decay`` is None)."""
    n_docs = neighbours.shape[1]
    top = neighbours[:n_neighbours]
    ranks = np.arange(n_neighbours, dtype=np.float64)
    weight = np.ones(n_neighbours) if decay is None else np.exp(-ranks / float(decay))
    votes = sp.csr_matrix((np.repeat(weight[None, :], n_docs, axis=0).ravel(),
                           top.T.ravel(), np.arange(0, n_docs * n_neighbours + 1, n_neighbours)),
                          shape=(n_docs, n_docs))
    return np.asarray(votes @ sp.csr_matrix(labels, dtype=np.float64).toarray())


@DATASETS.register("corel5k_tagprop260")
class CorelTagProp260(Dataset):
    """Corel5k, 260 labels, 4500 training images scored leave-one-out by a nearest-neighbour vote."""

    def __init__(self, name: str = "corel5k_tagprop260", path: str = "corel5k_tagprop260", n_neighbours: int = 100,
                 decay: float | None = 10.0, include_predict_all: bool = True, first_n_labels: int | None = None):
        super().__init__(name=name, include_predict_all=include_predict_all, first_n_labels=first_n_labels)
        self.path = path
        self.n_neighbours = n_neighbours
        self.decay = decay

    def _check_params(self) -> None:
        super()._check_params()
        check_int("dataset.n_neighbours", self.n_neighbours, 1, 100)
        if self.decay is not None:  # null: equal weights
            check_number("dataset.decay", self.decay, 0.0, strict_minimum=True)

    def _load(self) -> ScoreData:
        from scipy.io import loadmat

        folder = Path(self.path).expanduser()
        folder = folder if folder.is_absolute() else data_dir() / folder
        if not (folder / MAT_FILE).is_file():
            raise DataUnavailableError(f"{folder / MAT_FILE} is missing: put the TagProp demo's {MAT_FILE} (NN and Y "
                                       "of the 4500 Corel5k training images) there, or set dataset.path")
        mat = loadmat(folder / MAT_FILE)
        neighbours = mat["NN"].astype(np.int64) - 1
        labels = mat["Y"].T.astype(bool)
        scores = nn_vote_scores(neighbours, labels, int(self.n_neighbours), self.decay)
        split = ScoredSplit(scores, labels, name=f"{self.name}/train-loo",
                            label_names=np.arange(labels.shape[1]), include_predict_all=self.include_predict_all)
        info = {"ranker": "nn_vote", "n_neighbours": int(self.n_neighbours), "decay": self.decay,
                "scored": "training images, leave-one-out"}
        return ScoreData(self.name, {"test": split}, info)
