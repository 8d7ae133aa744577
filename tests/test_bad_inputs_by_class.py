"""Regression tests of the second fresh bad-input list, by class: label names (one rule wherever they enter),
0/1 labels in every split, typed fields of a thresholds file, pickled objects in a score file named by key,
ThresholdClassifier's estimator, splitter and label names, and reshape advice that fits the call."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import xmlthresh
from xmlthresh.data.multilabel import ScoreData, ScoredSplit
from xmlthresh.data.score_format import ScoreFileError, load_scores, save_scores
from xmlthresh.data.scores import ScoreDataError
from xmlthresh.validation import InputError


def _data(seed: int = 0, n_docs: int = 60, n_labels: int = 4):
    rng = np.random.default_rng(seed)
    scores = rng.random((n_docs, n_labels))
    labels = rng.random((n_docs, n_labels)) < scores * 0.6
    labels[0] = True  # every label has a relevant document
    return scores, labels


# ------------------------------------------------------------------ label names
@pytest.mark.fast
@pytest.mark.parametrize("names, message", [
    (np.array("cat,dog,eel,fox"), r"got a single value 'cat,dog,eel,fox'"),
    (np.array([["a"], ["b"], ["c"], ["d"]]), r"must be 1-D, one name per label \(4\), got shape \(4, 1\) \(flatten it"),
    (["a", "b", "a", "c"], r"repeats 'a'"),
    (["a", "b"], r"one name per label \(4\), got 2"),
])
def test_label_names_follow_one_rule_in_the_api_in_splits_and_in_score_files(tmp_path, names, message):
    scores, labels = _data()
    with pytest.raises(InputError, match=message):
        xmlthresh.fit_thresholds(scores, labels, label_names=names)
    with pytest.raises(ScoreDataError, match=message):  # save_scores wrote repeated names its loader refused
        ScoredSplit(scores, labels, label_names=names)
    np.savez(tmp_path / "s.npz", scores_test=scores, labels_test=labels.astype(np.int64), label_names=names)
    with pytest.raises(ScoreFileError, match=message):  # a 0-d array gave "len() of unsized object"
        load_scores(tmp_path / "s.npz")


@pytest.mark.fast
def test_bytes_names_are_text_and_multiindex_columns_are_named_as_such(tmp_path):
    scores, labels = _data()
    result = xmlthresh.fit_thresholds(scores, labels, label_names=np.array([b"cat", b"dog", b"eel", b"fox"]))
    assert result.label_names.tolist() == ["cat", "dog", "eel", "fox"]  # thresholds.csv showed b'cat'
    np.savez(tmp_path / "s.npz", scores_test=scores, labels_test=labels.astype(np.int64),
             label_names=np.array([b"cat", b"dog", b"eel", b"fox"]))
    assert load_scores(tmp_path / "s.npz").splits["test"].label_names.tolist() == ["cat", "dog", "eel", "fox"]
    columns = pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1), ("b", 2)])
    with pytest.raises(InputError, match=r"MultiIndex columns \(2 levels\).*flatten them"):
        xmlthresh.fit_thresholds(pd.DataFrame(scores, columns=columns), labels)


# ------------------------------------------------------------------ labels
@pytest.mark.fast
@pytest.mark.parametrize("transform", [lambda y: 2 * y.astype(np.int64) - 1, lambda y: np.where(y, 0.8, 0.3)])
def test_a_split_refuses_labels_that_are_not_0_1(tmp_path, transform):
    """-1/+1 or soft labels were taken as all relevant by ScoredSplit and save_scores: F-macro 1.0."""
    scores, labels = _data()
    with pytest.raises(ScoreDataError, match=r"labels must be 0/1 .* binarise them first"):
        save_scores(tmp_path / "s.npz", ScoreData("s", {"test": ScoredSplit(scores, transform(labels))}))
    assert not (tmp_path / "s.npz").exists()


@pytest.mark.fast
def test_a_sparse_matrix_given_to_savez_is_named_by_its_key(tmp_path):
    scores, labels = _data()
    np.savez(tmp_path / "s.npz", scores_test=scores, labels_test=sp.csr_matrix(labels.astype(np.int64)))
    with pytest.raises(ScoreFileError, match=r"key 'labels_test' holds a Python object \(pickled\), e.g. a scipy "
                                             r"sparse matrix .* labels_test_data, labels_test_indices"):
        load_scores(tmp_path / "s.npz")


# ------------------------------------------------------------------ thresholds files
@pytest.mark.fast
@pytest.mark.parametrize("field, value, message", [
    ("include_predict_all", "false", r"field 'include_predict_all' must be true or false, got 'false'"),
    ("beta", "2", r"field 'beta' must be a positive finite number, got '2'"),
    ("beta", -1, r"field 'beta' must be a positive finite number, got -1"),
    ("kind", 3, r"field 'kind' must be text, got 3"),
    ("f_macro", "high", r"field 'f_macro' must be a number, got 'high'"),
    ("n_labels", True, r"field 'n_labels' must be an integer >= 0, got True"),
])
def test_a_thresholds_file_edited_by_hand_is_read_by_type_not_truthiness(tmp_path, field, value, message):
    scores, labels = _data()
    path = xmlthresh.fit_thresholds(scores, labels, include_predict_all=False).save(tmp_path / "t.json")
    payload = json.loads(path.read_text())
    payload[field] = value
    path.write_text(json.dumps(payload))
    with pytest.raises(InputError, match=message):
        xmlthresh.ThresholdResult.load(path)


@pytest.mark.fast
def test_predicting_one_document_advises_a_row_not_a_column():
    scores, labels = _data()
    result = xmlthresh.fit_thresholds(scores, labels)
    with pytest.raises(InputError, match=r"one document is a row: scores.reshape\(1, -1\)"):
        result.predict(scores[0])
    assert result.predict(scores[0].reshape(1, -1)).shape == (1, 4)


# ------------------------------------------------------------------ ThresholdClassifier
def _xy(n: int = 80):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    Y = (X[:, :3] + rng.normal(size=(n, 3)) > 0).astype(np.int64)
    return X, Y


def test_a_single_output_estimator_is_told_to_be_wrapped():
    from sklearn.linear_model import LogisticRegression

    X, Y = _xy()
    with pytest.raises(InputError, match=r"LogisticRegression could not be fitted on the training part of fold 0 "
                                         r"\(64 samples\).*wrap it, e.g. OneVsRestClassifier\(LogisticRegression"):
        xmlthresh.ThresholdClassifier(LogisticRegression(), cv=5, random_state=0).fit(X, Y)


def test_groups_reach_a_group_splitter_and_a_label_frame_names_the_labels():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.multiclass import OneVsRestClassifier

    X, Y = _xy()
    groups = np.arange(len(X)) % 8
    frame = pd.DataFrame(Y, columns=["cat", "dog", "eel"])
    model = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression()), cv=GroupKFold(4))
    model.fit(X, frame, groups=groups)
    assert model.result_.label_names.tolist() == ["cat", "dog", "eel"]  # were 0, 1, 2


@pytest.mark.fast
@pytest.mark.parametrize("key", ["beta", "native_threshold", "strategy"])
def test_strategy_params_that_the_classifier_sets_itself_are_refused_before_any_fit(key):
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    class NeverFitted(OneVsRestClassifier):
        def fit(self, X, y, **kwargs):  # pragma: no cover - must not be reached
            raise AssertionError("fitted before the parameters were checked")

    X, Y = _xy()
    with pytest.raises(InputError, match=rf"strategy_params must not hold '{key}'"):
        xmlthresh.ThresholdClassifier(NeverFitted(LogisticRegression()), strategy_params={key: 2}).fit(X, Y)


# ------------------------------------------------------------------ the command line and its environment
def _one_line(proc) -> str:
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip() and not line.startswith("[")]
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.parametrize("args, env, message", [
    (["ranker=null"], {}, "ranker=null: a group takes the name of one of its options"),
    (["warm_up=2"], {}, "warm_up must be true or false (yes/no, on/off, 1/0), got '2'"),
    (["-m", "force=true,2"], {}, "force must be true or false (yes/no, on/off, 1/0), got '2'"),
    ([], {"XMLTHRESH_OFFLINE": "maybe"}, "environment variable XMLTHRESH_OFFLINE='maybe' must be true or false"),
    ([], {"XMLTHRESH_TRACKING_SYNC": "bogus"}, "environment variable XMLTHRESH_TRACKING_SYNC='bogus' must be one of"),
    (["task=cde", "strategy=pooled", "beta=3"], {}, "task=cde does not read strategy, beta"),
    (["task=cde", "estimator=rfcde", "estimator.n_jobs=0"], {}, "estimator.n_jobs must be a number of parallel"),
    (["task=cde", "estimator=flexcode", "estimator.margin=-1"], {}, "flexcode: margin must be a number >= 0"),
    (["task=cde", "cde_dataset.phi=inf"], {}, "cde_dataset.phi must be a finite number, got inf"),
    (["-m", "beta=1,2", "hydra/launcher=joblib", "hydra.launcher.n_jobs=0"], {},
     "hydra.launcher.n_jobs must be a number of parallel workers"),
    (["-m", "beta=1,2", "report.kind=nosuch"], {}, "report.kind=nosuch: unknown study; known: transfer"),
])
def test_command_line_mistakes_are_one_line(isolated_home, tmp_path, args, env, message):
    from helpers import run_cli

    proc = run_cli([*args, "dataset=example", "plots=false", "warm_up=false", "tracking.enabled=false",
                    f"hydra.run.dir={tmp_path}/run", f"hydra.sweep.dir={tmp_path}/sweep"]
                   if "-m" not in args and "task=cde" not in args and "ranker=null" not in args else
                   [*args, "plots=false", f"hydra.run.dir={tmp_path}/run", f"hydra.sweep.dir={tmp_path}/sweep"],
                   env=env)
    assert message in _one_line(proc)
    assert not list(tmp_path.glob("sweep/*/result.json"))  # nothing ran


def test_false_words_switch_downloads_on_and_unused_extras_are_said(isolated_home, tmp_path, monkeypatch):
    from helpers import run_cli
    from xmlthresh._util.environment import env_flag

    for word, expected in (("false", False), ("no", False), ("0", False), ("off", False), ("yes", True), ("1", True)):
        monkeypatch.setenv("XMLTHRESH_OFFLINE", word)
        assert env_flag("XMLTHRESH_OFFLINE") is expected  # "false" meant offline: any value but "" and "0" did
    monkeypatch.delenv("XMLTHRESH_OFFLINE")
    proc = run_cli(["ceiling=true", "achievable=true", "plots=false", "warm_up=false", "tracking.enabled=false",
                    f"hydra.run.dir={tmp_path}/run"])
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert set(result["not_computed"]) == {"ceiling", "achievable"}  # were dropped without a word


@pytest.mark.parametrize("args, message", [
    (["--start", "a,b"], "--start takes one cut per label, comma-separated integers"),
    (["--start", "0,9"], "--start: 0 is not a cut of label 1; its cuts are 1, 2, 3, 4"),
    (["--start", "4,9"], "--start: 9 is not a cut of label 2"),
    (["--bogus"], "unknown option --bogus"),
])
def test_explain_names_its_own_arguments(args, message, capsys):
    from xmlthresh.cli.explain import main

    try:
        code = main(["dataset=counterexample", *args])
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    assert code in (1, 2) and message in capsys.readouterr().err


def test_explain_counts_astronomically_many_vectors_exactly():
    from xmlthresh.cli.explain import _count

    assert _count(10_000) == "10,000" and _count(17 * 10**888) == "about 1.7 x 10^889"


def test_list_refuses_unknown_arguments_filters_groups_and_checks_the_users_options(isolated_home):
    import subprocess
    import sys

    def listing(*args):
        return subprocess.run([sys.executable, "-m", "xmlthresh", "list", *args], capture_output=True, text=True,
                              timeout=120)

    typo = listing("--chek")
    assert typo.returncode == 2 and "unrecognized arguments: --chek" in typo.stderr
    only = listing("strategy")
    assert only.returncode == 0 and only.stdout.startswith("strategy:") and "dataset:" not in only.stdout
    (isolated_home / "conf" / "strategy").mkdir(parents=True)
    (isolated_home / "conf" / "strategy" / "mine.yaml").write_text("name: nosuchclass\n")
    checked = listing("--check")
    assert checked.returncode == 1 and "BROKEN strategy=mine" in checked.stdout and "nosuchclass" in checked.stdout


def test_a_store_on_a_full_disk_is_one_line(tmp_path, monkeypatch):
    import shutil

    from xmlthresh.tracking import store

    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(store.shutil, "disk_usage", lambda path: usage._replace(free=100_000))
    with pytest.raises(store.TrackingStoreError, match=r"has 0.1 MB free, less than the 8 MB a new store needs"):
        store.check_sqlite_file(tmp_path / "mlflow.db", f"sqlite:///{tmp_path}/mlflow.db")


# ------------------------------------------------------------------ the third fresh list
@pytest.mark.fast
def test_a_strategy_class_and_interval_settings_without_an_interval_are_refused():
    from xmlthresh.strategies import STRATEGIES

    scores, labels = _data()
    with pytest.raises(InputError, match=r"got the class IndependentStrategy; e.g. strategy='independent'"):
        xmlthresh.fit_thresholds(scores, labels, strategy=STRATEGIES.get("independent"))
    with pytest.raises(InputError, match=r"new_documents set the population interval, which interval=<level>"):
        xmlthresh.fit_thresholds(scores, labels, new_documents=1000)  # was dropped without a word


@pytest.mark.fast
def test_label_sets_for_y_point_to_the_binarizer():
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    X = np.random.default_rng(0).normal(size=(4, 2))
    with pytest.raises(InputError, match=r"MultiLabelBinarizer\(\).fit_transform\(y\)"):
        xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression())).fit(X, [[0], [0, 1], [1], []])


@pytest.mark.fast
def test_hand_edited_thresholds_files_name_what_disagrees_and_rules_are_checked(tmp_path):
    scores, labels = _data()
    path = xmlthresh.fit_thresholds(scores, labels).save(tmp_path / "t.json")
    payload = json.loads(path.read_text())
    payload["n_labels"] = 5
    path.write_text(json.dumps(payload))
    with pytest.raises(InputError, match=r"n_labels is 5 but the file holds 4 label names and 4 thresholds"):
        xmlthresh.ThresholdResult.load(path)
    rcut = xmlthresh.fit_thresholds(scores, labels, strategy="rcut").save(tmp_path / "r.json")
    for bad in (-3, "2"):
        payload = json.loads(rcut.read_text())
        payload["rule"]["t"] = bad
        rcut.write_text(json.dumps(payload))
        with pytest.raises(InputError, match=r"its rule cannot be used: rcut's rule 't' must be an integer in 1..4"):
            xmlthresh.ThresholdResult.load(rcut)


def test_a_mulan_folder_is_named_by_its_folder_and_a_mandatory_value_is_named(tmp_path, isolated_home):
    from xmlthresh.datasets import DATASETS

    assert DATASETS.build("mulan", {"path": str(tmp_path / "my_set")}).name == "my_set"  # was "???"
    with pytest.raises(InputError, match=r"needs a value for dataset.name \(the option leaves it to you"):
        DATASETS.build("mulan", {"name": "???"})


@pytest.mark.fast
def test_a_byte_order_mark_is_named():
    from xmlthresh.data.ranked_list_format import RankedListFormatError, parse_ranked_lists

    with pytest.raises(RankedListFormatError, match=r"starts with a UTF-8 byte-order mark \(bytes EF BB BF\)"):
        parse_ranked_lists(b"\xef\xbb\xbf1 2 1 0 1\n2 3 0 1 1\n")


@pytest.mark.parametrize("args, message", [
    (["task=cde", "cde.n_plot_points=-1"], "cde.n_plot_points must be an integer in [0, 12], got -1"),
    (["dataset=ranked_lists"], "needs a value for dataset.path (the option leaves it to you"),
    (["experiment=beta_sweep", "hydra.mode=RUN"], "this configuration is a sweep (hydra.sweeper.params: "),
])
def test_settings_a_single_run_cannot_honour_are_one_line(isolated_home, tmp_path, args, message):
    from helpers import run_cli

    proc = run_cli([*args, "tracking.enabled=false", "plots=false", f"hydra.run.dir={tmp_path}/run"])
    assert message in _one_line(proc)


def test_a_file_where_the_run_folder_goes_is_one_line(isolated_home, tmp_path):
    from helpers import run_cli

    (tmp_path / "afile").write_text("")
    proc = run_cli(["tracking.enabled=false", f"hydra.run.dir={tmp_path}/afile"])
    assert "a file is there, where a folder belongs" in _one_line(proc)


def test_explain_refuses_keys_it_does_not_read(capsys):
    from xmlthresh.cli.explain import main

    with pytest.raises(SystemExit):
        main(["dataset=counterexample", "task=cde", "strategy=independent"])
    assert "explain reads the data set" in capsys.readouterr().err


def test_a_report_that_cannot_write_names_its_own_option(tmp_path):
    import errno

    from xmlthresh._util import files

    token = files.WRITE_ELSEWHERE.set("--out")
    try:
        message = str(files._write_failed(tmp_path / "x", OSError(errno.ENOSPC, "No space left on device")))
    finally:
        files.WRITE_ELSEWHERE.reset(token)
    assert message.endswith("free space there or write elsewhere (--out)")


# --- a fourth fresh list: errors of the library's own building blocks -----------------------------------------

@pytest.mark.parametrize("call", [
    lambda: xmlthresh.fit_thresholds(np.random.default_rng(0).random((6, 2)), np.eye(6, 2, dtype=bool),
                                     strategy="optimal"),
    lambda: xmlthresh.load_dataset("espgam"),
])
def test_an_unknown_name_is_a_value_error_like_every_other_bad_input(call):
    """The library promises one ``ValueError`` (``InputError``) for a bad input; an unknown name is one, and
    still a ``KeyError`` for code that looks names up."""
    with pytest.raises(xmlthresh.InputError, match="unknown .*; known: ") as caught:
        call()
    assert isinstance(caught.value, KeyError)


@pytest.mark.parametrize("call, message", [
    (lambda: xmlthresh.metrics.f_beta(1.5, 0.5), r"precision must lie in \[0, 1\]"),
    (lambda: xmlthresh.metrics.f_beta(0.5, float("nan")), r"recall must lie in \[0, 1\]: 1 value\(s\) outside, first nan"),
    (lambda: xmlthresh.metrics.f_beta([0.2, 0.3], [0.4, 7.0]), r"recall must lie in \[0, 1\]"),
    (lambda: xmlthresh.metrics.f_beta(0.5, 0.5, beta=-1), r"beta must be a number in"),
    (lambda: xmlthresh.f_macro_score(np.eye(3), np.eye(3), beta=-1), r"beta must be a number in"),
    (lambda: xmlthresh.metrics.evaluate(tp=[5], cut=[2], n_relevant=[3]),
     r"label 0 has tp 5, cut 2 and n_relevant 3; 0 <= tp <= min\(cut, n_relevant\)"),
    (lambda: xmlthresh.metrics.evaluate(tp=[1, 1], cut=[2], n_relevant=[3, 3]), r"1-D with one entry per label"),
    (lambda: xmlthresh.f_macro_score(np.eye(3), np.eye(3)[:, :2]), r"^y_true and y_pred differ in shape: y_true \(3, 3\)"),
])
def test_the_metric_functions_refuse_values_they_cannot_score(call, message):
    """A metric never returns a number for nonsense: precision 1.5 gave F 0.75, tp above the cut gave F-macro 2,
    a negative beta was taken as its square."""
    with pytest.raises(xmlthresh.InputError, match=message):
        call()


def test_the_metric_functions_still_take_a_mean_of_ones_a_hair_above_one():
    assert xmlthresh.metrics.f_beta(1.0 + 1e-15, 1.0) == pytest.approx(1.0)


def test_a_bad_point_for_the_density_slice_names_its_option():
    from xmlthresh.cde.slices import feature_point

    with pytest.raises(ValueError, match=r"^cde.density_at_x must be one number \(every feature\) or 11 finite"):
        feature_point([1, 2], 11, "cde.density_at_x")


# ------------------------------------------------------------------ the cases the third list left open
@pytest.mark.parametrize("args, message", [
    (["-m", "beta=1,2", "hydra.sweep.subdir=same"], "hydra.sweep.subdir=same gives jobs 0 and 1 the same folder"),
    (["-m", "beta=1,2", "seed=1,2", "hydra.sweep.subdir=b${beta}"],
     "hydra.sweep.subdir=b${beta} gives jobs 0 and 1 the same folder"),
    (["experiment=[beta_sweep,f_values]"], "experiment=[beta_sweep,f_values]: a group takes one option, not a list"),
    (["strategy=[domain,pu]"], "give one, or sweep them: -m strategy=domain,pu"),
    (["-m", "task=cde", "cde_dataset=surd,fork", "cde_dataset.phi=1"],
     "cde_dataset.phi: cde_dataset=fork has no key 'phi' (its keys: a, m, n_test, n_train, nx, ny); only "
     "cde_dataset="),
    (["task=cde", "cde_dataset.m=3"], "cde_dataset.m: cde_dataset=surd has no key 'm'"),
])
def test_sweep_folders_preset_lists_and_keys_of_other_options_are_one_line(isolated_home, tmp_path, args, message):
    """A shared sweep subdir overwrote the results of one job by another's and said "done 2"; a list of presets
    was merged into one config; a key of one option swept across others got Hydra's advice to add it with +."""
    from helpers import run_cli

    proc = run_cli([*args, "tracking.enabled=false", "plots=false", "warm_up=false", f"hydra.run.dir={tmp_path}/run",
                    f"hydra.sweep.dir={tmp_path}/sweep"])
    assert message in _one_line(proc)
    assert not list(tmp_path.glob("**/result.json")) and not (tmp_path / "run").exists()  # refused before any job


