"""The score-matrix library API: fit_thresholds -> ThresholdResult (thresholds, certificate, report,
predict, save / load), its agreement with the CLI, and a light ``import xmlthresh``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tracemalloc

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from helpers import run_cli
from hypothesis import strategies as st

import xmlthresh
from score_instances import random_scores
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.datasets.score_loader import save_scores
from xmlthresh.metrics import f_macro_score
from xmlthresh.config.options import options
from xmlthresh.config.plugins import load_plugins
from xmlthresh.result import FIELDS, ThresholdResult
from xmlthresh.strategies import STRATEGIES
from xmlthresh.strategies.base import ThresholdStrategy
from xmlthresh.validation import InputError

load_plugins()
#: every registered strategy that can run here (a peer whose optional dependency is missing says so and is left out)
NAMES = [name for name in STRATEGIES.names()
         if not (callable(getattr(STRATEGIES.get(name), "unavailable_reason", None))
                 and STRATEGIES.get(name).unavailable_reason())]
#: cheaper values of parameters that only trade accuracy for time, for whichever strategy has them (a grid of
#: reference points, iteration budgets)
CHEAP = {"grid": 10, "max_outer": 4, "max_iter": 5}


def cheap(name: str) -> dict:
    """The :data:`CHEAP` values of the parameters strategy ``name`` has."""
    params = STRATEGIES.get(name)().get_params()
    return {key: value for key, value in CHEAP.items() if key in params}


def declared(name: str) -> dict:
    """``native_threshold`` for the strategy that needs the scores to declare one."""
    return {"native_threshold": 0.5} if name == "native" else {}


def certifies_the_empirical_f_macro(report: dict) -> bool:
    """Whether a certified strategy's bounds are about the F-macro of the fit data: a strategy that certifies
    another objective (``pu``: the plug-in objective under calibrated probabilities) names it in ``objective``."""
    return "objective" not in report


#: the strategies that read the scores of the split they predict (``kind``, as each one declares it)
TRANSDUCTIVE = [name for name in NAMES if STRATEGIES.get(name)(**cheap(name)).kind == "uses test scores"]


def run_python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_import_xmlthresh_is_light_and_exports_the_api_lazily():
    heavy = ("numba", "mlflow", "pandas", "sklearn", "hydra")
    out = run_python(f"import sys, xmlthresh; print([m for m in {heavy!r} if m in sys.modules])")
    assert out == "[]"
    assert {"fit_thresholds", "ThresholdResult", "ThresholdClassifier", "f_macro_score", "f_macro_scorer"} <= \
        set(dir(xmlthresh))
    assert xmlthresh.fit_thresholds is xmlthresh.api.fit_thresholds
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        xmlthresh.nope  # noqa: B018


def test_a_saved_result_predicts_without_the_optimisation_code(tmp_path):
    scores, labels = random_scores(0, top_k=3)
    path = xmlthresh.fit_thresholds(scores, labels).save(tmp_path / "t.json")
    sp.save_npz(tmp_path / "s.npz", scores)
    out = run_python(
        "import sys, scipy.sparse as sp, xmlthresh\n"
        f"r = xmlthresh.ThresholdResult.load({str(path)!r})\n"
        f"p = r.predict(sp.load_npz({str(tmp_path / 's.npz')!r}))\n"
        "print(p.nnz, [m for m in ('numba', 'mlflow', 'pandas', 'sklearn') if m in sys.modules])")
    nnz, modules = out.split(" ", 1)
    assert int(nnz) == xmlthresh.fit_thresholds(scores, labels).predict(scores).nnz and modules == "[]"


@pytest.mark.parametrize("top_k", [None, 3], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", NAMES)
def test_every_strategy_is_reachable_by_name(name, top_k, tmp_path):
    scores, labels = random_scores(1, n_docs=80, n_labels=7, top_k=top_k, ties=True)
    result = xmlthresh.fit_thresholds(scores, labels, strategy=name, beta=2.0, label_names=list("abcdefg"),
                                      **cheap(name), **declared(name))
    cls = STRATEGIES.get(name)
    assert result.strategy == name and result.kind == cls(**cheap(name)).kind and result.beta == 2.0
    assert result.params == cls(beta=2.0, **cheap(name)).get_params()
    assert list(result.label_names) == list("abcdefg")
    assert result.uses_test_scores == (result.kind == "uses test scores")
    report = result.report()
    # a rule is either one score threshold per label or a saved state that predicts (rank cuts, batch rules);
    # a strategy that chooses cuts always turns them into thresholds
    assert (result.thresholds is None) == (result.rule is not None)
    if issubclass(cls, ThresholdStrategy):
        assert result.thresholds is not None
    if result.thresholds is not None:
        assert result.thresholds.shape == (7,)
        # the empty label never predicts -- except where a pooled calibration (pu) or a fallback (pooled's
        # default) gives such labels a threshold
        assert result.thresholds[-1] == np.inf or report.get("n_labels_pooled_only", 0) > 0 \
            or report.get("n_labels_fallback", 0) > 0
    if cls.certified and not certifies_the_empirical_f_macro(report):
        assert result.lower_bound <= result.upper_bound
    elif cls.certified:
        assert result.lower_bound == result.f_macro <= result.upper_bound
    else:
        assert result.lower_bound is None and result.upper_bound is None
    assert report["f_macro"] == result.f_macro and report["strategy"] == name and report["n_labels"] == 6
    assert report["n_docs"] == 80 and report["n_labels_dropped"] == 1 and report["fit_seconds"] >= 0
    json.dumps(report, allow_nan=False)
    pred = result.predict(scores)
    assert f_macro_score(labels, pred, beta=2.0) == result.f_macro  # exactly, on the fit data
    loaded = ThresholdResult.load(result.save(tmp_path / "t.json"))
    assert (loaded.predict(scores) != pred).nnz == 0
    assert loaded.report() == report and loaded.params == result.params and loaded.kind == result.kind


@pytest.mark.parametrize("name", TRANSDUCTIVE or [pytest.param(None, marks=pytest.mark.skip(
    reason="no available strategy uses test scores (the peers' xcolumns strategies need xcolumns installed)"))])
def test_uses_test_scores_is_stated_and_predict_reoptimises(name):
    scores, labels = random_scores(2, n_docs=100, n_labels=6)
    result = xmlthresh.fit_thresholds(scores, labels, name, **cheap(name))
    assert result.uses_test_scores and result.report()["kind"] == "uses test scores"
    # the same documents predicted alone or among others get different predictions: they depend on the batch
    alone = result.predict(scores[:50]).toarray()
    together = result.predict(np.vstack([scores[:50], scores[:50] + 3.0])).toarray()[:50]
    assert not np.array_equal(alone, together)


# ---------------------------------------------------------------------------------------------- the CLI
def esp_like(seed: int, top_k: int | None):
    """ESP Game's shape (268 labels, 2080 documents), random scores."""
    return random_scores(seed, n_docs=2080, n_labels=268, top_k=top_k)


