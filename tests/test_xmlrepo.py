"""Extreme Classification Repository text format, on fabricated files (no public file is in the shared cache):
both layouts, lines without labels or features, split variants, and one clear error per malformation with
nothing left in the cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from xmlthresh.data.download import DataUnavailableError
from xmlthresh.datasets import DATASETS
from xmlthresh.datasets.xmlrepo import XMLRepoDataset, XMLRepoFormatError, read_split, read_xmlrepo

# 6 documents, 5 features, 4 labels: a line without labels (leading blank), one whose first token is a
# feature, one with labels but no features, one with a repeated label
DATA = """6 5 4
0,2 0:1.5 3:-2
 1:0.25
3 4:1e-3 0:2
1,1
2:7 4:1
0,1,2,3 1:1 2:2 3:3
"""
X_FULL = [[1.5, 0, 0, -2, 0], [0, 0.25, 0, 0, 0], [2, 0, 0, 0, 1e-3], [0, 0, 0, 0, 0], [0, 0, 7, 0, 1], [0, 1, 2, 3, 0]]
Y_FULL = [[1, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]]
TR_SPLIT = "1 2\n3 4\n5 6\n"
TST_SPLIT = "4 1\n6 3\n"


@pytest.fixture
def env(tmp_path, monkeypatch):
    data, cache = tmp_path / "data", tmp_path / "cache"
    (data / "Toy").mkdir(parents=True)
    monkeypatch.setenv("XMLTHRESH_DATA", str(data))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(cache))
    return data, cache


def write(folder: Path, **files: str) -> None:
    for name, content in files.items():
        (folder / name.replace("__", ".")).write_text(content)


def cache_files(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []


def test_reads_labels_and_features_including_empty_parts(tmp_path):
    path = tmp_path / "data.txt"
    path.write_text(DATA)
    parsed = read_xmlrepo(path)
    assert sp.isspmatrix_csr(parsed.features) and parsed.features.dtype == np.float64
    np.testing.assert_array_equal(parsed.features.toarray(), X_FULL)
    assert parsed.labels.dtype == bool and parsed.labels.shape == (6, 4)
    np.testing.assert_array_equal(parsed.labels.toarray(), Y_FULL)


@pytest.mark.parametrize("split_index, train_rows, test_rows", [(0, [0, 2, 4], [3, 5]), (1, [1, 3, 5], [0, 2])])
def test_single_file_with_split_variants(env, split_index, train_rows, test_rows):
    data, _ = env
    write(data / "Toy", Toy_data__txt=DATA, trSplit__txt=TR_SPLIT, tstSplit__txt=TST_SPLIT)
    result = DATASETS.get("xmlrepo")(path="Toy/Toy_data.txt", split_index=split_index, validation_fraction=0).load()
    assert result.name == "Toy_data" and set(result.X) == {"train", "test"}
    np.testing.assert_array_equal(result.X["train"].toarray(), np.array(X_FULL)[train_rows])
    np.testing.assert_array_equal(result.Y["test"].toarray(), np.array(Y_FULL)[test_rows])
    np.testing.assert_array_equal(result.label_names, np.arange(4))
    assert result.info["split"]["unused_documents"] == 1


def test_separate_train_and_test_files_with_a_validation_split(env):
    data, _ = env
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(40):
        labels = ",".join(str(k) for k in range(6) if rng.random() < [0.5, 0.3, 0.2, 0.1, 0.1, 0.05][k])
        features = " ".join(f"{j}:{rng.random():.3f}" for j in sorted(rng.choice(20, 3, replace=False)))
        lines.append(f"{labels} {features}" if labels else f" {features}")
    write(data / "Toy", train__txt="40 20 6\n" + "\n".join(lines) + "\n", test__txt="1 20 6\n5 19:1\n")
    result = XMLRepoDataset(name="toy", path_train="Toy/train.txt", path_test="Toy/test.txt",
                            validation_fraction=0.25, seed=1).load()
    sizes = {split: result.X[split].shape[0] for split in result.X}
    assert sizes["train"] + sizes["validation"] == 40 and abs(sizes["validation"] - 10) <= 2 and sizes["test"] == 1
    assert result.X["test"].shape == (1, 20) and result.Y["test"].toarray().tolist() == [[0, 0, 0, 0, 0, 1]]
    again = XMLRepoDataset(name="toy", path_train="Toy/train.txt", path_test="Toy/test.txt",
                           validation_fraction=0.25, seed=1).load()
    assert again.info["cache"]["hit"] is True
    assert (again.X["validation"] != result.X["validation"]).nnz == 0
    limited = XMLRepoDataset(name="toy", path_train="Toy/train.txt", path_test="Toy/test.txt", first_n_labels=2).load()
    assert limited.n_labels == 2 and limited.Y["train"].shape[1] == 2


BAD_DATA = [
    ("6 5\n", r"data\.txt line 1: header '6 5' is not 'N D L'"),
    ("", r"data\.txt: the file is empty"),
    (DATA.replace("6 5 4", "7 5 4"), r"data\.txt: header declares 7 documents, the file has 6 lines after it"),
    (DATA.replace("3 4:1e-3", "4 4:1e-3"), r"data\.txt line 4: label 4 outside the 4 labels of the header"),
    (DATA.replace("2:7 4:1", "2:7 5:1"), r"data\.txt line 6: feature index 5 outside the 5 features of the header"),
    (DATA.replace(" 1:0.25", " 1:x"), r"data\.txt line 3: feature value 'x' is not a number"),
    (DATA.replace(" 1:0.25", " 1-0.25"), r"data\.txt line 3: feature '1-0\.25' is not 'index:value'"),
    (DATA.replace(" 1:0.25", " 1:0.25:3"), r"data\.txt line 3: feature '1:0\.25:3' is not 'index:value'"),
    (DATA.replace("3 4:1e-3", "a 4:1e-3"), r"data\.txt line 4: label 'a' is not a non-negative integer"),
    (DATA.replace("0,2 0:1.5", "0,,2 0:1.5"), r"data\.txt line 2: empty label in '0,,2'"),
    (DATA.replace("2:7 4:1", "2:7 2:1"), r"data\.txt line 6: feature 2 appears twice"),
    (DATA.replace("2:7 4:1", "2:nan 4:1"), r"data\.txt line 6: feature value 'nan' is not finite"),
    (DATA.replace("2:7 4:1", "2:-1 -4:1"), r"data\.txt line 6: feature index -4 outside the 5 features of the header \(indices are 0-based\)"),
]


@pytest.mark.parametrize("content, message", BAD_DATA)
def test_malformed_data_file_is_a_clear_error_and_leaves_nothing_in_the_cache(env, content, message):
    data, cache = env
    write(data / "Toy", data__txt=content, trSplit__txt=TR_SPLIT, tstSplit__txt=TST_SPLIT)
    with pytest.raises(XMLRepoFormatError, match=message):
        XMLRepoDataset(path="Toy/data.txt").load()
    assert cache_files(cache) == []


BAD_SPLITS = [
    ({"trSplit.txt": "1 2\n3\n"}, 0, r"trSplit\.txt line 2: 1 columns, the first line has 2"),
    ({}, 2, r"trSplit\.txt: split_index 2 but the file has 2 column\(s\) \(0\.\.1\)"),
    ({"trSplit.txt": "1 2\n9 4\n"}, 0, r"trSplit\.txt line 2: row number 9 outside 1\.\.6"),
    ({"trSplit.txt": "0 2\n"}, 0, r"trSplit\.txt line 1: row number 0 outside 1\.\.6"),
    ({"trSplit.txt": "1 2\nx 4\n"}, 0, r"trSplit\.txt line 2: row number 'x' is not a positive integer"),
    ({"trSplit.txt": "1 2\n3 4\n1 5\n"}, 0, r"trSplit\.txt line 3: row number 1 appears twice in column 0"),
    ({"tstSplit.txt": "4 1\n5 3\n"}, 0, r"tstSplit\.txt: 1 documents are in both splits \(first: row 5 of .*data\.txt\)"),
    ({"tstSplit.txt": "\n"}, 0, r"tstSplit\.txt: the split file is empty"),
]


@pytest.mark.parametrize("files, split_index, message", BAD_SPLITS)
def test_malformed_split_file_is_a_clear_error_and_leaves_nothing_in_the_cache(env, files, split_index, message):
    data, cache = env
    write(data / "Toy", data__txt=DATA, trSplit__txt=TR_SPLIT, tstSplit__txt=TST_SPLIT)
    for name, content in files.items():
        (data / "Toy" / name).write_text(content)
    with pytest.raises(XMLRepoFormatError, match=message):
        XMLRepoDataset(path="Toy/data.txt", split_index=split_index).load()
    assert cache_files(cache) == []


def test_inconsistent_train_and_test_files_and_missing_files(env):
    data, cache = env
    write(data / "Toy", train__txt="1 5 4\n0 1:1\n", test__txt="1 6 4\n0 1:1\n", data__txt=DATA)
    with pytest.raises(XMLRepoFormatError, match=r"test\.txt line 1: header declares 6 features, but .*train\.txt declares 5"):
        XMLRepoDataset(path_train="Toy/train.txt", path_test="Toy/test.txt").load()
    with pytest.raises(DataUnavailableError, match=r"Toy/trSplit\.txt does not exist \(relative paths are looked up "
                                                   r"beside the data file"):
        XMLRepoDataset(path="Toy/data.txt").load()
    with pytest.raises(DataUnavailableError, match=r"absent\.txt does not exist .*under the data directory"):
        XMLRepoDataset(path="absent.txt").load()
    assert cache_files(cache) == []
    with pytest.raises(ValueError, match="either path .* or path_train and path_test"):
        XMLRepoDataset()
    with pytest.raises(ValueError, match="give both path_train and path_test"):
        XMLRepoDataset(path_train="a.txt")
    with pytest.raises(ValueError, match="either path"):
        XMLRepoDataset(path="a.txt", path_train="b.txt", path_test="c.txt")


def test_read_split_picks_a_column(tmp_path):
    path = tmp_path / "split.txt"
    path.write_text("3 1\n1 2\n")
    np.testing.assert_array_equal(read_split(path, 0, 3), [2, 0])
    np.testing.assert_array_equal(read_split(path, 1, 3), [0, 1])


def test_xmlrepo_config_composes():
    from hydra import compose, initialize_config_module

    from xmlthresh.cli.entry import register_resolvers

    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=["dataset=xmlrepo", "dataset.path=Bibtex/Bibtex_data.txt"])
    params = dict(cfg.dataset)
    assert params.pop("loader") == "xmlrepo"
    dataset = DATASETS.build("xmlrepo", params)
    assert dataset.name == "Bibtex_data" and dataset.split_index == 0