def test_a_subdir_that_differs_between_jobs_is_accepted(isolated_home, tmp_path):
    from helpers import run_cli

    proc = run_cli(["-m", "beta=1,2", "hydra.sweep.subdir=b${beta}", "tracking.enabled=false", "plots=false",
                    "warm_up=false", f"hydra.sweep.dir={tmp_path}/sweep"])
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.parent.name for p in (tmp_path / "sweep").glob("*/result.json")) == ["b1", "b2"]


def _mlflow_runs(home):
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{home}/runs/mlflow.db")
    return client, [run for experiment in client.search_experiments()
                    for run in client.search_runs([experiment.experiment_id])]


def test_a_run_whose_artifacts_cannot_be_stored_ends_failed_and_sync_completes_it(isolated_home, tmp_path):
    """An artifact folder that cannot be written (read-only, full; here a file where the folder goes, which
    root cannot write into either) left the MLflow run RUNNING for ever, and Hydra added its own line."""
    from helpers import run_cli

    (isolated_home / "runs").mkdir()
    (isolated_home / "runs" / "mlartifacts").write_text("")
    proc = run_cli([f"hydra.run.dir={tmp_path}/run", "tracking.sync=foreground", "plots=false", "warm_up=false"])
    line = _one_line(proc)
    assert "could not be completed (NotADirectoryError: " in line and "it is marked FAILED" in line
    client, runs = _mlflow_runs(isolated_home)
    assert [run.info.status for run in runs] == ["FAILED"] and "mlartifacts" in runs[0].data.tags["error"]
    (isolated_home / "runs" / "mlartifacts").unlink()
    assert run_cli(["sync", "--wait"]).returncode == 0
    _, runs = _mlflow_runs(isolated_home)
    assert [run.info.status for run in runs] == ["FINISHED"] and "error" not in runs[0].data.tags
    assert {a.path for a in client.list_artifacts(runs[0].info.run_id)} >= {"result.json", "config.yaml"}


