"""Mulan data sets: iterative stratification, the loader, the feature cache, one clear error (file, line,
problem) per malformed input with nothing left in the cache, and the real data sets. The ARFF reader is
tested in test_arff.py, the feature encoding in test_feature_encoding.py."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import data_dir_with, no_data, serve_directory

from xmlthresh.data.arff import read_arff
from xmlthresh.data.download import DataUnavailableError, RemoteFile
from xmlthresh.data.stratify import StratificationProblem, iterative_stratification, stratified_holdout
from xmlthresh.datasets import DATASETS
from xmlthresh.datasets import mulan as mulan_module
from xmlthresh.datasets.mulan import MulanDataset, MulanFormatError


# --------------------------------------------------------------------------------------- fabricated files
TOY_XML = """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
<label name="L2"></label>
<label name="L1"></label>
</labels>
"""
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
TOY_TRAIN = TOY_HEADER + "1.0,red,YES,1,1,0\n?,green,NO,0,0,1\n3.0,?,YES,?,1,1\n5.0,green,?,1,0,0\n"
TOY_TEST = TOY_HEADER + "?,blue,NO,0,1,0\n2.0,?,?,?,0,1\n"
# the same rows as sparse ARFF: an omitted nominal entry is its first declared value (red, YES, 0)
TOY_TRAIN_SPARSE = TOY_HEADER + "{0 1.0,3 1,4 1}\n{0 ?,1 green,2 NO,5 1}\n{0 3.0,1 ?,3 ?,4 1,5 1}\n{0 5.0,1 green,2 ?,3 1}\n"
TOY_TEST_SPARSE = TOY_HEADER + "{0 ?,1 blue,2 NO,4 1}\n{0 2.0,1 ?,2 ?,3 ?,5 1}\n"
TOY_X_TRAIN = [[1, 1, 0, 0, 1, 1], [3, 0, 1, 0, 0, 0], [3, 0, 1, 0, 1, 1], [5, 0, 1, 0, 1, 1]]
TOY_X_TEST = [[3, 0, 0, 1, 0, 0], [2, 0, 1, 0, 1, 1]]
TOY_FEATURES = ["num", "color=red", "color=green", "color=blue", "flag=YES", "bit"]


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Data and cache directories of their own; downloads off (a fabricated set must never be fetched)."""
    data, cache = tmp_path / "data", tmp_path / "cache"
    data.mkdir()
    monkeypatch.setenv("XMLTHRESH_DATA", str(data))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(cache))
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    return data, cache


def write_set(data: Path, name: str, files: dict[str, str]) -> Path:
    folder = data / name
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, content in files.items():
        (folder / file_name).write_text(content)
    return folder


def cache_files(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []


def dense(matrix) -> np.ndarray:
    return matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix)


# ---------------------------------------------------------------------------------------- stratification
def reference_stratification(labels, proportions, seed):
    """The obvious implementation of Sechidis et al.'s Algorithm 1, with the kernel's random draws."""
    problem = StratificationProblem.build(labels, seed)
    ratio = np.asarray(proportions, dtype=float)
    rows = sp.csr_matrix(labels, dtype=bool)
    n_docs, n_labels = rows.shape
    remaining = np.diff(problem.label_ptr).astype(np.int64)
    wish_total = ratio * n_docs
    wish_label = np.array([[ratio[j] * remaining[i] for j in range(len(ratio))] for i in range(n_labels)])
    fold = np.full(n_docs, -1)
    draws = iter(problem.tie_draw)

    def choose(wish, totals):
        best = [j for j in range(len(wish)) if wish[j] == max(wish)]
        best = [j for j in best if totals[j] == max(totals[b] for b in best)]
        return best[min(int(next(draws) * len(best)), len(best) - 1)]

    while np.any(remaining > 0):
        label = min(np.flatnonzero(remaining > 0), key=lambda i: (remaining[i], problem.label_priority[i]))
        for doc in problem.label_docs[problem.label_ptr[label]:problem.label_ptr[label + 1]]:
            if fold[doc] >= 0:
                continue
            target = choose(wish_label[label], wish_total)
            fold[doc] = target
            wish_total[target] -= 1
            for other in problem.row_labels[problem.row_ptr[doc]:problem.row_ptr[doc + 1]]:
                wish_label[other, target] -= 1
                remaining[other] -= 1
    for doc in problem.unlabelled:
        target = choose(wish_total, wish_total)
        fold[doc] = target
        wish_total[target] -= 1
    return fold


