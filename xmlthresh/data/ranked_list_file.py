"""Reader for the published ranked-list text format (one line per label).

    class_id size b_1 b_2 ... b_L

``size`` is s_k, the number of relevant documents of the label in the whole evaluation set; ``b_i`` is 1
when the i-th document of the ranker's order for that label is relevant, else 0. Documents carry no ids.
Blank lines are ignored. The whole file is parsed in one numba pass over its bytes (no Python loop over
tokens), keeping only the positions of the 1s, the list length and the size of every label.

Every malformed input raises :class:`RankedListFormatError` naming the file, the line and the problem.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numba
import numpy as np

from .ranked_lists import RankedLists

log = logging.getLogger(__name__)


class RankedListFormatError(ValueError):
    """A ranked-list file that does not follow the format (message: file, line, problem)."""


# Error codes of the parsing kernel.
_OK, _BAD_TOKEN, _MISSING_SIZE, _BAD_NUMBER, _SIZE_TOO_SMALL = 0, 1, 2, 3, 4
_MAX_DIGITS = 18  # fits in int64


def read_ranked_lists(
    path: str | Path,
    num_docs: int | None = None,
    include_predict_all: bool = True,
    name: str | None = None,
) -> RankedLists:
    """Parse ``path`` into :class:`RankedLists`.

    ``num_docs`` is m, the number of documents of the evaluation set. It is required when lists are
    truncated; when omitted, every list must have the same length L and m = L (complete lists).
    """
    path = Path(path)
    data = path.read_bytes()
    return parse_ranked_lists(data, source=str(path), num_docs=num_docs,
                              include_predict_all=include_predict_all, name=name or path.stem)


def parse_ranked_lists(
    data: bytes,
    source: str = "<bytes>",
    num_docs: int | None = None,
    include_predict_all: bool = True,
    name: str = "",
) -> RankedLists:
    """Parse the bytes of a ranked-list file (``source`` names it in error messages)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    max_ones = int(np.count_nonzero(buf == ord("1")))
    max_lines = int(np.count_nonzero(buf == ord("\n"))) + 1
    result = _parse(buf, max_lines, max_ones)
    (ids, sizes, lengths, label_ptr, ranks, line_of_label, n_labels, err, err_line, err_token) = result
    if err != _OK:
        raise RankedListFormatError(_describe_error(data, source, err, err_line, err_token))
    if n_labels == 0:
        raise RankedListFormatError(f"{source}: the file is empty (no ranked lists)")
    ids, sizes, lengths = ids[:n_labels], sizes[:n_labels], lengths[:n_labels]
    label_ptr, line_of_label = label_ptr[: n_labels + 1], line_of_label[:n_labels]
    ranks = ranks[: label_ptr[-1]]

    if num_docs is None:
        if np.any(lengths != lengths[0]):
            k = int(np.flatnonzero(lengths != lengths[0])[0])
            raise RankedListFormatError(
                f"{source} line {line_of_label[k]}: lists have different lengths ({lengths[0]} and "
                f"{lengths[k]}); pass num_docs (the number of documents of the evaluation set)"
            )
        num_docs = int(lengths[0])
    if num_docs < 1:
        raise RankedListFormatError(f"{source}: num_docs must be >= 1, got {num_docs}")
    too_long = lengths > num_docs
    if np.any(too_long):
        k = int(np.flatnonzero(too_long)[0])
        raise RankedListFormatError(
            f"{source} line {line_of_label[k]}: list of {lengths[k]} documents is longer than "
            f"num_docs = {num_docs} ({int(np.count_nonzero(too_long))} list(s) affected)"
        )
    unranked = (lengths == num_docs) & (sizes > np.diff(label_ptr))
    if np.any(unranked):
        k = int(np.flatnonzero(unranked)[0])
        log.warning(
            "%s: %d complete list(s) hold fewer relevant documents than their size (first: line %d, %d of %d); "
            "their missing relevant documents count as never ranked (reachable only by 'predict all')",
            source, int(np.count_nonzero(unranked)), line_of_label[k], label_ptr[k + 1] - label_ptr[k], sizes[k],
        )
    return RankedLists(ranks, label_ptr, lengths, sizes, num_docs, label_ids=ids,
                       include_predict_all=include_predict_all, name=name)


