"""Data: the ranked-list model, its candidate thresholds, file readers and verified downloads.

The names below are loaded on first use, so that importing a light module of this package (``download``,
``streaming``) does not import numba and the kernels of the others.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> module of this package that defines it
_LAZY = {
    "Candidates": "candidates",
    "build_candidates": "candidates",
    "RankedListFormatError": "ranked_list_format",
    "parse_ranked_lists": "ranked_list_format",
    "read_ranked_lists": "ranked_list_format",
    "RankedLists": "ranked_lists",
    "RankedListsError": "ranked_lists",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:  # a submodule (``from xmlthresh.data import keyed_store``) or an unknown name
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