def random_labels(n_docs, n_labels, seed, density=0.08):
    rng = np.random.default_rng(seed)
    frequency = density * rng.pareto(1.5, n_labels) / 2
    return sp.csr_matrix(rng.random((n_docs, n_labels)) < np.minimum(frequency, 0.6)[None, :])


@pytest.mark.parametrize("n_docs, n_labels, proportions, seed", [
    (50, 8, [0.75, 0.25], 0), (200, 40, [0.75, 0.25], 1), (120, 15, [0.5, 0.3, 0.2], 2), (30, 60, [0.6, 0.4], 3),
    (1, 3, [0.5, 0.5], 4), (0, 4, [0.7, 0.3], 5),
])
def test_stratification_kernel_matches_the_reference(n_docs, n_labels, proportions, seed):
    labels = random_labels(n_docs, n_labels, seed)
    np.testing.assert_array_equal(iterative_stratification(labels, proportions, seed=seed),
                                  reference_stratification(labels, proportions, seed))


def test_stratification_is_seeded_and_beats_a_random_split():
    labels = random_labels(600, 50, seed=7)
    keep, held_out = stratified_holdout(labels, 0.25, seed=3)
    keep2, held_out2 = stratified_holdout(labels, 0.25, seed=3)
    np.testing.assert_array_equal(held_out, held_out2)
    assert not np.array_equal(held_out, stratified_holdout(labels, 0.25, seed=4)[1])
    assert np.array_equal(np.sort(np.concatenate([keep, held_out])), np.arange(600))
    assert abs(len(held_out) - 150) <= 3
    counts = np.asarray(labels.sum(axis=0)).ravel()

    def deviation(rows):
        return np.abs(np.asarray(labels[rows].sum(axis=0)).ravel() - 0.25 * counts).mean()

    rng = np.random.default_rng(0)
    random_deviation = np.mean([deviation(rng.choice(600, 150, replace=False)) for _ in range(20)])
    assert deviation(held_out) < 0.3 * random_deviation
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        stratified_holdout(labels, 1.0)
    with pytest.raises(ValueError, match="summing to 1"):
        iterative_stratification(labels, [0.5, 0.6])


# ---------------------------------------------------------------------------------------------- loader
def test_labels_by_name_in_xml_order_with_escaped_quotes_and_an_all_zero_last_column(env):
    data, _ = env
    arff = ("@relation toy\n@attribute f0 numeric\n@attribute f1 {0,1}\n@attribute 'lab a' {0,1}\n"
            "@attribute 'Swainson\\'s Thrush' {0,1}\n@attribute TAG_m\\'usica {0,1}\n@attribute zlast {0,1}\n@data\n")
    xml = ('<?xml version="1.0"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n'
           "<label name=\"TAG_m\\'usica\"></label>\n<label name=\"zlast\"></label>\n"
           "<label name=\"Swainson's Thrush\"></label>\n<label name=\"lab a\"></label>\n</labels>\n")
    write_set(data, "quirky", {"quirky.xml": xml,
                               "Quirky-train-sparse.arff": arff + "{0 1.5,2 1}\n{1 1,3 1,4 1}\n{}\n{0 -2,2 1,3 1}\n",
                               "Quirky-test-sparse.arff": arff + "{4 1}\n"})
    result = MulanDataset(name="quirky", validation_fraction=0).load()
    assert result.label_names.tolist() == ["TAG_m'usica", "zlast", "Swainson's Thrush", "lab a"]
    assert result.Y["train"].shape == (4, 4) and result.Y["train"].dtype == bool
    np.testing.assert_array_equal(result.Y["train"].toarray(), [[0, 0, 0, 1], [1, 0, 1, 0], [0, 0, 0, 0], [0, 0, 1, 1]])
    np.testing.assert_array_equal(result.Y["test"].toarray(), [[1, 0, 0, 0]])
    assert sp.isspmatrix_csr(result.X["train"]) and result.X["train"].dtype == np.float64
    np.testing.assert_array_equal(result.X["train"].toarray(), [[1.5, 0], [0, 1], [0, 0], [-2, 0]])
    assert result.feature_names.tolist() == ["f0", "f1"]
    assert set(result.X) == {"train", "test"}


