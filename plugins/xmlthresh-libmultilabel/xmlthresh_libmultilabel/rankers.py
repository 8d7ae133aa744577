"""LibMultiLabel's linear models as xmlthresh rankers (``ranker=lml_linear``, ``ranker=lml_tree``).

Both take liblinear's option string (``options``). The default, ``"-s 2 -e 0.0001"``, is liblinear's
L2-regularised L2-loss SVM solved in the primal (trust-region Newton), which draws no random numbers: the
scores are the same bit for bit on every run. LibMultiLabel's own default, the dual solver ``-s 1`` (also
``-s 3``, ``-s 5``, ...), shuffles with C's ``rand()`` from several threads at once, so its scores differ from
run to run; choosing one is said in a warning. The rankers are fitted on the training split like the built-in rankers (their
scores are cached by the same ranker cache, and cross-fitted under ``protocol=crossfit``). Dense features are
standardised on the training split (``standardize="auto"``), sparse ones are used as they are; LibMultiLabel
takes a CSR matrix. ``linear.train_tree`` also clusters the labels with k-means, whose seed comes from the run
(``random_state``) through numpy's global generator, the only handle LibMultiLabel 0.10.0 gives.
"""

from __future__ import annotations

import contextlib
import io
import logging

import numpy as np
import scipy.sparse as sp

from xmlthresh.rankers.base import Ranker
from xmlthresh.rankers.registry import RANKERS
from xmlthresh.validation import check_int

INSTALL_HINT = "install it with: pip install libmultilabel==0.10.0"
#: liblinear's primal solvers (deterministic); the others solve the dual with random shuffles
DETERMINISTIC_SOLVERS = ("0", "2", "11")
#: the default options: the primal L2-loss SVM, reproducible bit for bit
DEFAULT_OPTIONS = "-s 2 -e 0.0001"
log = logging.getLogger(__name__)


def check_options(name: str, options: str) -> None:
    """liblinear's option string as LibMultiLabel takes it: text; -R, -C and -v are refused by it."""
    if not isinstance(options, str):
        raise ValueError(f"{name} must be liblinear's option string (e.g. '-s 2 -e 0.0001'), got {options!r}")
    try:  # liblinear's own parser, so that a typo is named here and not as its bare "Wrong options" at the fit
        from liblinear.liblinearutil import parameter

        parameter(options)
    except ImportError:  # the fit says that LibMultiLabel is missing
        pass
    except ValueError as exc:
        raise ValueError(f"{name}={options!r}: liblinear refuses it ({exc}); it takes liblinear's flags, e.g. "
                         f"'{DEFAULT_OPTIONS}' (-s solver, -e tolerance, -c cost, -B bias)") from None
    words = options.split()
    refused = [flag for flag in ("-R", "-C", "-v") if flag in words]
    if refused:
        raise ValueError(f"{name}: LibMultiLabel does not support {', '.join(refused)} (cross-validation and "
                         "regression options of liblinear)")
    solver = words[words.index("-s") + 1] if "-s" in words[:-1] else "1"  # LibMultiLabel's default: -s 1
    if solver not in DETERMINISTIC_SOLVERS:
        log.warning("%s=%r: liblinear solver -s %s shuffles with C's rand() from several threads, so the scores "
                    "change from run to run; -s 2 (the default here) or -s 0 are reproducible", name, options,
                    solver)


class _LibMultiLabelRanker(Ranker):
    """Shared parts: standardisation, CSR features, liblinear's quiet output."""

    requirements = ("libmultilabel",)
    install_hint = INSTALL_HINT

    options: str
    standardize: bool | str

    def _check_params(self) -> None:
        super()._check_params()
        check_options("ranker.options", self.options)
        if self.standardize not in (True, False, "auto"):
            raise ValueError(f"ranker.standardize must be true, false or 'auto', got {self.standardize!r}")

    def _features(self, X, fit: bool) -> sp.csr_matrix:
        if fit:
            from sklearn.preprocessing import StandardScaler

            scale = (not sp.issparse(X)) if self.standardize == "auto" else bool(self.standardize)
            self.scaler_ = StandardScaler(with_mean=not sp.issparse(X)).fit(X) if scale else None
        X = self.scaler_.transform(X) if self.scaler_ is not None else X
        return sp.csr_matrix(X, dtype=np.float64)

    @staticmethod
    def _quietly(call):
        """LibMultiLabel logs its progress with ``logging.info``, tqdm and print; a run shows its own."""
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            previous = logging.root.manager.disable
            logging.disable(logging.INFO)
            try:
                return call()
            finally:
                logging.disable(previous)


@RANKERS.register("lml_linear")
class LibMultiLabelLinear(_LibMultiLabelRanker):
    """LibMultiLabel's one-vs-rest linear model (``linear.train_1vsrest``); scores are decision values."""

    native_threshold = 0.0  # LibMultiLabel predicts a label when its decision value is > 0

    def __init__(self, options: str = DEFAULT_OPTIONS, standardize: bool | str = "auto", top_k: int | None = None,
                 random_state: int | None = None) -> None:
        self.options = options
        self.standardize = standardize
        self.top_k = top_k
        self.random_state = random_state

    def _fit(self, X, Y: sp.csr_matrix) -> None:
        from libmultilabel import linear

        x = self._features(X, fit=True)
        self.model_ = self._quietly(lambda: linear.train_1vsrest(sp.csr_matrix(Y, dtype=np.float64), x,
                                                                 options=self.options, verbose=False))

    def _scores(self, X) -> np.ndarray:
        from libmultilabel import linear

        return np.asarray(linear.predict_values(self.model_, self._features(X, fit=False)), dtype=np.float64)


@RANKERS.register("lml_tree")
class LibMultiLabelTree(_LibMultiLabelRanker):
    """LibMultiLabel's tree model (``linear.train_tree``: labels clustered into a tree of degree ``K`` and depth
    at most ``dmax``, a linear model per node); scores are its probability estimates with ``beam_width``."""

    native_threshold = 0.5  # probabilities

    def __init__(self, options: str = DEFAULT_OPTIONS, K: int = 100, dmax: int = 10, beam_width: int = 10,
                 standardize: bool | str = "auto", top_k: int | None = None, random_state: int | None = None) -> None:
        self.options = options
        self.K = K
        self.dmax = dmax
        self.beam_width = beam_width
        self.standardize = standardize
        self.top_k = top_k
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_int("ranker.K", self.K, 2)
        check_int("ranker.dmax", self.dmax, 1)
        check_int("ranker.beam_width", self.beam_width, 1)
        check_int("ranker.random_state", self.random_state, 0, 2**32 - 1, optional=True)

    def _fit(self, X, Y: sp.csr_matrix) -> None:
        from libmultilabel import linear

        x = self._features(X, fit=True)
        state = np.random.get_state()  # LibMultiLabel's k-means draws from numpy's global generator
        np.random.seed(0 if self.random_state is None else int(self.random_state))
        try:
            self.model_ = self._quietly(lambda: linear.train_tree(sp.csr_matrix(Y, dtype=np.float64), x,
                                                                  options=self.options, K=int(self.K),
                                                                  dmax=int(self.dmax), verbose=False))
        finally:
            np.random.set_state(state)

    def _scores(self, X) -> np.ndarray:
        return np.asarray(self.model_.predict_values(self._features(X, fit=False), beam_width=int(self.beam_width)),
                          dtype=np.float64)
