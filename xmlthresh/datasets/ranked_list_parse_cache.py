"""The parse cache of ranked-list files: :func:`cached_ranked_lists` is
:func:`xmlthresh.data.ranked_list_format.read_ranked_lists` through the keyed store
(:mod:`xmlthresh.data.keyed_store`, kind ``ranked_lists``).

Parsing a large text file (WikiLSHTC: 569 MB inside a zip) takes seconds, loading its parsed arrays from the
cache milliseconds. The parser knows nothing about this cache: the dataset layer (``ranked_lists`` and
``wikilshtc`` with ``cache=true``) wraps it around the parser.

* The entry is keyed by the resolved source path, the zip member, ``num_docs`` and :data:`FORMAT_VERSION`;
  ``include_predict_all`` and ``name`` are not part of it, they are applied on load.
* An entry that does not validate as :class:`RankedLists` is corrupt (deleted with a warning, parsed again).
* Integer arrays are stored as int32 when their values fit (half the size) and widened on load.
* The warning about complete lists with unranked relevant documents is repeated on a hit.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from xmlthresh.data.keyed_store import Arrays, cached
from xmlthresh.data.ranked_list_format import read_ranked_lists, warn_unranked
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.data.streaming import DEFAULT_CHUNK_SIZE

log = logging.getLogger(__name__)

#: bump when the stored arrays or the parser's semantics change: old entries are then ignored
FORMAT_VERSION = 3  # 1: the .npz entries of xmlthresh.data.cache; 2: before sizes > num_docs and repeated ids were refused
_ARRAYS = ("relevant_rank", "label_ptr", "list_length", "n_relevant", "label_ids")
_INT32 = np.iinfo(np.int32)


def cached_ranked_lists(
    path: str | Path,
    num_docs: int | None = None,
    include_predict_all: bool = True,
    name: str | None = None,
    *,
    member: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: bool = True,
    allow_duplicate_ids: bool = False,
) -> RankedLists:
    """The ranked lists of ``path`` (a file or a zip member; parameters as :func:`read_ranked_lists`): from the
    cache when the source is unchanged, else parsed and stored there."""
    path = Path(path)
    name = name or path.stem
    key = {"path": str(path.resolve()), "member": member, "num_docs": num_docs, "version": FORMAT_VERSION,
           "allow_duplicate_ids": bool(allow_duplicate_ids)}
    result = cached(
        "ranked_lists", Path(member).stem if member else path.stem, key, [path],
        build=lambda: read_ranked_lists(path, num_docs, include_predict_all, name, member=member,
                                        chunk_size=chunk_size, progress=progress,
                                        allow_duplicate_ids=allow_duplicate_ids),
        encode=_to_arrays,
        decode=lambda meta, arrays: RankedLists(**{k: arrays[k] for k in _ARRAYS}, num_docs=int(meta["num_docs"]),
                                                include_predict_all=include_predict_all, name=name),
    )
    if result.hit:
        warn_unranked(result.value, f"{path}:{member}" if member else str(path))
    return result.value


def _to_arrays(lists: RankedLists) -> tuple[dict[str, Any], Arrays]:
    return {"num_docs": lists.num_docs}, {key: _narrow(getattr(lists, key)) for key in _ARRAYS}


def _narrow(array: np.ndarray) -> np.ndarray:
    """int32 when an integer array's values fit, else the array unchanged."""
    if array.dtype.kind in "iu" and array.itemsize > 4 and (
        array.size == 0 or (array.min() >= _INT32.min and array.max() <= _INT32.max)
    ):
        return array.astype(np.int32)
    return array
