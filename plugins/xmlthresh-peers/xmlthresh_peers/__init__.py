"""Peer threshold methods for side-by-side benchmarks with xmlthresh (an installed plugin: entry point
``xmlthresh.plugins`` -> ``peers = "xmlthresh_peers"``).

Importing this package registers three strategies (``@STRATEGIES.register``); it never fails for a missing
optional dependency (xcolumns is imported inside the methods): such a strategy lists as unavailable with the
install hint and raises :class:`MissingDependencyError` with it when fitted.

* ``xcolumns_fw``   -- xCOLUMNs Frank-Wolfe randomized classifier for F-macro / macro-F (kind: randomized)
* ``xcolumns_bca``  -- xCOLUMNs block coordinate ascent on the predicted split's scores (kind: uses test scores)
* ``sklearn_tuned`` -- scikit-learn ``TunedThresholdClassifierCV`` per label (kind: deterministic)
"""

from . import sklearn_tuned, xcolumns_bca, xcolumns_fw  # noqa: F401  (registration side effect)
from ._common import MissingDependencyError

__all__ = ["MissingDependencyError"]
__version__ = "0.1.0"