@pytest.mark.parametrize("sweep", [False, True])
def test_a_full_disk_while_hydra_writes_its_own_files_is_one_line(isolated_home, tmp_path, sweep):
    """Hydra's writes of ``.hydra/*.yaml`` and ``multirun.yaml`` fail on the write, not the open: the OSError
    names no file, and was a 42-line traceback. The full disk is /dev/full behind the file Hydra writes."""
    from helpers import run_cli

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    target = tmp_path / ("sweep/multirun.yaml" if sweep else "run/.hydra/config.yaml")
    target.parent.mkdir(parents=True)
    target.symlink_to("/dev/full")
    proc = run_cli([*(["-m", "beta=1,2"] if sweep else []), f"hydra.run.dir={tmp_path}/run",
                    f"hydra.sweep.dir={tmp_path}/sweep", "tracking.enabled=false", "plots=false", "warm_up=false"])
    place = tmp_path / ("sweep/multirun.yaml" if sweep else "run/.hydra")
    assert _one_line(proc) == (f"xmlthresh: error: {place} (Hydra was writing there): No space left on device; the "
                               "disk is full: free space there or write elsewhere (hydra.run.dir, hydra.sweep.dir, "
                               "XMLTHRESH_HOME)")


def test_a_file_size_limit_while_hydra_writes_is_one_line(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    resource = pytest.importorskip("resource")

    def limit() -> None:  # files above 3000 bytes fail with EFBIG (Hydra's hydra.yaml is larger)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))

    env = {**os.environ, "XMLTHRESH_HOME": str(tmp_path / "home"), "XMLTHRESH_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", f"hydra.run.dir={tmp_path}/run",
                           "tracking.enabled=false", "plots=false", "warm_up=false"], preexec_fn=limit, env=env,
                          capture_output=True, text=True, timeout=300)
    assert _one_line(proc) == (f"xmlthresh: error: {tmp_path}/run/.hydra (Hydra was writing there): File too large; "
                               "a file there would be larger than allowed (ulimit -f, or the file system's limit): "
                               "raise the limit or write elsewhere (hydra.run.dir, hydra.sweep.dir, XMLTHRESH_HOME)")


