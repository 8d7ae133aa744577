"""Checks of user input at the public boundary: score matrices, label matrices and their agreement, and the
scalar parameters of every config group (:func:`check_int`, :func:`check_number`, :func:`check_bool`,
:func:`check_beta`, used by the plugins' ``_check_params``), and the memory a size parameter would claim
(:func:`check_size`, :func:`check_memory`: refused before any work when it exceeds :func:`memory_budget`).

Everything the library is handed from outside (``fit_thresholds``, a strategy's ``fit(scores, labels)`` /
``predict(scores)``, ``ThresholdClassifier``) goes through these functions once; deeper code trusts its
inputs. Each problem raises one :class:`InputError` (a ``ValueError``) whose message says what is wrong,
where, and what to do -- never a raw traceback from numpy, scipy or a numba kernel.

Accepted forms:

* scores: a dense 2-D numeric array (documents x labels; lists and other array-likes are converted), or a
  scipy CSR (or CSC) matrix / array of **top-k** scores, whose missing entries are *unscored* (they rank
  below every scored document of the label). A stored zero is a score of 0, not "unscored". Scores must be
  finite, and a CSR must be in canonical format (indices sorted within each row, no (document, label) pair
  stored twice: scipy would add duplicates up silently).
* labels: 0/1 or boolean, dense or sparse (CSR/CSC), of the same shape as the scores.

Only numpy and scipy are imported here (``import xmlthresh`` stays light).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from xmlthresh._util.errors import InputError  # the public name of input errors is xmlthresh.validation.InputError
from xmlthresh._util.lazy_imports import lazy_module


sp = lazy_module("scipy.sparse")  # loaded on first use: ranked-list runs never need it


#: the accepted range of beta: beyond it F_beta is numerically precision alone (or recall alone), and
#: b^2 * (counts) in the kernels would approach overflow (beta = 1e200 overflows b^2 itself)
BETA_RANGE = (1e-6, 1e6)


def _type_name(value: Any) -> str:
    return type(value).__name__


def check_int(name: str, value: Any, minimum: int | None = None, maximum: int | None = None, *,
              optional: bool = False) -> int | None:
    """``value`` as an int within [minimum, maximum], or an :class:`InputError` naming ``name``, the value and
    the expected range. Floats (even 4.0: a config that says 4.5 meant something else), booleans and text are
    rejected, never truncated; ``optional`` also accepts None (returned as None)."""
    if value is None and optional:
        return None
    expected = _int_range(minimum, maximum) + (" (or null)" if optional else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be {expected}, got {value!r} ({_type_name(value)})")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise InputError(f"{name} must be {expected}, got {value!r}")
    return int(value)


def _int_range(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f"an integer in [{minimum}, {maximum}]"
    if minimum is not None:
        return f"an integer >= {minimum}"
    if maximum is not None:
        return f"an integer <= {maximum}"
    return "an integer"


def check_number(name: str, value: Any, minimum: float | None = None, maximum: float | None = None, *,
                 strict_minimum: bool = False) -> float:
    """``value`` as a finite float within the range (``strict_minimum``: ``> minimum``), or an
    :class:`InputError` naming ``name``, the value and the range; booleans, text, NaN and infinities are
    rejected."""
    low = "" if minimum is None else f"{'>' if strict_minimum else '>='} {minimum:g}"
    high = "" if maximum is None else f"<= {maximum:g}"
    expected = "a finite number" + (f" {low}" if low else "") + (" and" if low and high else "") + \
        (f" {high}" if high else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{name} must be {expected}, got {value!r} ({_type_name(value)})")
    number = float(value)
    too_low = minimum is not None and (number <= minimum if strict_minimum else number < minimum)
    if not np.isfinite(number) or too_low or (maximum is not None and number > maximum):
        raise InputError(f"{name} must be {expected}, got {value!r}")
    return number


#: the most parallel workers a count may ask for (joblib takes up to a million, each a process or a thread)
MAX_WORKERS = 1024


def check_n_jobs(name: str, value: Any) -> int | None:
    """joblib's number of workers: None (its default), a positive count, or -1, -2, ... (all cores, all but
    one, ...); 0 means nothing to joblib, which said only "n_jobs == 0 in Parallel has no meaning"."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value == 0 \
            or not -MAX_WORKERS <= value <= MAX_WORKERS:
        raise InputError(f"{name} must be a number of parallel workers: 1 to {MAX_WORKERS}, or -1 for all cores (-2 "
                         f"all but one, ...), or null for joblib's default; got {value!r}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool: only true/false are accepted (a string such as ``maybe`` or ``no`` is truthy in
    Python and would silently mean true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be true or false, got {value!r} ({_type_name(value)})")
    return bool(value)


def check_beta(value: Any) -> float:
    """beta of F_beta as a float in :data:`BETA_RANGE` (see there why it is bounded)."""
    low, high = BETA_RANGE
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not low <= float(value) <= high:
        raise InputError(f"beta must be a number in [{low:g}, {high:g}] (F_beta weights recall beta times as "
                         f"much as precision), got {value!r} ({_type_name(value)})")
    return float(value)


#: sets the memory budget of :func:`check_size` / :func:`check_memory` (bytes, or with a K/M/G/T suffix:
#: ``XMLTHRESH_MAX_MEMORY=4G``); without it the budget is the memory available when the check runs
MEMORY_ENV = "XMLTHRESH_MAX_MEMORY"
_SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def memory_budget() -> tuple[int | None, str]:
    """(bytes a run may claim, where that number comes from): ``$XMLTHRESH_MAX_MEMORY`` when set; else the
    memory available now -- ``MemAvailable`` of ``/proc/meminfo`` (what can be allocated without swapping),
    lowered to the room left under a cgroup (v2) limit when the process runs in one (a container, a SLURM
    job); else the physical memory (``os.sysconf``); (None, ...) when nothing says (no limit is applied)."""
    text = os.environ.get(MEMORY_ENV, "").strip()
    if text:
        number, suffix = (text[:-1], text[-1].upper()) if text[-1].upper() in _SUFFIXES else (text, "")
        try:
            value = float(number) * _SUFFIXES[suffix]
        except ValueError:
            raise InputError(f"{MEMORY_ENV} must be a number of bytes, optionally with K, M, G or T, got {text!r}") \
                from None
        if not (math.isfinite(value) and value > 0):
            raise InputError(f"{MEMORY_ENV} must be a positive number of bytes, got {text!r}")
        return int(value), MEMORY_ENV
    budget, source = _meminfo_available(), "MemAvailable in /proc/meminfo"
    room = _cgroup_room()
    if room is not None and (budget is None or room < budget):
        budget, source = room, "the room left under the cgroup's memory.max"
    if budget is None:
        try:
            budget, source = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "physical memory"
        except (ValueError, OSError, AttributeError):
            return None, "unknown"
    return budget, source


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room() -> int | None:
    """memory.max - memory.current of this process's cgroup (v2), or None without a limit."""
    try:
        relative = next(line.split("::", 1)[1] for line in Path("/proc/self/cgroup").read_text().splitlines()
                        if line.startswith("0::"))
        folder = Path("/sys/fs/cgroup") / relative.strip().lstrip("/")
        limit = (folder / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((folder / "memory.current").read_text().strip()))
    except (OSError, ValueError, StopIteration):
        return None


def _gb(n_bytes: float) -> str:
    """A memory size in the unit that shows it (a budget of 1 KB was "0.0 MB")."""
    for unit, size in (("GB", 1e8), ("MB", 1e5), ("KB", 1e2)):
        if n_bytes >= size:
            return f"{n_bytes / (size * 10):,.1f} {unit}"
    return f"{n_bytes:,.0f} bytes"


def check_memory(what: str, n_bytes: float, advice: str) -> None:
    """An :class:`InputError` when ``what`` (``"dataset.n_labels x dataset.num_docs = 10^5 x 10^6 cells x 50
    bytes"``) would need more than :func:`memory_budget` -- said before any work, instead of running until
    the kernel kills the process; ``advice`` says what to lower."""
    budget, source = memory_budget()
    if budget is not None and n_bytes > budget:
        raise InputError(f"{what} need about {_gb(n_bytes)} of memory, more than the {_gb(budget)} available "
                         f"({source}); {advice} ({MEMORY_ENV} sets another budget)")


def check_size(name: str, value: Any, bytes_per_unit: float, minimum: int = 1, *, unit: str = "unit",
               square: bool = False, optional: bool = False) -> int | None:
    """``value`` as an integer >= ``minimum`` (:func:`check_int`) whose memory, ``bytes_per_unit`` times
    ``value`` units (``square``: (value + 1)^2 units, a grid over two axes), fits in :func:`memory_budget`;
    else an :class:`InputError` naming the parameter, the memory it needs, the budget and where it comes from,
    and the largest value that fits.

    ``bytes_per_unit`` is the peak memory of one unit measured on the code that allocates it (rounded up),
    so the limit is real: a value just below it runs. ``optional`` accepts None."""
    value = check_int(name, value, minimum, optional=optional)
    if value is None:
        return None
    units = (value + 1) ** 2 if square else value
    budget, source = memory_budget()
    if budget is None or units * bytes_per_unit <= budget:
        return value
    fitting = int(budget // bytes_per_unit)
    limit = math.isqrt(fitting) - 1 if square else fitting
    short = name.rsplit(".", 1)[-1]
    counted = f"({short} + 1)^2 = {units:.3g} {unit}s x {bytes_per_unit:g} bytes" if square else \
        f"{bytes_per_unit:g} bytes per {unit}"
    raise InputError(f"{name}={value} needs about {_gb(units * bytes_per_unit)} of memory ({counted}), more than "
                     f"the {_gb(budget)} available ({source}); the limit here is {name} <= {max(limit, 0):,} "
                     f"({MEMORY_ENV} sets another budget)")


def check_scores(scores: Any, *, n_labels: int | None = None, what: str = "scores") -> np.ndarray | sp.csr_matrix:
    """``scores`` as a float64 dense array or a canonical float64 CSR matrix, or an :class:`InputError`.

    ``n_labels``: the number of label columns expected (that of the fitted model, for prediction); a batch of
    no documents is then allowed (its prediction is empty), as a pipeline's last chunk may be."""
    if isinstance(scores, np.ma.MaskedArray):  # np.asarray would drop the mask without a word
        raise InputError(f"{what} are a masked array: pass a CSR matrix with the unscored entries left out "
                         "(they rank below every scored document), or fill the masked entries")
    if sp.issparse(scores):
        matrix = _as_csr(scores, what)
        values = matrix.data
        if not (np.issubdtype(values.dtype, np.number) or values.dtype == bool) or np.iscomplexobj(values):
            raise InputError(f"{what} must hold real numbers, got dtype {values.dtype}")
        _check_exact_in_float(values, what)
        matrix = matrix.astype(np.float64, copy=True)  # a copy: later steps never change the caller's matrix
        values = matrix.data
    else:
        try:
            matrix = np.asarray(scores)
        except Exception as exc:  # ragged nested lists and the like
            raise InputError(f"{what} must be a 2-D numeric array (documents x labels) or a scipy CSR matrix: "
                             f"{exc}") from None
        if matrix.dtype == object or not (np.issubdtype(matrix.dtype, np.number) or matrix.dtype == bool) \
                or np.iscomplexobj(matrix):
            raise InputError(f"{what} must be a 2-D array of real numbers (documents x labels) or a scipy CSR "
                             f"matrix, got dtype {matrix.dtype}")
        if matrix.ndim != 2:
            raise InputError(f"{what} must be 2-D (documents x labels), got {matrix.ndim}-D with shape "
                             f"{matrix.shape}; {_reshape_hint(matrix, n_labels, what)}")
        _check_exact_in_float(matrix, what)
        matrix = np.asarray(matrix, dtype=np.float64)
        values = matrix
    if (matrix.shape[0] == 0 and n_labels is None) or matrix.shape[1] == 0:  # predicting: an empty batch is one
        raise InputError(f"{what} have shape {matrix.shape}: need at least one document and one label")
    if n_labels is not None and matrix.shape[1] != n_labels:
        raise InputError(f"{what} have {matrix.shape[1]} label columns, but the thresholds were fitted on "
                         f"{n_labels} labels; pass scores for the same labels, in the same order")
    bad = ~np.isfinite(values)
    if bad.any():
        if sp.issparse(matrix):
            first = int(np.flatnonzero(bad)[0])
            doc = int(np.searchsorted(matrix.indptr, first, side="right") - 1)
            label = int(matrix.indices[first])
        else:
            doc, label = (int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{what}: {int(np.count_nonzero(bad))} value(s) are NaN or infinite, e.g. document {doc}, "
                         f"label {label}; clean the ranker output (an unscored entry of a top-k CSR is simply "
                         "left out)")
    return matrix


#: integers beyond this magnitude are not all exact in float64 (2**53): two different scores could become one
FLOAT_EXACT_INTEGER = 2**53


def _check_exact_in_float(values: np.ndarray, what: str) -> None:
    """Integer scores must keep their order in float64: beyond 2**53 neighbouring integers merge (two documents
    with different scores would tie, and the fitted F-macro would be of another ranking)."""
    if values.size and np.issubdtype(values.dtype, np.integer):
        largest = int(np.abs(values.astype(object) if values.dtype == np.uint64 else values).max())
        if largest > FLOAT_EXACT_INTEGER:
            raise InputError(f"{what}: integer scores up to {largest} are beyond 2**53, where float64 cannot tell "
                             "neighbouring integers apart; rank-transform them or scale them down first")


def check_labels(labels: Any, shape: tuple[int, int], *, what: str = "labels",
                 shape_of: str = "scores") -> sp.csr_matrix:
    """``labels`` (0/1 or bool, dense or sparse) as a canonical boolean CSR matrix of ``shape``, the shape of
    ``shape_of`` (named in the message when the two differ)."""
    if sp.issparse(labels):
        matrix = _as_csr(labels, what)
        values = matrix.data
    else:
        try:
            matrix = np.asarray(labels)
        except Exception as exc:
            raise InputError(f"{what} must be a 2-D 0/1 array (documents x labels) or a scipy CSR matrix: "
                             f"{exc}") from None
        if matrix.ndim != 2:
            raise InputError(f"{what} must be 2-D (documents x labels), got {matrix.ndim}-D with shape "
                             f"{matrix.shape}; {_reshape_hint(matrix, shape[1] if len(shape) == 2 else None, what)}")
        values = matrix
    if tuple(matrix.shape) != tuple(shape):
        raise InputError(f"{shape_of} and {what} differ in shape: {shape_of} {tuple(shape)}, {what} "
                         f"{tuple(matrix.shape)}; both are documents x labels, with the same documents and labels "
                         "in the same order")
    if values.dtype != bool:
        if not np.issubdtype(values.dtype, np.number):
            raise InputError(f"{what} must be 0/1 or boolean, got dtype {values.dtype}")
        bad = (values != 0) & (values != 1)
        if bad.any():
            raise InputError(f"{what} must be 0/1 (relevant or not), found {int(np.count_nonzero(bad))} other "
                             f"value(s), e.g. {values[bad].ravel()[0].item()!r}; binarise them first, e.g. labels > 0")
    out = sp.csr_matrix(matrix, dtype=bool, copy=True)  # a copy: eliminate_zeros must not touch the caller's
    out.eliminate_zeros()
    return out


def check_label_names(names: Any, n_labels: int, *, what: str = "label_names") -> np.ndarray:
    """One name per label, as a 1-D array a file keeps as it is, or an :class:`InputError`: the one rule for
    label names wherever they enter (the library, score files, saved thresholds).

    Integers and text stay as they are; bytes are decoded as UTF-8 (they were written as ``b'cat'``), dates
    become their ISO text, anything else its ``str``. A single value, a 2-D array (``(n, 1)`` printed as
    ``['cat']``), a count other than ``n_labels`` and a repeated name are refused: thresholds.csv and the
    predictions name each label, and two labels of one name cannot be told apart."""
    array = np.asarray(names)
    if array.ndim == 0:
        raise InputError(f"{what} must hold one name per label ({n_labels}), got a single value "
                         f"{_shorten(array.item())!r}; pass a list or a 1-D array of names")
    if array.ndim != 1:
        hint = f" (flatten it: {what}.ravel())" if array.size == n_labels else ""
        raise InputError(f"{what} must be 1-D, one name per label ({n_labels}), got shape {array.shape}{hint}")
    if len(array) != n_labels:
        raise InputError(f"{what} must hold one name per label ({n_labels}), got {len(array)}")
    if array.dtype.kind == "S" or (array.dtype == object and any(isinstance(v, (bytes, bytearray)) for v in array)):
        try:
            array = np.array([v.decode("utf-8") if isinstance(v, (bytes, bytearray, np.bytes_)) else str(v)
                              for v in array.tolist()], dtype=str)
        except UnicodeDecodeError as exc:
            raise InputError(f"{what} holds bytes that are not UTF-8 text ({exc}); pass the names as text") from None
    elif array.dtype.kind == "M":  # dates: their ISO text (a saved file held "datetime.datetime(2020, 1, 1, 0, 0)")
        array = np.datetime_as_string(array)
    elif array.dtype.kind not in "iuU":  # objects, floats, bools: as text, which a file keeps as it is
        array = array.astype(str)
    values, counts = np.unique(array, return_counts=True)
    if (counts > 1).any():
        raise InputError(f"{what} repeats {values[counts > 1].tolist()[0]!r} ({int(counts.max())} times at most, "
                         f"{int((counts > 1).sum())} name(s) repeated); give every label a name of its own")
    return array


def _shorten(value: Any, limit: int = 40) -> Any:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _reshape_hint(matrix: np.ndarray, n_labels: int | None, what: str) -> str:
    """How to make a 1-D array 2-D: a row when it holds one value per (known) label, a column for one label."""
    if matrix.ndim == 1:
        if n_labels is not None and n_labels != 1 and matrix.size == n_labels:
            return f"one document is a row: {what}.reshape(1, -1)"
        if n_labels is None:
            return f"one label is a column: {what}.reshape(-1, 1); one document is a row: {what}.reshape(1, -1)"
    return f"one label is a column: {what}.reshape(-1, 1)"


def check_scores_labels(scores: Any, labels: Any) -> tuple[np.ndarray | sp.csr_matrix, sp.csr_matrix]:
    """Both checks, plus their agreement in shape."""
    scores = check_scores(scores)
    return scores, check_labels(labels, scores.shape)


def _as_csr(matrix: Any, what: str) -> sp.csr_matrix:
    """A CSR (matrix form) view of a CSR/CSC input in canonical format (a sorted copy when its indices are not
    sorted), or an error saying how to fix it (a pair stored twice, another format)."""
    if matrix.format not in ("csr", "csc"):
        raise InputError(f"{what} are a scipy {matrix.format.upper()} matrix; pass CSR (documents x labels), e.g. "
                         f"{what}.tocsr() -- check first that no (document, label) pair is stored twice, "
                         "since the conversion adds duplicates up")
    if matrix.ndim != 2:
        raise InputError(f"{what} must be 2-D (documents x labels), got shape {matrix.shape}")
    if not matrix.has_canonical_format:
        probe = matrix.copy()
        probe.sort_indices()
        if _stores_a_pair_twice(probe):
            raise InputError(f"{what}: the {matrix.format.upper()} matrix stores some (document, label) pair more "
                             f"than once; keep one value per pair (sum_duplicates() would add them up, which is "
                             f"rarely what a score or a relevance means)")
        matrix = probe  # indices in rank order (top-k output): a sorted copy means the same, the caller's is untouched
    if matrix.format == "csc" or not isinstance(matrix, sp.csr_matrix):
        return sp.csr_matrix(matrix)
    return matrix


def _stores_a_pair_twice(matrix: sp.csr_matrix | sp.csc_matrix) -> bool:
    """Whether a compressed matrix with sorted indices holds a repeated index within one row (column)."""
    indices, indptr = matrix.indices, matrix.indptr
    if len(indices) < 2:
        return False
    repeated = indices[1:] == indices[:-1]
    starts = indptr[1:-1]
    repeated[starts[(starts > 0) & (starts < len(indices))] - 1] = False  # pairs across a row boundary
    return bool(repeated.any())


def match_frames(reference: Any, other: Any, names: tuple[str, str], owners: tuple[str, str]) -> Any:
    """The pandas DataFrame ``other`` with its columns and rows in the order of the DataFrame ``reference``'s,
    matched by name as pandas users expect (labels in another column order gave another F-macro without a
    word). ``names`` are how the two are called (``("scores", "labels")``), ``owners`` their possessives in
    messages (``("the scores'", "the labels'")``). Columns that differ, and rows that differ and cannot be
    matched (a repeated index), are an :class:`InputError`."""
    columns = list(reference.columns)
    if set(other.columns) != set(columns) or len(other.columns) != len(columns):
        extra = [c for c in other.columns if c not in set(columns)][:3]
        missing = [c for c in columns if c not in set(other.columns)][:3]
        raise InputError(f"{owners[1]} DataFrame columns do not match {owners[0]} (only in {names[1]}: {extra}, "
                         f"only in {names[0]}: {missing}); give both the same label columns")
    if not other.index.equals(reference.index):
        if not (other.index.is_unique and reference.index.is_unique and set(other.index) == set(reference.index)):
            raise InputError(f"{owners[1]} DataFrame rows do not match {owners[0]} (different index); give both the "
                             "same documents, or plain arrays in the same order")
        other = other.loc[reference.index]
    return other[columns]
