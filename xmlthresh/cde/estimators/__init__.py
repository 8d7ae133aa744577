"""The registered conditional density estimators (importing this package registers them in ESTIMATORS)."""

from .ckde import CKDE
from .flexcode import FlexCode
from .gmm import GMMCDE
from .marginal import MarginalKDE
from .nnkcde import NNKCDE
from .rfcde import RFCDE

__all__ = ["CKDE", "FlexCode", "GMMCDE", "MarginalKDE", "NNKCDE", "RFCDE"]
