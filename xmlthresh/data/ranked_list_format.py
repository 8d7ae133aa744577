"""Reader for the published ranked-list text format (one line per label).

    class_id size b_1 b_2 ... b_L

``size`` is s_k, the number of relevant documents of the label in the whole evaluation set; ``b_i`` is 1
when the i-th document of the ranker's order for that label is relevant, else 0. Documents carry no ids.
Blank lines are ignored.

Plain files, gzip files, zip members (read without unpacking, e.g. ``WikiXML_no_empty.zip``) and in-memory bytes go
through one code path: the source is streamed in blocks of complete lines (:mod:`.streaming`) and one
numba kernel parses each block, keeping only the positions of the 1s, the list length and the size of
every label -- no Python object per line or token. This module only parses: the parse cache is the dataset
layer's (:func:`xmlthresh.datasets.ranked_list_parse_cache.cached_ranked_lists`, ``dataset.cache=true``).

Every malformed input raises :class:`RankedListFormatError` naming the file, the line and the problem.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.data.streaming import DEFAULT_CHUNK_SIZE, DataSource, bytes_blocks, damage_of, line_blocks, open_source
from xmlthresh.data.text_encoding import unicode_mark
from xmlthresh._util.jit import cached_njit
from xmlthresh._util.notices import DataWarning, warn



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
    *,
    member: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: bool = True,
    allow_duplicate_ids: bool = False,
) -> RankedLists:
    """Parse ``path`` -- a ranked-list file, or a zip archive holding one -- into :class:`RankedLists`.

    ``num_docs`` is m, the number of documents of the evaluation set. It is required when lists are
    truncated; when omitted, every list must have the same length L and m = L (complete lists).
    ``member`` picks the file inside a zip (default: its only file). ``chunk_size`` bytes are read at a
    time; ``progress`` shows the progress of long reads. A class id on two lines is an error (thresholds.csv
    maps its rows back by id) unless ``allow_duplicate_ids`` (the reference ``Example.txt``: 80 copies of
    label 0). Every call parses: for the cached read use
    :func:`xmlthresh.datasets.ranked_list_parse_cache.cached_ranked_lists` (same parameters).
    """
    path = Path(path)
    name = name or path.stem
    source = open_source(path, member)
    return parse_source(source, num_docs=num_docs, include_predict_all=include_predict_all, name=name,
                        chunk_size=chunk_size, progress=progress, allow_duplicate_ids=allow_duplicate_ids)


def parse_ranked_lists(
    data: bytes,
    source: str = "<bytes>",
    num_docs: int | None = None,
    include_predict_all: bool = True,
    name: str = "",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    allow_duplicate_ids: bool = False,
) -> RankedLists:
    """Parse the bytes of a ranked-list file (``source`` names it in error messages)."""
    parser = _BlockParser(source)
    for block in bytes_blocks(data, chunk_size):
        parser.feed(block)
    return parser.result(num_docs, include_predict_all, name, allow_duplicate_ids)


def parse_source(
    source: DataSource,
    num_docs: int | None = None,
    include_predict_all: bool = True,
    name: str = "",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: bool = True,
    allow_duplicate_ids: bool = False,
) -> RankedLists:
    """Stream ``source`` (a plain file, a gzip file or a zip member) through the parsing kernel. A format error
    in a compressed source is reported as a corrupt archive when its checksum fails (:func:`damage_of`)."""
    parser = _BlockParser(source.display)
    try:
        with line_blocks(source, chunk_size, progress) as blocks:
            for block in blocks:
                parser.feed(block)
    except RankedListFormatError:
        damage = damage_of(source)
        if damage is not None:
            raise damage from None
        raise
    return parser.result(num_docs, include_predict_all, name, allow_duplicate_ids)


class _BlockParser:
    """Accumulates the kernel's output over blocks of complete lines; checks the whole at the end."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.line_no = 0  # lines consumed so far
        self.parts: list[tuple[np.ndarray, ...]] = []

    def feed(self, block: memoryview) -> None:
        buf = np.frombuffer(block, dtype=np.uint8)
        *arrays, err, err_line, err_token, err_start, self.line_no = _parse_lines(buf, self.line_no)
        if err != _OK:
            end = bytes(block).find(b"\n", err_start)
            line = bytes(block[err_start: end if end >= 0 else len(block)])
            raise RankedListFormatError(_describe_error(line, self.source, err, err_line, err_token))
        if len(arrays[0]):
            self.parts.append(tuple(arrays))

    def result(self, num_docs: int | None, include_predict_all: bool, name: str,
               allow_duplicate_ids: bool = False) -> RankedLists:
        source = self.source
        if not self.parts:
            raise RankedListFormatError(f"{source}: the file is empty (no ranked lists)")
        ids, sizes, lengths, line_of_label, ones_of_label, ranks = (
            np.concatenate(column) if len(self.parts) > 1 else column[0] for column in zip(*self.parts)
        )
        label_ptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(ones_of_label, out=label_ptr[1:])
        self.parts = []

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
        if not np.any(sizes):
            raise RankedListFormatError(
                f"{source}: every label has size 0 ({len(sizes)} line(s)): no label has a relevant document, so "
                f"no threshold can be fitted or evaluated; the second number of each line is the label's size s_k"
            )
        check_sizes(sizes, num_docs, ids, line_of_label, source)
        if not allow_duplicate_ids:
            check_unique_ids(ids, line_of_label, source)
        lists = RankedLists(ranks, label_ptr, lengths, sizes, num_docs, label_ids=ids,
                            include_predict_all=include_predict_all, name=name)
        warn_unranked(lists, source, line_of_label)
        return lists


