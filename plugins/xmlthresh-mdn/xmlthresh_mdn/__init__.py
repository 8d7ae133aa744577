"""A mixture density network as an xmlthresh conditional density estimator (an installed plugin: entry point
``xmlthresh.plugins`` -> ``mdn = "xmlthresh_mdn"``).

Importing this package registers ``mdn`` (``@ESTIMATORS.register``). It never fails for a missing PyTorch:
torch is imported inside ``fit``; without it ``python -m xmlthresh list --check`` shows the estimator as
unavailable with the install hint, and building it raises ``UnavailableError`` with the hint.
"""

from . import estimator  # noqa: F401  (registration side effect)
from .mixture import DiagGaussianMixture

__all__ = ["DiagGaussianMixture"]
__version__ = "0.1.0"
