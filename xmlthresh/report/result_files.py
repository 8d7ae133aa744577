"""The jobs' ``result.json`` files of a sweep folder, read by one rule: every report and study reads them here.

Why: each report read them its own way, and a file a job did not write as it should (cut short by a full
disk, edited by hand, a JSON list) gave a raw ``JSONDecodeError`` or ``AttributeError`` in one study, a blank
cell in the comparison page and a named error in another study. Here a file is valid JSON, an object, and
its numbers are numbers (or null), else a :class:`ResultFileError` names the file, the field and the fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xmlthresh._util.errors import InputError

#: fields that are numbers (or null) wherever a job writes them: the thresholds task's and the CDE task's
NUMERIC_FIELDS = ("f_macro", "macro_f", "micro_f", "precision", "recall", "ceiling_f_macro", "achievable_f_macro",
                  "population_regret", "lower_bound", "upper_bound", "seed", "n_docs", "fit_n_docs", "beta",
                  "rel_loss_direct", "rel_loss_direct_se", "rel_loss_approx", "rel_loss_approx_se", "loss_approx",
                  "loss_approx_se", "loss_direct", "loss_direct_se", "nll", "nll_se", "coverage50", "coverage90",
                  "n_train", "n_test")
#: fields that are F-measures, precisions or recalls: in [0, 1] (a hand-edited 1.7 went into the paired
#: differences, a NaN into an empty cell counted as a run)
SHARES = ("f_macro", "macro_f", "micro_f", "precision", "recall", "ceiling_f_macro", "achievable_f_macro",
          "lower_bound", "upper_bound")
#: what to do about a job's file that cannot be read
FIX = "re-run that job or delete its folder"


class ResultFileError(InputError):
    """A job's ``result.json`` that is not what jobs write; the message names the file and the fix."""


def result_paths(sweep_dir: Path) -> list[Path]:
    """The ``<job>/result.json`` files of a sweep folder, in job order (``2`` before ``10``)."""
    def order(path: Path) -> tuple[int, str]:
        name = path.parent.name
        return (int(name), "") if name.isdigit() else (1 << 62, name)

    return sorted(Path(sweep_dir).glob("*/result.json"), key=order)


def read_result(path: Path) -> dict[str, Any]:
    """The result of one job, checked: valid JSON, an object, numbers where :data:`NUMERIC_FIELDS` are."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultFileError(f"{path} cannot be read ({getattr(exc, 'strerror', None) or exc}); {FIX}") from None
    try:
        result = json.loads(text)
    except ValueError as exc:
        raise ResultFileError(f"{path} is not valid JSON ({exc}); {FIX}") from None
    if not isinstance(result, dict):
        raise ResultFileError(f"{path} is not a JSON object but a {type(result).__name__}; {FIX}")
    for key in NUMERIC_FIELDS:
        value = result.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ResultFileError(f"{path}: {key} must be a number, got {value!r}; {FIX}")
        if key in SHARES and value is not None and not 0.0 <= value <= 1.0:  # NaN fails this too
            raise ResultFileError(f"{path}: {key} must be a number in [0, 1] (an F-measure, a precision or a "
                                  f"recall), got {value!r}; {FIX}")
    return result
