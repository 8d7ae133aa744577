"""protocol=crossfit: strict protocol settings, thresholds fitted on out-of-fold scores in whole runs (Mulan,
xmlrepo), the behaviour on score files and ranked lists, and one clear error with nothing written."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification

from xmlthresh.data.multilabel import ScoreData
from xmlthresh.datasets.synthetic import generate_ranked_lists
from xmlthresh.datasets.synthetic_xmc import generate_xmc_scores
from xmlthresh.run.job import run_job
from xmlthresh.run.protocols import ProtocolError, ProtocolSpec, fit_and_evaluate, protocol_spec
from xmlthresh.rankers import RANKERS
from xmlthresh.strategies import STRATEGIES


# ------------------------------------------------------------------------------------------ settings
def test_protocol_settings_from_a_name_or_a_group_node():
    assert protocol_spec("oracle") == ProtocolSpec("oracle", seed=0)
    assert protocol_spec(None, run_seed=4) == ProtocolSpec("oracle", seed=4)
    assert protocol_spec("holdout", run_seed=3) == ProtocolSpec("holdout", seed=3)
    assert protocol_spec("crossfit", run_seed=2) == ProtocolSpec("crossfit", seed=2, folds=5)
    assert protocol_spec({"name": "crossfit", "folds": 3, "seed": 7}, run_seed=2) == ProtocolSpec("crossfit", 7, 3)
    assert protocol_spec({"name": "holdout", "seed": np.int64(1)}).seed == 1
    assert ProtocolSpec("crossfit", 0, 4).params() == {"folds": 4} and ProtocolSpec("holdout").params() == {}


@pytest.mark.parametrize("value, message", [
    ("bootstrap", "unknown protocol 'bootstrap'; known: oracle, holdout, crossfit"),
    ({"folds": 5}, "unknown protocol None"),
    ({"name": "crossfit", "folds": 4.5}, r"protocol.folds must be an integer >= 2, got 4\.5"),
    ({"name": "crossfit", "folds": 1}, "protocol.folds must be an integer >= 2, got 1"),
    ({"name": "crossfit", "folds": True}, r"got True \(bool\)"),
    ({"name": "crossfit", "folds": "5"}, r"got '5' \(str\)"),
    ({"name": "crossfit", "seed": 1.5}, r"protocol.seed must be an integer, got 1\.5"),
    ({"name": "holdout", "seed": False}, r"protocol.seed must be an integer, got False"),
    ({"name": "holdout", "folds": 3}, "protocol 'holdout' has no parameter.*folds; its parameters: name, seed"),
    ({"name": "oracle", "seed": 0}, "protocol 'oracle' has no parameter.*seed; its parameters: name"),
    (5, "protocol must be a name"),
])
def test_bad_protocol_settings_are_one_line_errors(value, message):
    with pytest.raises(ProtocolError, match=message) as error:
        protocol_spec(value)
    assert "\n" not in str(error.value)


# ----------------------------------------------------------------------------------- protocol on data
def test_crossfit_on_given_scores_takes_validation_as_out_of_fold(caplog):
    data = generate_xmc_scores(n_labels=50, num_docs=300, top_k=10, seed=1)
    with caplog.at_level(logging.WARNING, logger="xmlthresh.run.protocols"):
        crossfit = fit_and_evaluate(STRATEGIES.get("domain")(), data, "crossfit")
    holdout = fit_and_evaluate(STRATEGIES.get("domain")(), data, "holdout")
    assert crossfit["protocol"] == "crossfit" and crossfit["out_of_fold"] == "given"
    assert crossfit["fit_split"] == "validation" and crossfit["f_macro"] == holdout["f_macro"]
    assert any("taken as the out-of-fold scores" in r.getMessage() for r in caplog.records)
    with pytest.raises(ProtocolError, match="protocol=crossfit needs features .* or a validation split"):
        fit_and_evaluate(STRATEGIES.get("domain")(), ScoreData("t", {"test": data.splits["test"]}), "crossfit")


def test_crossfit_on_ranked_lists_is_a_clear_error():
    with pytest.raises(ProtocolError, match="'synthetic' is ranked lists .* use protocol=holdout"):
        fit_and_evaluate(STRATEGIES.get("domain")(), generate_ranked_lists(n_labels=5, num_docs=40), "crossfit")


# ----------------------------------------------------------------------------------------- whole runs
def job(protocol, strategy: str = "independent", seed: int = 0, name: str = "toy") -> dict:
    return {"strategy": {"name": strategy}, "ranker": {"name": "br_logreg"},
            "dataset": {"loader": "mulan", "name": name, "seed": seed}, "protocol": protocol, "seed": seed,
            "beta": 1.0, "warm_up": False, "plots": False, "tracking": {"enabled": False}}


def test_crossfit_run_fits_the_ranker_folds_plus_one_times_for_a_whole_strategy_sweep(toy_mulan, monkeypatch):
    fits = []
    original = RANKERS.get("br_logreg").fit
    monkeypatch.setattr(RANKERS.get("br_logreg"), "fit",
                        lambda self, X, Y: fits.append(X.shape[0]) or original(self, X, Y))
    protocol = {"name": "crossfit", "folds": 4, "seed": 0}
    results = {s: run_job(job(protocol, s), toy_mulan / s) for s in ("independent", "domain", "scut")}
    assert fits == [120, 120, 120, 120, 160]  # 4 folds of the 160 training documents, then the refit; once
    result = results["domain"]
    assert result["protocol"] == "crossfit" and result["folds"] == 4 and result["fit_split"] == "out_of_fold"
    assert result["fit_n_docs"] == 160 and result["n_docs"] == 80 and result["ranker_train_docs"] == 160
    assert result["seeds"] == {"run": 0, "dataset_split": 0, "ranker": 0, "folds": 0}
    assert result["fit_lower_bound"] <= result["fit_f_macro"] + 1e-12 <= result["fit_upper_bound"] + 1e-12
    assert results["independent"]["scores_from_cache"] is False and results["scut"]["scores_from_cache"] is True
    written = json.loads((toy_mulan / "domain" / "result.json").read_text())
    assert written["protocol"] == "crossfit" and written["out_of_fold"]["folds"] == 4
    # holdout on the same data fits on the validation documents only (a quarter of them)
    holdout = run_job(job("holdout"), toy_mulan / "holdout")
    assert holdout["fit_split"] == "validation" and holdout["fit_n_docs"] + holdout["ranker_train_docs"] == 160
    assert abs(holdout["fit_n_docs"] - 40) <= 5


@pytest.mark.parametrize("protocol, message", [
    ({"name": "crossfit", "folds": 4.5, "seed": 0}, "protocol.folds must be an integer >= 2, got 4.5"),
    ({"name": "crossfit", "folds": 1000, "seed": 0}, "protocol.folds = 1000 exceeds the 160 training documents"),
    ({"name": "crossfit", "folds": 1, "seed": 0}, "protocol.folds must be an integer >= 2, got 1"),
    ("jackknife", "unknown protocol 'jackknife'"),
])
def test_bad_crossfit_settings_fail_the_run_and_write_nothing(toy_mulan, protocol, message):
    run_dir = toy_mulan / "run"
    with pytest.raises(ValueError, match=message):
        run_job(job(protocol), run_dir)
    assert not run_dir.exists() or not any(run_dir.iterdir())
    assert not any((toy_mulan / "cache").glob("scores/*.npz"))


def test_crossfit_on_ranked_lists_fails_the_run_and_writes_nothing(tmp_path):
    cfg = {"strategy": {"name": "domain"}, "dataset": {"loader": "synthetic", "n_labels": 10, "num_docs": 80},
           "protocol": {"name": "crossfit", "folds": 5, "seed": 0}, "warm_up": False, "plots": False,
           "tracking": {"enabled": False}}
    with pytest.raises(ProtocolError, match="ranked lists"):
        run_job(cfg, tmp_path / "run")
    assert not (tmp_path / "run" / "result.json").exists()


def write_xmlrepo(path, X: np.ndarray, Y: np.ndarray) -> None:
    """A data file of the Extreme Classification Repository format (sparse features)."""
    lines = [f"{X.shape[0]} {X.shape[1]} {Y.shape[1]}"]
    for x, y in zip(X, Y):
        labels = ",".join(str(k) for k in np.flatnonzero(y))
        features = " ".join(f"{j}:{x[j]:g}" for j in np.flatnonzero(x))
        lines.append(f"{labels} {features}".strip() if labels else f" {features}")
    path.write_text("\n".join(lines) + "\n")


def test_crossfit_on_an_xmlrepo_set_with_sparse_features(tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    X, Y = make_multilabel_classification(n_samples=200, n_features=30, n_classes=8, n_labels=2, random_state=3)
    write_xmlrepo(tmp_path / "train.txt", X[:150], Y[:150])
    write_xmlrepo(tmp_path / "test.txt", X[150:], Y[150:])
    cfg = {"strategy": {"name": "domain"}, "ranker": {"name": "knn", "k": 5, "top_k": 4},
           "dataset": {"loader": "xmlrepo", "name": "tiny", "path_train": "train.txt", "path_test": "test.txt",
                       "seed": 1},
           "protocol": {"name": "crossfit", "folds": 3, "seed": 2}, "seed": 1, "warm_up": False, "plots": False,
           "tracking": {"enabled": False}}
    result = run_job(cfg, tmp_path / "run")
    assert result["fit_split"] == "out_of_fold" and result["fit_n_docs"] == 150 and result["n_docs"] == 50
    assert result["out_of_fold"]["fold_sizes"] == [50, 50, 50]
    assert result["seeds"] == {"run": 1, "dataset_split": 1, "folds": 2}  # knn has no random_state
    assert result["fit_lower_bound"] <= result["fit_upper_bound"] + 1e-12
