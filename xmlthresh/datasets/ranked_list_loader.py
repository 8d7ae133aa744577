"""``ranked_lists``: any file in the published ranked-list format (``espgame`` and ``example`` are presets).

Plain text or a zip archive (read without unpacking; ``member`` picks the file of a multi-file archive);
``cache=true`` keeps the parsed lists in the derived-cache directory (:mod:`.ranked_list_parse_cache`).

``path`` is absolute or relative to the data directory ($XMLTHRESH_DATA). Files of the reference work are
known by their relative path: when missing they are downloaded from their public origin and verified.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from xmlthresh.data.download import DataUnavailableError, RemoteFile, ensure_file
from xmlthresh.data.ranked_list_format import read_ranked_lists
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh._util.paths import data_dir
from xmlthresh.validation import check_bool, check_int
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.ranked_list_parse_cache import cached_ranked_lists
from xmlthresh.datasets.registry import DATASETS

_BERGER = "https://raw.githubusercontent.com/melaanya/f_macro_optimization/cf821f7e6459f48a449066c79a6d4c4cdcd49004/data"

#: raw files of the reference work (Berger & Guda, Pattern Recognition 2020), by relative path
KNOWN_FILES: dict[str, RemoteFile] = {
    remote.relpath: remote
    for remote in (
        RemoteFile("berger/ESPGameNN.txt", f"{_BERGER}/ESPGameNN.txt",
                   "01728542919ea9cbb9953183ab2bddd05ff13d03655378acdd7100f5d5f62598"),
        RemoteFile("berger/Example.txt", f"{_BERGER}/Example.txt",
                   "ef8b219f928ad7ba6a0d8bd011c05fe1537f437c3e249930b017cc031435ba28"),
        RemoteFile("berger/WikiXML_no_empty.zip", f"{_BERGER}/WikiXML_no_empty.zip",
                   "caeddfc8b303c69d4d9cb0947c0997872d0293cc8881399ecb86228d16465be1"),
    )
}


def resolve_data_file(path: str) -> Path:
    """Local path of a data file: absolute paths as given; relative ones under the data directory,
    downloaded first when they are a known file of a public origin."""
    candidate = Path(path).expanduser()
    if candidate.is_absolute():
        _refuse_directory(candidate)
        if not candidate.is_file():
            raise DataUnavailableError(f"{candidate} does not exist")
        return candidate
    remote = KNOWN_FILES.get(candidate.as_posix())
    if remote is not None:
        return ensure_file(remote)
    local = data_dir() / candidate
    _refuse_directory(local)
    if not local.is_file():
        raise DataUnavailableError(
            f"{local} does not exist (relative paths are looked up under the data directory "
            f"{data_dir()}, set by XMLTHRESH_DATA)"
        )
    return local


def _refuse_directory(path: Path) -> None:
    """A directory where a file belongs is named as such (it used to be reported as "does not exist")."""
    if path.is_dir():
        examples = sorted(p.name for p in path.iterdir() if p.is_file())[:3]
        hint = f" (it holds e.g. {', '.join(examples)})" if examples else " (it holds no file)"
        raise DataUnavailableError(f"dataset.path {path} is a directory, not a ranked-list file{hint}; "
                                   f"give the path of the file itself")


@DATASETS.register("ranked_lists")
class RankedListFile(Dataset):
    """Ranked lists read from ``path``; ``num_docs`` is m (required for truncated lists); a class id on two
    lines is an error unless ``allow_duplicate_ids`` (its labels then share the id in thresholds.csv)."""

    def __init__(self, path: str, num_docs: int | None = None, name: str | None = None, include_predict_all: bool = True,
                 first_n_labels: int | None = None, member: str | None = None, cache: bool = False,
                 allow_duplicate_ids: bool = False):
        super().__init__(name=name or Path(path).stem, include_predict_all=include_predict_all,
                         first_n_labels=first_n_labels)
        self.path = path
        self.num_docs = num_docs
        self.member = member
        self.cache = cache
        self.allow_duplicate_ids = allow_duplicate_ids

    def _check_params(self) -> None:
        super()._check_params()
        check_int("dataset.num_docs", self.num_docs, 1, optional=True)
        check_bool("dataset.cache", self.cache)
        check_bool("dataset.allow_duplicate_ids", self.allow_duplicate_ids)
        if not isinstance(self.path, (str, PathLike)) or not str(self.path):
            raise ValueError(f"dataset.path must be a file path, got {self.path!r}")

    def _load(self) -> RankedLists:
        read = cached_ranked_lists if self.cache else read_ranked_lists
        return read(resolve_data_file(self.path), num_docs=self.num_docs, include_predict_all=self.include_predict_all,
                    name=self.name, member=self.member, allow_duplicate_ids=self.allow_duplicate_ids)
