"""Regression tests of a fresh bad-input list (tried as a new user would, after the classes of docs/errors.md
were fixed): each case was a silently wrong result, a vague message or a traceback, and is now a correct
result or one clear line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import xmlthresh
from helpers import run_cli
from xmlthresh.cli.entry import multirun_flag_first
from xmlthresh.data.multilabel import ScoreData, ScoredSplit
from xmlthresh.data.score_format import save_scores
from xmlthresh.validation import InputError


def _data(seed: int = 0, n_docs: int = 60, n_labels: int = 4):
    rng = np.random.default_rng(seed)
    scores = rng.random((n_docs, n_labels))
    return scores, rng.random((n_docs, n_labels)) < scores * 0.6


@pytest.mark.fast
def test_a_fit_never_changes_the_callers_sparse_labels():
    """``check_labels`` ran ``eliminate_zeros`` on a CSR sharing the caller's arrays: its structure changed and
    a second fit on it gave another F-macro with the same thresholds."""
    scores, labels = _data()
    given = sp.csr_matrix(labels.astype(np.int8))
    given.data[:3] = 0
    before = (given.indptr.copy(), given.indices.copy(), given.data.copy())
    first = xmlthresh.fit_thresholds(scores, given)
    assert all(np.array_equal(a, b) for a, b in zip(before, (given.indptr, given.indices, given.data)))
    assert xmlthresh.fit_thresholds(scores, given).f_macro == first.f_macro


@pytest.mark.fast
def test_nullable_pandas_dtypes_are_numbers_and_masked_or_inexact_scores_are_refused():
    scores, labels = _data()
    nullable = xmlthresh.fit_thresholds(pd.DataFrame(scores).astype("Float64"), pd.DataFrame(labels).astype("Int64"))
    assert nullable.f_macro == xmlthresh.fit_thresholds(scores, labels).f_macro
    with pytest.raises(InputError, match=r"^scores are a masked array: pass a CSR matrix"):
        xmlthresh.fit_thresholds(np.ma.masked_array(scores, mask=scores > 0.9), labels)
    big = np.array([[2**53], [2**53 + 1], [2**53 + 2], [2**53 + 3]], dtype=np.int64)
    with pytest.raises(InputError, match=r"integer scores up to 9007199254740995 are beyond 2\*\*53"):
        xmlthresh.fit_thresholds(big, np.array([[0], [1], [0], [1]]))


@pytest.mark.fast
def test_predict_matches_dataframe_columns_by_name_and_load_refuses_repeated_names(tmp_path):
    scores, labels = _data()
    frame = pd.DataFrame(scores, columns=list("abcd"))
    result = xmlthresh.fit_thresholds(frame, pd.DataFrame(labels, columns=list("abcd")))
    in_order = result.predict(frame).toarray()
    assert (result.predict(frame[list("dcba")]).toarray() == in_order).all()
    with pytest.raises(InputError, match=r"columns are not the fitted labels \(missing: \['a'\], not fitted: \['z'\]\)"):
        result.predict(frame.rename(columns={"a": "z"}))
    path = tmp_path / "t.json"
    result.save(path)
    payload = json.loads(path.read_text())
    payload["label_names"] = ["a", "a", "c", "d"]
    path.write_text(json.dumps(payload))
    with pytest.raises(InputError, match=r"label_names repeats 'a' .*; give every label a name of its own"):
        xmlthresh.ThresholdResult.load(path)


def _one_line(proc) -> str:
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip() and not line.startswith("[")]
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.parametrize("args, message", [
    (["seed=-1"], "xmlthresh: error: seed must be an integer in [0, 4294967295], got -1"),
    (["protocol=holdout", "protocol.seed=4294967296"],
     "xmlthresh: error: protocol.seed must be an integer in [0, 4294967295], got 4294967296"),
    (["+tpyo=1"], "xmlthresh: error: unknown top-level key(s) tpyo; the settings are listed by xmlthresh --help "
                  "(xmlthresh --cfg job shows them with their values)"),
    (["hydra.run.dir=/proc/xmlthresh_run"], "xmlthresh: error: /proc/xmlthresh_run: No such file or directory; that "
                                            "folder cannot be made there: choose another place (hydra.run.dir, "
                                            "hydra.sweep.dir, XMLTHRESH_HOME)"),
])
def test_command_lines_that_were_silently_wrong_or_a_traceback_are_one_line(isolated_home, args, message):
    """Seeds wrapped modulo 2**32 onto other seeds (-1 drew the halves of 4294967295); ``+tpyo=1`` was ignored;
    a run folder Hydra could not make was a traceback."""
    assert _one_line(run_cli([*args, "tracking.enabled=false", "warm_up=false", "plots=false"])) == message


def test_an_empty_home_is_refused_rather_than_read_as_unset(isolated_home):
    """``XMLTHRESH_HOME=`` put the run inside the source tree."""
    proc = run_cli(["tracking.enabled=false"], env={"XMLTHRESH_HOME": ""})
    assert _one_line(proc) == ("xmlthresh: error: XMLTHRESH_HOME is set but empty; unset it (the default place) or "
                               "give a folder")


def test_a_ranker_for_data_that_is_ranked_already_is_said_and_recorded(isolated_home, tmp_path):
    proc = run_cli([f"hydra.run.dir={tmp_path}/run", "ranker=knn", "tracking.enabled=false", "warm_up=false",
                    "plots=false"])
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["ranker_ignored"] == "knn"


@pytest.mark.fast
@pytest.mark.parametrize("args, expected", [
    (["a=1", "-m", "b=2,3"], ["-m", "a=1", "b=2,3"]),
    (["-m", "a=1"], ["-m", "a=1"]),
    (["a=1", "--multirun"], ["--multirun", "a=1"]),
    (["a=1"], ["a=1"]),
])
def test_the_multirun_flag_may_come_after_the_overrides(args, expected):
    """``xmlthresh a=1 -m b=2,3`` was Hydra's usage dump with exit code 2."""
    assert multirun_flag_first(args) == expected


