"""Streaming reads of ranked-list files and zip members, and the parse cache of the dataset layer
(``cached_ranked_lists`` through the keyed store).

All inputs are small files fabricated in tmp_path; a tiny ``chunk_size`` puts block boundaries everywhere
(inside tokens, inside line breaks, inside lines longer than a block).
"""

from __future__ import annotations

import errno
import io
import logging
import os
import sys
import zipfile

import numpy as np
import pytest

from xmlthresh.data import keyed_store
from xmlthresh.data import ranked_list_format as ranked_list_file
from xmlthresh.data.ranked_list_format import RankedListFormatError, parse_ranked_lists, read_ranked_lists
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets import ranked_list_parse_cache as ranked_list_cache
from xmlthresh.datasets.ranked_list_parse_cache import cached_ranked_lists
from xmlthresh.data.streaming import (
    ArchiveMemberError,
    CorruptArchiveError,
    Progress,
    _complete_lines,
    open_source,
)


# ---------------------------------------------------------------------------------------------- helpers
def fabricate(n_labels: int = 60, max_length: int = 40, seed: int = 0, crlf: bool = False) -> tuple[bytes, dict]:
    """A random ranked-list file (blank lines, uneven spacing) and what it must parse to (the oracle)."""
    rng = np.random.default_rng(seed)
    lines, relevance, sizes, ids = [], [], [], []
    for k in range(n_labels):
        length = int(rng.integers(0, max_length + 1))
        seq = (rng.random(length) < 0.3).astype(int)
        size = int(seq.sum() + rng.integers(0, 3))
        sep = " " if k % 3 else "  \t"
        lines.append(sep.join([str(100 + 7 * k), str(size), *map(str, seq)]))
        if k % 11 == 5:
            lines.append("   ")  # blank lines are ignored
        relevance.append(seq)
        sizes.append(size)
        ids.append(100 + 7 * k)
    newline = "\r\n" if crlf else "\n"
    data = (newline.join(lines) + newline).encode()
    return data, {"relevance": relevance, "sizes": sizes, "ids": ids}


def assert_matches(lists: RankedLists, expected: dict, num_docs: int) -> None:
    oracle = RankedLists.from_relevance_lists(expected["relevance"], expected["sizes"], num_docs=num_docs)
    np.testing.assert_array_equal(lists.label_ids, expected["ids"])
    np.testing.assert_array_equal(lists.n_relevant, oracle.n_relevant)
    np.testing.assert_array_equal(lists.list_length, oracle.list_length)
    np.testing.assert_array_equal(lists.label_ptr, oracle.label_ptr)
    np.testing.assert_array_equal(lists.relevant_rank, oracle.relevant_rank)
    assert lists.num_docs == num_docs


def make_zip(path, members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XMLTHRESH_CACHE", str(cache))
    return cache


def cache_files(cache) -> list:
    return sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file()) if cache.exists() else []


# ---------------------------------------------------------------------------------------------- splitting
@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 17, 1000])
def test_blocks_hold_complete_lines_and_lose_nothing(chunk_size):
    data = b"1 2 1 0\n\n22 1 0 0 0 0 0 0 0 0 1\nlast 1 0"
    reads = (data[i: i + chunk_size] for i in range(0, len(data), chunk_size))
    blocks = [bytes(block) for block in _complete_lines(reads)]
    assert b"".join(blocks) == data
    assert all(block.endswith(b"\n") for block in blocks[:-1])


@pytest.mark.parametrize("chunk_size", [1, 3, 8, 64, 1 << 20])
@pytest.mark.parametrize("crlf", [False, True])
def test_plain_file_parses_identically_for_any_chunk_size(tmp_path, chunk_size, crlf):
    data, expected = fabricate(seed=chunk_size, crlf=crlf)
    path = tmp_path / "lists.txt"
    path.write_bytes(data)
    assert_matches(read_ranked_lists(path, num_docs=50, chunk_size=chunk_size), expected, 50)
    assert_matches(parse_ranked_lists(data, num_docs=50, chunk_size=chunk_size), expected, 50)