def cli_result(scores, labels, tmp_path, *overrides: str) -> tuple[dict, pd.DataFrame]:
    path = save_scores(tmp_path / "esp_like.npz", ScoreData("esp_like", {"test": ScoredSplit(scores, labels)}))
    run_dir = tmp_path / "run"
    proc = run_cli(["dataset=scores", f"dataset.path={path}", "tracking.enabled=false", "plots=false",
                    f"hydra.run.dir={run_dir}", *overrides], env={"XMLTHRESH_HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    return json.loads((run_dir / "result.json").read_text()), pd.read_csv(run_dir / "thresholds.csv")


@pytest.mark.parametrize("top_k, beta, extra", [(None, 1.0, {}), (20, 2.0, {"include_predict_all": False})],
                         ids=["dense", "sparse_top20_beta2_no_predict_all"])
def test_fit_thresholds_equals_the_cli_on_the_same_score_file(top_k, beta, extra, tmp_path):
    scores, labels = esp_like(3, top_k)
    result = xmlthresh.fit_thresholds(scores, labels, strategy="domain", beta=beta, **extra)
    overrides = [f"beta={beta}"] + [f"dataset.{key}={str(value).lower()}" for key, value in extra.items()]
    cli, table = cli_result(scores, labels, tmp_path, *overrides)
    np.testing.assert_array_equal(table["score_threshold"].to_numpy(dtype=np.float64), result.thresholds)
    assert cli["f_macro"] == result.f_macro
    report = result.report()
    for key in set(report) - {"fit_seconds", "include_predict_all"}:
        assert cli[key] == report[key], key
    np.testing.assert_array_equal(table["excluded"].to_numpy(), labels.sum(axis=0) == 0)


# ---------------------------------------------------------------------------------------------- properties
@st.composite
def instances(draw):
    n_docs, n_labels = draw(st.integers(1, 25)), draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    labels = rng.random((n_docs, n_labels)) < draw(st.floats(0.05, 0.9))
    levels = draw(st.integers(2, 6))  # few distinct scores: many ties
    scores = rng.integers(0, levels, (n_docs, n_labels)) / levels + labels * draw(st.floats(0, 1))
    if draw(st.booleans()):  # sparse top-k: drop a random part of the entries (unscored)
        scored = rng.random((n_docs, n_labels)) < draw(st.floats(0.2, 1.0))
        scores = sp.csr_matrix((scores[scored], np.nonzero(scored)), shape=scores.shape)
    return scores, labels


def single_score(scores) -> bool:
    """Whether the scores hold one distinct value or none (nothing to calibrate or rank by)."""
    values = scores.data if sp.issparse(scores) else np.asarray(scores).ravel()
    return values.size == 0 or np.ptp(values) == 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=instances(), beta=st.sampled_from([0.5, 1.0, 2.0]), name=st.sampled_from(NAMES),
       predict_all=st.booleans())
def test_predict_reproduces_the_fitted_f_macro_exactly(instance, beta, name, predict_all):
    scores, labels = instance
    if not labels.any():
        with pytest.raises(ValueError):
            f_macro_score(labels, labels)
        return
    try:
        result = xmlthresh.fit_thresholds(scores, labels, strategy=name, beta=beta, include_predict_all=predict_all,
                                          **cheap(name), **declared(name))
    except ValueError as error:  # scores that never vary: a calibration (pu) cannot be fitted, and says so
        if single_score(scores) and re.search(r"cannot calibrate", str(error)):
            return
        raise
    assert f_macro_score(labels, result.predict(scores), beta=beta) == result.f_macro
    if result.upper_bound is not None and certifies_the_empirical_f_macro(result.report()):
        assert result.f_macro <= result.upper_bound


finite_or_inf = st.floats(allow_nan=False, allow_infinity=True, allow_subnormal=True)


@settings(max_examples=200, deadline=None)
@given(thresholds=st.lists(finite_or_inf, min_size=1, max_size=20), f=st.floats(0, 1),
       names=st.sampled_from(["ints", "text"]))
def test_save_load_round_trips_bit_for_bit(thresholds, f, names, tmp_path_factory):
    n = len(thresholds)
    label_names = np.arange(n) if names == "ints" else np.array([f"label \u00e9 {i}\n\"" for i in range(n)])
    result = ThresholdResult(thresholds=np.array(thresholds), f_macro=f, lower_bound=f, upper_bound=np.nextafter(f, 2),
                             strategy="domain", params={"beta": 1.0, "gap_tol": 1e-9}, beta=1.0,
                             kind="deterministic", label_names=label_names, include_predict_all=False,
                             _report={"f_macro": f, "upper_bound": float("inf"), "info": [1, None, "x"]})
    path = result.save(tmp_path_factory.mktemp("rt") / "t.json")
    loaded = ThresholdResult.load(path)
    np.testing.assert_array_equal(loaded.thresholds.view(np.uint64), result.thresholds.view(np.uint64))
    for field in ("f_macro", "lower_bound", "upper_bound", "beta"):
        assert np.float64(getattr(loaded, field)).view(np.uint64) == np.float64(getattr(result, field)).view(np.uint64)
    assert list(loaded.label_names) == list(label_names) and loaded.include_predict_all is False
    assert loaded.report() == result.report() and loaded.params == result.params
    text = path.read_text()
    assert "Infinity" not in text and "NaN" not in text  # strict JSON: +-inf are the strings "inf" / "-inf"


@pytest.mark.parametrize("name", NAMES)
def test_rule_arrays_round_trip_bit_for_bit(name, tmp_path):
    """A rule saved as its state (no per-label thresholds) comes back with every array bit for bit."""
    scores, labels = random_scores(4, n_docs=60, n_labels=5)
    result = xmlthresh.fit_thresholds(scores, labels, name, **cheap(name), **declared(name))
    if result.rule is None:
        assert result.thresholds is not None
        return
    loaded = ThresholdResult.load(result.save(tmp_path / "t.json"))
    assert sorted(loaded.rule) == sorted(result.rule)
    for key, value in result.rule.items():
        if isinstance(value, np.ndarray):
            assert loaded.rule[key].dtype == value.dtype, key
            np.testing.assert_array_equal(loaded.rule[key].view(np.uint8), value.view(np.uint8), err_msg=key)
        else:
            assert loaded.rule[key] == value, key


# ---------------------------------------------------------------------------------------------- bad files
def saved(tmp_path, **changes) -> dict:
    scores, labels = random_scores(5, n_docs=40, n_labels=4)
    payload = xmlthresh.fit_thresholds(scores, labels).to_json()
    payload.update(changes)
    return payload


def write(tmp_path, payload) -> str:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(payload))
    return path


