"""Peer methods of the installed plugin ``plugins/xmlthresh-peers`` (entry point ``xmlthresh.plugins``):
xCOLUMNs Frank-Wolfe and block coordinate ascent, scikit-learn's tuned thresholds.

They run beside the built-in strategies on the same score data, under both protocols. A check for all of
them: on the fit split none beats the certified ``domain`` upper bound of F-macro (the bound is over threshold
rules; a peer above it would have seen labels it should not). The xCOLUMNs tests skip when xcolumns is not
installed; the unavailable path (listing shows the install hint, fit raises it) is tested by blocking the
import.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import run_cli

from xmlthresh._util import paths
from xmlthresh.config import plugins
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.run.protocols import fit_and_evaluate
from xmlthresh.strategies import STRATEGIES

peers = pytest.importorskip(
    "xmlthresh_peers", reason="plugin not installed: .venv/bin/pip install -e 'plugins/xmlthresh-peers[xcolumns]'"
)
from xmlthresh_peers import MissingDependencyError  # noqa: E402
from xmlthresh_peers._common import PlattCalibration  # noqa: E402
from xmlthresh_peers.sklearn_tuned import fbeta_from_counts  # noqa: E402

PEERS = ("xcolumns_fw", "xcolumns_bca", "sklearn_tuned")
KINDS = {"deterministic", "randomized", "uses test scores"}
XCOLUMNS_MODULES = ("xcolumns", "xcolumns.frank_wolfe", "xcolumns.block_coordinate", "autograd", "autograd.numpy")
DISTRIBUTION = Path(__file__).resolve().parents[1] / "plugins" / "xmlthresh-peers"


def needs_xcolumns(name: str) -> None:
    if name.startswith("xcolumns"):
        pytest.importorskip("xcolumns", reason="xcolumns not installed: pip install 'xcolumns==0.0.2'")


def synthetic_scores(n_labels: int, n_docs: int, seed: int = 0, top_k: int | None = None) -> ScoreData:
    """Labels Bernoulli(prior_k), scores = signal_k * label + N(0, 1); validation and test drawn alike.
    ``top_k``: keep only each document's k best scores (sparse top-k CSR)."""
    rng = np.random.default_rng(seed)
    prior = np.clip(rng.exponential(0.02, n_labels), 0.003, 0.3)
    signal = rng.uniform(0.5, 3.0, n_labels)
    splits = {}
    for name in ("validation", "test"):
        labels = rng.random((n_docs, n_labels)) < prior
        scores = signal * labels + rng.normal(size=(n_docs, n_labels))
        if top_k is not None:
            keep = np.argsort(-scores, axis=1)[:, :top_k]
            rows = np.repeat(np.arange(n_docs), top_k)
            scores = sp.csr_matrix((scores[rows, keep.ravel()], (rows, keep.ravel())), shape=scores.shape)
        splits[name] = ScoredSplit(scores, labels, name=name)
    return ScoreData("peers-synthetic", splits)


@pytest.fixture(scope="module")
def data() -> ScoreData:
    return synthetic_scores(n_labels=120, n_docs=250, seed=1)


@pytest.fixture(scope="module")
def domain_bounds(data) -> dict[str, float]:
    """Certified upper bound of F-macro on each split (oracle on test, fit split = validation for holdout)."""
    oracle = fit_and_evaluate(STRATEGIES.get("domain")(), data, "oracle")
    holdout = fit_and_evaluate(STRATEGIES.get("domain")(), data, "holdout")
    return {"oracle": oracle["upper_bound"], "holdout": holdout["fit_upper_bound"]}