@pytest.mark.parametrize("sparse", [False, True])
def test_missing_values_nominal_features_and_xml_order(env, sparse):
    data, _ = env
    train, test = (TOY_TRAIN_SPARSE, TOY_TEST_SPARSE) if sparse else (TOY_TRAIN, TOY_TEST)
    write_set(data, "toy", {"toy.xml": TOY_XML, "toy-train.arff": train, "toy-test.arff": test})
    result = DATASETS.get("mulan")(name="toy", validation_fraction=0).load()
    assert sp.issparse(result.X["train"]) == sparse
    np.testing.assert_array_equal(dense(result.X["train"]), TOY_X_TRAIN)
    np.testing.assert_array_equal(dense(result.X["test"]), TOY_X_TEST)
    assert result.feature_names.tolist() == TOY_FEATURES
    assert result.label_names.tolist() == ["L2", "L1"]  # XML order, not attribute order
    np.testing.assert_array_equal(result.Y["train"].toarray(), [[0, 1], [1, 0], [1, 1], [0, 0]])
    assert result.info["missing_feature_values"] == {"train": 4, "test": 4}


def test_validation_split_is_stratified_seeded_and_imputes_from_the_final_train_rows(env):
    data, _ = env
    rng = np.random.default_rng(0)
    header = "@relation r\n@attribute x numeric\n" + "".join(f"@attribute L{k} {{0,1}}\n" for k in range(6)) + "@data\n"
    rows = []
    for i in range(80):
        labels = (rng.random(6) < [0.5, 0.3, 0.2, 0.1, 0.05, 0.05]).astype(int)
        rows.append(",".join(["?" if i % 10 == 0 else f"{rng.normal():.4f}", *map(str, labels)]))
    xml = "<labels>" + "".join(f'<label name="L{k}"/>' for k in range(6)) + "</labels>"
    write_set(data, "strat", {"strat.xml": xml, "strat-train.arff": header + "\n".join(rows[:60]) + "\n",
                              "strat-test.arff": header + "\n".join(rows[60:]) + "\n"})
    first = MulanDataset(name="strat", validation_fraction=0.25, seed=5).load()
    again = MulanDataset(name="strat", validation_fraction=0.25, seed=5).load()
    other = MulanDataset(name="strat", validation_fraction=0.25, seed=6).load()
    sizes = {s: first.X[s].shape[0] for s in first.X}
    assert sizes["train"] + sizes["validation"] == 60 and abs(sizes["validation"] - 15) <= 2 and sizes["test"] == 20
    np.testing.assert_array_equal(first.X["validation"], again.X["validation"])
    assert not np.array_equal(first.X["validation"], other.X["validation"])
    # the 6 missing training values get the mean of the final train rows (validation rows excluded)
    column = first.X["train"][:, 0]
    values, counts = np.unique(np.concatenate([column, first.X["validation"][:, 0]]), return_counts=True)
    fill = values[np.argmax(counts)]
    assert counts.max() == 6 == first.info["missing_feature_values"]["train"] + first.info["missing_feature_values"]["validation"]
    assert np.isclose(fill, column[column != fill].mean())
    assert first.info["validation_split"]["fraction"] == 0.25