@pytest.mark.parametrize("chunk_size", [1, 7, 100, 1 << 20])
def test_zip_member_is_streamed_through_the_same_parser(tmp_path, chunk_size):
    data, expected = fabricate(n_labels=200, seed=1)
    path = make_zip(tmp_path / "lists.zip", {"lists.txt": data})
    lists = read_ranked_lists(path, num_docs=40, chunk_size=chunk_size)
    assert_matches(lists, expected, 40)
    assert lists.name == "lists"


def test_lines_longer_than_a_block_and_no_final_newline(tmp_path):
    seq = np.zeros(5000, dtype=int)
    seq[[0, 999, 4999]] = 1
    data = ("7 3 " + " ".join(map(str, seq)) + "\n8 1 1").encode()
    path = make_zip(tmp_path / "long.zip", {"long.txt": data})
    lists = read_ranked_lists(path, num_docs=6000, chunk_size=64)
    np.testing.assert_array_equal(lists.relevant_rank, [1, 1000, 5000, 1])
    np.testing.assert_array_equal(lists.list_length, [5000, 1])


def test_zip_detected_by_content_without_zip_suffix(tmp_path):
    data, expected = fabricate(seed=4)
    path = make_zip(tmp_path / "lists.bin", {"a.txt": data})
    assert_matches(read_ranked_lists(path, num_docs=40), expected, 40)


# ---------------------------------------------------------------------------------------------- zip members
def test_zip_with_several_members_needs_a_choice(tmp_path):
    first, expected_first = fabricate(seed=2)
    second, expected_second = fabricate(seed=3)
    path = make_zip(tmp_path / "multi.zip", {"dir/first.txt": first, "second.txt": second, "__MACOSX/._x": b"?"})
    with pytest.raises(ArchiveMemberError, match=r"holds 2 files \('dir/first.txt', 'second.txt'\); "
                                                 r"choose one with member=NAME"):
        read_ranked_lists(path, num_docs=40)
    assert_matches(read_ranked_lists(path, num_docs=40, member="second.txt", chunk_size=5), expected_second, 40)
    assert_matches(read_ranked_lists(path, num_docs=40, member="dir/first.txt"), expected_first, 40)
    with pytest.raises(ArchiveMemberError, match=r"no file 'third.txt'; its files: 'dir/first.txt', 'second.txt'"):
        read_ranked_lists(path, num_docs=40, member="third.txt")


def test_member_of_a_plain_file_and_empty_archive(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"0 1 1\n")
    with pytest.raises(ArchiveMemberError, match="not a zip archive"):
        read_ranked_lists(plain, member="x.txt")
    empty = make_zip(tmp_path / "empty.zip", {})
    with pytest.raises(ArchiveMemberError, match="holds no file"):
        read_ranked_lists(empty)


def test_empty_member_is_an_empty_file(tmp_path):
    path = make_zip(tmp_path / "e.zip", {"e.txt": b"\n\n"})
    with pytest.raises(RankedListFormatError, match=r"e.zip:e.txt: the file is empty"):
        read_ranked_lists(path)


