"""API smoke test of an installed xmlthresh (run by check.sh with the fresh environment's python, from a
temporary directory): import the package, fit ``domain`` on a small scored split, check what comes back.

Exits non-zero with a one-line reason when something is off; prints one summary line when all is well.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import xmlthresh
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies import STRATEGIES


def check(condition: bool, message: str) -> None:
    if not condition:
        print(f"api smoke: FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def small_split(seed: int = 0, n_docs: int = 120, n_labels: int = 12) -> ScoredSplit:
    """Labels Bernoulli(0.15), scores = 1.5 * label + N(0, 1): a ranker that is good but not perfect."""
    rng = np.random.default_rng(seed)
    labels = rng.random((n_docs, n_labels)) < 0.15
    labels[0] = True  # every label has a relevant document
    scores = 1.5 * labels + rng.normal(size=labels.shape)
    return ScoredSplit(scores, sp.csr_matrix(labels), name="smoke")


def main() -> None:
    package = Path(xmlthresh.__file__).resolve()
    check(Path(sys.prefix).resolve() in package.parents, f"xmlthresh imported from {package}, not from {sys.prefix}")
    split = small_split()
    model = STRATEGIES.get("domain")(beta=1.0).fit_scores(split)
    check(0.0 < model.f_macro_ <= 1.0, f"F-macro {model.f_macro_} outside (0, 1]")
    check(model.lower_bound_ <= model.f_macro_ + 1e-12 <= model.upper_bound_ + 2e-12,
          f"bounds [{model.lower_bound_}, {model.upper_bound_}] do not bracket F-macro {model.f_macro_}")
    refit = model.evaluate_scores(split)["f_macro"]
    check(abs(refit - model.f_macro_) < 1e-9, f"thresholds reproduce F-macro {refit}, fit said {model.f_macro_}")
    independent = STRATEGIES.get("independent")().fit_scores(split)
    check(independent.f_macro_ <= model.upper_bound_ + 1e-12, "independent beats the certified upper bound")
    check(model.predict(split.scores).shape == (split.n_docs, split.n_labels), "predictions have the wrong shape")

    # the library API on score matrices: the same optimum, saved and reloaded bit for bit
    fitted = xmlthresh.fit_thresholds(split.scores, split.labels, strategy="domain")
    check(fitted.f_macro == model.f_macro_, f"fit_thresholds F-macro {fitted.f_macro} != {model.f_macro_}")
    check(np.array_equal(fitted.thresholds, model.score_thresholds_), "fit_thresholds thresholds differ")
    saved = fitted.save(Path("smoke_thresholds.json"))
    loaded = xmlthresh.ThresholdResult.load(saved)
    check((loaded.predict(split.scores) != fitted.predict(split.scores)).nnz == 0, "a reloaded result predicts otherwise")
    plugin = xmlthresh.fit_thresholds(split.scores, split.labels, strategy="pu")
    check(plugin.lower_bound <= plugin.upper_bound, "pu bounds out of order")

    # the scikit-learn snippet of docs/api.md: thresholds on out-of-fold scores, the classifier refitted
    from sklearn.datasets import make_multilabel_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    X, Y = make_multilabel_classification(n_samples=500, n_classes=8, random_state=0)
    classifier = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression()), strategy="domain",
                                               cv=5, random_state=0).fit(X, Y)
    check(classifier.result_.lower_bound <= classifier.result_.upper_bound, "classifier bounds out of order")
    check(classifier.predict(X).shape == Y.shape, "classifier predictions have the wrong shape")
    if len(sys.argv) > 1 and sys.argv[1] == "--lean":  # only the library's own dependencies are installed
        missing = [name for name in ("hydra", "mlflow", "pandas", "matplotlib") if _importable(name)]
        check(not missing, f"the lean install has {missing}")
        try:
            xmlthresh.load_dataset("espgame")
        except ImportError as exc:
            check('pip install "xmlthresh[bench]"' in str(exc), f"load_dataset's error names no extra: {exc}")
        else:
            check(False, "load_dataset worked without the framework")

    print(f"api smoke: ok (xmlthresh {xmlthresh.__version__} from {package.parent}; domain F-macro "
          f"{model.f_macro_:.6f} in [{model.lower_bound_:.6f}, {model.upper_bound_:.6f}])")


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


if __name__ == "__main__":
    main()