def test_single_file_data_set_gets_a_seeded_stratified_test_split(env):
    data, _ = env
    rng = np.random.default_rng(1)
    header = "@relation r\n@attribute x numeric\n@attribute y numeric\n@attribute a {0,1}\n@attribute b {0,1}\n@data\n"
    rows = "".join(f"{rng.normal():.3f},{rng.normal():.3f},{int(rng.random() < .4)},{int(rng.random() < .2)}\n"
                   for _ in range(100))
    write_set(data, "solo", {"solo.xml": '<labels><label name="b"/><label name="a"/></labels>', "solo.arff": header + rows})
    one = MulanDataset(name="solo", validation_fraction=0.2, test_fraction=0.3, seed=2).load()
    two = MulanDataset(name="solo", validation_fraction=0.2, test_fraction=0.3, seed=2).load()
    sizes = {s: one.X[s].shape[0] for s in one.X}
    assert sum(sizes.values()) == 100 and abs(sizes["test"] - 30) <= 2 and abs(sizes["validation"] - 14) <= 2
    np.testing.assert_array_equal(one.X["test"], two.X["test"])
    all_rows = {tuple(r) for s in one.X for r in one.X[s]}
    assert len(all_rows) == 100  # every row in exactly one split
    assert one.info["test_split"]["seed"] == 3


def test_identifier_attribute_is_dropped_and_first_n_labels(env):
    data, _ = env
    header = ("@relation protein\n@attribute protein {P1,P2,P3}\n@attribute PS1 {YES,NO}\n@attribute PS2 {YES,NO}\n"
              "@attribute A {0,1}\n@attribute B {0,1}\n@attribute C {0,1}\n@data\n")
    xml = '<labels><label name="A"/><label name="B"/><label name="C"/></labels>'
    write_set(data, "genbase", {"genbase.xml": xml, "genbase-train.arff": header + "P1,YES,NO,1,0,1\nP2,NO,NO,0,1,1\n",
                                "genbase-test.arff": header + "P3,YES,YES,1,1,0\n"})
    result = MulanDataset(name="genbase", validation_fraction=0).load()
    assert result.feature_names.tolist() == ["PS1=YES", "PS2=YES"]
    assert result.info["dropped_attributes"] == ["protein"]
    np.testing.assert_array_equal(result.X["test"], [[1, 1]])
    kept = MulanDataset(name="genbase", validation_fraction=0, drop_attributes=["PS2"], first_n_labels=2).load()
    assert kept.feature_names.tolist() == ["protein=P1", "protein=P2", "protein=P3", "PS1=YES"]
    assert kept.label_names.tolist() == ["A", "B"] and kept.Y["train"].shape == (2, 2)
    with pytest.raises(MulanFormatError, match=r"drop_attributes \['nope'\] are not attributes"):
        MulanDataset(name="genbase", drop_attributes=["nope"]).load()


