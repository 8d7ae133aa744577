"""The public functions below ``fit_thresholds`` keep its error contract: a registry given something that is
not a name or not a mapping, a command-line preset given as a strategy, ``load_dataset`` given its option by
keyword, 1-D label vectors to a metric, fractional counts, a score matrix where ranked lists belong, a seed
scikit-learn cannot take, and bounds of a modified objective shown as such."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

import xmlthresh
from xmlthresh.metrics import evaluate, f_macro_score
from xmlthresh.strategies import STRATEGIES
from xmlthresh.validation import InputError


def _problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    labels = rng.random((60, 5)) < 0.3
    labels[:3] = True
    return labels + rng.standard_normal(labels.shape), labels


@pytest.mark.fast
@pytest.mark.parametrize("name", [None, 3, ["domain"]])
def test_a_registry_given_no_text_lists_the_names(name):
    with pytest.raises(InputError, match=r"a strategy is named by a text \(coordinate, domain, .*\), got "):
        STRATEGIES.get(name)


@pytest.mark.fast
def test_registry_parameters_that_are_not_a_mapping_are_named():
    with pytest.raises(InputError, match=r"the parameters of strategy 'domain' are a mapping of names to values "
                                         r"\(a dict\), got list \['refine'\]"):
        STRATEGIES.build("domain", ["refine"])


@pytest.mark.fast
def test_a_command_line_preset_given_as_a_strategy_reads_as_its_call():
    scores, labels = _problem()
    with pytest.raises(InputError, match=r"strategy 'transfer/domain_floor' is a preset of the command line "
                                         r"\(strategy=transfer/domain_floor\), not a strategy; in Python it reads "
                                         r"fit_thresholds\(scores, labels, 'domain', min_precision=0\.1\)$"):
        xmlthresh.fit_thresholds(scores, labels, "transfer/domain_floor")
    with pytest.raises(InputError, match=r"unknown strategy 'nosuch'; known: "):
        xmlthresh.fit_thresholds(scores, labels, "nosuch")


@pytest.mark.fast
def test_load_dataset_given_its_option_by_keyword_says_it_is_the_first_argument():
    with pytest.raises(InputError, match=r"load_dataset needs the dataset option as its first argument "
                                         r"\(load_dataset\('synthetic'\)\)"):
        xmlthresh.load_dataset(name="synthetic")


@pytest.mark.fast
def test_one_dimensional_label_vectors_to_a_metric_get_the_reshape_advice():
    with pytest.raises(InputError, match=r"y_true must be 2-D \(documents x labels\), got 1-D with shape \(3,\); "
                                         r"one label is a column: y_true\.reshape\(-1, 1\)"):
        f_macro_score(np.array([1, 0, 1]), np.array([1, 1, 0]))


@pytest.mark.fast
@pytest.mark.parametrize("tp", [[1.5, 2], ["a", "b"], [np.nan, 2]])
def test_counts_that_are_not_whole_numbers_are_refused(tp):
    with pytest.raises(InputError, match=r"tp must hold whole counts of documents \(integers\)"):
        evaluate(tp, [2, 2], [2, 4])
    assert evaluate([1.0, 2.0], [2, 2], [2, 4]) == evaluate([1, 2], [2, 2], [2, 4])


@pytest.mark.fast
def test_a_score_matrix_given_to_fit_lists_points_to_fit():
    scores, _ = _problem()
    with pytest.raises(InputError, match=r"fit_lists takes RankedLists .* got ndarray; for a score matrix and its "
                                         r"labels use fit\(scores, labels\)"):
        STRATEGIES.get("domain")().fit_lists(scores)


@pytest.mark.fast
@pytest.mark.parametrize("random_state", [-1, 2**32, 1.5, "0", np.random.default_rng(0)])
def test_a_random_state_scikit_learn_cannot_take_names_random_state(random_state):
    scores, labels = _problem()
    X = scores[:, :3]
    classifier = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression()), random_state=random_state)
    with pytest.raises(InputError, match=r"^random_state must be None, a seed in \[0, 4294967295\] or a "
                                         r"numpy\.random\.RandomState"):
        classifier.fit(X, labels.astype(int))


@pytest.mark.fast
@pytest.mark.parametrize("strategy, params", [("pooled", {}), ("domain", {"smoothing": 5.0})])
def test_bounds_of_a_modified_objective_say_whose_they_are(strategy, params):
    scores, labels = _problem()
    result = xmlthresh.fit_thresholds(scores, labels, strategy, **params)
    objective = result.report()["objective"]
    assert objective.startswith("F-macro with precision smoothed")
    assert f"bounds of the objective {objective!r}=[" in repr(result)
    assert ", bounds=[" in repr(xmlthresh.fit_thresholds(scores, labels, "domain"))


@pytest.mark.fast
def test_pooled_thresholds_say_their_bounds_are_of_the_fit_before_pooling():
    scores, labels = _problem()
    result = xmlthresh.fit_thresholds(scores, labels, pooling="auto")
    assert "bounds of the unpooled fit (pooling moved these thresholds)=[" in repr(result)


@pytest.mark.fast
def test_label_data_frames_are_scored_by_name_not_position():
    import pandas as pd

    rng = np.random.default_rng(1)
    truth = pd.DataFrame((rng.random((40, 4)) < 0.4).astype(int), columns=list("abcd"))
    pred = pd.DataFrame((rng.random((40, 4)) < 0.5).astype(int), columns=list("abcd"))
    expected = f_macro_score(truth.to_numpy(), pred.to_numpy())
    assert f_macro_score(truth, pred[list("dcba")]) == expected
    assert f_macro_score(truth, pred.iloc[::-1]) == expected
    with pytest.raises(InputError, match=r"y_pred's DataFrame columns do not match y_true's \(only in y_pred: \['z'\]"):
        f_macro_score(truth, pred.rename(columns={"a": "z"}))


@pytest.mark.fast
def test_a_classifier_fitted_on_named_labels_scores_them_by_name():
    import pandas as pd

    scores, labels = _problem()
    X, y = scores[:, :3], pd.DataFrame(labels.astype(int), columns=list("abcde"))
    classifier = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression()), cv=3, random_state=0)
    classifier.fit(X, y)
    assert classifier.score(X, y[list("edcba")]) == classifier.score(X, y)
    with pytest.raises(InputError, match=r"y's columns \['z'\] are not labels of the fit \(its labels: \['a', 'b'"):
        classifier.score(X, y.rename(columns={"a": "z"}))


@pytest.mark.fast
def test_a_scorer_checks_its_beta_when_it_is_made():
    with pytest.raises(InputError, match=r"beta must be a number"):
        xmlthresh.f_macro_scorer(beta="x")


def test_the_registries_find_installed_plugins_whatever_was_imported_first():
    import subprocess
    import sys

    code = ("from xmlthresh.strategies import STRATEGIES; names = STRATEGIES.names(); "
            "print(len(names), 'xcolumns_fw' in names, STRATEGIES.get('xcolumns_fw').__name__)")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    if lines[1] == "False":
        pytest.skip("the peers plugin is not installed")
    assert lines[1:] == ["True", "XColumnsFrankWolfe"]


@pytest.mark.fast
def test_a_data_set_option_given_to_the_loader_registry_points_to_load_dataset():
    from xmlthresh.datasets import DATASETS

    with pytest.raises(InputError, match=r"unknown dataset 'espgame': it is an option of the command line "
                                         r"\(dataset=espgame\), .* in Python: xmlthresh\.load_dataset\('espgame'\)"):
        DATASETS.get("espgame")


@pytest.mark.fast
def test_settings_applied_to_scores_are_not_reported_as_ignored():
    import warnings

    scores, labels = _problem()
    labels[:, 4] = False  # a label without a positive: the fallback applies to it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for params in ({"fallback": "native", "native_threshold": 0.0}, {"pooling": 5.0}):
            result = xmlthresh.fit_thresholds(scores, labels, **params)
            assert "not_applied_on_ranked_lists" not in result.report()
    assert not [w for w in caught if issubclass(w.category, xmlthresh.IgnoredSettingWarning)]
    with pytest.raises(ValueError, match=r"fit_thresholds\(\.\.\., native_threshold=0\.5\)"):
        xmlthresh.fit_thresholds(scores, labels, fallback="native")


@pytest.mark.fast
def test_an_empty_batch_predicts_nothing():
    import scipy.sparse as sp

    scores, labels = _problem()
    result = xmlthresh.fit_thresholds(scores, labels)
    assert result.predict(np.zeros((0, 5))).shape == (0, 5) and result.predict(sp.csr_matrix((0, 5))).shape == (0, 5)
    with pytest.raises(InputError, match=r"need at least one document"):
        xmlthresh.fit_thresholds(np.zeros((0, 5)), np.zeros((0, 5)))


@pytest.mark.fast
def test_precision_and_recall_of_other_shapes_are_named():
    from xmlthresh.metrics import f_beta

    with pytest.raises(InputError, match=r"precision and recall must have one shape .* got shapes \(3,\) and \(2,\)"):
        f_beta([0.1, 0.2, 0.3], [0.5, 0.5])
    assert np.allclose(f_beta(0.5, [0.5, 0.2]), [0.5, 2 * 0.1 / 0.7])


@pytest.mark.fast
def test_a_result_built_by_hand_holds_what_a_fit_makes():
    scores, labels = _problem()
    fitted = xmlthresh.fit_thresholds(scores, labels)
    fields = dict(f_macro=0.5, lower_bound=None, upper_bound=None, strategy="domain", params={}, beta=1.0,
                  kind="deterministic", label_names=np.arange(2), include_predict_all=True)
    with pytest.raises(InputError, match=r"thresholds\[0\] is NaN; a threshold is a number, \+inf"):
        xmlthresh.ThresholdResult(thresholds=np.array([np.nan, 0.1]), **fields)
    with pytest.raises(InputError, match=r"thresholds must hold one number per label \(2 label names\)"):
        xmlthresh.ThresholdResult(thresholds=np.array([0.1, 0.2, 0.3]), **fields)
    assert xmlthresh.ThresholdResult(thresholds=np.array([np.inf, -np.inf]), **fields).n_labels == 2
    assert fitted.n_labels == 5


@pytest.mark.fast
def test_a_hand_edited_threshold_entry_is_named_with_its_index(tmp_path):
    import json

    scores, labels = _problem()
    path = xmlthresh.fit_thresholds(scores, labels).save(tmp_path / "t.json")
    payload = json.loads(path.read_text())
    payload["thresholds"][1] = "abc"
    path.write_text(json.dumps(payload))
    with pytest.raises(InputError, match=r"thresholds\[1\] is 'abc'; an entry is a number, \"inf\" or \"-inf\""):
        xmlthresh.ThresholdResult.load(path)