def test_two_tracked_runs_in_one_run_folder_are_two_mlflow_runs(isolated_home, tmp_path):
    """The same ``hydra.run.dir`` twice: the first run's record was replaced by the second's before it reached
    MLflow, and both became one MLflow run (the first's results lost). A run still running there is refused."""
    import json as _json

    from helpers import run_cli

    args = [f"hydra.run.dir={tmp_path}/run", "tracking.sync=off", "plots=false", "warm_up=false"]
    for beta in (1, 2):
        assert run_cli([*args, f"beta={beta}"]).returncode == 0
    assert run_cli(["sync", "--wait"]).returncode == 0
    client, runs = _mlflow_runs(isolated_home)
    assert sorted(run.data.params["beta"] for run in runs) == ["1.0", "2.0"]
    for run in runs:  # each run's result.json is its own
        local = client.download_artifacts(run.info.run_id, "result.json", str(tmp_path))
        assert _json.loads(Path(local).read_text())["beta"] == float(run.data.params["beta"])

    record = tmp_path / "run" / "run_record.json"
    payload = _json.loads(record.read_text())
    payload.update(status="RUNNING", synced=False, mlflow_run_id=None)
    payload["tags"]["xmlthresh.pid"] = str(os.getpid())  # a process that is alive: this one
    payload["tags"].pop("xmlthresh.pid_start", None)
    record.write_text(_json.dumps(payload))
    line = _one_line(run_cli([*args, "beta=3"]))
    assert f"{tmp_path}/run: another run (process {os.getpid()}) is running in this folder" in line