# ---------------------------------------------------------------------------------------------- bad archives
def test_truncated_zip_is_a_clear_error(tmp_path):
    data, _ = fabricate(n_labels=500, seed=5)
    good = make_zip(tmp_path / "good.zip", {"lists.txt": data}).read_bytes()
    path = tmp_path / "truncated.zip"
    path.write_bytes(good[: len(good) // 2])
    with pytest.raises(CorruptArchiveError, match=r"truncated.zip: corrupt or truncated zip archive.*download it again"):
        read_ranked_lists(path, num_docs=40)


def test_corrupt_compressed_data_is_a_clear_error(tmp_path):
    data, _ = fabricate(n_labels=2000, seed=6)
    raw = bytearray(make_zip(tmp_path / "good.zip", {"lists.txt": data}).read_bytes())
    header = 30 + len("lists.txt")  # local file header, then the deflate stream
    for offset in range(header + 50, header + 250, 7):
        raw[offset] ^= 0xFF
    path = tmp_path / "corrupt.zip"
    path.write_bytes(bytes(raw))
    with pytest.raises(CorruptArchiveError, match=r"corrupt.zip:lists.txt: corrupt or truncated zip archive"):
        read_ranked_lists(path, num_docs=40, chunk_size=256)


def test_bad_crc_is_detected(tmp_path):
    data, _ = fabricate(seed=7)
    raw = bytearray(make_zip(tmp_path / "good.zip", {"lists.txt": data}, zipfile.ZIP_STORED).read_bytes())
    start = raw.index(data[:20])
    assert raw[start: start + 4] == b"100 "
    raw[start + 2] = ord("9")  # class_id 100 -> 109: still a valid file, only the CRC can tell
    path = tmp_path / "crc.zip"
    path.write_bytes(bytes(raw))
    with pytest.raises(CorruptArchiveError, match=r"crc.zip:lists.txt: corrupt.*Bad CRC-32"):
        read_ranked_lists(path, num_docs=40)


def test_not_a_zip_with_zip_suffix(tmp_path):
    path = tmp_path / "text.zip"
    path.write_bytes(b"0 1 1 0\n")
    with pytest.raises(CorruptArchiveError, match="text.zip: corrupt or truncated zip archive"):
        read_ranked_lists(path)


def test_missing_zip_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_ranked_lists(tmp_path / "absent.zip")


# ---------------------------------------------------------------------------------------------- format errors
@pytest.mark.parametrize("chunk_size", [3, 1 << 20])
def test_bad_token_deep_in_a_zip_names_the_right_line(tmp_path, chunk_size):
    lines = [f"{k} 2 " + " ".join("1" if j in (3, 9) else "0" for j in range(30)) for k in range(3000)]
    lines.insert(1000, "")  # a blank line still counts as a line
    lines[2345] = lines[2345][: -3] + "2 0"  # list position 29 of line 2346
    path = make_zip(tmp_path / "deep.zip", {"deep.txt": ("\n".join(lines) + "\n").encode()})
    with pytest.raises(RankedListFormatError,
                       match=r"deep.zip:deep.txt line 2346: token 31 \('2'\) is not 0 or 1 \(relevance of list position 29\)"):
        read_ranked_lists(path, num_docs=30, chunk_size=chunk_size)


@pytest.mark.parametrize(
    "content, num_docs, message",
    [
        (b"0 1 1 0\n1 3 1 1 1 1 0\n", 10, r"line 2: size 3 is smaller than the number of 1s in the list \(4\)"),
        (b"0 1 1 0\n1 -3 1 0\n", 10, r"line 2: size '-3' is not a non-negative integer"),
        (b"0 1 1 0\n\n7\n", 10, r"line 3: missing size"),
        (b"0 1 1 0\n1 1 1 0 0 0\n", 3, r"line 2: list of 4 documents is longer than num_docs = 3"),
        (b"0 1 1 0\n1 1 10 0\n", 3, r"line 2: token 3 \('10'\) is not 0 or 1"),
        (b"0 1 1 0\n99999999999999999999 1 1\n", 3, r"line 2: class_id '99999999999999999999' is not"),
        (b"", 3, r"the file is empty"),
    ],
)
def test_errors_in_zip_members_name_archive_member_and_line(tmp_path, content, num_docs, message):
    path = make_zip(tmp_path / "bad.zip", {"bad.txt": content})
    with pytest.raises(RankedListFormatError, match=message) as info:
        read_ranked_lists(path, num_docs=num_docs, chunk_size=4)
    assert str(info.value).startswith(f"{path}:bad.txt")


# ---------------------------------------------------------------------------------------------- progress
def test_progress_logs_when_stderr_is_not_a_terminal(caplog):
    caplog.set_level(logging.INFO, logger="xmlthresh.data.streaming")
    bar = Progress("reading x.txt", 1000, delay=0.0, log_every=0.0)
    bar.update(500)
    bar.close()
    assert "reading x.txt: 0.0 of 0.0 MB ( 50.0%)" in caplog.text
    assert "reading x.txt: 0.0 MB in" in caplog.text


def test_progress_draws_a_bar_on_a_terminal(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = Progress("reading x.txt", 2_000_000, delay=0.0, tty_every=0.0)
    bar.update(1_000_000)
    bar.close()
    assert "\r  reading x.txt: 1.0 of 2.0 MB ( 50.0%)" in terminal.getvalue()
    assert terminal.getvalue().endswith("\n")


def test_small_reads_stay_quiet(tmp_path, caplog, capsys):
    caplog.set_level(logging.INFO)
    path = tmp_path / "small.txt"
    path.write_bytes(b"0 1 1 0\n")
    read_ranked_lists(path)
    assert "reading" not in caplog.text and capsys.readouterr().err == ""


def test_kernel_is_shared_by_bytes_files_and_zips(tmp_path):
    """One kernel: parse_ranked_lists and read_ranked_lists go through ranked_list_file._parse_lines."""
    calls = []
    original = ranked_list_file._parse_lines

    def spy(buf, line_no):
        calls.append(len(buf))
        return original(buf, line_no)

    data, _ = fabricate(seed=12)
    path = make_zip(tmp_path / "x.zip", {"x.txt": data})
    try:
        ranked_list_file._parse_lines = spy
        parse_ranked_lists(data, num_docs=40)
        read_ranked_lists(path, num_docs=40, chunk_size=100)
    finally:
        ranked_list_file._parse_lines = original
    assert calls[0] == len(data) and sum(calls[1:]) == len(data) and len(calls) > 3


def test_open_source_reports_uncompressed_size(tmp_path):
    data, _ = fabricate(seed=13)
    source = open_source(make_zip(tmp_path / "s.zip", {"s.txt": data}))
    assert source.size == len(data) and source.member == "s.txt"
    assert source.display.endswith("s.zip:s.txt")


# ---------------------------------------------------------------------------------------------- cache
def test_cache_miss_then_hit(tmp_path, cache_home, monkeypatch):
    data, expected = fabricate(n_labels=100, seed=8)
    path = make_zip(tmp_path / "lists.zip", {"lists.txt": data})
    first = cached_ranked_lists(path, num_docs=40)
    assert_matches(first, expected, 40)
    entries = cache_files(cache_home)
    assert len(entries) == 1 and entries[0].startswith("ranked_lists/lists-") and entries[0].endswith(keyed_store.SUFFIX)

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed although the cache holds the lists")

    monkeypatch.setattr(ranked_list_cache, "read_ranked_lists", no_parse)
    hit = cached_ranked_lists(path, num_docs=40, include_predict_all=False, name="other")
    assert_matches(hit, expected, 40)
    assert hit.relevant_rank.dtype == np.int64 and hit.include_predict_all is False and hit.name == "other"
    assert cache_files(cache_home) == entries


def test_cache_is_keyed_by_parse_parameters_and_member(tmp_path, cache_home):
    data, _ = fabricate(seed=9)
    path = make_zip(tmp_path / "lists.zip", {"a.txt": data, "b.txt": data})
    assert cached_ranked_lists(path, num_docs=40, member="a.txt").num_docs == 40
    assert cached_ranked_lists(path, num_docs=41, member="a.txt").num_docs == 41
    assert cached_ranked_lists(path, num_docs=40, member="b.txt").num_docs == 40
    assert len(cache_files(cache_home)) == 3


def test_changed_source_rebuilds_the_entry_in_place(tmp_path, cache_home):
    path = tmp_path / "lists.txt"
    path.write_bytes(b"0 1 1 0\n")
    assert cached_ranked_lists(path, num_docs=5).relevant_rank.tolist() == [1]
    path.write_bytes(b"0 1 0 0 1\n")
    os.utime(path, ns=(1, 1))
    assert cached_ranked_lists(path, num_docs=5).relevant_rank.tolist() == [3]
    assert len(cache_files(cache_home)) == 1


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip_array_byte", "empty"])
def test_corrupt_cache_is_detected_and_rebuilt(tmp_path, cache_home, caplog, damage):
    data, expected = fabricate(n_labels=300, seed=10)
    path = make_zip(tmp_path / "lists.zip", {"lists.txt": data})
    cached_ranked_lists(path, num_docs=40)
    (entry,) = cache_home.rglob("*" + keyed_store.SUFFIX)
    raw = bytearray(entry.read_bytes())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "garbage":
        raw = bytearray(os.urandom(len(raw)))
    elif damage == "flip_array_byte":  # a byte inside the stored relevant ranks: only the checksum can tell
        header, _ = keyed_store.read_entry(entry)
        (spec,) = [spec for spec in header["arrays"] if spec["name"] == "relevant_rank"]
        header_length = int.from_bytes(raw[len(keyed_store.MAGIC):len(keyed_store.MAGIC) + 8], "little")
        start = -(-(len(keyed_store.MAGIC) + 8 + header_length) // 64) * 64  # the arrays start 64-byte aligned
        raw[start + spec["offset"] + spec["nbytes"] // 2] ^= 0x01
    else:
        raw = bytearray()
    entry.write_bytes(bytes(raw))
    rebuilt = cached_ranked_lists(path, num_docs=40)
    assert_matches(rebuilt, expected, 40)
    assert "is corrupt" in caplog.text
    assert_matches(cached_ranked_lists(path, num_docs=40), expected, 40)  # the new entry is good


def test_disk_full_during_cache_write_leaves_nothing(tmp_path, cache_home, monkeypatch, caplog):
    data, expected = fabricate(n_labels=100, seed=11)
    path = make_zip(tmp_path / "lists.zip", {"lists.txt": data})

    def disk_full(out, header, arrays):
        out.write(b"PK\x03\x04 half an entry")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(keyed_store, "_write_payload", disk_full)
    lists = cached_ranked_lists(path, num_docs=40)
    assert_matches(lists, expected, 40)  # the load itself succeeds
    assert "could not write the cache" in caplog.text and "No space left" in caplog.text
    assert cache_files(cache_home) == []  # no entry, no temporary file
    monkeypatch.undo()
    monkeypatch.setenv("XMLTHRESH_CACHE", str(cache_home))
    cached_ranked_lists(path, num_docs=40)
    assert len(cache_files(cache_home)) == 1


def test_other_errors_during_cache_write_leave_nothing_and_propagate(tmp_path, cache_home, monkeypatch):
    path = tmp_path / "lists.txt"
    path.write_bytes(b"0 1 1 0\n")

    def broken(out, header, arrays):
        out.write(b"partial")
        raise RuntimeError("writer bug")

    monkeypatch.setattr(keyed_store, "_write_payload", broken)
    with pytest.raises(RuntimeError, match="writer bug"):
        cached_ranked_lists(path)
    assert cache_files(cache_home) == []


def test_large_values_keep_int64_in_the_cache(tmp_path, cache_home):
    path = tmp_path / "big.txt"
    path.write_bytes(b"123456789012345 3 1 0 1\n")
    cached_ranked_lists(path, num_docs=3)
    hit = cached_ranked_lists(path, num_docs=3)
    assert hit.label_ids.tolist() == [123456789012345]


def test_errors_are_not_cached(tmp_path, cache_home):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"0 1 1 x\n")
    for _ in range(2):
        with pytest.raises(RankedListFormatError, match="line 1: token 4"):
            cached_ranked_lists(path)
    assert cache_files(cache_home) == []


def test_unwritable_cache_directory_only_costs_the_cache(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("XMLTHRESH_CACHE", str(blocker))
    path = tmp_path / "lists.txt"
    path.write_bytes(b"0 1 1 0\n")
    assert cached_ranked_lists(path).relevant_rank.tolist() == [1]
    assert "could not write the cache" in caplog.text


def test_unranked_warning_also_on_cache_hits(tmp_path, cache_home):
    from xmlthresh import DataWarning

    path = tmp_path / "lists.txt"
    path.write_bytes(b"5 1 1 0\n6 2 0 1\n")
    with pytest.warns(DataWarning, match=r"1 complete list\(s\) hold fewer relevant documents than their size "
                                         r"\(first: line 2, 1 of 2\)"):
        cached_ranked_lists(path)
    with pytest.warns(DataWarning, match=r"\(first: label 6, 1 of 2\)"):
        cached_ranked_lists(path)