# ------------------------------------------------------------------------------------------------ cache
def test_cache_hit_rebuild_on_change_and_corrupt_entries(env, caplog):
    data, cache = env
    folder = write_set(data, "toy", {"toy.xml": TOY_XML, "toy-train.arff": TOY_TRAIN, "toy-test.arff": TOY_TEST})
    first = MulanDataset(name="toy", validation_fraction=0).load()
    assert first.info["cache"]["hit"] is False
    second = MulanDataset(name="toy", validation_fraction=0).load()
    assert second.info["cache"]["hit"] is True
    np.testing.assert_array_equal(second.X["train"], first.X["train"])
    assert (second.Y["test"] != first.Y["test"]).nnz == 0 and second.label_names.tolist() == ["L2", "L1"]
    assert second.info["missing_feature_values"] == first.info["missing_feature_values"]
    assert len(cache_files(cache)) == 1
    # a changed source (size and mtime) is a miss; its entry is rebuilt in place
    (folder / "toy-test.arff").write_text(TOY_TEST + "4.0,red,YES,1,1,1\n")
    changed = MulanDataset(name="toy", validation_fraction=0).load()
    assert changed.info["cache"]["hit"] is False and changed.X["test"].shape[0] == 3
    assert len(cache_files(cache)) == 1
    # other loader parameters: another entry
    MulanDataset(name="toy", validation_fraction=0.5).load()
    assert len(cache_files(cache)) == 2
    # a corrupt entry is deleted with a warning and rebuilt
    entry = Path(changed.info["cache"]["path"])
    entry.write_bytes(b"garbage")
    rebuilt = MulanDataset(name="toy", validation_fraction=0).load()
    assert rebuilt.info["cache"]["hit"] is False and "corrupt" in caplog.text
    np.testing.assert_array_equal(rebuilt.X["test"], changed.X["test"])
    assert not [p for p in cache_files(cache) if p.name.startswith(".")]  # no temporary file left


# ----------------------------------------------------------------------------------- malformed Mulan sets
BAD_SETS = [
    ("toy-train.arff", TOY_TRAIN.replace("1.0,red,YES,1,1,0", "1.0,red,YES,1,1"),
     r"toy-train\.arff line 12: the row has 5 values, the header declares 6 attributes"),
    ("toy-train.arff", TOY_TRAIN.replace("1.0,red", "1.0,purple"),
     r"toy-train\.arff line 12: value 'purple' is not declared for nominal attribute 'color'"),
    ("toy-test.arff", TOY_TEST.replace("2.0,", "abc,"), r"toy-test\.arff line 13: attribute 'num': 'abc' is not a number"),
    ("toy-train.arff", TOY_HEADER + "{0 1.0,9 1}\n", r"toy-train\.arff line 12: sparse index 9 is beyond the 6 attributes the header declares"),
    ("toy-train.arff", TOY_TRAIN.replace("@data\n", ""), r"toy-train\.arff line 11: expected @relation, @attribute or @data"),
    ("toy-test.arff", TOY_TEST.replace("@attribute num numeric", "@attribute num2 numeric"),
     r"toy-test\.arff line 4: attribute #1 'num2' numeric differs from .*toy-train\.arff line 4 \('num' numeric\)"),
    ("toy-test.arff", TOY_HEADER.replace("@attribute bit {0,1}\n", "") + "?,blue,NO,1,0\n", r"toy-test\.arff: 5 attributes, but .*toy-train\.arff has 6"),
    ("toy.xml", TOY_XML.replace('"L1"', '"L3"'), r"toy\.xml: 1 label\(s\) of the XML are not attributes of .*toy-train\.arff: \['L3'\]"),
    ("toy.xml", "<labels><label name='L1'>", r"toy\.xml line 1: not valid XML"),
    ("toy.xml", "<labels></labels>", r"toy\.xml: declares no <label"),
    ("toy.xml", "<labels><label name='L1'/><label name='L1'/></labels>", r"toy\.xml: label 'L1' is declared twice"),
    ("toy-train.arff", TOY_HEADER.replace("@attribute L1 {0,1}", "@attribute L1 {0,a}") + "1.0,red,YES,1,a,0\n",
     r"toy-test\.arff line 8: attribute #5 'L1' nominal \{0,1\} differs from .*toy-train\.arff line 8 \('L1' nominal \{0,a\}\)"),
    # no data rows: scikit-learn's imputer said "Found array with 0 sample(s)" without a file name
    ("toy-train.arff", TOY_HEADER, r"toy-train\.arff has no data rows \(nothing after @data\)"),
]


@pytest.mark.parametrize("file_name, content, message", BAD_SETS)
def test_malformed_set_is_a_clear_error_and_leaves_nothing_in_the_cache(env, file_name, content, message):
    data, cache = env
    write_set(data, "toy", {"toy.xml": TOY_XML, "toy-train.arff": TOY_TRAIN, "toy-test.arff": TOY_TEST, file_name: content})
    with pytest.raises(ValueError, match=message):
        MulanDataset(name="toy").load()
    assert cache_files(cache) == []


