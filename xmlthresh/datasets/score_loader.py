"""``scores``: your own ranker's output -- scores and true labels per split -- from NumPy ``.npz`` files.

Bring the predictions of any XMC library: write them with :func:`xmlthresh.data.score_format.save_scores` (or
``np.savez``) in the layout documented in :mod:`xmlthresh.data.score_format`, then run
``dataset=scores dataset.path=/path/preds.npz``. Strategies fit their thresholds on the ``validation`` split
and are evaluated on ``test``.

``native_threshold`` (null: what the file declares, if anything) sets the producer's own decision threshold
on the scores, which ``fallback=native`` gives labels without a fit positive.

``path`` is one ``.npz`` archive or a directory of them; a relative ``path`` is looked up under the data
directory ($XMLTHRESH_DATA), then under the current directory.

``save_scores``, ``load_scores`` and ``ScoreFileError`` are re-exported here: this was their home before the
format moved to :mod:`xmlthresh.data.score_format`, and user code and the tests import them from here.
"""

from __future__ import annotations

import os
from pathlib import Path

from xmlthresh.data.download import DataUnavailableError
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.score_format import ScoreFileError, load_scores, save_scores
from xmlthresh.data.scores import check_native_threshold
from xmlthresh._util.paths import data_dir, launch_dir
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS

__all__ = ["ScoreFileError", "ScoreFiles", "load_scores", "resolve_score_path", "save_scores"]


@DATASETS.register("scores")
class ScoreFiles(Dataset):
    """A ranker's scores and the true labels read from ``path`` (see the module docstring for the layout)."""

    def __init__(self, path: str, name: str | None = None, include_predict_all: bool = True,
                 first_n_labels: int | None = None, native_threshold: float | None = None):
        if not isinstance(path, (str, os.PathLike)) or str(path).strip() in ("", "???"):  # ??? = Hydra's "missing"
            raise DataUnavailableError("dataset=scores needs dataset.path=<a .npz file or a folder of them> (see "
                                       "xmlthresh.data.score_format for the layout)")
        super().__init__(name=name or Path(path).stem, include_predict_all=include_predict_all,
                         first_n_labels=first_n_labels)
        self.path = path
        self.native_threshold = check_native_threshold(native_threshold, "dataset.native_threshold")

    def _load(self) -> ScoreData:
        data = load_scores(resolve_score_path(self.path), name=self.name)
        if self.native_threshold is None:
            return data  # the file's own declaration, if any
        return data.with_native_threshold(self.native_threshold)


def resolve_score_path(path: str | os.PathLike) -> Path:
    """An existing file or directory: absolute as given; relative under $XMLTHRESH_DATA, then the directory the
    command was started from (not the run directory that ``hydra.job.chdir=true`` moves into)."""
    candidate = Path(path).expanduser()
    if candidate.is_absolute():
        if not candidate.exists():
            raise DataUnavailableError(f"{candidate} does not exist{_npz_hint(candidate)}")
        return candidate
    started_in = launch_dir()
    for base in (data_dir(), started_in):
        if (base / candidate).exists():
            return base / candidate
    hint = _npz_hint(started_in / candidate) or _npz_hint(data_dir() / candidate)
    raise DataUnavailableError(
        f"{candidate} does not exist under the data directory {data_dir()} (XMLTHRESH_DATA) "
        f"nor under the directory the command was started from, {started_in}{hint}"
    )


def _npz_hint(path: Path) -> str:
    """"; <path>.npz does" when save_scores wrote the file under the name with .npz added, else ""."""
    beside = path.with_name(path.name + ".npz")
    if path.suffix != ".npz" and beside.is_file():
        return f", but {beside} does (save_scores adds .npz to a name without it): dataset.path={beside}"
    return ""
