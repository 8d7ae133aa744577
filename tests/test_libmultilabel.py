"""The xmlthresh-libmultilabel plugin: this project's F-macro is LibMultiLabel's Another-Macro-F1, the
micromacro-freq rule on scores chooses what LibMultiLabel's own search chooses on the same decision values,
and the rankers run under holdout and crossfit from the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("libmultilabel", reason="the xmlthresh-libmultilabel plugin's dependency is not installed")
pytest.importorskip("xmlthresh_libmultilabel", reason="the xmlthresh-libmultilabel plugin is not installed")

from xmlthresh.metrics import f_macro_score  # noqa: E402
from xmlthresh_libmultilabel.thresholding import micromacro_cuts  # noqa: E402


@pytest.mark.parametrize("seed", range(5))
def test_f_macro_is_libmultilabels_another_macro_f1(seed):
    from libmultilabel.linear.metrics import compute_metrics

    rng = np.random.default_rng(seed)
    target = (rng.random((50, 7)) < 0.3).astype(np.int64)
    target[0] = 1  # every label has a relevant document (LibMultiLabel divides by all labels)
    decision = rng.normal(size=target.shape)  # LibMultiLabel predicts a label where the value is > 0
    decision[:, 3] = -1.0  # a label that predicts nothing: precision 0/0, 0 in both
    ours = f_macro_score(target, decision > 0)
    theirs = compute_metrics(decision, target, ["Another-Macro-F1"])["Another-Macro-F1"]
    assert ours == pytest.approx(theirs, abs=1e-12)


def _libmultilabels_search(values: np.ndarray, y: np.ndarray, stats: dict) -> tuple[int, int, int]:
    """The cut search of LibMultiLabel 0.10.0's ``_micromacro_one_label`` on one fold's decision values
    (transcribed from its source): the (tp, fp, fn) of the cut it keeps."""
    def micro_plus_macro(tp, fp, fn):
        macro = np.nan_to_num((2 * tp) / (2 * tp + fp + fn)) / stats["labels"]
        micro = np.nan_to_num((2 * (tp + stats["tp"])) / (2 * (tp + stats["tp"]) + fp + fn + stats["fp"] + stats["fn"]))
        return micro + macro

    order = np.argsort(values, kind="stable")
    with np.errstate(divide="ignore", invalid="ignore"):
        tp, fp, fn = int(np.sum(y == 1)), int(np.sum(y == -1)), 0
        best_obj, best = micro_plus_macro(tp, fp, fn), (tp, fp, fn)
        for i in range(len(values)):
            if y[order[i]] == -1:
                fp -= 1
            else:
                tp -= 1
                fn += 1
            obj = micro_plus_macro(tp, fp, fn)
            if obj >= best_obj:
                best_obj, best = obj, (tp, fp, fn)
    return best


@pytest.mark.parametrize("seed", range(20))
def test_the_rule_on_scores_keeps_the_cut_libmultilabels_search_keeps(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    relevant = rng.random(n) < rng.uniform(0.05, 0.5)
    values = rng.normal(size=n) + 1.5 * relevant  # distinct scores: every cut is a threshold rule
    micro = tuple(int(v) for v in rng.integers(0, 40, size=3))
    seen = int(rng.integers(1, 10))
    threshold, tp, fp, fn, _ = micromacro_cuts(values, relevant, micro, seen, include_predict_all=True)
    stats = {"tp": micro[0], "fp": micro[1], "fn": micro[2], "labels": seen}
    assert (tp, fp, fn) == _libmultilabels_search(values, np.where(relevant, 1, -1), stats)
    predicted = values >= threshold
    assert (int((predicted & relevant).sum()), int((predicted & ~relevant).sum())) == (tp, fp)


@pytest.mark.parametrize("protocol, strategy", [("crossfit", "domain"), ("holdout", "lml_thresholding")])
def test_the_linear_ranker_and_the_peer_run_from_the_command_line(real_data, isolated_home, tmp_path, protocol,
                                                                  strategy):
    from helpers import run_cli

    proc = run_cli(["ranker=lml_linear", "dataset=emotions", f"protocol={protocol}", f"strategy={strategy}",
                    "tracking.enabled=false", "plots=false", "warm_up=false", f"hydra.run.dir={tmp_path}/run"])
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["ranker"] == "lml_linear" and 0 < result["f_macro"] <= 1 and result["protocol"] == protocol


def test_the_tree_ranker_scores_every_label_and_follows_the_seed():
    from xmlthresh.rankers import RANKERS

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6))
    Y = (X[:, :4] + rng.normal(size=(120, 4)) > 0.5).astype(np.int64)
    scores = [RANKERS.build("lml_tree", {"K": 2, "random_state": 3}).fit(X, Y).predict_scores(X) for _ in range(2)]
    assert scores[0].shape == Y.shape and np.array_equal(scores[0], scores[1])
    assert (scores[0] >= 0).all() and (scores[0] <= 1).all()  # probability estimates


def test_bad_options_are_refused_and_a_dual_solver_is_said_not_to_be_reproducible(caplog):
    from xmlthresh.rankers import RANKERS

    with pytest.raises(ValueError, match="does not support -v"):
        RANKERS.build("lml_linear", {"options": "-s 2 -v 5"}).fit(np.eye(4), np.eye(4, dtype=np.int64))
    RANKERS.build("lml_linear", {"options": "-s 1"}).fit(np.eye(4), np.eye(4, dtype=np.int64))
    assert "change from run to run" in caplog.text