@pytest.mark.fast
@pytest.mark.parametrize("argv, message", [
    (["--all", "--sweep", "abc"], "argument --sweep: not allowed with argument --all"),
])
def test_contradictory_report_arguments_are_refused(argv, message, capsys):
    from xmlthresh.report.comparison import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.fast
@pytest.mark.parametrize("title, ui_url, message", [
    ("", None, "--title is empty"),
    ("t", "not a url", r"--ui-url 'not a url' is not an http\(s\) address"),
])
def test_a_page_without_title_or_with_a_broken_ui_address_is_refused(title, ui_url, message):
    from xmlthresh.report.comparison import check_page_arguments

    with pytest.raises(InputError, match=message):
        check_page_arguments(title, ui_url)
    check_page_arguments("xmlthresh report", "http://127.0.0.1:5000")


def test_an_interval_is_checked_before_the_fit_and_never_dropped_without_a_word(isolated_home, tmp_path):
    """``interval.level=1.5`` passed on ranked lists (and was refused on scores only after the fit); an
    interval asked for on ranked lists was silently not computed."""
    base = ["protocol=holdout", "interval.resamples=5", "tracking.enabled=false", "warm_up=false", "plots=false"]
    assert _one_line(run_cli([*base, "interval.level=1.5"])) == ("xmlthresh: error: interval level must be a number "
                                                                 "in (0, 1), got 1.5")
    proc = run_cli([*base, f"hydra.run.dir={tmp_path}/run"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "run" / "result.json").read_text())["interval_not_computed"] == "ranked lists"


def test_a_basis_cap_that_clips_the_grid_is_said(caplog):
    """``max_basis=1`` turned flexcode's whole grid into a constant density without a word."""
    from xmlthresh.cde.benchmark import run_benchmark

    run_benchmark("flexcode", "surd", 0, estimator_params={"max_basis": 1}, dataset_params={"n_train": 200,
                                                                                            "n_test": 20})
    assert any("flexcode: max_basis=1 allows at most 1 basis function(s) per coordinate" in r.getMessage()
               for r in caplog.records)


@pytest.mark.fast
def test_no_relevant_document_and_a_missing_score_path_say_what_is_wrong():
    """"no labels in 'fit'" and "??? does not exist under the data directory" named no cause."""
    from xmlthresh.datasets import DATASETS

    scores, _ = _data()
    with pytest.raises(ValueError, match=r"no label has a relevant document in 'fit': there is nothing to fit"):
        xmlthresh.fit_thresholds(scores, np.zeros_like(scores, dtype=bool))
    with pytest.raises(Exception, match=r"dataset=scores needs dataset.path=<a .npz file or a folder of them>"):
        DATASETS.build("scores", {"path": "???"})


