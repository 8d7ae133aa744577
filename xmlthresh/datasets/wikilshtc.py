"""``wikilshtc``: WikiLSHTC-325K ranked lists of PfastreXML (Berger & Guda 2020), streamed from the zip.

``berger/WikiXML_no_empty.zip`` holds one 569 MB text file in the ranked-list format: 283,350 labels (those
with at least one test document), the top 1,000 documents of each. The lists are truncated: m, the true
number of test documents, is 587,084 -- "predict all" uses it, never the list length. The first load
parses the zip member in blocks (a few seconds); the parsed lists are cached in ``$XMLTHRESH_CACHE``
(:mod:`.ranked_list_parse_cache`) and later loads take well under a second. ``include_predict_all=false`` gives
the variant of the reference table without "predict all".
"""

from __future__ import annotations

from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets.ranked_list_loader import RankedListFile
from xmlthresh.datasets.registry import DATASETS

#: m of the WikiLSHTC-325K test set (the lists hold only the top 1,000 documents of each label)
WIKI_NUM_DOCS = 587_084
WIKI_N_LABELS = 283_350


@DATASETS.register("wikilshtc")
class WikiLSHTC(RankedListFile):
    """WikiLSHTC-325K; ``path`` is absolute or relative to $XMLTHRESH_DATA (downloaded when missing),
    ``member`` picks the file inside the zip (default: its only file), ``cache`` keeps the parsed lists."""

    def __init__(self, path: str = "berger/WikiXML_no_empty.zip", num_docs: int | None = WIKI_NUM_DOCS,
                 name: str = "wikilshtc", include_predict_all: bool = True, first_n_labels: int | None = None,
                 member: str | None = None, cache: bool = True):
        super().__init__(path=path, num_docs=num_docs, name=name, include_predict_all=include_predict_all,
                         first_n_labels=first_n_labels, member=member, cache=cache)

    def _load(self) -> RankedLists:
        if self.num_docs is None:
            raise ValueError(
                f"dataset {self.registry_name!r}: num_docs is required -- the lists are truncated (top 1,000 "
                f"documents), m of the WikiLSHTC-325K test set is {WIKI_NUM_DOCS}"
            )
        return super()._load()
