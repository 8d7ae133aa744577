"""A conditional normalizing flow as an xmlthresh conditional density estimator (an installed plugin: entry
point ``xmlthresh.plugins`` -> ``flow = "xmlthresh_flow"``).

Importing this package registers ``flow`` (``@ESTIMATORS.register``). It never fails for a missing PyTorch or
zuko: both are imported inside ``fit``; without them ``python -m xmlthresh list --check`` shows the estimator
as unavailable with the install hint, and building it raises ``UnavailableError`` with the hint.
"""

from . import estimator  # noqa: F401  (registration side effect)
from .estimator import FlowCDE

__all__ = ["FlowCDE"]
__version__ = "0.1.0"