@pytest.mark.parametrize("old, new, train_rows, message", [
    ("@attribute L1 {0,1}", "@attribute L1 {0,a}", "1.0,red,YES,1,a,0\n",
     r"toy-train\.arff line 8: label attribute 'L1' \{0,a\} has no value '1'"),
    ("@attribute L2 {0,1}", "@attribute L2 numeric", "1.0,red,YES,1,1,0\n?,green,NO,0,0,2\n",
     r"toy-train\.arff line 13: label attribute 'L2' has value 2; labels must be 0 or 1"),
    ("@attribute L2 {0,1}", "@attribute L2 string", "1.0,red,YES,1,1,x\n",
     r"toy-train\.arff line 9: label attribute 'L2' is of type string"),
    ("@attribute bit {0,1}", "@attribute bit string", "1.0,red,YES,x,1,0\n",
     r"toy-train\.arff: attributes \['bit'\] are string/date attributes, which cannot be features"),
])
def test_label_and_feature_attributes_of_the_wrong_type_are_a_clear_error(env, old, new, train_rows, message):
    data, cache = env
    header = TOY_HEADER.replace(old, new)
    write_set(data, "toy", {"toy.xml": TOY_XML, "toy-train.arff": header + train_rows,
                            "toy-test.arff": header + train_rows.splitlines()[0] + "\n"})
    with pytest.raises(ValueError, match=message):
        MulanDataset(name="toy").load()
    assert cache_files(cache) == []


@pytest.mark.parametrize("files, message", [
    ({"toy.xml": TOY_XML, "toy-train.arff": TOY_TRAIN}, r"found toy-train\.arff but no test ARFF file"),
    ({"toy-train.arff": TOY_TRAIN, "toy-test.arff": TOY_TEST}, r"no label XML"),
    ({"toy.xml": TOY_XML}, r"no ARFF file"),
    ({"toy.xml": TOY_XML, "a-train.arff": TOY_TRAIN, "b-train.arff": TOY_TRAIN, "toy-test.arff": TOY_TEST},
     r"several train ARFF files"),
])
def test_incomplete_folder_is_a_clear_error(env, files, message):
    data, cache = env
    write_set(data, "toy", files)
    with pytest.raises((DataUnavailableError, MulanFormatError), match=message):
        MulanDataset(name="toy").load()
    assert cache_files(cache) == []


def test_missing_folder_names_the_place_and_known_sets_say_where_to_download(env):
    with pytest.raises(DataUnavailableError, match=r"nowhere does not exist: put the Mulan files"):
        MulanDataset(name="nowhere").load()
    with pytest.raises(DataUnavailableError, match=r"downloads are off.*raw\.githubusercontent\.com/tsoumakas/mulan/"
                                                   r"43f6389095ad71984264db4387a8074b22bc7d4a/data/multi-label/emotions"):
        MulanDataset(name="emotions").load()


def test_a_missing_known_folder_is_downloaded_and_verified(env, tmp_path, monkeypatch):
    data, _ = env
    monkeypatch.delenv("XMLTHRESH_OFFLINE")
    origin = tmp_path / "origin" / "toy"
    origin.mkdir(parents=True)
    contents = {"toy.xml": TOY_XML, "toy-train.arff": TOY_TRAIN, "toy-test.arff": TOY_TEST}
    for file_name, content in contents.items():
        (origin / file_name).write_text(content)
    with serve_directory(origin.parent) as url:
        known = {f"toy/{f}": RemoteFile(f"toy/{f}", f"{url}/toy/{f}", hashlib.sha256(c.encode()).hexdigest())
                 for f, c in contents.items()}
        monkeypatch.setattr(mulan_module, "KNOWN_FILES", known)
        result = MulanDataset(name="toy", validation_fraction=0).load()
    assert sorted(p.name for p in (data / "toy").iterdir()) == sorted(contents)
    np.testing.assert_array_equal(result.X["test"], TOY_X_TEST)


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError, match="needs a name"):
        MulanDataset(name="")
    with pytest.raises(ValueError, match="validation_fraction"):
        MulanDataset(name="x", validation_fraction=1.0)
    with pytest.raises(ValueError, match="test_fraction"):
        MulanDataset(name="x", test_fraction=0)