def test_a_file_of_another_major_version_is_refused(tmp_path):
    path = write(tmp_path, saved(tmp_path, version="7.0.0"))
    with pytest.raises(InputError, match=r"written by xmlthresh 7.0.0, this is xmlthresh 0\.1\.0: the major "
                                         "versions differ"):
        ThresholdResult.load(path)
    ThresholdResult.load(write(tmp_path, saved(tmp_path, version="0.9.3")))  # same major: fine


@pytest.mark.parametrize("field", FIELDS[1:])
def test_a_file_with_a_missing_field_is_refused(tmp_path, field):
    payload = saved(tmp_path)
    del payload[field]
    with pytest.raises(InputError, match=f"missing field\\(s\\) {field}"):
        ThresholdResult.load(write(tmp_path, payload))


@pytest.mark.parametrize("content, message", [
    ("{not json", "not a readable thresholds file"),
    ('{"format": "other"}', "not an xmlthresh thresholds file"),
    ("[1, 2]", "not an xmlthresh thresholds file"),
])
def test_other_files_are_refused(tmp_path, content, message):
    path = tmp_path / "t.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        ThresholdResult.load(path)
    with pytest.raises(InputError, match="no such thresholds file"):
        ThresholdResult.load(tmp_path / "missing.json")


def test_inconsistent_thresholds_are_refused(tmp_path):
    for changes, message in [({"thresholds": [0.1, "inf"]}, "one number"), ({"thresholds": [0.1, "x", 1, 2]}, r"thresholds\[1\] is 'x'; an entry is a number"),
                             ({"label_names": ["a"]}, r"n_labels is 4 but the file holds 1 label names")]:
        with pytest.raises(InputError, match=message):
            ThresholdResult.load(write(tmp_path, saved(tmp_path, **changes)))