def test_a_report_on_a_full_disk_leaves_no_folder(tmp_path, monkeypatch):
    """The report wrote its files one by one into the folder it made first: a full disk half-way left a folder
    with some of them. Now the files appear together, or nothing (not even the parent folders it made)."""
    import errno

    from test_report import fake_store, run_row
    from xmlthresh._util import files
    from xmlthresh.report.comparison import write_report
    from xmlthresh.report.tables import load_runs

    fake_store(monkeypatch, [run_row(s, 0.5 + 0.1 * seed, seed=seed) for s in ("domain", "independent")
                             for seed in (0, 1)])
    runs = load_runs(latest_sweep=False)
    original = files._create_temporary

    def full_at_the_page(path):
        if path.name == "comparison.html":
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(path)

    monkeypatch.setattr(files, "_create_temporary", full_at_the_page)
    out = tmp_path / "reports" / "latest"
    with pytest.raises(files.WriteFailedError, match=rf"cannot write {out}/comparison.html: No space left"):
        write_report(runs, out)
    assert list(tmp_path.iterdir()) == []  # no partial folder, no staging folder, no parent made for it
    (out / "keep.txt").parent.mkdir(parents=True)
    (out / "keep.txt").write_text("mine")
    with pytest.raises(files.WriteFailedError):
        write_report(runs, out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"] and [p.name for p in out.parent.iterdir()] == ["latest"]
    monkeypatch.setattr(files, "_create_temporary", original)
    paths = write_report(runs, out)
    assert sorted(p.name for p in out.iterdir()) == sorted(["keep.txt", *(p.name for p in paths.values())])


def test_what_a_killed_writer_left_is_removed_at_the_next_start_and_only_when_stale(tmp_path, monkeypatch):
    """A parse-cache ``.tmp`` after kill -9 and ``mlflow.db.creating-*`` after a kill during a store's creation
    stayed for ever. A dead writer's leftovers (or any not touched for minutes) go; a live writer's stay."""
    import subprocess
    import sys
    import time

    from xmlthresh._util import files
    from xmlthresh.tracking import store

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    old = time.time() - files.STALE_SECONDS - 5
    folder = tmp_path / "cache" / "ranked_lists"
    folder.mkdir(parents=True)
    leftovers = {
        f".lists-ab.entry.{dead}-0123456789ab.tmp": True,  # its writer is gone
        f".lists-cd.entry.{os.getpid()}-0123456789ab.tmp": False,  # its writer (this process) is alive
        ".lists-ef.entry.0123456789ab.tmp": False,  # an older name without the writer: not yet stale
        ".lists-gh.entry.0123456789ab.tmp": True,  # the same, untouched for minutes
        f".report.{dead}-0123456789ab.partial": True,  # a report's staging folder
        ".notes.tmp": False,  # a user's own file, however old: not a name this package gives
    }
    for name, stale in leftovers.items():
        path = folder / name
        if name.endswith(".partial"):
            path.mkdir()
            (path / "comparison.md").write_text("half")
        else:
            path.write_bytes(b"half")
        stamp = old if name.startswith((".lists-gh", ".notes")) else time.time() - files.DEAD_OWNER_SECONDS - 1
        os.utime(path, (stamp, stamp))
    monkeypatch.setattr(files, "_TIDIED", set())
    files.write_text_atomic(folder / "next.entry", "x")  # the next process that writes there
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["next.entry", *(name for name, stale in leftovers.items() if not stale)])

    from xmlthresh.tracking import mlflow_runs

    db = tmp_path / "runs" / "mlflow.db"
    mlflow_runs.open_store(f"sqlite:///{db}")  # a store that exists: a kill after its rename left the journal
    gone, alive = (db.with_name(f"mlflow.db{store.CREATING_INFIX}{pid}-journal") for pid in (dead, os.getpid()))
    for path in (gone, alive):
        path.write_bytes(b"journal")
    monkeypatch.setattr(mlflow_runs, "_OPENED", set())  # the next process that opens the store
    mlflow_runs.open_store(f"sqlite:///{db}")
    assert not gone.exists() and alive.exists()


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie not yet reaped by its new parent counts as ended)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in status)
    except FileNotFoundError:
        return True