def _describe_error(data: bytes, source: str, err: int, line_no: int, token_no: int) -> str:
    lines = data.split(b"\n")
    line = lines[line_no - 1] if 0 < line_no <= len(lines) else b""
    tokens = line.split()
    token = tokens[token_no - 1].decode(errors="replace") if 0 < token_no <= len(tokens) else ""
    where = f"{source} line {line_no}"
    if err == _BAD_TOKEN:
        return f"{where}: token {token_no} ({token!r}) is not 0 or 1 (relevance of list position {token_no - 2})"
    if err == _MISSING_SIZE:
        return f"{where}: missing size (expected 'class_id size b_1 ... b_L')"
    if err == _BAD_NUMBER:
        field = "class_id" if token_no == 1 else "size"
        return f"{where}: {field} {token!r} is not a non-negative integer"
    if err == _SIZE_TOO_SMALL:
        ones = sum(t == b"1" for t in tokens[2:])
        return f"{where}: size {token} is smaller than the number of 1s in the list ({ones})"
    return f"{where}: malformed line"


@numba.njit(cache=True)
def _is_space(c):
    return c == 32 or c == 9 or c == 13  # space, tab, carriage return


@numba.njit(cache=True)
def _parse(buf, max_lines, max_ones):
    """One pass over the bytes. Returns arrays (over-allocated) plus error code, line and token number."""
    ids = np.empty(max_lines, dtype=np.int64)
    sizes = np.empty(max_lines, dtype=np.int64)
    lengths = np.empty(max_lines, dtype=np.int64)
    label_ptr = np.zeros(max_lines + 1, dtype=np.int64)
    line_of_label = np.empty(max_lines, dtype=np.int64)
    ranks = np.empty(max_ones, dtype=np.int64)
    n_labels = 0
    n_ones = 0
    n = len(buf)
    pos = 0
    line_no = 0
    while pos < n:
        line_no += 1
        token_no = 0
        ones_before = n_ones
        while pos < n and buf[pos] != 10:
            c = buf[pos]
            if _is_space(c):
                pos += 1
                continue
            # read one token [start, pos)
            start = pos
            while pos < n and buf[pos] != 10 and not _is_space(buf[pos]):
                pos += 1
            token_no += 1
            length = pos - start
            if token_no <= 2:
                if length > _MAX_DIGITS:
                    return ids, sizes, lengths, label_ptr, ranks, line_of_label, n_labels, _BAD_NUMBER, line_no, token_no
                value = 0
                for i in range(start, pos):
                    d = buf[i] - 48
                    if d < 0 or d > 9:
                        return ids, sizes, lengths, label_ptr, ranks, line_of_label, n_labels, _BAD_NUMBER, line_no, token_no
                    value = value * 10 + d
                if token_no == 1:
                    ids[n_labels] = value
                else:
                    sizes[n_labels] = value
            else:
                if length != 1 or (buf[start] != 48 and buf[start] != 49):
                    return ids, sizes, lengths, label_ptr, ranks, line_of_label, n_labels, _BAD_TOKEN, line_no, token_no
                if buf[start] == 49:
                    ranks[n_ones] = token_no - 2
                    n_ones += 1
        pos += 1  # skip the newline
        if token_no == 0:
            continue  # blank line
        if token_no == 1:
            return ids, sizes, lengths, label_ptr, ranks, line_of_label, n_labels, _MISSING_SIZE, line_no, 1
        if sizes[n_labels] < n_ones - ones_before:
            return ids, sizes, lengths, label_ptr, ranks, line_of_label, n_labels, _SIZE_TOO_SMALL, line_no, 2
        lengths[n_labels] = token_no - 2
        line_of_label[n_labels] = line_no
        n_labels += 1
        label_ptr[n_labels] = n_ones
    return ids, sizes, lengths, label_ptr, ranks, line_of_label, n_labels, _OK, line_no, 0