def test_known_files_cover_every_mulan_file_of_the_shared_checksums():
    root = data_dir_with("SHA256SUMS")
    if root is None:
        pytest.skip(no_data("SHA256SUMS", "the data cache's checksum manifest"))
    sums = root / "SHA256SUMS"
    expected = {}
    for line in sums.read_text().splitlines():
        sha, relpath = line.split()
        if relpath.split("/")[0] in {"bibtex", "birds", "cal500", "corel5k", "delicious", "emotions", "enron", "flags",
                                     "foodtruck", "genbase", "medical", "scene", "yeast"} and relpath.endswith((".arff", ".xml")):
            expected[relpath] = sha
    assert {k: v.sha256 for k, v in mulan_module.KNOWN_FILES.items()} == expected


# -------------------------------------------------------------------------------------------- real data
# (name, train rows incl. validation, test rows, encoded features, labels, sparse ARFF)
REAL_SETS = [
    ("corel5k", 4500, 500, 499, 374, True),
    ("bibtex", 4880, 2515, 1836, 159, True),
    ("delicious", 12920, 3185, 500, 983, True),
    ("enron", 1123, 579, 1001, 53, True),
    ("medical", 333, 645, 1449, 45, True),
    ("genbase", 463, 199, 1185, 27, False),
    ("yeast", 1500, 917, 103, 14, False),
    ("scene", 1211, 1196, 294, 6, False),
    ("emotions", 391, 202, 72, 6, False),
    ("birds", 322, 323, 271, 19, False),  # 258 numeric + hasSegments + location (12 values, one-hot)
]


def shared_mulan_dir() -> Path | None:
    return data_dir_with("corel5k/Corel5k.xml")


@pytest.fixture(scope="module")
def real_mulan(tmp_path_factory):
    """Loads each real data set once per module (shared temporary cache), recording the load times."""
    root = shared_mulan_dir()
    if root is None:
        pytest.skip(no_data("corel5k/Corel5k.xml", "real Mulan data"))
    cache = tmp_path_factory.mktemp("mulan-cache")
    loaded: dict[str, tuple] = {}

    def load(name: str):
        if name not in loaded:
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("XMLTHRESH_DATA", str(root))
                patch.setenv("XMLTHRESH_CACHE", str(cache))
                patch.setenv("XMLTHRESH_OFFLINE", "1")
                started = time.perf_counter()
                result = MulanDataset(name=name).load()
                cold = time.perf_counter() - started
                started = time.perf_counter()
                warm = MulanDataset(name=name).load()
                assert warm.info["cache"]["hit"] is True
                loaded[name] = (result, cold, time.perf_counter() - started)
        return loaded[name][0]

    load.root = root  # type: ignore[attr-defined]
    load.times = loaded  # type: ignore[attr-defined]
    return load


@pytest.mark.realdata
@pytest.mark.parametrize("name, n_train, n_test, n_features, n_labels, sparse", REAL_SETS)
def test_real_mulan_sets_have_the_published_shapes(real_mulan, name, n_train, n_test, n_features, n_labels, sparse):
    data = real_mulan(name)
    assert data.X["train"].shape[0] + data.X["validation"].shape[0] == n_train
    assert data.X["test"].shape == (n_test, n_features)
    assert data.n_labels == n_labels and len(set(data.label_names.tolist())) == n_labels
    assert sp.issparse(data.X["train"]) == sparse
    for split in data.X:
        assert data.Y[split].dtype == bool and sp.isspmatrix_csr(data.Y[split])
        assert data.X[split].dtype == np.float64
        values = data.X[split].data if sparse else data.X[split]
        assert np.all(np.isfinite(values))
    assert abs(data.X["validation"].shape[0] - 0.25 * n_train) <= 0.02 * n_train


