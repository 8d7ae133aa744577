"""Binary cache of parsed ranked lists in the derived-cache directory (``xmlthresh.paths.cache_dir()``).

Parsing a large text file (WikiLSHTC: 569 MB inside a zip) takes seconds; loading its parsed arrays takes
milliseconds. One cache entry is one uncompressed ``.npz`` file under ``<cache_dir>/ranked_lists/``:

* its **name** is derived from what was asked: the resolved source path, the zip member and ``num_docs``
  (plus the cache format version), so different parse parameters never share an entry;
* its **metadata** record the source's name, size and modification time: a changed source is a miss and
  its entry is rebuilt in place (no stale entries pile up), plus a CRC-32 of every array;
* it is written **atomically** (a temporary file in the same directory, then a rename): an error or a full
  disk leaves no partial entry, and a failed write only costs the cache (a warning), never the load;
* an entry that cannot be read, fails its checksums or does not validate as :class:`RankedLists` is
  **corrupt**: it is deleted with a warning and rebuilt from the source.

Integer arrays are stored as int32 when their values fit (half the size) and widened on load.
``include_predict_all`` and ``name`` are not part of the entry: they are applied on load.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from ..paths import cache_dir
from .ranked_list_file import parse_source, warn_unranked
from .npz_entries import READ_ERRORS, CorruptEntryError, discard, read_entry, source_stamp, write_entry
from .ranked_lists import RankedLists, RankedListsError
from .streaming import DEFAULT_CHUNK_SIZE, open_source

log = logging.getLogger(__name__)

#: bump when the stored layout or the parser's semantics change: old entries are then ignored
FORMAT_VERSION = 1
_ARRAYS = ("relevant_rank", "label_ptr", "list_length", "n_relevant", "label_ids")
_INT32 = np.iinfo(np.int32)


def cached_parse(
    path: str | Path,
    num_docs: int | None = None,
    member: str | None = None,
    include_predict_all: bool = True,
    name: str = "",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: bool = True,
) -> RankedLists:
    """The ranked lists of ``path`` (a file or a zip member): from the cache when the source is unchanged,
    else parsed (:func:`xmlthresh.data.ranked_list_file.parse_source`) and stored in the cache."""
    path = Path(path)
    stamp = source_stamp(path)  # FileNotFoundError for a missing source, as without cache
    entry = entry_path(path, member=member, num_docs=num_docs)
    lists = load_entry(entry, stamp, include_predict_all=include_predict_all, name=name)
    if lists is not None:
        log.debug("ranked lists of %s loaded from cache %s", path, entry)
        warn_unranked(lists, f"{path}:{member}" if member else str(path))
        return lists
    source = open_source(path, member)
    lists = parse_source(source, num_docs=num_docs, include_predict_all=include_predict_all, name=name,
                         chunk_size=chunk_size, progress=progress)
    store_entry(entry, lists, stamp)
    return lists


def entry_path(path: Path, member: str | None = None, num_docs: int | None = None) -> Path:
    """The cache file for ``path`` parsed with these parameters (a readable stem plus a digest)."""
    request = {"path": str(path.resolve()), "member": member, "num_docs": num_docs, "version": FORMAT_VERSION}
    digest = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()[:24]
    stem = Path(member).stem if member else path.stem
    return cache_dir() / "ranked_lists" / f"{stem}-{digest}.npz"


def load_entry(entry: Path, stamp: dict[str, Any], include_predict_all: bool = True,
               name: str = "") -> RankedLists | None:
    """The lists stored in ``entry``, or None when it is missing, stale (other source stamp or format
    version) or corrupt (then it is deleted, with a warning)."""
    if not entry.is_file():
        return None
    try:
        meta, arrays = read_entry(entry)
        if meta.get("version") != FORMAT_VERSION or meta.get("source") != stamp:
            log.info("cache %s is stale (source changed): rebuilding", entry)
            return None
        if len(arrays["list_length"]) != meta["n_labels"]:
            raise CorruptEntryError(f"{len(arrays['list_length'])} labels stored, {meta['n_labels']} expected")
        return RankedLists(**{key: arrays[key] for key in _ARRAYS}, num_docs=int(meta["num_docs"]),
                           include_predict_all=include_predict_all, name=name)
    except FileNotFoundError:  # removed meanwhile by another process
        return None
    except (CorruptEntryError, RankedListsError, *READ_ERRORS) as exc:
        discard(entry, exc)
        return None


def store_entry(entry: Path, lists: RankedLists, stamp: dict[str, Any]) -> bool:
    """Write ``lists`` to ``entry`` atomically; on an OS error (full disk, read-only directory) log a warning,
    leave nothing behind and return False."""
    arrays = {key: _narrow(getattr(lists, key)) for key in _ARRAYS}
    meta = {"version": FORMAT_VERSION, "source": stamp, "num_docs": lists.num_docs, "n_labels": lists.n_labels}
    return write_entry(entry, meta, arrays)


def _narrow(array: np.ndarray) -> np.ndarray:
    """int32 when an integer array's values fit, else the array unchanged."""
    array = np.ascontiguousarray(array)
    if array.dtype.kind in "iu" and array.itemsize > 4 and (
        array.size == 0 or (array.min() >= _INT32.min and array.max() <= _INT32.max)
    ):
        return array.astype(np.int32)
    return array