def test_a_sweep_worker_ends_when_its_launcher_is_killed(tmp_path):
    """joblib's loky workers outlived a sweep's launcher killed with kill -9 (still alive ten minutes later, about
    200 MB each); a worker now watches its parent and ends when the parent is gone, saying what to do."""
    import signal
    import subprocess
    import sys
    import time

    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc")
    worker = ("import sys, time; from xmlthresh.run.parent_watch import exit_when_parent_dies; "
              "exit_when_parent_dies(poll_seconds=0.05); print('watching', flush=True); time.sleep(60)")
    launcher = (f"import subprocess, sys, time; w = subprocess.Popen([sys.executable, '-c', {worker!r}], "
                f"stderr=open({str(tmp_path / 'worker.err')!r}, 'w'), stdout=subprocess.PIPE, text=True); "
                "w.stdout.readline(); print(w.pid, flush=True); time.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(child), "the worker outlived its launcher"
    finally:
        parent.kill()
    said = (tmp_path / "worker.err").read_text()
    assert f"the sweep's launching process {parent.pid} is gone; worker {child} stops" in said


# ------------------------------------------------------------------ the fourth fresh list
@pytest.mark.fast
def test_names_given_twice_and_a_folder_as_the_file_are_refused(tmp_path):
    """label_names beside a DataFrame's own column names silently replaced them; saving to a folder was a raw
    IsADirectoryError naming a temporary file."""
    from xmlthresh._util.files import WriteFailedError

    scores, labels = _data()
    with pytest.raises(InputError, match=r"label_names \['w', 'x', 'y', 'z'\] differ from the DataFrame's column "
                                         r"names \['a', 'b', 'c', 'd'\]"):
        xmlthresh.fit_thresholds(pd.DataFrame(scores, columns=list("abcd")), labels, label_names=list("wxyz"))
    named = xmlthresh.fit_thresholds(pd.DataFrame(scores), labels, label_names=list("wxyz"))  # unnamed columns
    assert named.label_names.tolist() == list("wxyz")
    with pytest.raises(WriteFailedError, match=rf"cannot write {tmp_path}: it is a folder; give the path of a file"):
        named.save(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.fast
def test_an_empty_report_folder_is_refused(capsys, monkeypatch):
    """``--out ''`` was read as no --out: the report went to the default folder without a word."""
    from xmlthresh.report import comparison

    import xmlthresh.tracking.mlflow_runs as runs
    import xmlthresh.tracking.store as store

    monkeypatch.setattr(store, "check_store_exists", lambda uri: None)
    monkeypatch.setattr(runs, "open_store", lambda uri, repair=True: uri)

    def no_store_read(*args, **kwargs):
        raise AssertionError("the runs were read: --out '' was not refused first")

    monkeypatch.setattr(comparison, "load_runs", no_store_read)
    assert comparison.main(["--all", "--out", ""]) == 1
    assert capsys.readouterr().err.strip() == ("python -m xmlthresh.report: error: --out is empty; give a folder, "
                                               "or leave --out out for runs/reports/<sweep or all>")


@pytest.mark.parametrize("args, message", [
    (["hydra.run.dir="], "hydra.run.dir is empty, which is the directory the command runs in; give a folder"),
    (["-m", "beta=1,2", "hydra.sweep.dir=''"], "hydra.sweep.dir is empty, which is the directory the command runs in"),
    (["-m", "beta=interval(1,2)"], "BasicSweeper does not support sweep type : INTERVAL_SWEEP; the basic sweeper takes "
                                   "lists of values"),
    (["-m", "beta=1,2", "tracking.experiment=ea,eb"], "tracking.experiment takes one value per sweep"),
    (["-m", "tracking.uri=sqlite:///{tmp}/a.db,sqlite:///{tmp}/b.db"], "tracking.uri takes one value per sweep"),
    (["-m", "tracking.enabled=true,false"], "tracking.enabled takes one value per sweep"),
])
def test_places_and_tracking_that_a_run_or_sweep_cannot_honour_are_one_line(isolated_home, tmp_path, monkeypatch,
                                                                            args, message):
    """An empty run or sweep folder wrote into the current directory; an interval sweep was Hydra's traceback;
    a sweep over experiments or stores put its parent run in one and its jobs' runs in others (broken links,
    a report of the sweep without its jobs)."""
    from helpers import run_cli

    monkeypatch.chdir(tmp_path)
    given = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    place = [] if any(arg.startswith("hydra.") for arg in given) else [f"hydra.sweep.dir={tmp_path}/sweep",
                                                                      f"hydra.run.dir={tmp_path}/run"]
    proc = run_cli([*given, *place, "plots=false", "warm_up=false"])
    assert message in _one_line(proc)
    assert not list(tmp_path.glob("**/result.json")) and not list(tmp_path.glob("*.db"))


def test_relative_stores_and_homes_are_where_the_command_started_under_chdir(isolated_home, tmp_path, monkeypatch):
    """Under ``hydra.job.chdir=true`` a relative ``tracking.uri=sqlite:///runs.db`` or ``XMLTHRESH_HOME`` was
    resolved in the job's own folder: each run (each job of a sweep) got a store of its own there."""
    from helpers import run_cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XMLTHRESH_HOME", "relhome")
    common = ["hydra.job.chdir=true", "plots=false", "warm_up=false", "tracking.sync=foreground"]
    assert run_cli([*common, "tracking.uri=sqlite:///rel.db", f"hydra.run.dir={tmp_path}/run"]).returncode == 0
    assert run_cli([*common, f"hydra.run.dir={tmp_path}/run2"]).returncode == 0
    assert run_cli(["-m", "beta=1,2", *common, "tracking.uri=sqlite:///rel.db",
                    f"hydra.sweep.dir={tmp_path}/sweep"]).returncode == 0
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.db")) == ["rel.db", "relhome/runs/mlflow.db"]
    from mlflow import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path}/rel.db")
    runs = client.search_runs([client.get_experiment_by_name("xmlthresh").experiment_id])
    parents = {run.info.run_id for run in runs if run.data.tags.get("xmlthresh.sweep") == "parent"}
    assert len(runs) == 4 and len(parents) == 1  # the single run, the sweep's parent and its two jobs
    assert sum(run.data.tags.get("mlflow.parentRunId") in parents for run in runs) == 2


@pytest.mark.parametrize("swept, message", [
    ("beta=1,abc", "beta=abc: beta must be a number in"),
    ("strategy.smoothing=0,-3", "strategy.smoothing=-3: "),
    ("seed=0,1.5", "seed=1.5: seed must be an integer"),
])
def test_every_swept_value_is_checked_before_any_job(isolated_home, tmp_path, swept, message):
    """``-m beta=1,abc`` ran job 0 and failed job 1 after the work was done; every value a sweep varies is now
    checked before any job, like every other setting."""
    from helpers import run_cli

    proc = run_cli(["-m", swept, "strategy=domain", "tracking.enabled=false", "plots=false", "warm_up=false",
                    f"hydra.sweep.dir={tmp_path}/sweep"])
    line = _one_line(proc)
    assert message in line and line.endswith("(checked before any job: none was run)")
    assert not list(tmp_path.glob("**/result.json"))


# --- a fifth fresh list -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("override", ["dataset.path=~/s.npz", "dataset.path=/tmp/my lists ü.txt"])
def test_a_value_hydra_cannot_parse_says_how_to_quote_it(isolated_home, override):
    """Hydra's grammar error was "LexerNoViableAltException: dataset.path=~/s.npz; ^; See https://hydra.cc/...":
    its caret pointed at nothing once on one line."""
    from helpers import run_cli

    line = _one_line(run_cli(["dataset=scores", override, "tracking.enabled=false"]))
    key, value = override.split("=", 1)
    assert line == (f"xmlthresh: error: Hydra's override grammar cannot read {override!r}: a value with spaces, ~, $, "
                    f"quotes or non-ASCII letters must be quoted for Hydra, inside the shell's quotes: "
                    f"'{key}=\"{value}\"'")


def test_a_tilde_in_the_home_variable_is_the_users_home(tmp_path, monkeypatch):
    """``XMLTHRESH_HOME='~/xh'`` (quoted in a .env file, so the shell left the ~) made a folder named ``~``."""
    from xmlthresh.cli.entry import absolute_environment_paths

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XMLTHRESH_HOME", "~/xh")
    monkeypatch.chdir(tmp_path)
    absolute_environment_paths()
    assert os.environ["XMLTHRESH_HOME"] == str(tmp_path / "home" / "xh")


@pytest.mark.parametrize("estimator, param", [("flexcode", "max_basis"), ("ckde", "n_neighbors"), ("gmm", "max_iter")])
def test_a_count_of_an_estimator_below_one_is_refused(estimator, param):
    """``estimator.max_basis=0`` ran with a warning that it "allows at most 1 basis function" and used 1."""
    from xmlthresh.cde import ESTIMATORS

    with pytest.raises(ValueError, match=rf"^{estimator}: {param} must be an integer >= 1, got 0$"):
        ESTIMATORS.build(estimator, {param: 0})


def test_sync_says_when_its_list_of_pending_runs_is_a_file(isolated_home, capsys):
    from xmlthresh.tracking.record import pending_dir
    from xmlthresh.tracking.sync import command

    pending_dir().parent.mkdir(parents=True, exist_ok=True)
    pending_dir().write_text("not a folder")
    assert command([]) == 1
    assert f"{pending_dir()} is a file" in capsys.readouterr().err


def test_a_report_from_files_names_a_result_it_cannot_read(tmp_path, caplog):
    """``python -m xmlthresh.report --results`` left a job with a corrupt result.json out of the page silently."""
    from xmlthresh.report.tables import results_table

    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "result.json").write_text('{"strategy": "domain", "f_macro": 0.5')
    with caplog.at_level("WARNING"):
        results_table(tmp_path)
    assert f"left out of the report: {tmp_path / '0' / 'result.json'} is not valid JSON" in caplog.text


