"""Score-data plugins: the ``scores`` .npz layout (save_scores round trip, clear errors) and ``synthetic_xmc``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from omegaconf import OmegaConf

from helpers import PACKAGE_CONF
from xmlthresh.data.download import DataUnavailableError
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.datasets import DATASETS
from xmlthresh.data.score_format import ScoreFileError, load_scores, save_scores
from xmlthresh.datasets.synthetic_xmc import generate_xmc_scores
from xmlthresh.rankers import precision_at_k
from xmlthresh.strategies import STRATEGIES

CONF = PACKAGE_CONF


def small_score_data() -> ScoreData:
    rng = np.random.default_rng(0)
    labels_val = sp.random(8, 5, density=0.3, random_state=1, format="csr").astype(bool)
    labels_test = sp.random(6, 5, density=0.3, random_state=2, format="csr").astype(bool)
    dense_val = rng.standard_normal((8, 5))
    sparse_test = sp.random(6, 5, density=0.5, random_state=3, format="csr")
    sparse_test.data = rng.standard_normal(sparse_test.nnz)
    names = np.array(["cat", "dog", "emu", "fox", "gnu"])
    return ScoreData("mine", {
        "validation": ScoredSplit(dense_val, labels_val, name="validation", label_names=names),
        "test": ScoredSplit(sparse_test, labels_test, name="test", label_names=names),
    }, {"ranker": "my-xmc-model", "p_at_1": 0.5})


def assert_same(a: ScoreData, b: ScoreData) -> None:
    assert set(a.splits) == set(b.splits)
    for split in a.splits:
        x, y = a.splits[split], b.splits[split]
        assert sp.issparse(x.scores) == sp.issparse(y.scores)
        if sp.issparse(x.scores):
            assert (x.scores != y.scores).nnz == 0 and np.array_equal(x.scores.indptr, y.scores.indptr)
        else:
            np.testing.assert_array_equal(x.scores, y.scores)
        assert (x.labels != y.labels).nnz == 0
        assert list(x.label_names) == list(y.label_names)


def test_save_scores_round_trip_through_the_plugin(tmp_path):
    original = small_score_data()
    path = save_scores(tmp_path / "preds", original)
    assert path == tmp_path / "preds.npz" and not list(tmp_path.glob(".*"))
    loaded = DATASETS.get("scores")(path=str(path)).load()
    assert loaded.name == "preds"
    assert_same(original, loaded)
    assert loaded.info["ranker"] == "my-xmc-model" and loaded.info["p_at_1"] == 0.5
    # strategies run on it: fit on validation, thresholds applied to test
    ranking = loaded.splits["validation"].ranking()
    model = STRATEGIES.get("domain")().fit_lists(ranking.lists)
    tp, predicted = loaded.splits["test"].counts_at(ranking.thresholds_for_cuts(model.cuts_))
    assert np.all(tp <= predicted)


def test_directory_of_score_files_and_relative_paths(tmp_path, monkeypatch):
    data = small_score_data()
    folder = tmp_path / "run"
    save_scores(folder / "validation.npz", ScoreData("x", {"test": data.splits["validation"]}))
    # a second file with the test split under its own keys
    arrays = dict(np.load(folder / "validation.npz"))
    np.savez(folder / "validation.npz", **{k.replace("_test", "_validation"): v for k, v in arrays.items()})
    save_scores(folder / "test.npz", ScoreData("x", {"test": data.splits["test"]}))
    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path))
    loaded = DATASETS.get("scores")(path="run", name="both").load()
    assert loaded.name == "both"
    assert_same(data, loaded)
    with pytest.raises(DataUnavailableError, match="does not exist"):
        DATASETS.get("scores")(path="absent.npz").load()
    np.savez(folder / "extra.npz", labels_test_shape=np.array([6, 5]))
    with pytest.raises(ScoreFileError, match="labels_test_shape.*is also in"):
        load_scores(folder)


def write(tmp_path: Path, **arrays) -> Path:
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    return path


def good_arrays() -> dict[str, np.ndarray]:
    return {
        "scores_test": np.array([[0.5, 0.1, 0.0], [0.2, 0.9, 0.3]]),
        "labels_test_indices": np.array([0, 1, 2]),
        "labels_test_indptr": np.array([0, 1, 3]),
        "labels_test_shape": np.array([2, 3]),
    }


def csr_scores(**override) -> dict[str, np.ndarray]:
    arrays = {k: v for k, v in good_arrays().items() if k != "scores_test"}
    arrays.update(scores_test_data=np.array([0.5, 0.9, 0.3]), scores_test_indices=np.array([0, 1, 2]),
                  scores_test_indptr=np.array([0, 1, 3]), scores_test_shape=np.array([2, 3]))
    arrays.update(override)
    return arrays


@pytest.mark.parametrize("change, message", [
    (lambda a: a.pop("labels_test_indices"), r"CSR labels incomplete.*labels_test_indices missing"),
    (lambda a: [a.pop(k) for k in list(a) if k.startswith("labels")], r"'labels_test' missing"),
    (lambda a: a.pop("scores_test"), r"key 'scores_test' missing .* while the labels of its split are present"),
    (lambda a: a.update({k.replace("test", "validation"): a.pop(k) for k in list(a)}), r"no 'test' split"),
    (lambda a: a.update(scores_test=np.ones((2, 4))), r"scores have shape \(2, 4\) but labels \(2, 3\)"),
    (lambda a: a.update(scores_test=np.array([[0.5, np.nan, 0.0], [0.2, 0.9, 0.3]])),
     r"1 score\(s\) are NaN or infinite, e.g. document 0, label 1"),
    (lambda a: a.update(scores_tset=np.ones((2, 3))), r"unknown key\(s\) scores_tset"),
    (lambda a: a.update(labels_test_indices=np.array([0, 1, 3])), r"labels_test_indices must lie in \[0, 3\)"),
    (lambda a: a.update(labels_test_indptr=np.array([0, 3, 1])), r"labels_test_indptr must start at 0, never decrease"),
    (lambda a: a.update(labels_test_indptr=np.array([0, 3])),
     r"labels_test_indptr has length 2, needs documents \+ 1 = 3"),
    (lambda a: a.update(labels_test_data=np.array([1, 2, 1])), r"labels must be 0/1"),
    (lambda a: a.update(scores_test=np.ones(3)), r"'scores_test' must be 2-D"),
    (lambda a: a.update(scores_test_data=np.ones(3)), r"both the dense 'scores_test' and its CSR components"),
    (lambda a: a.update(label_names=np.array(["a", "b"])), r"key 'label_names' must hold one name per label \(3\), got 2"),
    (lambda a: a.update(scores_validation=np.ones((1, 4)), labels_validation=np.ones((1, 4))),
     r"split 'test' has 3 labels, other splits 4"),
    (lambda a: a.update(info=np.asarray("{not json")), r"'info' is not a JSON object"),
    (lambda a: a.update(scores_test=a["scores_test"].astype(complex)), r"'scores_test' must hold real numbers, got "
                                                                       r"dtype complex128"),
    (lambda a: a.update(label_names=np.array(["a", "b", "a"])), r"label_names' repeats 'a' \(2 times at most, 1 "
                                                               r"name\(s\) repeated\)"),
])
def test_malformed_score_files_give_clear_errors(tmp_path, change, message):
    arrays = good_arrays()
    change(arrays)
    with pytest.raises(ScoreFileError, match=message):
        load_scores(write(tmp_path, **arrays))


def test_a_declared_label_count_beyond_the_memory_budget_is_refused_before_any_allocation(tmp_path, monkeypatch):
    """A CSR file declaring (2, 3e9) passed the loader and died later in a 22 GiB MemoryError."""
    monkeypatch.setenv("XMLTHRESH_MAX_MEMORY", "16G")
    huge = csr_scores(scores_test_shape=np.array([2, 3_000_000_000]), labels_test_shape=np.array([2, 3_000_000_000]))
    with pytest.raises(ScoreFileError, match=r"scores_test_shape declares 3,000,000,000 labels; the fit's per-label "
                                             r"arrays need about 1,500.0 GB of memory, more than the 17.2 GB"):
        load_scores(write(tmp_path, **huge))
    with pytest.raises(ScoreFileError, match=r"scores_test_data must hold real numbers, got dtype complex128"):
        load_scores(write(tmp_path, **csr_scores(scores_test_data=np.array([0.5, 0.9, 0.3], dtype=complex))))


def test_malformed_csr_scores_and_files(tmp_path):
    assert load_scores(write(tmp_path, **csr_scores())).splits["test"].scores.nnz == 3
    with pytest.raises(ScoreFileError, match=r"CSR scores incomplete.*scores_test_indptr missing"):
        arrays = csr_scores()
        arrays.pop("scores_test_indptr")
        load_scores(write(tmp_path, **arrays))
    with pytest.raises(ScoreFileError, match=r"repeated \(document, label\).*document 1, label 2"):
        load_scores(write(tmp_path, **csr_scores(scores_test_indices=np.array([0, 2, 2]))))
    with pytest.raises(ScoreFileError, match=r"NaN or infinite, e.g. document 1, label 1.*leave unscored"):
        load_scores(write(tmp_path, **csr_scores(scores_test_data=np.array([0.5, np.inf, 0.3]))))
    with pytest.raises(ScoreFileError, match="Python objects"):
        load_scores(write(tmp_path, **csr_scores(label_names=np.array(["a", 1, None], dtype=object))))
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(ScoreFileError, match="junk.npz"):
        load_scores(tmp_path / "junk.npz")
    with pytest.raises(ScoreFileError, match="holds no .npz"):
        load_scores((tmp_path / "empty").mkdir() or tmp_path / "empty")


def test_first_n_labels_on_score_data(tmp_path):
    path = save_scores(tmp_path / "p.npz", small_score_data())
    loaded = DATASETS.get("scores")(path=str(path), first_n_labels=2).load()
    assert all(s.n_labels == 2 for s in loaded.splits.values())
    assert list(loaded.splits["test"].label_names) == ["cat", "dog"]
    xmc = DATASETS.get("synthetic_xmc")(n_labels=50, num_docs=40, first_n_labels=7).load()
    assert all(s.scores.shape == (40, 7) for s in xmc.splits.values())


# ---------------------------------------------------------------------- synthetic_xmc
def test_synthetic_xmc_is_seeded_with_top_k_rows():
    a = generate_xmc_scores(n_labels=300, num_docs=400, num_validation_docs=250, top_k=10, seed=5)
    b = generate_xmc_scores(n_labels=300, num_docs=400, num_validation_docs=250, top_k=10, seed=5)
    c = generate_xmc_scores(n_labels=300, num_docs=400, num_validation_docs=250, top_k=10, seed=6)
    assert a.splits["validation"].n_docs == 250 and a.splits["test"].n_docs == 400
    for split in a.splits:
        x, y = a.splits[split], b.splits[split]
        assert sp.issparse(x.scores) and x.scores.shape == (x.n_docs, 300)
        np.testing.assert_array_equal(x.scores.data, y.scores.data)
        np.testing.assert_array_equal(x.scores.indices, y.scores.indices)
        assert (x.labels != y.labels).nnz == 0
        # 2 * top_k distractors: always at least top_k candidates -> exactly top_k scores per document
        assert np.all(np.diff(x.scores.indptr) == 10)
        assert np.all(np.diff(x.labels.indptr) >= 1)  # every document has a label
    assert not np.array_equal(a.splits["test"].scores.data, c.splits["test"].scores.data)
    assert 3.5 < a.info["test_mean_labels_per_doc"] <= 5.5


def test_synthetic_xmc_label_frequencies_follow_a_power_law():
    data = generate_xmc_scores(n_labels=2000, num_docs=20000, top_k=5, labels_per_doc=5, zipf_exponent=1.1, seed=0)
    counts = np.sort(data.splits["test"].n_relevant)[::-1]
    ranks = np.arange(1, len(counts) + 1)
    window = slice(4, 200)  # past the head (repeated draws collapse) and before the noisy tail
    slope = np.polyfit(np.log(ranks[window]), np.log(counts[window]), 1)[0]
    assert -1.3 < slope < -0.9, slope
    assert counts[0] > 50 * counts[199]


def test_synthetic_xmc_signal_controls_quality_and_dense_mode():
    def p_at_1(**kwargs):
        split = generate_xmc_scores(n_labels=200, num_docs=500, seed=1, **kwargs).splits["test"]
        return precision_at_k(split.scores, split.labels, (1,))[1]

    weak, strong = p_at_1(signal=0.0, top_k=10), p_at_1(signal=4.0, top_k=10)
    assert strong > 0.9 > 0.4 > weak
    dense = generate_xmc_scores(n_labels=40, num_docs=30, top_k=None, seed=0)
    assert isinstance(dense.splits["test"].scores, np.ndarray) and dense.splits["test"].scores.shape == (30, 40)
    with pytest.raises(ValueError, match="set top_k"):
        generate_xmc_scores(n_labels=100_000, num_docs=1000, top_k=None)
    with pytest.raises(ValueError, match="labels_per_doc"):
        generate_xmc_scores(labels_per_doc=0.5)


def test_synthetic_xmc_end_to_end_with_the_domain_strategy():
    data = DATASETS.get("synthetic_xmc")(n_labels=5000, num_docs=5000, top_k=20, seed=2).load()
    ranking = data.splits["validation"].ranking(include_predict_all=True)
    model = STRATEGIES.get("domain")().fit_lists(ranking.lists)
    assert model.lower_bound_ <= model.upper_bound_ + 1e-12 and 0 < model.f_macro_ < 1
    tp, predicted = data.splits["test"].counts_at(ranking.thresholds_for_cuts(model.cuts_))
    assert np.all(tp <= predicted)


@pytest.mark.parametrize("option", ["scores", "synthetic_xmc"])
def test_dataset_configs_build_their_plugin(tmp_path, option):
    params = OmegaConf.to_container(OmegaConf.load(CONF / "dataset" / f"{option}.yaml"))
    loader = params.pop("loader")
    assert loader == option
    if option == "scores":
        params["path"] = str(save_scores(tmp_path / "p.npz", small_score_data()))
    else:
        params.update(n_labels=100, num_docs=50)
    params = {k: v for k, v in params.items() if v is not None or k == "first_n_labels"}
    data = DATASETS.get(loader)(**params).load()
    assert isinstance(data, ScoreData) and "test" in data.splits


@pytest.mark.parametrize("n_distractors", [6, 150])  # insertion-sort and argsort branches of the kernel
def test_top_k_candidate_kernel_matches_a_brute_force_oracle(n_distractors):
    from xmlthresh.datasets.synthetic_xmc import _top_k_candidates

    rng = np.random.default_rng(n_distractors)
    n_docs, n_labels, k = 40, 30 if n_distractors < 30 else 400, 5
    true_ptr = np.r_[0, np.cumsum(rng.integers(1, 4, n_docs))].astype(np.int64)
    true_label = np.concatenate([np.sort(rng.choice(n_labels, true_ptr[d + 1] - true_ptr[d], replace=False))
                                 for d in range(n_docs)]).astype(np.int64)
    true_score = np.round(rng.standard_normal(len(true_label)), 1)  # ties
    distractor_label = rng.integers(0, n_labels, (n_docs, n_distractors))
    distractor_score = np.round(rng.standard_normal((n_docs, n_distractors)), 1)
    indptr, indices, data = _top_k_candidates(true_ptr, true_label, true_score, distractor_label, distractor_score,
                                              k, n_labels)
    for d in range(n_docs):
        candidates = {}  # label -> score; true labels first, then each distractor label's first draw
        for j in range(true_ptr[d], true_ptr[d + 1]):
            candidates[true_label[j]] = true_score[j]
        for label, score in zip(distractor_label[d], distractor_score[d]):
            candidates.setdefault(label, score)
        ranked = sorted(candidates.items(), key=lambda item: -item[1])[:k]  # stable: insertion order on ties
        expected = sorted(ranked)
        row = slice(indptr[d], indptr[d + 1])
        assert list(zip(indices[row], data[row])) == expected


def test_the_format_lives_in_data_and_rankers_never_import_the_dataset_layer():
    """Layering: rankers/ and datasets/ are siblings above data/; the score-file format is data/'s, the ``scores``
    plugin re-exports it under its old import path."""
    import subprocess
    import sys

    import xmlthresh.data.score_format as fmt
    import xmlthresh.datasets.score_loader as plugin

    assert (plugin.save_scores, plugin.load_scores, plugin.ScoreFileError) == (fmt.save_scores, fmt.load_scores,
                                                                               fmt.ScoreFileError)
    code = ("import sys, xmlthresh.data.score_format, xmlthresh.rankers.scoring, xmlthresh.rankers.crossfit; "
            "print(sorted(m for m in sys.modules if m.startswith('xmlthresh.datasets')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------------- the producer's own decision threshold


def test_native_threshold_round_trips_and_the_dataset_option_overrides_it(tmp_path):
    data = small_score_data().with_native_threshold(0.0)
    path = save_scores(tmp_path / "preds.npz", data)
    loaded = DATASETS.get("scores")(path=str(path)).load()
    assert {s.native_threshold for s in loaded.splits.values()} == {0.0}
    assert {s.native_threshold for s in DATASETS.get("scores")(path=str(path), native_threshold=0.25)
            .load().splits.values()} == {0.25}
    undeclared = save_scores(tmp_path / "plain.npz", small_score_data())
    assert {s.native_threshold for s in load_scores(undeclared).splits.values()} == {None}
    # first_n_labels keeps the declaration (and every other split property)
    assert {s.native_threshold for s in loaded.first_labels(2).splits.values()} == {0.0}


@pytest.mark.parametrize("value", [np.array([0.1, 0.2]), np.asarray("half"), np.asarray(np.nan)])
def test_a_bad_native_threshold_in_a_score_file_is_a_clear_error(tmp_path, value):
    with pytest.raises(ScoreFileError, match="key 'native_threshold' must hold one finite real number"):
        load_scores(write(tmp_path, **good_arrays(), native_threshold=value))


@pytest.mark.parametrize("value", ["0.5", True, float("inf")])
def test_a_bad_native_threshold_option_is_a_clear_error(tmp_path, value):
    with pytest.raises(ValueError, match="native_threshold must be a finite number or null"):
        DATASETS.get("scores")(path="x.npz", native_threshold=value)


def test_splits_that_declare_different_native_thresholds_are_not_saved(tmp_path):
    data = small_score_data()
    mixed = ScoreData("mixed", {"validation": data.splits["validation"].with_native_threshold(0.5),
                                "test": data.splits["test"].with_native_threshold(0.0)})
    with pytest.raises(ValueError, match="declare different native thresholds"):
        save_scores(tmp_path / "mixed.npz", mixed)