#: how many lines (or ids) an error message names
NAMED_LINES = 5


def _first_few(values: np.ndarray) -> str:
    """``1, 5, 9`` or ``1, 5, 9, 12, 20 and 7 more``."""
    shown = ", ".join(str(v) for v in values[:NAMED_LINES].tolist())
    return shown + (f" and {len(values) - NAMED_LINES} more" if len(values) > NAMED_LINES else "")


def check_sizes(sizes: np.ndarray, num_docs: int, ids: np.ndarray, line_of_label: np.ndarray, source: str) -> None:
    """A label cannot have more relevant documents (its size) than the evaluation set has documents: such a
    file (or a ``num_docs`` set too small) would give precisions above 1. Names the lines and class ids."""
    too_big = np.flatnonzero(sizes > num_docs)
    if len(too_big):
        raise RankedListFormatError(
            f"{source} line(s) {_first_few(line_of_label[too_big])} (class id(s) {_first_few(ids[too_big])}): size "
            f"larger than num_docs = {num_docs}, the number of documents ({len(too_big)} label(s) affected; "
            f"e.g. size {int(sizes[too_big[0]])}); num_docs is too small or the sizes are wrong"
        )


def check_unique_ids(ids: np.ndarray, line_of_label: np.ndarray, source: str) -> None:
    """Every class id once: thresholds.csv maps its rows back to labels by id. Names the lines of the first
    repeated id and how many ids repeat."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    repeated = sorted_ids[1:] == sorted_ids[:-1]
    if not np.any(repeated):
        return
    repeated_ids = np.unique(sorted_ids[1:][repeated])
    first = ids[np.isin(ids, repeated_ids)][0]  # the repeated id met first in the file
    lines = line_of_label[ids == first]
    raise RankedListFormatError(
        f"{source}: class id {int(first)} appears on lines {_first_few(lines)}; class ids must be unique "
        f"({len(repeated_ids)} id(s) repeated), since thresholds.csv names each label by its id -- when the "
        f"repeats are meant (copies of one label), set dataset.allow_duplicate_ids=true"
    )


def warn_unranked(lists: RankedLists, source: str, line_of_label: np.ndarray | None = None) -> None:
    """A :class:`~xmlthresh._util.notices.DataWarning` when complete lists hold fewer relevant documents than their size (a ranker that left
    documents unranked); the first affected label is named by its line, else by its id."""
    unranked = (lists.list_length == lists.num_docs) & (lists.n_relevant > lists.n_relevant_in_list)
    if not np.any(unranked):
        return
    k = int(np.flatnonzero(unranked)[0])
    first = f"line {line_of_label[k]}" if line_of_label is not None else f"label {lists.label_ids[k]}"
    warn(f"{source}: {int(np.count_nonzero(unranked))} complete list(s) hold fewer relevant documents than their "
         f"size (first: {first}, {lists.n_relevant_in_list[k]} of {lists.n_relevant[k]}); their missing relevant "
         "documents count as never ranked (reachable only by 'predict all')", DataWarning, stacklevel=3)


def _describe_error(line: bytes, source: str, err: int, line_no: int, token_no: int) -> str:
    """The message for kernel error ``err`` in ``line`` (the bytes of line ``line_no``, without newline)."""
    tokens = line.split()
    token = tokens[token_no - 1].decode(errors="replace") if 0 < token_no <= len(tokens) else ""
    if len(token) > 40:
        token = token[:40] + "..."
    where = f"{source} line {line_no}"
    if line_no == 1 and line.startswith(b"\xef\xbb\xbf"):  # an editor's mark, shown as '\ufeff1'
        return (f"{where}: the file starts with a UTF-8 byte-order mark (bytes EF BB BF), which ranked lists do "
                "not have; save it without one (e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' <file>)")
    marked = unicode_mark(line) if line_no == 1 else None
    if marked is not None:  # saved as "Unicode" by an editor: every other byte is 0
        return (f"{where}: the file is {marked} text (it starts with that encoding's byte-order mark); ranked lists "
                f"are plain ASCII: re-save it as UTF-8 (e.g. iconv -f {marked} -t UTF-8 <file>)")
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


@cached_njit(inline="always")
def _is_space(c):
    return c == 32 or c == 9 or c == 13  # space, tab, carriage return


@cached_njit(nogil=True)
def _parse_lines(buf, line_no):
    """Parse a block of complete lines (the last one may lack its newline); ``line_no`` lines came before.

    Returns (class_id, size, list_length, line number, number of 1s) per label, the 1-based list positions
    of all 1s (label after label), then the error code, its line number, token number and the offset of
    that line in ``buf``, and the number of lines consumed in total.
    """
    n = len(buf)
    n_newlines = 0
    n_one_bytes = 0
    for i in range(n):  # exact-enough upper bounds for the outputs
        c = buf[i]
        n_newlines += c == 10
        n_one_bytes += c == 49
    max_labels = n_newlines + 1
    ids = np.empty(max_labels, dtype=np.int64)
    sizes = np.empty(max_labels, dtype=np.int64)
    lengths = np.empty(max_labels, dtype=np.int64)
    line_of_label = np.empty(max_labels, dtype=np.int64)
    ones_of_label = np.empty(max_labels, dtype=np.int64)
    ranks = np.empty(n_one_bytes, dtype=np.int64)
    n_labels = 0
    n_ones = 0
    pos = 0
    err = _OK
    err_token = 0
    line_start = 0
    while pos < n:
        line_no += 1
        line_start = pos
        token_no = 0
        ones_before = n_ones
        while pos < n and buf[pos] != 10 and token_no < 2:  # the header: class_id and size
            if _is_space(buf[pos]):
                pos += 1
                continue
            start = pos  # one token: [start, pos)
            pos += 1
            while pos < n and buf[pos] != 10 and not _is_space(buf[pos]):
                pos += 1
            token_no += 1
            if pos - start > _MAX_DIGITS:
                err = _BAD_NUMBER
                break
            value = 0
            for i in range(start, pos):
                digit = buf[i] - 48
                if digit < 0 or digit > 9:
                    err = _BAD_NUMBER
                    break
                value = value * 10 + digit
            if err != _OK:
                break
            if token_no == 1:
                ids[n_labels] = value
            else:
                sizes[n_labels] = value
        while pos < n and err == _OK:  # the relevance tokens: single 0s and 1s (hot loop)
            c = buf[pos]
            if c == 32:
                pos += 1
            elif c == 48 or c == 49:
                token_no += 1
                pos += 1
                if pos < n and buf[pos] != 32 and buf[pos] != 10 and not _is_space(buf[pos]):
                    err = _BAD_TOKEN  # a longer token starting with 0 or 1
                    break
                if c == 49:
                    ranks[n_ones] = token_no - 2
                    n_ones += 1
            elif c == 10:
                break
            elif _is_space(c):
                pos += 1
            else:
                token_no += 1
                err = _BAD_TOKEN
                break
        if err != _OK:
            err_token = token_no
            break
        pos += 1  # skip the newline
        if token_no == 0:
            continue  # blank line
        if token_no == 1:
            err, err_token = _MISSING_SIZE, 1
            break
        if sizes[n_labels] < n_ones - ones_before:
            err, err_token = _SIZE_TOO_SMALL, 2
            break
        lengths[n_labels] = token_no - 2
        line_of_label[n_labels] = line_no
        ones_of_label[n_labels] = n_ones - ones_before
        n_labels += 1
    if err != _OK:
        n_labels, n_ones = 0, 0
    return (ids[:n_labels], sizes[:n_labels], lengths[:n_labels], line_of_label[:n_labels],
            ones_of_label[:n_labels], ranks[:n_ones], err, line_no, err_token, line_start, line_no)