def test_bad_input_and_parameters_through_fit_thresholds():
    scores, labels = random_scores(6, n_docs=30, n_labels=4)
    with pytest.raises(InputError, match="differ in shape"):
        xmlthresh.fit_thresholds(scores, labels[:, :3])
    accepted = ", ".join(sorted(STRATEGIES.get("domain")().get_params()))  # the default strategy's parameters
    with pytest.raises(InputError, match=re.escape(f"has no parameter(s) refin; its parameters: {accepted}")):
        xmlthresh.fit_thresholds(scores, labels, refin="bnb")
    with pytest.raises(ValueError, match="refine must be one of"):
        xmlthresh.fit_thresholds(scores, labels, refine="magic")
    with pytest.raises(InputError, match="label_names must hold one name per label"):
        xmlthresh.fit_thresholds(scores, labels, label_names=["a"])
    with pytest.raises(KeyError, match="unknown strategy 'nope'; known: ") as unknown:
        xmlthresh.fit_thresholds(scores, labels, strategy="nope")
    known = str(unknown.value).split("known: ", 1)[1].split(", ")
    assert known == STRATEGIES.names()  # every registered strategy, in the registry's order
    result = xmlthresh.fit_thresholds(scores, labels)
    with pytest.raises(InputError, match="have 3 label columns, but the thresholds were fitted on 4 labels"):
        result.predict(scores[:, :3])