# ---------------------------------------------------------------------------------------------- discovery
def test_entry_point_registers_the_peers_and_the_distribution_is_not_a_folder_plugin():
    status = plugins.load_plugins()
    assert status["peers"].loaded and "entry point" in status["peers"].source
    assert not (DISTRIBUTION / "__init__.py").exists()  # a folder plugin would be imported from plugins/
    for name in PEERS:
        cls = STRATEGIES.get(name)
        assert cls.kind in KINDS and cls.requires_scores
    assert STRATEGIES.get("xcolumns_fw").kind == "randomized"
    assert STRATEGIES.get("xcolumns_bca").kind == "uses test scores"
    assert STRATEGIES.get("sklearn_tuned").kind == "deterministic"


@pytest.mark.parametrize("name", PEERS)
def test_option_yaml_composes_and_builds_the_strategy(name):
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    from xmlthresh.cli.entry import register_resolvers

    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"strategy={name}", "seed=7"])
    params = OmegaConf.to_container(cfg.strategy, resolve=True)
    assert params.pop("name") == name
    if "seed" in params:
        assert params["seed"] == 7  # the run's seed
    model = STRATEGIES.build(name, {"beta": 2.0, **params})
    assert model.get_params()["beta"] == 2.0


# ------------------------------------------------------------------------- options ship with the plugin
PEER_CONF = DISTRIBUTION / "xmlthresh_peers" / "conf"
#: importlib.metadata.entry_points as if the plugin were uninstalled (no entry point); ``exec`` it to patch
HIDE_THE_PLUGIN = """
import importlib.metadata as _metadata

def _hiding(entry_points):
    def without_peers(**selection):
        found = entry_points(**selection)
        if "group" not in selection:
            return found
        return _metadata.EntryPoints(e for e in found if not e.value.startswith("xmlthresh_peers"))
    return without_peers

_metadata.entry_points = _hiding(_metadata.entry_points)
"""


def test_the_options_ship_in_the_plugin_package_and_are_found_through_its_entry_point():
    from xmlthresh._util.paths import config_search_dirs

    assert {p.stem for p in (PEER_CONF / "strategy").glob("*.yaml")} == set(PEERS)
    assert PEER_CONF in paths.installed_plugin_conf_dirs()
    assert PEER_CONF.resolve() in config_search_dirs()


def test_without_the_plugin_its_options_are_unknown_and_the_others_compose(monkeypatch):
    from hydra import compose, initialize_config_module
    from hydra.errors import MissingConfigException

    from xmlthresh.cli.entry import register_resolvers
    from xmlthresh._util.paths import config_search_dirs

    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "entry_points", importlib.metadata.entry_points)  # restored after
    exec(HIDE_THE_PLUGIN, {})
    assert PEER_CONF not in paths.installed_plugin_conf_dirs()
    assert PEER_CONF.resolve() not in config_search_dirs()
    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        for name in PEERS:
            with pytest.raises(MissingConfigException, match=f"strategy/{name}"):
                compose(config_name="config", overrides=[f"strategy={name}"])
        for name in ("domain", "scut", "independent"):
            assert compose(config_name="config", overrides=[f"strategy={name}"]).strategy.name == name


