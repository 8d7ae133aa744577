"""xmlthresh: find, certify and benchmark decision thresholds for (extreme) multi-label classification.

The library API (imported on first use, so ``import xmlthresh`` stays light -- no numba, mlflow or pandas):

* :func:`fit_thresholds` -- per-label thresholds maximising F-macro on a score matrix (dense or sparse top-k
  CSR) and its labels, returning a :class:`ThresholdResult` (thresholds, certified bounds, report, predict,
  save / load);
* :class:`ThresholdClassifier` -- a scikit-learn meta-estimator: out-of-fold scores of any multi-label
  classifier, thresholds fitted on them, the classifier refitted on all data;
* :func:`load_dataset` -- a data set by its option name (``"espgame"``), loaded as the CLI loads it;
* :func:`f_macro_score` (and :func:`f_macro_scorer` for ``GridSearchCV``) -- the measure itself.

The package is organised by concept (docs/development.md, Layout): ``data`` holds the ranked-list model and its loaders,
``datasets`` the registered dataset plugins, ``strategies`` the registered threshold strategies (every one a
scikit-learn estimator on score matrices), ``metrics`` the quality measures, ``tracking`` the MLflow layer
and ``cli`` the Hydra entry point.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

__version__ = "0.1.0"


def _keep_numba_cache_with_ours() -> None:
    """numba's kernel cache under ``$XMLTHRESH_CACHE/numba`` unless ``NUMBA_CACHE_DIR`` is set: set here, before
    any module imports numba (which reads the variable once), and checked by :mod:`xmlthresh._util.jit`."""
    if "NUMBA_CACHE_DIR" not in os.environ:
        from xmlthresh._util.paths import cache_dir

        os.environ["NUMBA_CACHE_DIR"] = str(cache_dir() / "numba")


_keep_numba_cache_with_ours()


def _load_plugins_on_unknown_names() -> None:
    """Every registry loads the plugins the first time it misses a name or lists all, whichever module the
    user imported first (``from xmlthresh.strategies import STRATEGIES`` listed 12 strategies and refused the
    installed peers', which :mod:`xmlthresh.config.plugins` installs its loader for only once imported). The
    loader is imported when it runs, so ``import xmlthresh`` stays light."""
    from xmlthresh._util.registry import on_unknown_name

    on_unknown_name(_load_plugins)


def _load_plugins() -> None:
    importlib.import_module("xmlthresh.config.plugins").load_plugins()


_load_plugins_on_unknown_names()

#: public name -> module that defines it (loaded lazily by ``__getattr__``)
_LAZY = {
    "fit_thresholds": "xmlthresh.api",
    "load_dataset": "xmlthresh.api",
    "ThresholdResult": "xmlthresh.result",
    "ThresholdClassifier": "xmlthresh.classifier",
    "f_macro_scorer": "xmlthresh.classifier",
    "f_macro_score": "xmlthresh.metrics",
    "InputError": "xmlthresh.validation",
    "XmlthreshWarning": "xmlthresh._util.notices",
    "PredictAllWarning": "xmlthresh._util.notices",
    "IgnoredSettingWarning": "xmlthresh._util.notices",
    "DataWarning": "xmlthresh._util.notices",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'xmlthresh' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