@pytest.mark.realdata
def test_real_corel5k_quirks(real_mulan):
    data = real_mulan("corel5k")
    in_test = np.asarray(data.Y["test"].sum(axis=0)).ravel()
    assert int(np.count_nonzero(in_test == 0)) == 111
    # stratification: nearly every label with at least 4 training examples reaches the validation split
    train_counts = np.asarray(data.Y["train"].sum(axis=0)).ravel() + np.asarray(data.Y["validation"].sum(axis=0)).ravel()
    in_validation = np.asarray(data.Y["validation"].sum(axis=0)).ravel()
    frequent = train_counts >= 4
    assert np.mean(in_validation[frequent] > 0) > 0.97


@pytest.mark.realdata
def test_real_label_columns_follow_the_arff_attributes_by_name(real_mulan):
    # enron and yeast list their labels in the XML in another order than the ARFF attributes
    for name, file_name, xml_order_differs in (("birds", "birds-test.arff", False), ("delicious", "delicious-test.arff", False),
                                               ("enron", "enron-test.arff", True), ("yeast", "yeast-test.arff", True)):
        data = real_mulan(name)
        table = read_arff(real_mulan.root / name / file_name)
        column_of = {a.name.replace("\\'", "'"): j for j, a in enumerate(table.attributes)}
        columns = [column_of[label] for label in data.label_names]
        assert (columns != sorted(columns)) == xml_order_differs
        raw = table.values.toarray() if table.is_sparse else table.values
        np.testing.assert_array_equal(data.Y["test"].toarray(), raw[:, columns] == 1)
    assert "Swainson's Thrush" in real_mulan("birds").label_names.tolist()
    assert "TAG_m'usica" in real_mulan("delicious").label_names.tolist()


@pytest.mark.realdata
def test_real_quirks_of_birds_delicious_and_genbase(real_mulan):
    birds = real_mulan("birds")
    assert sum(int(np.count_nonzero(np.diff(birds.Y[s].indptr) == 0)) for s in birds.Y) > 200  # many without labels
    delicious = real_mulan("delicious")
    assert sum(int(np.count_nonzero(np.diff(delicious.Y[s].indptr) == 0)) for s in delicious.Y) > 0
    genbase = real_mulan("genbase")
    assert genbase.info["dropped_attributes"] == ["protein"]
    assert not any(str(f).startswith("protein") for f in genbase.feature_names)
    assert set(np.unique(genbase.X["train"])) <= {0.0, 1.0}


@pytest.mark.realdata
def test_real_shorthand_configs_compose_and_load(real_mulan):
    from hydra import compose, initialize_config_module

    from xmlthresh.cli.entry import register_resolvers

    register_resolvers()
    for name, *_ in REAL_SETS:
        with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
            cfg = compose(config_name="config", overrides=[f"dataset={name}"])
        params = dict(cfg.dataset)
        assert params.pop("loader") == "mulan" and params["name"] == name
        dataset = DATASETS.build("mulan", params)
        assert isinstance(dataset, MulanDataset) and dataset.name == name and dataset.folder().name == name


@pytest.mark.realdata
def test_real_load_times(real_mulan, capsys):
    """Loads every real set (if an earlier test did not) and reports parse and cached-load times."""
    for name, *_ in REAL_SETS:
        real_mulan(name)
    report = ", ".join(f"{name} {cold:.2f}s/{warm:.3f}s" for name, (_, cold, warm) in real_mulan.times.items())
    with capsys.disabled():
        print(f"\n[mulan first parse / cached load] {report}")
    assert all(warm < 2.0 for _, _, warm in real_mulan.times.values())
