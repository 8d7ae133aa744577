"""HMC data sets (Clus hierarchical ARFF): ancestor closure, label order, imputation, clear errors with nothing
left in the cache, and the real cellcycle_GO data set (4,122 labels)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import data_dir_with, no_data

from xmlthresh.data.download import DataUnavailableError
from xmlthresh.datasets import DATASETS
from xmlthresh.datasets.hmc import GO_ROOTS, HMCDataset, HMCFormatError


# root -> A, B (GO-like roots dropped by default only when present); C has two parents; D below C
DAG = "root/A,root/B,A/C,B/C,C/D,B/E"
HEADER = f"""@RELATION 'toy'

@ATTRIBUTE x1   numeric
@ATTRIBUTE x2   numeric
@ATTRIBUTE kind {{u,v}}
@ATTRIBUTE class hierarchical {DAG}

@DATA
"""
TRAIN = HEADER + "1.0,?,u,D\n3.0,4.0,v,E@A\n?,2.0,?,B\n"
VALID = HEADER + "?,?,v,C\n"
TEST = HEADER + "5.0,1.0,u,A@D\n"


@pytest.fixture
def env(tmp_path, monkeypatch):
    data, cache = tmp_path / "data", tmp_path / "cache"
    data.mkdir()
    monkeypatch.setenv("XMLTHRESH_DATA", str(data))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(cache))
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    return data, cache


def write_hmc(data: Path, name: str, train: str = TRAIN, valid: str = VALID, test: str = TEST) -> Path:
    folder = data / f"hmc_{name}"
    folder.mkdir(parents=True, exist_ok=True)
    for split, content in (("train", train), ("valid", valid), ("test", test)):
        if content is not None:
            (folder / f"{name}.{split}.arff").write_text(content)
    return folder


def cache_files(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []


def test_ancestor_closure_label_order_and_imputation(env):
    data, _ = env
    write_hmc(data, "toy")
    result = DATASETS.get("hmc")(name="toy").load()
    # every node but root, by depth then name: A, B (1), C, E (2), D (3)
    assert result.label_names.tolist() == ["A", "B", "C", "E", "D"]
    np.testing.assert_array_equal(result.Y["train"].toarray(), [[1, 1, 1, 0, 1], [1, 1, 0, 1, 0], [0, 1, 0, 0, 0]])
    np.testing.assert_array_equal(result.Y["validation"].toarray(), [[1, 1, 1, 0, 0]])
    np.testing.assert_array_equal(result.Y["test"].toarray(), [[1, 1, 1, 0, 1]])
    assert set(result.X) == {"train", "validation", "test"}
    # x1 mean over train = 2, x2 = 3, kind mode = u (ties: first declared) -> kind=v is 0
    assert result.feature_names.tolist() == ["x1", "x2", "kind=v"]
    np.testing.assert_array_equal(result.X["train"], [[1, 3, 0], [3, 4, 1], [2, 2, 0]])
    np.testing.assert_array_equal(result.X["validation"], [[2, 3, 1]])
    np.testing.assert_array_equal(result.X["test"], [[5, 1, 0]])
    assert result.info["missing_feature_values"] == {"train": 3, "validation": 2, "test": 0}
    assert result.info["hierarchy"] == "dag" and result.info["dropped_terms"] == ["root"]


def test_go_roots_are_dropped_by_default_and_drop_terms_override(env):
    data, _ = env
    dag = "root/GO0003674,root/GO0008150,GO0003674/GO1,GO0008150/GO2,GO2/GO3"
    header = HEADER.replace(DAG, dag)
    write_hmc(data, "go", train=header + "1,2,u,GO3\n", valid=header + "1,2,u,GO1\n", test=header + "1,2,u,GO2@GO1\n")
    result = HMCDataset(name="go").load()
    assert result.label_names.tolist() == ["GO1", "GO2", "GO3"]
    assert result.info["dropped_terms"] == ["root", "GO0003674", "GO0008150"]
    np.testing.assert_array_equal(result.Y["train"].toarray(), [[0, 1, 1]])
    kept = HMCDataset(name="go", drop_terms=["root"], first_n_labels=2).load()
    assert kept.label_names.tolist() == ["GO0003674", "GO0008150"]
    np.testing.assert_array_equal(kept.Y["train"].toarray(), [[0, 1]])
    assert set(GO_ROOTS) >= {"GO0003674", "GO0008150"}


def test_funcat_tree_hierarchy(env):
    data, _ = env
    header = HEADER.replace(DAG, "01,01/01,01/02,02,02/05,02/05/01")
    write_hmc(data, "fun", train=header + "1,2,u,01/02@02/05/01\n", valid=header + "1,2,u,02\n", test=header + "1,2,u,01/01\n")
    result = HMCDataset(name="fun").load()
    assert result.info["hierarchy"] == "tree"
    assert result.label_names.tolist() == ["01", "02", "01/01", "01/02", "02/05", "02/05/01"]
    np.testing.assert_array_equal(result.Y["train"].toarray(), [[1, 1, 0, 1, 1, 1]])
    np.testing.assert_array_equal(result.Y["test"].toarray(), [[1, 0, 1, 0, 0, 0]])


BAD = [
    ("train", TRAIN.replace("E@A", "E@Z"), r"toy\.train\.arff line 10: class term 'Z' is not a node of the declared hierarchy"),
    ("valid", VALID.replace("?,?,v,C", "?,v,C"), r"toy\.valid\.arff line 9: the row has 3 values, the header declares 4 attributes"),
    ("test", TEST.replace("5.0", "five"), r"toy\.test\.arff line 9: attribute 'x1': 'five' is not a number"),
    ("test", TEST.replace(DAG, DAG + ",D/F"), r"toy\.test\.arff line 6: the hierarchy of attribute #4 'class' differs from .*toy\.train\.arff line 6"),
    ("valid", VALID.replace("@ATTRIBUTE x2   numeric\n", "").replace("?,?,v,C", "?,v,C"), r"toy\.valid\.arff: 3 attributes, but .*toy\.train\.arff has 4"),
    ("all", TRAIN.replace(DAG, DAG + ",D/A"), r"toy\.train\.arff line 6: the hierarchy has a cycle through \['A', 'C', 'D'\]"),
    ("all", TRAIN.replace("@ATTRIBUTE class hierarchical " + DAG, "@ATTRIBUTE class {a,b}").replace(",D\n", ",a\n")
     .replace(",E@A\n", ",b\n").replace(",B\n", ",a\n"), r"toy\.train\.arff: expected one 'hierarchical' class attribute, found 0"),
    ("all", TRAIN.replace("root/A,", "root/A/X,"), r"hierarchy entry 'root/A/X' is not a 'parent/child' edge|is not a path"),
]


@pytest.mark.parametrize("split, content, message", BAD)
def test_malformed_hmc_is_a_clear_error_and_leaves_nothing_in_the_cache(env, split, content, message):
    data, cache = env
    files = {"train": TRAIN, "valid": VALID, "test": TEST}
    if split == "all":  # the same header change in every file, so that they agree with each other
        header_end = content.index("@DATA") + len("@DATA\n")
        new_header = content[:header_end]
        files = {s: new_header + f[f.index("@DATA") + len("@DATA\n"):] for s, f in files.items()}
        files["train"] = content
        for s in ("valid", "test"):
            files[s] = new_header + ("1,2,u,a\n" if "{a,b}" in new_header else "1,2,u,A\n")
    else:
        files[split] = content
    write_hmc(data, "toy", **files)
    with pytest.raises(ValueError, match=message):
        HMCDataset(name="toy", hierarchy="dag" if "root/A/X" in content else "auto").load()
    assert cache_files(cache) == []


def test_missing_files_and_bad_parameters(env):
    data, cache = env
    write_hmc(data, "toy", valid=None)
    with pytest.raises(DataUnavailableError, match=r"toy\.valid\.arff does not exist: an HMC data set needs"):
        HMCDataset(name="toy").load()
    with pytest.raises(DataUnavailableError, match=r"downloads are off.*C-HMCNN/e887855ab4b3b8f22e4fafc80a0a33c1d1ac0041"):
        HMCDataset(name="cellcycle_GO").load()
    with pytest.raises(HMCFormatError, match=r"drop_terms \['nope'\] are not nodes"):
        write_hmc(data, "toy")
        HMCDataset(name="toy", drop_terms=["nope"]).load()
    assert cache_files(cache) == []
    with pytest.raises(ValueError, match="hierarchy must be"):
        HMCDataset(name="toy", hierarchy="graph")
    with pytest.raises(ValueError, match="needs a name"):
        HMCDataset(name="")


def test_cached_load_is_identical(env):
    data, cache = env
    write_hmc(data, "toy")
    first = HMCDataset(name="toy").load()
    second = HMCDataset(name="toy").load()
    assert (first.info["cache"]["hit"], second.info["cache"]["hit"]) == (False, True)
    for split in first.X:
        np.testing.assert_array_equal(first.X[split], second.X[split])
        assert (first.Y[split] != second.Y[split]).nnz == 0
    assert second.label_names.tolist() == first.label_names.tolist()
    assert len(cache_files(cache)) == 1


# -------------------------------------------------------------------------------------------- real data
def real_hmc_dir() -> Path | None:
    return data_dir_with("hmc_cellcycle_GO/cellcycle_GO.train.arff")


@pytest.fixture(scope="module")
def cellcycle(tmp_path_factory):
    root = real_hmc_dir()
    if root is None:
        pytest.skip(no_data("hmc_cellcycle_GO/cellcycle_GO.train.arff", "real HMC data"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XMLTHRESH_DATA", str(root))
        patch.setenv("XMLTHRESH_CACHE", str(tmp_path_factory.mktemp("hmc-cache")))
        patch.setenv("XMLTHRESH_OFFLINE", "1")
        started = time.perf_counter()
        data = HMCDataset(name="cellcycle_GO").load()
        cold = time.perf_counter() - started
        started = time.perf_counter()
        cached = HMCDataset(name="cellcycle_GO").load()
        warm = time.perf_counter() - started
    assert cached.info["cache"]["hit"] is True
    print(f"\n[hmc cellcycle_GO first parse / cached load] {cold:.2f}s/{warm:.3f}s")
    return root, data


@pytest.mark.realdata
def test_real_cellcycle_go_shapes(cellcycle):
    _, data = cellcycle
    assert {s: data.X[s].shape for s in data.X} == {"train": (1625, 77), "validation": (848, 77), "test": (1278, 77)}
    assert data.n_labels == 4122 and len(set(data.label_names.tolist())) == 4122
    assert not set(data.label_names.tolist()) & {"root", *GO_ROOTS}
    for split in data.X:
        assert isinstance(data.X[split], np.ndarray) and np.all(np.isfinite(data.X[split]))
        assert sp.isspmatrix_csr(data.Y[split]) and data.Y[split].dtype == bool
        assert data.Y[split].shape == (data.X[split].shape[0], 4122)


@pytest.mark.realdata
def test_real_cellcycle_go_labels_and_missing_values_against_a_plain_reading(cellcycle):
    """Oracle: read the files with plain string operations and walk the parents recursively."""
    root, data = cellcycle
    lines = (root / "hmc_cellcycle_GO" / "cellcycle_GO.train.arff").read_text().splitlines()
    spec = next(line for line in lines if line.startswith("@ATTRIBUTE class")).split("hierarchical")[1].strip()
    parents: dict[str, set[str]] = {}
    for edge in spec.split(","):
        parent, child = edge.split("/")
        parents.setdefault(child, set()).add(parent)

    def ancestors(term: str) -> set[str]:
        found = {term}
        for parent in parents.get(term, ()):
            found |= ancestors(parent)
        return found

    rows = [line for line in lines[lines.index("@DATA") + 1:] if line.strip()]
    column = {name: k for k, name in enumerate(data.label_names.tolist())}
    expected = np.zeros((len(rows), data.n_labels), dtype=bool)
    raw = np.array([[np.nan if v == "?" else float(v) for v in row.split(",")[:-1]] for row in rows])
    for r, row in enumerate(rows):
        for term in row.split(",")[-1].split("@"):
            for node in ancestors(term):
                if node in column:
                    expected[r, column[node]] = True
    np.testing.assert_array_equal(data.Y["train"].toarray(), expected)
    assert data.info["missing_feature_values"]["train"] == int(np.isnan(raw).sum())
    observed = ~np.isnan(raw)
    np.testing.assert_allclose(data.X["train"][observed], raw[observed])
    np.testing.assert_allclose(data.X["train"][~observed], np.broadcast_to(np.nanmean(raw, axis=0), raw.shape)[~observed])
    # depth order: the first labels are children of the GO roots
    assert all(parents[label] & set(GO_ROOTS) for label in data.label_names[:10])


@pytest.mark.realdata
def test_real_hmc_config_composes():
    from hydra import compose, initialize_config_module

    from xmlthresh.cli.entry import register_resolvers

    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=["dataset=hmc"])
    params = dict(cfg.dataset)
    assert params.pop("loader") == "hmc"
    dataset = DATASETS.build("hmc", params)
    assert dataset.name == "cellcycle_GO" and dataset.folder().name == "hmc_cellcycle_GO"
