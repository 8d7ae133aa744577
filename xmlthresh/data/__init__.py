"""Data: the ranked-list model, its candidate thresholds, file readers and verified downloads."""

from .candidates import Candidates, build_candidates
from .ranked_list_file import RankedListFormatError, parse_ranked_lists, read_ranked_lists
from .ranked_lists import RankedLists, RankedListsError

__all__ = [
    "Candidates",
    "RankedListFormatError",
    "RankedLists",
    "RankedListsError",
    "build_candidates",
    "parse_ranked_lists",
    "read_ranked_lists",
]