def test_loading_a_score_file_by_the_name_it_was_saved_under_points_at_the_npz(tmp_path):
    path = save_scores(tmp_path / "out", ScoreData("d", {"test": ScoredSplit(np.eye(3), np.eye(3, dtype=bool))}))
    assert path == tmp_path / "out.npz"
    with pytest.raises(ScoreFileError, match=r"out does not exist, but .*out.npz does: save_scores adds .npz"):
        load_scores(tmp_path / "out")


def test_a_data_file_that_is_not_the_published_one_is_said_once_checked(tmp_path, monkeypatch):
    """A copy of Example.txt cut to half its size was read as a data set of 41 labels instead of 80, with no word:
    checksums were checked on download only."""
    import hashlib
    import warnings

    from xmlthresh._util.notices import DataWarning
    from xmlthresh.data.download import RemoteFile, ensure_file

    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    full = b"1 2 1 0\n2 2 0 1\n"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "lists.txt").write_bytes(full[:8])  # cut half-way
    remote = RemoteFile("lists.txt", "https://example.org/lists.txt", hashlib.sha256(full).hexdigest())
    with pytest.warns(DataWarning, match=r"lists.txt is not the published file .*a truncated or edited copy"):
        ensure_file(remote)
    (tmp_path / "data" / "lists.txt").write_bytes(full)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ensure_file(remote)  # the published file: no word, and remembered
    assert len(list((tmp_path / "cache" / "verified").glob("*.json"))) == 1


