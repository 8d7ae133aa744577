"""Honest repetitions: the top-level seed reaches every random choice of a run (validation split, ranker,
holdout halves, crossfit folds), the same seed reproduces a run bit for bit, result.json records the seeds,
and the report treats every seed as a repetition."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import PACKAGE_CONF, composed, data_dir_with, no_data
from omegaconf import OmegaConf

from xmlthresh.datasets import DATASETS
from xmlthresh.datasets.mulan import MulanDataset
from xmlthresh.run.job import run_job

CONF = PACKAGE_CONF
#: loaders that carve a validation split out of train (and so need a seed that follows the run's)
CARVING_LOADERS = ("mulan", "xmlrepo")


def rows(matrix) -> set[tuple]:
    """The documents of a split as a set of feature rows (documents carry no ids)."""
    dense = matrix.toarray() if hasattr(matrix, "toarray") else np.asarray(matrix)
    return {tuple(row) for row in dense}


# ------------------------------------------------------------------------------------------ config
CARVING_OPTIONS = [path for path in sorted((CONF / "dataset").glob("*.yaml"))
                   if OmegaConf.load(path).get("loader") in CARVING_LOADERS]


def test_the_carving_options_are_found():
    assert {"mulan", "xmlrepo", "corel5k", "emotions", "yeast", "delicious"} <= {p.stem for p in CARVING_OPTIONS}


@pytest.mark.parametrize("path", CARVING_OPTIONS, ids=lambda p: p.stem)
def test_every_carved_split_follows_the_top_level_seed(path):
    raw = OmegaConf.load(path)
    assert OmegaConf.to_container(raw)["seed"] == "${seed}"
    overrides = [f"dataset={path.stem}", "seed=7"] + (["dataset.name=x"] if raw.get("name") == "???" else [])
    assert composed(*overrides)["dataset"]["seed"] == 7
    assert composed(*overrides, "dataset.seed=3")["dataset"]["seed"] == 3  # an explicit override wins


def test_protocol_group_options_and_their_seeds():
    assert composed()["protocol"] == {"name": "oracle"}
    assert composed("protocol=holdout", "seed=4")["protocol"] == {"name": "holdout", "seed": 4}
    assert composed("protocol=crossfit", "seed=4")["protocol"] == {"name": "crossfit", "folds": 5, "seed": 4}
    assert composed("protocol=crossfit", "protocol.folds=3", "protocol.seed=9")["protocol"]["folds"] == 3
    assert {p.stem for p in (CONF / "protocol").glob("*.yaml")} == {"oracle", "holdout", "crossfit"}


# ------------------------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("protocol", ["holdout", "crossfit"])
def test_the_same_seed_reproduces_a_run_bit_for_bit(toy_mulan, monkeypatch, protocol):
    """Two runs with fresh caches (so the ranker is really fitted twice) give identical thresholds."""
    fold_seed = ["protocol.seed=5"] if protocol == "crossfit" else []  # set apart from the run's seed
    cfg = composed("dataset=mulan", "dataset.name=toy", f"protocol={protocol}", *fold_seed, "strategy=domain", "seed=2")
    results = []
    for attempt in ("a", "b"):
        monkeypatch.setenv("XMLTHRESH_CACHE", str(toy_mulan / f"cache-{attempt}"))
        results.append(run_job(cfg, toy_mulan / attempt))
        assert results[-1]["scores_from_cache"] is False
    assert (toy_mulan / "a" / "thresholds.csv").read_bytes() == (toy_mulan / "b" / "thresholds.csv").read_bytes()
    assert results[0]["f_macro"] == results[1]["f_macro"] and results[0]["cache_key"] == results[1]["cache_key"]
    expected = {"run": 2, "dataset_split": 2, "ranker": 2, **({"folds": 5} if protocol == "crossfit" else {})}
    assert results[0]["seeds"] == expected


def test_another_seed_draws_another_validation_split_and_another_ranker_cache_entry(toy_mulan):
    zero = composed("dataset=mulan", "dataset.name=toy", "protocol=holdout", "strategy=independent", "seed=0")
    one = composed("dataset=mulan", "dataset.name=toy", "protocol=holdout", "strategy=independent", "seed=1")
    splits = [DATASETS.build("mulan", {k: v for k, v in c["dataset"].items() if k != "loader"}).load()
              for c in (zero, one)]
    assert rows(splits[0].X["validation"]) != rows(splits[1].X["validation"])
    assert rows(splits[0].X["validation"]) | rows(splits[0].X["train"]) == \
        rows(splits[1].X["validation"]) | rows(splits[1].X["train"])
    results = [run_job(c, toy_mulan / str(c["seed"])) for c in (zero, one)]
    assert results[0]["cache_key"] != results[1]["cache_key"]  # the key hashes the (different) splits
    assert [r["seeds"]["dataset_split"] for r in results] == [0, 1]


def test_another_seed_draws_other_ranked_list_halves(tmp_path):
    cuts = []
    for seed in (0, 1):
        cfg = composed("dataset=synthetic", "dataset.n_labels=30", "dataset.num_docs=300", "protocol=holdout",
                       f"seed={seed}", "strategy=domain")
        result = run_job(cfg, tmp_path / str(seed))
        assert result["seeds"] == {"run": seed, "dataset_generator": 0, "holdout_halves": seed}
        cuts.append((tmp_path / str(seed) / "thresholds.csv").read_text())
    assert cuts[0] != cuts[1]


@pytest.mark.realdata
def test_real_mulan_validation_split_follows_the_seed(tmp_path, monkeypatch):
    root = data_dir_with("emotions/emotions.xml")
    if root is None:
        pytest.skip(no_data("emotions/emotions.xml", "real Mulan data"))
    monkeypatch.setenv("XMLTHRESH_DATA", str(root))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    loaded = {}
    for seed in (0, 1):
        params = {k: v for k, v in composed("dataset=emotions", f"seed={seed}")["dataset"].items() if k != "loader"}
        loaded[seed] = MulanDataset(**params).load()
    assert loaded[0].info["validation_split"]["seed"] == 0 and loaded[1].info["validation_split"]["seed"] == 1
    validation = [rows(loaded[s].X["validation"]) for s in (0, 1)]
    assert validation[0] != validation[1] and len(validation[0] & validation[1]) < 0.6 * len(validation[0])
    assert rows(loaded[0].X["test"]) == rows(loaded[1].X["test"])  # the canonical test split stays


# ---------------------------------------------------------------------------------------------- report
def test_report_counts_seeds_as_repetitions_with_a_nonzero_standard_error(toy_mulan):
    from xmlthresh.report.tables import comparison, load_runs

    uri = f"sqlite:///{toy_mulan / 'store.db'}"
    for seed in (0, 1, 2):
        cfg = composed("dataset=mulan", "dataset.name=toy", "protocol=holdout", "strategy=independent",
                       f"seed={seed}", "tracking.enabled=true", f"tracking.uri={uri}")
        run_job(cfg, toy_mulan / f"run{seed}")
    runs = load_runs(uri, latest_sweep=False)
    assert not any("seed" in key for key in runs.attrs["keys"])  # dataset.seed, seeds.* are no comparison keys
    table = comparison(runs)
    assert len(table) == 1 and table.iloc[0]["n_runs"] == 3 and table.iloc[0]["f_macro_seeds_se"] > 0
