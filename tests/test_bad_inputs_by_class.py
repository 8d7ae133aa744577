"""Regression tests of the second fresh bad-input list, by class: label names (one rule wherever they enter),
0/1 labels in every split, typed fields of a thresholds file, pickled objects in a score file named by key,
ThresholdClassifier's estimator, splitter and label names, and reshape advice that fits the call."""

from __future__ import annotations

import json

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
