"""The ranked-list text format: good files, and one clear error (file, line, problem) per malformation."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.data.ranked_list_format import RankedListFormatError, parse_ranked_lists, read_ranked_lists


def test_parses_positions_sizes_and_lengths(tmp_path):
    path = tmp_path / "lists.txt"
    path.write_text("7 2 1 0 1\n\n9 3 0 0 1 0 1\n")
    lists = read_ranked_lists(path, num_docs=6)
    assert lists.n_labels == 2 and lists.num_docs == 6
    np.testing.assert_array_equal(lists.label_ids, [7, 9])
    np.testing.assert_array_equal(lists.n_relevant, [2, 3])
    np.testing.assert_array_equal(lists.list_length, [3, 5])
    np.testing.assert_array_equal(lists.relevant_rank, [1, 3, 3, 5])
    np.testing.assert_array_equal(lists.label_ptr, [0, 2, 4])
    assert lists.name == "lists"


def test_num_docs_defaults_to_the_common_list_length():
    lists = parse_ranked_lists(b"0 1 0 1\r\n1 2 1 1\r\n")
    assert lists.num_docs == 2


def test_unranked_relevant_documents_of_complete_lists_are_allowed_with_a_warning():
    from xmlthresh import DataWarning

    with pytest.warns(DataWarning, match="fewer relevant documents than their size"):
        lists = parse_ranked_lists(b"0 2 0 1\n", num_docs=2)
    assert lists.n_relevant[0] == 2 and lists.n_relevant_in_list[0] == 1


@pytest.mark.parametrize(
    "content, num_docs, message",
    [
        (b"0 2 1 0 2\n", None, r"line 1: token 5 \('2'\) is not 0 or 1"),
        (b"0 2 1 0 1\n1 1 1 x 0\n", None, r"line 2: token 4 \('x'\) is not 0 or 1"),
        (b"0 1 1 0 1\n", None, r"line 1: size 1 is smaller than the number of 1s in the list \(2\)"),
        (b"0 -1 1 0\n", None, r"line 1: size '-1' is not a non-negative integer"),
        (b"-3 1 1 0\n", None, r"line 1: class_id '-3' is not a non-negative integer"),
        (b"0 1 1 0\n5\n", None, r"line 2: missing size"),
        (b"0 1.5 1 0\n", None, r"line 1: size '1.5' is not a non-negative integer"),
        (b"", None, r"the file is empty"),
        (b"\n  \n", None, r"the file is empty"),
        (b"0 1 1 0 0\n", 2, r"line 1: list of 3 documents is longer than num_docs = 2"),
        (b"0 1 1 0 0\n1 1 0 1\n", None, r"line 2: lists have different lengths \(3 and 2\); pass num_docs"),
        (b"0 1 1 0\n", 0, r"num_docs must be >= 1"),
        # issue 17: a size above m gave precision 1.375 and a "certified" F-macro above 1
        (b"1 9 1 0 1 0\n", 4, r"line\(s\) 1 \(class id\(s\) 1\): size larger than num_docs = 4"),
        (b"1 9 1 0 1 0\n", None, r"size larger than num_docs = 4, .* \(1 label\(s\) affected; e.g. size 9\)"),
        (b"".join(b"%d 20 1 0\n" % k for k in range(8)), 10,
         r"line\(s\) 1, 2, 3, 4, 5 and 3 more \(class id\(s\) 0, 1, 2, 3, 4 and 3 more\): size larger"),
        # duplicate ids: thresholds.csv had three rows label_id=1 that cannot be mapped back
        (b"1 1 1 0\n1 1 0 1\n2 1 1 0\n1 2 1 1\n", None, r"class id 1 appears on lines 1, 2, 4; class ids must be "
                                                        r"unique \(1 id\(s\) repeated\)"),
        (b"7 1 1 0\n3 1 0 1\n3 1 1 0\n7 1 1 0\n", None, r"class id 7 appears on lines 1, 4; .* \(2 id\(s\) repeated\)"),
    ],
)
def test_malformed_input_names_file_line_and_problem(content, num_docs, message):
    with pytest.raises(RankedListFormatError, match=message) as info:
        parse_ranked_lists(content, source="bad.txt", num_docs=num_docs)
    assert str(info.value).startswith("bad.txt")


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_ranked_lists(tmp_path / "absent.txt")