# ---------------------------------------------------------------------------------------------- memory
def test_sparse_top_k_scores_are_never_densified():
    """200,000 labels x 1,000 documents would be 1.6 GB dense; top-5 scores are 5,000 entries."""
    rng = np.random.default_rng(0)
    n_docs, n_labels, k = 1000, 200_000, 5
    cols = np.concatenate([rng.choice(n_labels, k, replace=False) for _ in range(n_docs)])
    scores = sp.csr_matrix((rng.random(n_docs * k), cols, np.arange(n_docs + 1) * k), shape=(n_docs, n_labels))
    scores.sort_indices()
    labels = sp.csr_matrix((np.ones(n_docs, dtype=bool), cols[::k], np.arange(n_docs + 1)), shape=scores.shape)
    xmlthresh.fit_thresholds(scores[:50], labels[:50])  # compile kernels outside the measurement
    tracemalloc.start()
    result = xmlthresh.fit_thresholds(scores, labels, include_predict_all=False)
    pred = result.predict(scores)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 100e6, f"peak {peak / 1e6:.0f} MB"
    assert pred.nnz <= scores.nnz


def test_load_dataset_by_option_name_like_the_cli(monkeypatch):
    """``xmlthresh.load_dataset("synthetic")`` composes the option the CLI composes; parameters override it."""
    from xmlthresh._util.registry import UnknownNameError

    lists = xmlthresh.load_dataset("synthetic")
    assert lists.n_labels == 200 and lists.num_docs == 2000  # the values of conf/dataset/synthetic.yaml
    assert xmlthresh.load_dataset("synthetic", first_n_labels=3).n_labels == 3
    xmc = xmlthresh.load_dataset("synthetic_xmc", n_labels=20, num_docs=200, num_validation_docs=100)
    assert sorted(xmc.splits) == ["test", "validation"]
    with pytest.raises(UnknownNameError, match="unknown dataset 'nosuch'; known: ") as unknown:
        xmlthresh.load_dataset("nosuch")
    known = str(unknown.value).split("known: ", 1)[1].split(", ")
    assert sorted(known) == sorted(option.name for option in options("dataset"))  # every dataset option


# ---------------------------------------------------------------------------------------------- interval
def test_an_interval_is_reported_when_asked_saved_and_loaded_and_follows_its_seed(tmp_path):
    scores, labels = random_scores(7, n_docs=120, n_labels=6)
    plain = xmlthresh.fit_thresholds(scores, labels, "independent")
    assert plain.f_macro_interval is None and plain.interval_level is None
    result = xmlthresh.fit_thresholds(scores, labels, "independent", interval=0.8, interval_resamples=12,
                                      interval_seed=3)
    low, high = result.f_macro_interval
    assert 0 <= low < high <= 1 and result.interval_level == 0.8
    assert result.report()["interval_resamples"] == 12 and result.report()["f_macro_interval"] == [low, high]
    np.testing.assert_array_equal(result.thresholds, plain.thresholds)  # the fit itself is unchanged
    again = xmlthresh.fit_thresholds(scores, labels, "independent", interval=0.8, interval_resamples=12,
                                     interval_seed=3)
    other = xmlthresh.fit_thresholds(scores, labels, "independent", interval=0.8, interval_resamples=12,
                                     interval_seed=4)
    assert again.f_macro_interval == result.f_macro_interval != other.f_macro_interval
    loaded = ThresholdResult.load(result.save(tmp_path / "t.json"))
    assert loaded.f_macro_interval == result.f_macro_interval and loaded.interval_level == 0.8


