"""Data files that are nearly right: text in another Unicode encoding or with a stray byte, a folder where a
file belongs (or a file where the folder belongs), an infinite value, a header declaring more than memory
holds, and a published file that is no longer the published one. Each is read correctly or named in one
line with the file, the line and the fix."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from xmlthresh._util.notices import DataWarning
from xmlthresh.data.arff import check_finite_columns, parse_arff, read_arff
from xmlthresh.data.download import RemoteFile, ensure_file
from xmlthresh.data.ranked_list_format import read_ranked_lists
from xmlthresh.data.text_encoding import TextEncodingError, decode_text, unicode_mark
from xmlthresh.datasets.mulan import MulanDataset, discover
from xmlthresh.datasets.xmlrepo import _resolve, read_xmlrepo
from xmlthresh.validation import InputError

ARFF = ("@relation t\n@attribute f1 numeric\n@attribute l1 {0,1}\n@data\n"
        "0.5,1\n1.5,0\n")


@pytest.mark.fast
@pytest.mark.parametrize("encoding, mark", [("utf-16", "UTF-16"), ("utf-32", "UTF-32"), ("utf-8-sig", "UTF-8")])
def test_text_with_a_unicode_mark_is_decoded_by_it(encoding, mark):
    raw = "h\u00e9llo\nw\n".encode(encoding)
    assert unicode_mark(raw) == mark
    assert decode_text(raw, "f.txt") == "h\u00e9llo\nw\n"


@pytest.mark.fast
def test_a_byte_that_is_not_utf8_is_named_by_file_line_and_byte():
    with pytest.raises(TextEncodingError, match=r"^f\.txt line 2: not UTF-8 text \(byte 0xe9\); re-save the file as UTF-8$"):
        decode_text(b"ok\nbad \xe9\n", "f.txt")
    assert decode_text(b"caf\xe9", "f.txt", fallback="latin-1") == "caf\u00e9"


@pytest.mark.fast
def test_an_arff_file_saved_as_utf16_reads_as_its_utf8_copy(tmp_path):
    (tmp_path / "a.arff").write_bytes(ARFF.encode("utf-16"))
    (tmp_path / "b.arff").write_text(ARFF, encoding="utf-8")
    a, b = read_arff(tmp_path / "a.arff"), read_arff(tmp_path / "b.arff")
    assert (a.values == b.values).all() and [x.name for x in a.attributes] == [x.name for x in b.attributes]


@pytest.mark.fast
@pytest.mark.parametrize("value", ["inf", "-inf"])
def test_an_infinite_feature_value_is_named_by_line_and_attribute(value):
    dense = parse_arff(ARFF.replace("1.5,0", f"{value},0"), source="t.arff")
    assert dense.values[1, 0] == float(value)  # the reader keeps what the file says
    with pytest.raises(ValueError, match=rf"t\.arff line 6: attribute 'f1' has the value {value}; values must be "
                                         r"finite \(write \? for a missing value\)"):
        check_finite_columns(dense, [0])
    check_finite_columns(dense, [1])  # a label column is not a feature
    sparse = parse_arff(ARFF.replace("0.5,1\n1.5,0", "{0 0.5,1 1}\n{0 " + value + "}"), source="t.arff")
    with pytest.raises(ValueError, match=r"t\.arff line 6: attribute 'f1'"):
        check_finite_columns(sparse, [0])


@pytest.mark.fast
def test_a_ranked_list_file_saved_as_utf16_says_so(tmp_path):
    path = tmp_path / "l.txt"
    path.write_bytes("1 2 1 0 1\n2 1 0 1 0\n".encode("utf-16"))
    with pytest.raises(ValueError, match=r"line 1: the file is UTF-16 text .* re-save it as UTF-8"):
        read_ranked_lists(path)


@pytest.mark.fast
def test_an_xmlrepo_file_with_a_latin1_byte_names_the_line(tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes(b"2 2 2\n0 0:1.0\n1 1:1.0 \xe9\n")
    with pytest.raises(InputError, match=r"x\.txt line 3: not UTF-8 text \(byte 0xe9\)"):
        read_xmlrepo(path)


@pytest.mark.fast
def test_an_xmlrepo_header_declaring_more_labels_than_memory_holds_is_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_MAX_MEMORY", "1G")
    path = tmp_path / "x.txt"
    path.write_text("2 4 1000000000000\n0 0:1.0\n1 1:1.0\n")
    with pytest.raises(InputError, match=r"x\.txt line 1: the header declares 1,000,000,000,000 labels and 4 "
                                         r"features; .* check the header 'N D L'"):
        read_xmlrepo(path)


@pytest.mark.fast
def test_a_folder_where_the_data_file_belongs_is_named_as_such(tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path))
    (tmp_path / "berger" / "Example.txt").mkdir(parents=True)
    remote = RemoteFile("berger/Example.txt", "http://127.0.0.1:9/Example.txt", "0" * 64)
    with pytest.raises(Exception, match=r"Example\.txt is not a file \(a folder\?\); remove it"):
        ensure_file(remote)
    with pytest.raises(Exception, match=r"is a folder; give the data file itself"):
        _resolve(str(tmp_path / "berger"))


@pytest.mark.fast
def test_a_file_given_as_a_mulan_folder_names_its_folder(tmp_path):
    (tmp_path / "t-train.arff").write_text(ARFF)
    with pytest.raises(Exception, match=rf"t-train\.arff is a file; .* dataset\.path={tmp_path}$"):
        discover(tmp_path / "t-train.arff", "t")


@pytest.mark.fast
def test_a_published_mulan_file_cut_short_is_said(tmp_path, monkeypatch, real_data):
    shutil.copytree(real_data / "emotions", tmp_path / "emotions")
    test_file = tmp_path / "emotions" / "emotions-test.arff"
    raw = test_file.read_bytes()
    test_file.write_bytes(raw[: raw.rfind(b"\n", 0, len(raw) // 2) + 1])
    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        MulanDataset(name="emotions").layout()
    assert [str(w.message) for w in caught if issubclass(w.category, DataWarning)
            and "emotions-test.arff is not the published file" in str(w.message)]


@pytest.mark.fast
def test_a_gzipped_xmlrepo_file_reads_as_the_plain_one_and_a_zip_says_to_extract(tmp_path):
    import gzip
    import zipfile

    text = b"3 2 2\n0 0:1.0\n1 1:1.0\n0,1 0:0.5 1:0.5\n"
    (tmp_path / "x.txt").write_bytes(text)
    (tmp_path / "x.txt.gz").write_bytes(gzip.compress(text))
    plain, zipped = read_xmlrepo(tmp_path / "x.txt"), read_xmlrepo(tmp_path / "x.txt.gz")
    assert (plain.features != zipped.features).nnz == 0 and (plain.labels != zipped.labels).nnz == 0
    (tmp_path / "cut.gz").write_bytes(gzip.compress(text)[:15])
    with pytest.raises(ValueError, match=r"cut\.gz: is a gzip file that cannot be read .* download it again"):
        read_xmlrepo(tmp_path / "cut.gz")
    with zipfile.ZipFile(tmp_path / "x.zip", "w") as archive:
        archive.writestr("x.txt", text)
    with pytest.raises(ValueError, match=r"x\.zip: is a zip archive; extract the data file from it"):
        read_xmlrepo(tmp_path / "x.zip")


@pytest.mark.fast
@pytest.mark.parametrize("body, message", [
    ("0.5,1\n1.5\n", r"t\.arff line 6: the row has 1 values, the header declares 2 attributes"),
    ("{0 0.5,1 1}\n{7 1.5}\n", r"t\.arff line 6: sparse index 7 is beyond the 2 attributes the header declares "
                               r"\(indices run 0 to 1\)"),
])
def test_an_arff_row_of_the_wrong_shape_says_what_is_wrong(body, message):
    with pytest.raises(ValueError, match=message):
        parse_arff(ARFF.split("@data\n")[0] + "@data\n" + body, source="t.arff")


@pytest.mark.fast
def test_a_thresholds_file_resaved_as_utf16_loads_as_the_original(tmp_path):
    import numpy as np

    import xmlthresh

    scores = np.array([[0.9, 0.2], [0.8, 0.7], [0.3, 0.6], [0.1, 0.1]])
    labels = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    path = xmlthresh.fit_thresholds(scores, labels).save(tmp_path / "t.json")
    (tmp_path / "u.json").write_bytes(path.read_text(encoding="utf-8").encode("utf-16"))
    original, resaved = xmlthresh.ThresholdResult.load(path), xmlthresh.ThresholdResult.load(tmp_path / "u.json")
    assert original.thresholds.tolist() == resaved.thresholds.tolist() and original.f_macro == resaved.f_macro


@pytest.mark.fast
def test_a_score_file_named_without_npz_points_to_the_file(tmp_path):
    from xmlthresh.datasets.score_loader import resolve_score_path

    (tmp_path / "s.npz").write_bytes(b"")
    with pytest.raises(Exception, match=rf"s does not exist, but {tmp_path / 's.npz'} does \(save_scores adds \.npz "
                                         rf"to a name without it\): dataset\.path={tmp_path / 's.npz'}"):
        resolve_score_path(tmp_path / "s")


def test_a_score_cache_that_cannot_be_written_costs_only_the_cache(toy_mulan, monkeypatch, caplog):
    from xmlthresh.datasets import DATASETS
    from xmlthresh.rankers import score_cache
    from xmlthresh.rankers.scoring import ranker_scores

    data = DATASETS.build("mulan", {"name": "toy"}).load()
    (toy_mulan / "cache").mkdir(exist_ok=True)
    (toy_mulan / "cache" / "scores").write_text("a file where the cache's folder belongs")
    first = ranker_scores(data, "knn", {"k": 5})
    assert "the ranker's scores are not cached this run" in caplog.text

    (toy_mulan / "cache" / "scores").unlink()

    def full_disk(path, result):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(score_cache, "save_scores", full_disk)
    second = ranker_scores(data, "knn", {"k": 5})
    assert "could not write the score cache" in caplog.text and "continuing without it" in caplog.text
    assert (first.splits["test"].scores != second.splits["test"].scores).nnz == 0 if hasattr(
        first.splits["test"].scores, "nnz") else (first.splits["test"].scores == second.splits["test"].scores).all()


@pytest.mark.fast
def test_a_sparse_arff_row_giving_an_attribute_twice_is_named():
    with pytest.raises(ValueError, match=r"t\.arff line 6: sparse index 0 \(attribute 'f1'\) appears more than once"):
        parse_arff(ARFF.split("@data\n")[0] + "@data\n{0 0.5,1 1}\n{0 0.5,0 0.2,1 1}\n", source="t.arff")
    table = parse_arff(ARFF.split("@data\n")[0] + "@data\n{0 0.5,1 1}\n{}\n{0 0,1 1}\n", source="t.arff")
    assert table.values.toarray().tolist() == [[0.5, 1.0], [0.0, 0.0], [0.0, 1.0]]


def test_a_mulan_set_with_one_split_dense_and_one_sparse_reads_as_both_dense(toy_mulan):
    from xmlthresh.datasets import DATASETS

    folder = toy_mulan / "data" / "toy"
    dense = DATASETS.build("mulan", {"name": "toy", "validation_fraction": 0.0}).load()
    test_file = folder / "toy-test.arff"
    header, body = test_file.read_text().split("@data\n")
    rows = ["{" + ",".join(f"{j} {v}" for j, v in enumerate(row.split(",")) if float(v) != 0) + "}"
            for row in body.splitlines() if row.strip()]
    (toy_mulan / "data" / "mixed").mkdir()
    for name in ("toy.xml", "toy-train.arff"):
        shutil.copy(folder / name, toy_mulan / "data" / "mixed" / name)
    (toy_mulan / "data" / "mixed" / "toy-test.arff").write_text(header + "@data\n" + "\n".join(rows) + "\n")
    mixed = DATASETS.build("mulan", {"name": "toy", "path": str(toy_mulan / "data" / "mixed"),
                                     "validation_fraction": 0.0}).load()
    for split in ("train", "test"):
        a, b = dense.X[split], mixed.X[split]
        a, b = (m.toarray() if hasattr(m, "toarray") else m for m in (a, b))
        assert np.allclose(a, b) and (dense.Y[split] != mixed.Y[split]).nnz == 0


def test_knn_scores_of_one_data_set_in_two_storages_are_equal(real_data, monkeypatch):
    """Cosine distances of a dense and a sparse copy of emotions differ in the last bits (3.3e-16), which split
    tied votes and moved the fitted F-macro."""
    import scipy.sparse as sp

    from xmlthresh.datasets import DATASETS
    from xmlthresh.rankers.knn import CosineKNN

    monkeypatch.setenv("XMLTHRESH_DATA", str(real_data))
    data = DATASETS.build("mulan", {"name": "emotions", "validation_fraction": 0.0}).load()
    X_train, X_test = (np.asarray(data.X[s].toarray() if sp.issparse(data.X[s]) else data.X[s]) for s in ("train", "test"))
    dense = CosineKNN(k=5).fit(X_train, data.Y["train"]).predict_scores(X_test)
    sparse = CosineKNN(k=5).fit(sp.csr_matrix(X_train), data.Y["train"]).predict_scores(sp.csr_matrix(X_test))
    dense, sparse = (m.toarray() if sp.issparse(m) else np.asarray(m) for m in (dense, sparse))
    assert np.array_equal(dense, sparse)