# --- a third fresh list: study reports on runs that are not the study's ------------------------------------------

def _job(folder, number, **result):
    (folder / str(number)).mkdir(parents=True)
    base = {"strategy": "domain", "dataset": "d", "protocol": "oracle", "seed": 0, "beta": 1.0, "kind": "deterministic",
            "f_macro": 0.5}
    (folder / str(number) / "result.json").write_text(json.dumps({**base, **result}))


@pytest.mark.parametrize("study, message", [
    ("transfer", "the transfer study reads ceiling_f_macro, which no run in .* has: it needs runs fitted on one "
                 "split and scored on another"),
    ("consistency", "the consistency study reads population_regret, which no run in .* has"),
])
def test_a_study_report_of_runs_that_are_not_the_studys_says_what_it_needs(tmp_path, capsys, study, message):
    """On an oracle sweep the transfer page said "no finished runs" about two finished runs; the consistency report
    died with KeyError: 'Column not found: population_regret'."""
    from xmlthresh.report.studies import main

    _job(tmp_path, 0)
    _job(tmp_path, 1, strategy="independent")
    assert main([study, str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and re.search(message, err), err
    assert not (tmp_path / "report").exists()


def test_a_study_report_names_a_hand_edited_number_and_an_empty_folder(tmp_path, capsys):
    from xmlthresh.report.studies import main

    _job(tmp_path / "sweep", 0, protocol="holdout", f_macro="high", ceiling_f_macro=0.6)
    assert main(["transfer", str(tmp_path / "sweep")]) == 1
    assert "0/result.json: f_macro must be a number, got 'high'" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["argv", str(tmp_path / "empty")]) == 1
    assert "no job result (*/result.json) under" in capsys.readouterr().err


def test_options_that_cannot_apply_to_the_run_are_said(isolated_home, caplog):
    """``interval.resamples=3`` under oracle and ``figures=[metric_choice]`` for a strategy other than domain
    exited 0 without the interval or the pictures, and without a word."""
    from xmlthresh.report.plots import save_run_plots
    from xmlthresh.run.protocols import _score_data, protocol_spec
    from xmlthresh.datasets import DATASETS
    from xmlthresh.strategies import STRATEGIES

    data = DATASETS.build("synthetic_xmc", {"n_labels": 20, "num_docs": 200, "num_validation_docs": 100}).load()
    with caplog.at_level("WARNING"):
        result = _score_data(STRATEGIES.build("independent", {}), data, protocol_spec("oracle", run_seed=0),
                             {"resamples": 3, "level": 0.9})
    assert "f_macro_interval" not in result
    assert "protocol=oracle fits and scores the same documents, so it gets none" in caplog.text
    lists = DATASETS.build("counterexample", {}).load()
    fitted = STRATEGIES.build("independent", {}).fit_lists(lists).fitted()
    caplog.clear()
    with caplog.at_level("WARNING"):
        save_run_plots(fitted, isolated_home, figures=["metric_choice"])
    assert "runs of strategy=domain only; strategy=independent draws none" in caplog.text


def test_a_liblinear_option_string_it_refuses_names_the_option():
    pytest.importorskip("liblinear")
    from xmlthresh_libmultilabel.rankers import check_options

    with pytest.raises(ValueError, match=r"^ranker.options='garbage': liblinear refuses it \(Wrong options\)"):
        check_options("ranker.options", "garbage")
