"""The Example class repeated n times (``dataset=example_copies``): the reference work's Example 3 at any n.

Every label is the class of the Example data set (``dataset=example``, 80 copies, read from the reference
program's file): 7 documents, relevance 1,0,0,0,1,1,0 (s = 3). Its two Pareto cuts are cut 1 (p 1, r 1/3)
and cut 6 (p 1/2, r 1); every label has the same hull edge, so the linearised map V jumps across the identity
from "every label at (1/2, 1)" to "every label at (1, 1/3)": V has no fixed point for any n, and the
optimum lies on the segment between those two ends (drawn in ``domain.png``; Fig. 3.12 of the reference
work is this instance at n = 1000, ``experiment=fig3_12``). The instance is built here, not read from a file.
"""

from __future__ import annotations

from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS
from xmlthresh.validation import check_int

#: the Example class: relevance of the 7 documents in ranked order (the reference program's Example.txt)
EXAMPLE_CLASS = (1, 0, 0, 0, 1, 1, 0)
#: the most copies built (the labels are built one by one: 10^5 copies take a fraction of a second)
MAX_COPIES = 100_000


@DATASETS.register("example_copies")
class ExampleCopies(Dataset):
    """``copies`` identical labels, each the Example class over the same 7 documents."""

    def __init__(self, name: str = "example_copies", copies: int = 1000, include_predict_all: bool = True,
                 first_n_labels: int | None = None):
        super().__init__(name=name, include_predict_all=include_predict_all, first_n_labels=first_n_labels)
        self.copies = check_int("dataset.copies", copies, 1, MAX_COPIES)

    def _load(self) -> RankedLists:
        return RankedLists.from_relevance_lists([list(EXAMPLE_CLASS)] * self.copies, [sum(EXAMPLE_CLASS)] * self.copies,
                                                num_docs=len(EXAMPLE_CLASS),
                                                include_predict_all=self.include_predict_all, name=self.name)