@pytest.mark.parametrize("options, message", [
    ({"interval": 1.5}, "interval level"), ({"interval": 0.9, "interval_resamples": 1}, "resamples"),
    ({"interval": 0.9, "interval_seed": -1}, "interval_seed"), ({"interval": 0.9, "new_documents": 0}, "new_documents"),
])
def test_bad_interval_options_are_one_clear_error(options, message):
    scores, labels = random_scores(1, n_docs=30, n_labels=3)
    with pytest.raises(ValueError, match=message):
        xmlthresh.fit_thresholds(scores, labels, "independent", **options)


def test_a_file_with_a_malformed_interval_is_refused(tmp_path):
    scores, labels = random_scores(2, n_docs=30, n_labels=3)
    payload = xmlthresh.fit_thresholds(scores, labels, "independent").to_json()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**payload, "f_macro_interval": [0.7, 0.2]}))
    with pytest.raises(InputError, match="f_macro_interval"):
        ThresholdResult.load(path)
    earlier = {key: value for key, value in payload.items() if key not in ("f_macro_interval", "interval_level")}
    path.write_text(json.dumps(earlier))  # files written before the interval existed still load
    assert ThresholdResult.load(path).f_macro_interval is None


def _frames(seed: int = 0):
    rng = np.random.default_rng(seed)
    scores = rng.random((300, 6))
    labels = rng.random((300, 6)) < scores * 0.5
    names = [f"label{k}" for k in range(6)]
    return pd.DataFrame(scores, columns=names), pd.DataFrame(labels, columns=names), scores, labels


def test_dataframes_are_matched_by_column_and_row_names_not_by_position():
    """Label columns in another order gave another F-macro (0.4929 instead of 0.5326) without a word."""
    scores_frame, labels_frame, scores, labels = _frames()
    plain = xmlthresh.fit_thresholds(scores, labels)
    named = xmlthresh.fit_thresholds(scores_frame, labels_frame)
    reordered = xmlthresh.fit_thresholds(scores_frame, labels_frame[labels_frame.columns[::-1]])
    shuffled = xmlthresh.fit_thresholds(scores_frame, labels_frame.sample(frac=1.0, random_state=0))
    assert named.f_macro == reordered.f_macro == shuffled.f_macro == plain.f_macro
    np.testing.assert_array_equal(reordered.thresholds, plain.thresholds)
    assert list(named.label_names) == list(scores_frame.columns)
    with pytest.raises(InputError, match=r"labels' DataFrame columns do not match the scores' \(only in labels: "
                                         r"\['x'\], only in scores: \['label0'\]\)"):
        xmlthresh.fit_thresholds(scores_frame, labels_frame.rename(columns={"label0": "x"}))
    with pytest.raises(InputError, match=r"labels' DataFrame rows do not match the scores'"):
        xmlthresh.fit_thresholds(scores_frame, labels_frame.set_axis(range(1, 301)))


@pytest.mark.parametrize("arguments, message", [
    ({"include_predict_all": "no"}, r"include_predict_all must be true or false, got 'no' \(str\)"),
    ({"include_predict_all": 0}, r"include_predict_all must be true or false, got 0 \(int\)"),
    ({"label_names": ["a", "b", "a", "c", "d", "e"]}, r"label_names repeats 'a'"),
])
def test_library_arguments_are_checked_not_read_by_truthiness(arguments, message):
    """``include_predict_all="no"`` recorded True; repeated label names made two labels indistinguishable."""
    _, _, scores, labels = _frames()
    with pytest.raises(InputError, match=message):
        xmlthresh.fit_thresholds(scores, labels, **arguments)


@pytest.mark.fast
def test_a_result_has_a_short_repr_and_a_pandas_form():
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.random((40, 200)), columns=[f"l{k}" for k in range(200)])
    result = xmlthresh.fit_thresholds(frame, frame > 0.7)
    text = repr(result)
    assert text.startswith("ThresholdResult(strategy='domain', n_labels=200, beta=1, f_macro=") and len(text) < 160
    series = result.to_series()
    assert list(series.index) == list(frame.columns) and (series.to_numpy() == result.thresholds).all()
    assert series.name == "threshold" and series.index.name == "label"
