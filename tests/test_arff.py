"""The ARFF adapter over liac-arff: dense and sparse files, nominal / numeric / text attributes, missing values,
the header's shape, one clear error (file, line, problem) per malformed input, 0/1 label matrices, and known
facts of every real ARFF file under $XMLTHRESH_DATA."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import data_dir_with, no_data

from xmlthresh.data.arff import HIERARCHICAL, ArffFormatError, parse_arff, read_arff
from xmlthresh.data.arff_labels import binary_label_matrix

TOY_HEADER = """% a comment
@relation toy

@attribute num numeric
@attribute color {red,green,blue}
@attribute flag {YES,NO}
@attribute bit {0,1}
@attribute L1 {0,1}
@attribute L2 {0,1}

@data
"""
TOY_DENSE = TOY_HEADER + "1.0,red,YES,1,1,0\n?,green,NO,0,0,1\n3.0,?,YES,?,1,1\n5.0,green,?,1,0,0\n"
# the same rows as sparse ARFF: an omitted nominal entry is its first declared value (red, YES, 0)
TOY_SPARSE = TOY_HEADER + "{0 1.0,3 1,4 1}\n{0 ?,1 green,2 NO,5 1}\n{0 3.0,1 ?,3 ?,4 1,5 1}\n{0 5.0,1 green,2 ?,3 1}\n"


def test_sparse_arff_takes_its_shape_from_the_header_when_the_last_column_is_all_zero():
    text = "@relation r\n@attribute a numeric\n@attribute b {0,1}\n@attribute c numeric\n@data\n{0 2.5}\n{}\n{1 1}\n"
    table = parse_arff(text, "toy.arff")
    assert table.is_sparse and table.values.shape == (3, 3)
    np.testing.assert_array_equal(table.values.toarray(), [[2.5, 0, 0], [0, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(table.row_line, [6, 7, 8])
    empty = parse_arff("@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n{}\n{}\n")
    assert empty.values.shape == (2, 2) and empty.values.nnz == 0


def test_quoted_names_values_and_escapes():
    text = ("@relation 'my rel'\n@attribute 'a b' numeric\n@attribute \"q\\\"x\" {'one, two',three}\n"
            "@attribute 'Swainson\\'s Thrush' {0,1}\n@attribute TAG_m\\'usica {0,1}\n@attribute s string\n@data\n"
            "1,'one, two',1,0,'hello, world'\n2, three ,0,1,plain\n")
    table = parse_arff(text)
    assert [a.name for a in table.attributes] == ["a b", 'q"x', "Swainson's Thrush", "TAG_m\\'usica", "s"]
    assert table.relation == "my rel"
    assert table.attributes[1].values == ("one, two", "three")
    np.testing.assert_array_equal(table.values[:, :4], [[1, 0, 1, 0], [2, 1, 0, 1]])
    assert np.isnan(table.values[:, 4]).all() and table.text[4].tolist() == ["hello, world", "plain"]


def test_dense_and_sparse_files_with_missing_values_give_the_same_matrix():
    dense_table, sparse_table = parse_arff(TOY_DENSE), parse_arff(TOY_SPARSE)
    assert not dense_table.is_sparse and sparse_table.is_sparse
    np.testing.assert_array_equal(dense_table.values, sparse_table.values.toarray())
    assert np.isnan(dense_table.values[1, 0]) and np.isnan(dense_table.values[2, 1])
    assert dense_table.values[1, 1] == 1 and dense_table.values[0, 2] == 0  # codes: green = 1, YES = 0
    assert [a.kind for a in dense_table.attributes] == ["numeric"] + ["nominal"] * 5
    np.testing.assert_array_equal(dense_table.row_line, [12, 13, 14, 15])
    explicit = parse_arff(TOY_HEADER + "{0 0,1 red,2 ?,3 0}\n").values  # 0 and the first nominal value: not stored
    assert explicit.nnz == 1 and np.isnan(explicit[0, 2])


def test_numbers_are_read_bit_for_bit_as_python_reads_them():
    tokens = ["1e400", "-0", "+5", ".5", "5.", "1E-5", "12345678901234567890123", "0.1234567890123456789", "nan",
              "-inf", "3e-330", "9007199254740993", "2.308749", "-1e-7"]
    text = "@relation r\n@attribute a numeric\n@attribute b real\n@data\n" + "".join(
        f"{a},{b}\n" for a, b in zip(tokens[::2], tokens[1::2]))
    values = parse_arff(text).values
    expected = np.array([float(t) for t in tokens]).reshape(-1, 2)
    np.testing.assert_array_equal(values.view(np.int64), expected.view(np.int64))


def test_comments_blank_lines_and_crlf_inside_the_data():
    text = ("@relation r\r\n@attribute a numeric\r\n@attribute c {x,yy,z}\r\n@attribute s string\r\n@data\r\n"
            "1.5,yy,hello\r\n% a comment\r\n\r\n?,?,?\r\n-2,z,a@b@c\r\n")
    table = parse_arff(text)
    np.testing.assert_array_equal(table.values[:, :2], [[1.5, 1], [np.nan, np.nan], [-2, 2]])
    np.testing.assert_array_equal(table.row_line, [6, 9, 10])
    assert table.text[2].tolist() == ["hello", "?", "a@b@c"]


def test_hierarchical_and_date_attributes_are_text_beside_a_sparse_matrix():
    text = ("@relation r\n@attribute a numeric\n@attribute c {x,yy,z}\n@attribute h hierarchical root/A,A/B\n"
            "@attribute d numeric\n@attribute t date 'yyyy-MM-dd'\n@data\n"
            "{0 1.5,1 yy,2 A@B}\n{}\n{ 3 ? }\n% c\n{1 x,3 -1e-7,4 2024-01-31}\n{0 0,1 z,2 ?}\n")
    table = parse_arff(text, "h.arff")
    assert table.attributes[2].kind == HIERARCHICAL and table.attributes[2].values == ("root/A", "A/B")
    assert table.attributes[4].kind == "date"
    np.testing.assert_array_equal(table.values.toarray()[:, [0, 1, 3]],
                                  [[1.5, 1, 0], [0, 0, 0], [0, 0, np.nan], [0, 0, -1e-7], [0, 2, 0]])
    assert table.text[2].tolist() == ["A@B", "", "", "", "?"]
    assert table.text[4].tolist() == ["", "", "", "2024-01-31", ""]
    np.testing.assert_array_equal(table.row_line, [8, 9, 10, 12, 13])
    kept = table.rows(np.array([4, 0]))
    assert kept.text[2].tolist() == ["?", "A@B"] and kept.row_line.tolist() == [13, 8]


def test_sparse_rows_in_a_dense_file_are_expanded():
    table = parse_arff("@relation r\n@attribute a numeric\n@attribute b {u,v}\n@data\n1,v\n{1 v}\n{0 2}\n")
    assert not table.is_sparse
    np.testing.assert_array_equal(table.values, [[1, 1], [0, 1], [2, 0]])


@pytest.mark.parametrize(
    "text, message",
    [
        ("@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n1,2\n3\n", r"x\.arff line 6: the row has 1 values, the header declares 2 attributes"),
        ("@relation r\n@attribute a {x,y}\n@data\nx\nz\n", r"x\.arff line 5: value 'z' is not declared for nominal attribute 'a' \{x,y\}"),
        ("@relation r\n@attribute a numeric\n@data\n1\n\n1.5.2\n", r"x\.arff line 6: attribute 'a': '1\.5\.2' is not a number"),
        ("@relation r\n@attribute a numeric\n@attribute b {u,v}\n@data\n{0 1}\n{0 2,1 w}\n", r"x\.arff line 6: value 'w' is not declared for nominal attribute 'b'"),
        ("@relation r\n@attribute a numeric\n@attribute s string\n@data\n'x y',z\n", r"x\.arff line 5: Invalid numerical value \(row \"'x y',z\"\)"),
        ("@relation r\n@attribute a numeric\n@data\n{0 1}\n{3 1}\n", r"x\.arff line 5: sparse index 3 is beyond the 1 attributes the header declares"),
        ("@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n{0 1,1}\n", r"x\.arff line 5: .*Error parsing ',1\}'"),
        ("@relation r\n@attribute a numeric\n@data\n{0 1}\n1\n", r"x\.arff line 5: Invalid layout of the ARFF file \(row '1'\)"),
        ("@relation r\n@attribute a numeric\n1\n", r"x\.arff line 3: expected @relation, @attribute or @data"),
        ("@relation r\n@attribute a numeric\n", r"x\.arff: no @data line"),
        ("@relation r\n@data\n1\n", r"x\.arff line 2: @data before any @attribute"),
        ("@relation r\n@attribute a blob\n@data\n", r"x\.arff line 2: Bad @ATTRIBUTE type"),
        ("@relation r\n@attribute a relational\n@data\n", r"x\.arff line 2: Bad @ATTRIBUTE type"),
        ("@relation r\n@attribute 'a numeric\n@data\n", r"x\.arff line 2: unterminated quote"),
        ("@relation r\n@attribute a numeric\n@attribute a numeric\n@data\n", r"x\.arff line 3: Bad @ATTRIBUTE name a, this name is already in use in line 2"),
        ("@relation r\n@attribute a {x,x}\n@data\n", r"x\.arff line 2: nominal attribute 'a' declares a value twice"),
        ("@relation r\n@attribute a {x,,y}\n@data\n", r"x\.arff line 2: nominal attribute 'a' declares an empty value"),
        ("@relation r\n@attribute h hierarchical\n@data\n", r"x\.arff line 2: hierarchical attribute 'h': empty or malformed"),
        ("@relation r\n@attribute a numeric\n@data\n{0 1},{2}\n", r"x\.arff line 4: .*Error parsing"),
        ("@relation r\n@attribute s string\n@data\n'abc\\q'\n", r"x\.arff: Unsupported escape sequence"),
    ],
)
def test_malformed_arff_is_a_clear_error(text, message):
    with pytest.raises(ArffFormatError, match=message):
        parse_arff(text, "x.arff")


def test_missing_file_is_a_clear_error_and_latin1_is_read(tmp_path):
    with pytest.raises(ArffFormatError, match=r"absent\.arff: file not found"):
        read_arff(tmp_path / "absent.arff")
    path = tmp_path / "latin.arff"
    path.write_bytes("@relation r\n@attribute caf\xe9 {s\xfc\xdf,x}\n@data\ns\xfc\xdf\n".encode("latin-1"))
    table = read_arff(path)
    assert table.attributes[0].name == "caf\xe9" and table.values.tolist() == [[0.0]]
    assert table.source == str(path)


def test_binary_labels_in_either_declared_order_with_missing_values():
    header = "@relation r\n@attribute a {0,1}\n@attribute b {1,0}\n@attribute c numeric\n@data\n"
    for rows in ("1,1,0\n0,0,1\n?,?,?\n", "{0 1}\n{1 0,2 1}\n{0 ?,1 ?,2 ?}\n"):
        table = parse_arff(header + rows)
        labels, missing = binary_label_matrix(table.values, table.attributes, "x.arff", table.row_line)
        np.testing.assert_array_equal(labels.toarray(), [[1, 1, 0], [0, 0, 1], [0, 0, 0]])
        assert labels.dtype == bool and missing == 3
    table = parse_arff(header + "1,1,0\n0,0,2\n")
    with pytest.raises(ArffFormatError, match=r"x\.arff line 7: label attribute 'c' has value 2"):
        binary_label_matrix(table.values, table.attributes, "x.arff", table.row_line)


# -------------------------------------------------------------------------------------------- real data
# per file: (rows, attributes, sparse, non-zero entries (NaN included), missing values, sum of the present
# values, text attributes) -- measured with the former numba reader, which agreed with liac-arff bit for bit
REAL_TABLES = {
    'bibtex/bibtex-test.arff': (2515, 1995, True, 179642, 0, 179642.0, 0),
    'bibtex/bibtex-train.arff': (4880, 1995, True, 345866, 0, 345866.0, 0),
    'birds/birds-test.arff': (323, 279, False, 51827, 0, 1552649.2826979998, 0),
    'birds/birds-train.arff': (322, 279, False, 51730, 0, 1559841.604009, 0),
    'cal500/cal500.arff': (502, 242, False, 47158, 0, -4438.686426, 0),
    'corel5k/Corel5k-test-sparse.arff': (500, 873, True, 6320, 0, 6320.0, 0),
    'corel5k/Corel5k-train-sparse.arff': (4500, 873, True, 52641, 0, 52641.0, 0),
    'delicious/delicious-test.arff': (3185, 1483, True, 115294, 0, 115294.0, 0),
    'delicious/delicious-train.arff': (12920, 1483, True, 485637, 0, 485637.0, 0),
    'emotions/emotions-test.arff': (202, 78, False, 14896, 0, 41900.568601000006, 0),
    'emotions/emotions-train.arff': (391, 78, False, 28768, 0, 78259.03357, 0),
    'enron/enron-test.arff': (579, 1054, True, 50502, 0, 50502.0, 0),
    'enron/enron-train.arff': (1123, 1054, True, 98338, 0, 98338.0, 0),
    'flags/flags-test.arff': (65, 26, False, 708, 0, 31786.0, 0),
    'flags/flags-train.arff': (129, 26, False, 1454, 0, 112777.0, 0),
    'foodtruck/foodtruck.arff': (407, 33, False, 8814, 0, 32962.5, 0),
    'genbase/genbase-test.arff': (199, 1213, False, 235742, 0, 300498.0, 0),
    'genbase/genbase-train.arff': (463, 1213, False, 548540, 0, 702503.0, 0),
    'hmc_cellcycle_GO/cellcycle_GO.test.arff': (1278, 78, False, 98371, 6452, -487.63, 1),
    'hmc_cellcycle_GO/cellcycle_GO.train.arff': (1625, 78, False, 125149, 9197, -685.52, 1),
    'hmc_cellcycle_GO/cellcycle_GO.valid.arff': (848, 78, False, 65320, 4238, -343.06, 1),
    'medical/medical-test.arff': (645, 1494, True, 9491, 0, 9491.0, 0),
    'medical/medical-train.arff': (333, 1494, True, 4828, 0, 4828.0, 0),
    'scene/scene-test.arff': (1196, 300, False, 349023, 0, 110168.604604, 0),
    'scene/scene-train.arff': (1211, 300, False, 353091, 0, 110565.075549, 0),
    'yeast/yeast-test.arff': (917, 117, False, 98349, 0, 3917.569867, 0),
    'yeast/yeast-train.arff': (1500, 117, False, 160842, 0, 6338.803216, 0),
}


@pytest.fixture(scope="module")
def real_root():
    root = data_dir_with("corel5k/Corel5k.xml")
    if root is None:
        pytest.skip(no_data("corel5k/Corel5k.xml", "real ARFF files (the Mulan folders)"))
    return root


@pytest.mark.realdata
@pytest.mark.parametrize("relpath", sorted(REAL_TABLES))
def test_real_arff_files_have_their_known_shape_and_content(real_root, relpath):
    path = real_root / relpath
    if not path.is_file():
        pytest.skip(f"{path} not in XMLTHRESH_DATA={real_root}")
    n_rows, n_attributes, sparse, nonzero, missing, total, n_text = REAL_TABLES[relpath]
    table = read_arff(path)
    assert table.values.shape == (n_rows, n_attributes) and table.is_sparse == sparse
    data = table.values.data if sparse else table.values.ravel()
    assert int(np.count_nonzero(data)) == nonzero and int(np.isnan(data).sum()) == missing
    assert float(np.nansum(data)) == pytest.approx(total, rel=1e-12, abs=1e-9)
    assert len(table.text) == n_text and len(table.row_line) == n_rows
    assert np.all(np.diff(table.row_line) > 0) and table.row_line[0] > table.data_line