def test_pooling_on_ranked_lists_is_said_once_and_recorded():
    """``strategy.pooling=50`` on ranked lists gave the thresholds of ``pooling=0`` without a word; it is an
    :class:`~xmlthresh.IgnoredSettingWarning` now, once per setting and process."""
    import warnings

    from xmlthresh.datasets import DATASETS
    from xmlthresh.strategies import STRATEGIES

    lists = DATASETS.build("synthetic", {"n_labels": 6, "num_docs": 80}).load()
    strategy = STRATEGIES.build("domain", {"pooling": 57})  # a value no other test uses: said in this test
    with pytest.warns(xmlthresh.IgnoredSettingWarning, match="pooling=57 acts on scores only"):
        strategy.fit_lists(lists)
    with warnings.catch_warnings():
        warnings.simplefilter("error", xmlthresh.IgnoredSettingWarning)
        strategy.fit_lists(lists)  # said once
    assert strategy.info_["not_applied_on_ranked_lists"] == "pooling=57"
    plain = STRATEGIES.build("domain", {}).fit_lists(lists)
    assert "not_applied_on_ranked_lists" not in plain.info_ and (plain.cuts_ == strategy.cuts_).all()


@pytest.mark.fast
def test_a_bad_saved_threshold_is_named_and_date_names_are_kept_as_dates(tmp_path):
    scores, labels = _data()
    result = xmlthresh.fit_thresholds(scores, labels)
    path = tmp_path / "t.json"
    result.save(path)
    payload = json.loads(path.read_text())
    payload["thresholds"][1] = "nan"
    path.write_text(json.dumps(payload))
    with pytest.raises(InputError, match=r"thresholds\[1\] \(label 1\) is NaN; a threshold is a number"):
        xmlthresh.ThresholdResult.load(path)
    dated = xmlthresh.fit_thresholds(scores, labels, label_names=pd.date_range("2020-01-01", periods=4).values)
    dated.save(path)
    assert [str(name)[:10] for name in xmlthresh.ThresholdResult.load(path).label_names] == [
        "2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04"]  # was "datetime.datetime(2020, 1, 1, 0, 0)"


def test_a_relative_score_path_is_read_from_where_the_command_started_even_under_chdir(isolated_home, tmp_path,
                                                                                        monkeypatch):
    """Under ``hydra.job.chdir=true`` a relative ``dataset.path`` was looked up in the run directory, and the
    message named that directory without saying why."""
    scores, labels = _data()
    (tmp_path / "files").mkdir()
    save_scores(tmp_path / "files" / "s.npz",
                ScoreData("s", {"test": ScoredSplit(scores, sp.csr_matrix(labels))}))
    monkeypatch.chdir(tmp_path)
    proc = run_cli(["tracking.enabled=false", "plots=false", "warm_up=false", "dataset=scores",
                    "dataset.path=files/s.npz", "hydra.job.chdir=true", f"hydra.run.dir={tmp_path}/run"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "run" / "result.json").read_text())["f_macro"] > 0
    missing = run_cli(["tracking.enabled=false", "dataset=scores", "dataset.path=files/nosuch.npz",
                       "hydra.job.chdir=true", f"hydra.run.dir={tmp_path}/run2"])
    assert f"the directory the command was started from, {tmp_path}" in _one_line(missing)


@pytest.mark.fast
def test_a_fold_whose_training_part_lacks_a_class_names_the_label():
    """MultiOutputClassifier(LogisticRegression()) refuses a label column of one class; the error came from
    deep inside scikit-learn and named neither the label nor the fold."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.multioutput import MultiOutputClassifier

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(60, 4)), (rng.random((60, 3)) < 0.4).astype(np.int64)
    Y[:, 2] = 0
    Y[5, 2] = 1
    with pytest.raises(InputError, match=r"fold \d .* label column\(s\) hold a single class there \(label 2\)"):
        xmlthresh.ThresholdClassifier(MultiOutputClassifier(LogisticRegression()), cv=3, random_state=0).fit(X, Y)


def test_the_default_ranker_is_not_reported_as_ignored_on_ranked_data(isolated_home, tmp_path):
    """Every run on ranked lists or a score file warned "ranker=br_logreg is not used ... drop ranker=" though
    no ranker was given (it is the config's default)."""
    proc = run_cli([f"hydra.run.dir={tmp_path}/run", "tracking.enabled=false", "warm_up=false", "plots=false"])
    assert proc.returncode == 0, proc.stderr
    assert "is not used" not in proc.stderr + proc.stdout
    assert "ranker_ignored" not in json.loads((tmp_path / "run" / "result.json").read_text())
