"""The two-label counterexample (docs/theory.md#two-label-counterexample) as a data set
(``dataset=counterexample``).

Two labels over 4 documents, c1 = 1,0,0,1 and c2 = 1,0,1,0: cuts (4, 1) are a coordinate-wise maximum of
F-macro (0.7500) while the global optimum is 0.7895 at cuts (1, 3): ``xmlthresh explain dataset=counterexample
--start 4,1`` prints every pair of thresholds (the reference work's Table 1) and coordinate ascent stuck there.
"""

from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS


@DATASETS.register("counterexample")
class CounterexampleLists(Dataset):
    """The two-label instance where a coordinate-wise maximum is not the global optimum."""

    def __init__(self, name: str = "counterexample", include_predict_all: bool = True,
                 first_n_labels: int | None = None):
        super().__init__(name=name, include_predict_all=include_predict_all, first_n_labels=first_n_labels)

    def _load(self) -> RankedLists:
        return RankedLists.from_relevance_lists([[1, 0, 0, 1], [1, 0, 1, 0]], [2, 2], num_docs=4,
                                                include_predict_all=self.include_predict_all, name=self.name)