def test_cli_without_the_plugin_names_the_unknown_option_and_lists_the_others(isolated_home):
    code = HIDE_THE_PLUGIN + "from xmlthresh.cli.entry import main\nmain()\n"
    proc = subprocess.run([sys.executable, "-c", code, "strategy=xcolumns_fw", "tracking.enabled=false"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "xmlthresh: error: unknown strategy option 'xcolumns_fw'; known: " in proc.stderr  # one line
    available = proc.stderr.split("known: ", 1)[1]
    assert "domain" in available and "scut" in available
    assert not any(name in available for name in PEERS)


# ---------------------------------------------------------------------------------------------- both protocols
VARIANTS = [("xcolumns_fw", {}), ("xcolumns_fw", {"objective": "macro_f"}), ("xcolumns_bca", {}),
            ("xcolumns_bca", {"objective": "macro_f"}), ("sklearn_tuned", {}), ("sklearn_tuned", {"thresholds": "all"})]


@pytest.mark.parametrize("protocol", ["oracle", "holdout"])
@pytest.mark.parametrize("name, params", VARIANTS)
def test_peer_runs_under_both_protocols_and_stays_below_the_certified_bound(name, params, protocol, data,
                                                                            domain_bounds):
    needs_xcolumns(name)
    model = STRATEGIES.get(name)(**params)
    result = fit_and_evaluate(model, data, protocol)
    prefix = "fit_" if protocol == "holdout" else ""
    assert result[f"{prefix}kind"] == model.kind
    json.dumps(result)  # lands in result.json as it is
    for key in ("f_macro", "macro_f", "precision", "recall"):
        assert 0.0 <= result[key] <= 1.0
    fit_f_macro = result[f"{prefix}f_macro"]
    assert fit_f_macro <= domain_bounds[protocol] + 1e-12
    assert fit_f_macro > 0.2  # a working method on an easy problem, not a degenerate rule
    if protocol == "holdout":
        assert result["fit_split"] == "validation" and result["eval_split"] == "test"
        assert result["upper_bound"] is None  # bounds certify the fit split only


def test_xcolumns_fw_is_reproducible_with_its_seed(data):
    needs_xcolumns("xcolumns_fw")
    test = data.splits["test"]
    first = STRATEGIES.get("xcolumns_fw")(seed=3).fit_scores(data.splits["validation"])
    second = STRATEGIES.get("xcolumns_fw")(seed=3).fit_scores(data.splits["validation"])
    assert (first.predict(test.scores) != second.predict(test.scores)).nnz == 0
    assert first.evaluate_scores(test) == second.evaluate_scores(test)
    assert first.info_ == second.info_ and first.info_["seed"] == 3
    assert first.evaluate_scores(test) == first.evaluate_scores(test)  # a fitted model draws the same matrix


def test_xcolumns_bca_chooses_on_the_predicted_split_reproducibly(data):
    needs_xcolumns("xcolumns_bca")
    model = STRATEGIES.get("xcolumns_bca")(seed=5).fit_scores(data.splits["validation"])
    test = data.splits["test"]
    assert (model.predict(test.scores) != model.predict(test.scores)).nnz == 0
    assert model.info_["objective"] == "f_macro" and "linearised" in model.info_["objective_method"]
    assert 0.0 < model.info_["bca_recall_weight"] < 1.0


def test_sparse_top_k_scores_are_accepted():
    data = synthetic_scores(n_labels=40, n_docs=120, seed=2, top_k=8)
    for name in PEERS:
        if name.startswith("xcolumns") and _missing("xcolumns"):
            continue
        result = fit_and_evaluate(STRATEGIES.get(name)(), data, "holdout")
        assert 0.0 <= result["f_macro"] <= 1.0


# ---------------------------------------------------------------------------------------------- sklearn_tuned
def test_counts_scorer_equals_sklearn_fbeta_score():
    from sklearn.metrics import fbeta_score

    rng = np.random.default_rng(0)
    for beta in (0.5, 1.0, 2.0):
        for _ in range(20):
            y = (rng.random(30) < 0.2).astype(int)
            pred = (rng.random(30) < rng.random()).astype(int)
            assert fbeta_from_counts(y, pred, beta) == pytest.approx(fbeta_score(y, pred, beta=beta, zero_division=0.0))


def test_sklearn_tuned_with_every_threshold_reaches_the_per_label_optimum_and_matches_fbeta_score():
    data = synthetic_scores(n_labels=25, n_docs=100, seed=3)
    split = data.splits["test"]
    exact = STRATEGIES.get("sklearn_tuned")(thresholds="all").fit_scores(split)
    optimum = STRATEGIES.get("independent")().fit_scores(split)
    assert exact.metrics_["macro_f"] == pytest.approx(optimum.metrics_["macro_f"])  # same per-label maxima
    fast = STRATEGIES.get("sklearn_tuned")(thresholds=20).fit_scores(split)
    reference = STRATEGIES.get("sklearn_tuned")(thresholds=20, scorer="sklearn").fit_scores(split)
    assert np.array_equal(fast.score_thresholds_, reference.score_thresholds_)


def test_sklearn_tuned_refuses_too_many_labels_and_ranked_lists(data):
    skipped, reason = STRATEGIES.get("sklearn_tuned")(max_labels=50).skip(data)
    assert skipped and "max_labels=50" in reason
    assert STRATEGIES.get("sklearn_tuned")().skip(data) == (False, "")
    lists = RankedLists.from_relevance_lists([[1, 0, 1]], [2], num_docs=3)
    for name in PEERS:
        skipped, reason = STRATEGIES.get(name)().skip(lists)
        assert skipped and "per-document scores" in reason


def test_sklearn_unavailable_path(monkeypatch, data):
    import sklearn.model_selection

    monkeypatch.delattr(sklearn.model_selection, "TunedThresholdClassifierCV")
    cls = STRATEGIES.get("sklearn_tuned")
    assert "scikit-learn >= 1.5" in cls.unavailable_reason()
    with pytest.raises(MissingDependencyError, match="pip install"):
        cls().fit_scores(data.splits["test"])


# ---------------------------------------------------------------------------------------------- xcolumns missing
def test_missing_xcolumns_is_listed_with_the_hint_and_fit_raises_it(monkeypatch, data):
    plugins.load_plugins()
    for module in XCOLUMNS_MODULES:
        monkeypatch.setitem(sys.modules, module, None)  # "import xcolumns" now fails
    for name in ("xcolumns_fw", "xcolumns_bca"):
        cls = STRATEGIES.get(name)
        assert "pip install 'xcolumns==0.0.2'" in cls.unavailable_reason()
        with pytest.raises(MissingDependencyError, match=r"pip install 'xcolumns==0\.0\.2'"):
            cls().fit_scores(data.splits["test"])
    listing = plugins.describe(check=True)  # xmlthresh list --check: the registered classes and their state
    line = next(row for row in listing.splitlines() if row.strip().startswith("strategy xcolumns_fw"))
    assert "[unavailable:" in line and "pip install" in line
    assert STRATEGIES.get("sklearn_tuned").unavailable_reason() is None


def test_plugin_imports_without_xcolumns():
    blocked = "; ".join(f"sys.modules[{m!r}] = None" for m in XCOLUMNS_MODULES)
    code = (f"import sys; {blocked}\n"
            "import xmlthresh_peers\n"
            "from xmlthresh.strategies import STRATEGIES\n"
            "print(STRATEGIES.get('xcolumns_fw').unavailable_reason())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "not installed" in proc.stdout and "pip install" in proc.stdout


# ---------------------------------------------------------------------------------------------- scale, CLI
@pytest.mark.parametrize("name", PEERS)
def test_corel5k_sized_holdout_takes_well_under_a_minute(name):
    needs_xcolumns(name)
    data = synthetic_scores(n_labels=374, n_docs=500, seed=0)
    started = time.perf_counter()
    result = fit_and_evaluate(STRATEGIES.get(name)(), data, "holdout")
    assert time.perf_counter() - started < 60.0
    assert result["f_macro"] > 0.2


def test_platt_calibration_maps_into_the_unit_interval_and_keeps_the_order():
    rng = np.random.default_rng(4)
    labels = (rng.random((200, 6)) < 0.1).astype(float)
    labels[:, 5] = 0.0
    labels[:3, 5] = 1.0  # a rare label, perfectly separated below
    scores = 2.0 * labels + rng.normal(size=labels.shape)
    scores[:3, 5] = 10.0
    scores[:, 4] = -scores[:, 4]  # anti-correlated: slope clamped to 0, never a reversed order
    calibration = PlattCalibration().fit(scores, labels)
    eta = calibration.transform(scores)
    assert np.all((eta >= 0) & (eta <= 1)) and np.all(np.isfinite(eta))
    assert np.all(calibration.slope_ >= 0) and calibration.slope_[4] == 0.0
    for k in range(6):
        order = np.argsort(scores[:, k])
        assert np.all(np.diff(eta[order, k]) >= -1e-15)
    assert abs(eta[:, 0].mean() - labels[:, 0].mean()) < 0.02  # calibrated on its own split


def test_cli_run_writes_the_kind_into_result_json(isolated_home, tmp_path):
    needs_xcolumns("xcolumns_fw")
    run_dir = tmp_path / "run"
    proc = run_cli(["strategy=xcolumns_fw", "dataset=synthetic_xmc", "dataset.n_labels=60", "dataset.num_docs=150",
                    "dataset.top_k=null", "tracking.enabled=false", "plots=false", f"hydra.run.dir={run_dir}"])
    assert proc.returncode == 0, proc.stderr
    result = json.loads((run_dir / "result.json").read_text())
    assert result["strategy"] == "xcolumns_fw" and result["kind"] == "randomized"
    assert result["objective"] == "f_macro" and result["seed"] == 0


def _missing(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is None


# ---------------------------------------------------------------------------------------------- CSR scores end to end
def test_platt_on_csr_scores_equals_the_densified_fit_without_densifying():
    """Weighted samples (stored entries + two fill samples per label) give the parameters of the fit on
    the densified matrix (unscored = smallest score - 1)."""
    data = synthetic_scores(n_labels=30, n_docs=200, seed=5, top_k=6)
    split = data.splits["validation"]
    fill = split.scores.data.min() - 1.0
    dense = np.full(split.scores.shape, fill)
    coo = split.scores.tocoo()
    dense[coo.row, coo.col] = coo.data
    labels = split.labels.toarray().astype(float)
    sparse_fit = PlattCalibration().fit(split.scores, split.labels)
    dense_fit = PlattCalibration().fit(dense, labels)
    for name in PlattCalibration.STATE:
        np.testing.assert_allclose(getattr(sparse_fit, name), getattr(dense_fit, name), rtol=1e-6, atol=1e-9)
    eta = sparse_fit.transform(split.scores)
    assert sp.issparse(eta) and eta.nnz == split.scores.nnz
    np.testing.assert_allclose(eta.data, dense_fit.transform(dense)[coo.row, coo.col], rtol=1e-6)


def _csr_scale_data(n_docs: int, n_labels: int, n_relevant_labels: int, k: int = 5) -> ScoreData:
    """Top-k CSR scores over ``n_labels`` labels, the relevant ones among the first ``n_relevant_labels``."""
    rng = np.random.default_rng(0)
    splits = {}
    for split_name in ("validation", "test"):
        label_of = rng.integers(0, n_relevant_labels, size=(n_docs, 2))
        labels = sp.csr_matrix((np.ones(2 * n_docs, dtype=bool), (np.repeat(np.arange(n_docs), 2), label_of.ravel())),
                               shape=(n_docs, n_labels))
        cols = np.concatenate([label_of, rng.integers(0, n_labels, size=(n_docs, k - 2))], axis=1)
        rows = np.repeat(np.arange(n_docs), k)
        values = rng.normal(size=n_docs * k) + 2.0 * np.tile([1, 1, 0, 0, 0], n_docs)
        scores = sp.csr_matrix((values, (rows, cols.ravel())), shape=(n_docs, n_labels))
        scores.sum_duplicates()
        splits[split_name] = ScoredSplit(scores, labels, name=split_name)
    return ScoreData("csr-scale", splits)


def _peak_bytes_of_holdout(name: str, data: ScoreData, params: dict) -> float:
    import tracemalloc

    model = STRATEGIES.get(name)(**params)
    assert model.skip(data) == (False, "")
    tracemalloc.start()
    result = fit_and_evaluate(model, data, "holdout")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert 0.0 <= result["f_macro"] <= 1.0
    return peak


#: cheap settings: memory is the point, not the optimum (Frank-Wolfe's default line search of 1000 steps
#: evaluates the objective 1000 times per iteration)
CHEAP = {"sklearn_tuned": {"max_labels": 20_000}, "xcolumns_fw": {"max_iters": 3, "alpha_search_step": 0.1},
         "xcolumns_bca": {"objective": "macro_f", "max_iter": 3}}


@pytest.mark.parametrize("name", PEERS)
def test_peers_keep_csr_scores_sparse_memory_of_the_order_of_nnz(name):
    """20,000 labels x 600 documents: dense float64 scores would be 96 MB per split; top-5 CSR holds 3,000
    entries. Fit and evaluation (holdout) must stay well below one dense matrix (tracemalloc sees numpy).
    30 labels have relevant documents (each a scikit-learn fit), cheap optimiser settings: ~1-2 s each."""
    needs_xcolumns(name)
    peak = _peak_bytes_of_holdout(name, _csr_scale_data(600, 20_000, 30), CHEAP[name])
    assert peak < 40e6, f"{name} peaked at {peak / 1e6:.0f} MB on CSR scores (dense would be 96 MB per split)"


@pytest.mark.slow
@pytest.mark.parametrize("name", PEERS)
def test_peers_keep_csr_scores_sparse_with_more_optimiser_work(name):
    """The same bound with 300 relevant labels and more of the optimisers' work: BCA on the linearised
    F-macro (bisection rounds), Frank-Wolfe with 5 iterations and a line search of 100 steps (its default
    1000 steps take ~40 s here: 1000 autograd evaluations of the objective per iteration)."""
    needs_xcolumns(name)
    params = {"sklearn_tuned": {"max_labels": 20_000}, "xcolumns_fw": {"max_iters": 5, "alpha_search_step": 0.01},
              "xcolumns_bca": {"max_outer": 2}}[name]
    peak = _peak_bytes_of_holdout(name, _csr_scale_data(600, 20_000, 300), params)
    assert peak < 40e6, f"{name} peaked at {peak / 1e6:.0f} MB on CSR scores (dense would be 96 MB per split)"


def test_the_size_guard_is_a_memory_estimate_with_the_numbers(monkeypatch):
    """The same problem as CSR top-5 scores fits a limit that its dense scores exceed; the reason names the
    estimate, the matrix and the limit's name."""
    from xmlthresh_peers import _common

    sparse_data = synthetic_scores(n_labels=50, n_docs=100, seed=2, top_k=5)
    dense_data = synthetic_scores(n_labels=50, n_docs=100, seed=2)
    sparse_need = _common.memory_estimate(sparse_data.splits["validation"])
    dense_need = _common.memory_estimate(dense_data.splits["validation"])
    assert sparse_need == 500 * _common.SPARSE_BYTES_PER_ENTRY + 50 * _common.BYTES_PER_LABEL
    assert dense_need == 5000 * _common.DENSE_BYTES_PER_CELL + 50 * _common.BYTES_PER_LABEL
    monkeypatch.setattr(_common, "MEMORY_LIMIT_BYTES", (sparse_need + dense_need) // 2)
    for name in ("xcolumns_fw", "xcolumns_bca"):
        assert STRATEGIES.get(name)().skip(sparse_data) == (False, "")
        skipped, reason = STRATEGIES.get(name)().skip(dense_data)
        assert skipped and "GiB" in reason and "dense scores, 100 x 50 cells" in reason
        assert "MEMORY_LIMIT_BYTES" in reason and name in reason


def _drawn_rules(n_docs: int, p: np.ndarray, seed: int) -> np.ndarray:
    """The rule xCOLUMNs 0.0.2 draws for each document (rng.choice per document, seeded as its predict)."""
    rng = np.random.default_rng(seed)
    return np.array([rng.choice(np.arange(len(p)), p=p) for _ in range(n_docs)])


@pytest.mark.parametrize("top_k", [4, None])
def test_frank_wolfe_labels_without_validation_positive_get_the_zero_rule(top_k):
    """What xCOLUMNs really does with them: they weigh 0 in the objective, so every Frank-Wolfe rule after
    the initial one is a = b = 0 (gain 0), and a gain of 0 is predicted on CSR scores (gain >= 0: every
    stored entry) but not on dense scores (gain > 0). The initial rule "top" predicts eta >= 1/2 (CSR) or
    eta > 1/2 (dense)."""
    needs_xcolumns("xcolumns_fw")
    data = synthetic_scores(n_labels=12, n_docs=150, seed=7, top_k=top_k)
    validation, test = data.splits["validation"], data.splits["test"]
    empty = np.flatnonzero(validation.n_relevant == 0)
    assert len(empty) > 0  # the instance has such labels
    model = STRATEGIES.get("xcolumns_fw")(seed=4).fit_scores(validation)
    a, b, p = model.classifier_.a, model.classifier_.b, model.classifier_.p
    assert len(p) > 1 and np.all(a[1:, empty] == 0) and np.all(b[1:, empty] == 0)
    predicted = sp.csr_matrix(model.predict_split(test), dtype=bool).toarray()
    eta = model.calibration_.transform(test.scores)
    eta = eta.toarray() if sp.issparse(eta) else eta
    stored = (test.scores.toarray() != 0) if top_k else np.ones(test.scores.shape, dtype=bool)
    initial = (_drawn_rules(test.n_docs, p, seed=4) == 0)[:, None]
    if top_k:
        expected = stored & (~initial | (eta >= 0.5))
    else:
        expected = initial & (eta > 0.5)
    np.testing.assert_array_equal(predicted[:, empty], expected[:, empty])
    if top_k:
        assert predicted[:, empty].sum() > 0.5 * stored[:, empty].sum()  # most of their stored entries


# ---------------------------------------------------------------------------------------------- experiment=peers_xmc
PRESET_STRATEGIES = ["domain", "independent", "pu", "xcolumns_fw", "peers/xcolumns_fw_macro_f",
                     "peers/xcolumns_bca_macro_f", "peers/sklearn_tuned_xmc"]


def _compose_preset(*overrides: str, hydra: bool = False):
    from hydra import compose, initialize_config_module

    from xmlthresh.config.compose import register_resolvers

    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        return compose(config_name="config", overrides=["experiment=peers_xmc", *overrides], return_hydra_config=hydra)


def test_peers_xmc_preset_ships_with_the_plugin_and_sweeps_the_issue_18_grid():
    """The preset lives in the plugin's package conf (found through its entry point like the strategies):
    domain, independent, pu, Frank-Wolfe on both objectives, BCA on macro-F and scikit-learn's SCut on
    synthetic_xmc at 10^4 and 10^5 labels, holdout, with the labels without a validation positive reported."""
    assert (Path(peers.__file__).parent / "conf" / "experiment" / "peers_xmc.yaml").is_file()
    assert not (Path(paths.__file__).parent / "conf" / "experiment" / "peers_xmc.yaml").exists()
    cfg = _compose_preset(hydra=True)
    params = cfg.hydra.sweeper.params
    assert str(params["dataset.n_labels"]).split(",") == ["10000", "100000"]
    assert str(params["strategy"]).split(",") == PRESET_STRATEGIES
    assert cfg.dataset.loader == "synthetic_xmc" and cfg.protocol.name == "holdout" and cfg.dataset.top_k == 20
    assert list(cfg.report.metrics) == ["fit_labels_without_positive", "eval_labels_without_fit_positive"]


def test_peers_xmc_preset_jobs_run_on_a_tiny_instance(tmp_path):
    """The preset's jobs without xCOLUMNs (whose first call compiles for seconds: the slow test below runs
    those), composed as the sweep composes them, at 40 labels x 100 documents, in-process and untracked: the
    fields the report shows are there, and the variant is what its name says."""
    from xmlthresh.config.compose import compose as compose_job
    from xmlthresh.run.job import run_job

    results = {}
    for option in ("domain", "independent", "pu", "peers/sklearn_tuned_xmc"):
        cfg = compose_job(["experiment=peers_xmc", f"strategy={option}", "dataset.n_labels=40", "dataset.num_docs=100",
                           "tracking.enabled=false"])
        results[option] = run_job(cfg, tmp_path / option.replace("/", "_"))
    for option, result in results.items():
        assert result["protocol"] == "holdout" and result["dataset"] == "synthetic_xmc", option
        assert 0.0 < result["f_macro"] <= 1.0 and result["fit_seconds"] > 0.0, option
        assert result["fit_labels_without_positive"] == results["domain"]["fit_labels_without_positive"] > 0
        assert 0 < result["eval_labels_without_fit_positive"] <= result["fit_labels_without_positive"]
    assert results["peers/sklearn_tuned_xmc"]["variant"] == "sklearn_tuned(max_labels=100000)"


def test_holdout_counts_the_labels_without_a_fit_positive():
    data = synthetic_scores(n_labels=120, n_docs=60, seed=3, top_k=8)
    fit, test = data.splits["validation"], data.splits["test"]
    result = fit_and_evaluate(STRATEGIES.get("independent")(), data, "holdout")
    unseen = fit.n_relevant == 0
    assert 0 < unseen.sum() < 120 and result["fit_labels_without_positive"] == int(unseen.sum())
    assert result["eval_labels_without_fit_positive"] == int((unseen & (test.n_relevant > 0)).sum()) > 0
    assert "fit_labels_without_positive" not in fit_and_evaluate(STRATEGIES.get("independent")(), data, "oracle")


@pytest.mark.slow
def test_peers_xmc_preset_sweep_writes_the_report_with_the_label_counts(isolated_home):
    """The preset's xCOLUMNs jobs through the CLI on tiny data: a tracked sweep whose report has fit time,
    test F-macro and the labels without a validation positive, one row per variant (~10 s: xCOLUMNs
    compiles on its first call in each process)."""
    needs_xcolumns("xcolumns_fw")
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", "experiment=peers_xmc",
                           "strategy=xcolumns_fw,peers/xcolumns_fw_macro_f,peers/xcolumns_bca_macro_f",
                           "dataset.n_labels=40", "dataset.num_docs=100"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    reports = list((isolated_home / "runs" / "multirun").glob("*/*/report/comparison.md"))
    assert len(reports) == 1
    lines = reports[0].read_text().splitlines()
    header = next(line for line in lines if line.startswith("| dataset"))
    for column in ("strategy.objective", "f_macro", "fit_seconds", "fit_labels_without_positive",
                   "eval_labels_without_fit_positive"):
        assert f"| {column} |" in header
    rows = [line for line in lines if line.startswith("| synthetic_xmc | holdout | xcolumns_")]
    assert [row.split(" | ")[2:4] + [row.split(" | ")[5]] for row in rows] == [
        ["xcolumns_bca", "uses test scores", "macro_f"], ["xcolumns_fw", "randomized", "f_macro"],
        ["xcolumns_fw", "randomized", "macro_f"]]


def test_platt_calibration_of_a_score_matrix_without_stored_entries():
    """A CSR score matrix with no stored entry has only unscored samples (scipy's indexing with two empty
    index arrays returns no plain array)."""
    import numpy as np
    import scipy.sparse as sp

    from xmlthresh_peers._platt import samples_of

    samples = samples_of(sp.csr_matrix((2, 3)), np.array([[1, 0, 0], [1, 1, 0]], dtype=bool))
    assert samples.weight.tolist() == [2, 1, 0, 0, 1, 2]  # per label: unscored relevant, then irrelevant
    assert samples.relevant.tolist() == [1, 1, 1, 0, 0, 0]
