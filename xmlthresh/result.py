"""What :func:`xmlthresh.fit_thresholds` returns: the fitted thresholds with their certificate, the fit's
report, prediction on new scores, and a JSON file format to save and reload them.

A :class:`ThresholdResult` holds one **score threshold per label** (label k predicts the documents with
score >= ``thresholds[k]``; ``+inf`` = never predict, ``-inf`` = predict every document, also the unscored
ones of a sparse top-k matrix). A few strategies' rules are not per-label score thresholds: ``rcut``
(top-t labels per document), ``pcut`` (a share of each split's documents), ``xcolumns_fw`` (a randomized
classifier on calibrated probabilities) and ``xcolumns_bca`` (kind "uses test scores": it re-optimises its
predictions on the scores it is given). Their ``thresholds`` is ``None`` and ``rule`` holds the fitted
state their ``predict`` needs.

File format (JSON, UTF-8; ``save`` writes atomically)::

    {"format": "xmlthresh.thresholds", "version": "<xmlthresh version that wrote it>",
     "strategy": "domain", "kind": "deterministic", "params": {... every strategy parameter ...},
     "beta": 1.0, "include_predict_all": true, "n_labels": 3, "label_names": ["a", "b", "c"],
     "f_macro": 0.61, "lower_bound": 0.61, "upper_bound": 0.61,
     "thresholds": [0.25, "inf", "-inf"], "rule": null, "report": {... the fit's result.json fields ...},
     "f_macro_interval": [0.55, 0.63], "interval_level": 0.9}

``f_macro_interval`` / ``interval_level`` (optional: null, or absent in files of earlier versions): the
population interval of ``fit_thresholds(..., interval=level)``.

Floats are written in their shortest round-trip form, so they load back bit for bit; JSON has no infinity,
so +-inf (and NaN, in a report) are the strings ``"inf"``, ``"-inf"`` (``"nan"``). Arrays inside ``rule`` are
``{"dtype": ..., "shape": [...], "values": [...]}``. A file written by another major version of xmlthresh,
or missing a field, is refused with a message that says so.

Prediction with threshold rules imports only numpy and scipy.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from xmlthresh import __version__
from xmlthresh._util.errors import first_line
from xmlthresh._util.files import jsonable
from xmlthresh.data.text_encoding import TextEncodingError, read_text
from xmlthresh.metrics import EMPIRICAL_OBJECTIVE
from xmlthresh.thresholds import apply_thresholds
from xmlthresh.validation import InputError, check_label_names, check_scores

FORMAT = "xmlthresh.thresholds"
#: fields every thresholds file must hold
FIELDS = ("format", "version", "strategy", "kind", "params", "beta", "include_predict_all", "n_labels",
          "label_names", "f_macro", "lower_bound", "upper_bound", "thresholds", "rule", "report")
#: the strategy kind whose predictions are re-optimised on the scores being predicted
USES_TEST_SCORES = "uses test scores"


@dataclass(frozen=True, eq=False, repr=False)
class ThresholdResult:
    """Fitted thresholds of one strategy on one score matrix, with their certificate; saved and loaded as JSON.

    Made by :func:`xmlthresh.fit_thresholds` (or :meth:`load`), not by hand. Label k predicts the documents
    with score >= ``thresholds[k]``: ``+inf`` never predicts, ``-inf`` predicts every document, also the
    unscored ones of a sparse top-k matrix. A few strategies' rules are not per-label score thresholds
    (``rcut``, ``pcut``, ``xcolumns_fw``, ``xcolumns_bca``): their ``thresholds`` is None and ``rule`` holds
    what their :meth:`predict` needs. The file format is described in the module :mod:`xmlthresh.result`.

    Parameters
    ----------
    thresholds : numpy.ndarray or None
        One score threshold per label, or None for a rule that is not per-label thresholds (see ``rule``).
    f_macro : float
        F-macro = F_beta(mean precision, mean recall) of the rule on the fit data.
    lower_bound, upper_bound : float or None
        Certified bounds on the optimum over all threshold vectors *on the fit data* of the objective the
        strategy maximised, ``report()["objective"]`` (None when the strategy certifies nothing). That is the
        empirical F-macro, unless the strategy fits a modified one (``pooled``, ``smoothing`` > 0, a cap on
        predictions, ``pu``'s plug-in F-macro): then the bounds are of that objective and need not bracket
        ``f_macro``, and the one-line form says so. With ``pooling`` the bounds are those of the fit before
        the thresholds were pooled (the one-line form says so too). They say nothing about new documents:
        ``f_macro_interval`` does.
    strategy : str
        The strategy's registry name.
    params : dict
        Every parameter of the strategy (its ``get_params()``).
    beta : float
        The beta of F_beta.
    kind : str
        ``"deterministic"``, ``"randomized"`` or ``"uses test scores"`` (its predictions are re-optimised on
        the scores being predicted).
    label_names : numpy.ndarray
        One name per label (a DataFrame's columns, else 0..n-1).
    include_predict_all : bool
        Whether "predict every document" was a candidate in the fit.
    rule : dict, optional
        The fitted state of a rule that is not per-label thresholds.
    version : str, optional
        The xmlthresh version that fitted (or saved) the result.
    f_macro_interval : tuple of float, optional
        ``(low, high)``: where the F-macro of these thresholds on as many new documents of the fit data's
        distribution falls with probability ``interval_level``; None unless
        ``fit_thresholds(..., interval=level)`` asked for it.
    interval_level : float, optional
        The level of ``f_macro_interval``.

    See Also
    --------
    xmlthresh.fit_thresholds : what makes a ThresholdResult.

    Examples
    --------
    >>> import numpy as np, xmlthresh
    >>> scores = np.array([[0.9, 0.2], [0.8, 0.7], [0.3, 0.6], [0.1, 0.1]])
    >>> labels = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> result = xmlthresh.fit_thresholds(scores, labels, label_names=["cat", "dog"])
    >>> result
    ThresholdResult(strategy='domain', n_labels=2, beta=1, f_macro=1, bounds=[1, 1])
    >>> result.thresholds, result.label_names.tolist()
    (array([0.8, 0.6]), ['cat', 'dog'])
    """

    #: one score threshold per label (predict score >= t; +inf never, -inf all), or None (see ``rule``)
    thresholds: np.ndarray | None
    #: F-macro = F_beta(mean precision, mean recall) of the rule on the fit data
    f_macro: float
    #: certified bounds on the optimum over all threshold vectors (None when the strategy has none)
    lower_bound: float | None
    upper_bound: float | None
    #: registry name of the strategy, its parameters (``get_params()``) and kind
    strategy: str
    params: dict[str, Any]
    beta: float
    kind: str
    label_names: np.ndarray
    #: whether "predict all" was a candidate in the fit
    include_predict_all: bool
    #: the fitted state of a rule that is not per-label thresholds (None for threshold rules)
    rule: dict[str, Any] | None = None
    #: the xmlthresh version that fitted (or saved) the result
    version: str = __version__
    #: [low, high]: where the F-macro of these thresholds on as many new documents of the fit data's
    #: distribution falls with probability ``interval_level`` (:mod:`xmlthresh.strategies.interval`); None
    #: unless ``fit_thresholds(..., interval=level)`` asked for it
    f_macro_interval: tuple[float, float] | None = None
    interval_level: float | None = None
    _report: dict[str, Any] = field(default_factory=dict, repr=False)
    _estimator: Any = field(default=None, repr=False)  # the fitted strategy, for rules without thresholds

    def __post_init__(self) -> None:
        """The thresholds a result holds are what a fit makes: one number (or +-inf) per label, never NaN (a
        result built by hand with a NaN never predicted that label, without a word; ``load`` refused it)."""
        if self.thresholds is None:
            return
        thresholds = np.asarray(self.thresholds, dtype=np.float64)
        if thresholds.ndim != 1 or thresholds.shape[0] != len(self.label_names):
            raise InputError(f"thresholds must hold one number per label ({len(self.label_names)} label names), got "
                             f"shape {thresholds.shape}")
        if np.isnan(thresholds).any():
            first = int(np.flatnonzero(np.isnan(thresholds))[0])
            raise InputError(f"thresholds[{first}] is NaN; a threshold is a number, +inf (never predict) or -inf "
                             "(predict every document)")

    @property
    def n_labels(self) -> int:
        """The number of labels (fitted ones and those without a relevant document alike).

        Examples
        --------
        >>> import numpy as np, xmlthresh
        >>> xmlthresh.fit_thresholds(np.eye(3), np.eye(3)).n_labels
        3
        """
        return len(self.label_names)

    def __repr__(self) -> str:
        """One line: the strategy, the label count, F-macro and the certificate (the fields would be
        thousands of thresholds)."""
        objective = self._report.get("objective")
        of = "" if objective in (None, EMPIRICAL_OBJECTIVE) else f" of the objective {objective!r}"
        if self._report.get("pooling_strength") and self.lower_bound is not None:  # thresholds moved after the fit
            of += " of the unpooled fit (pooling moved these thresholds)"
        bounds = "" if self.lower_bound is None else (
            f", bounds{of}=[{self.lower_bound:.6g}, {self.upper_bound:.6g}]")
        interval = "" if self.f_macro_interval is None else (
            f", interval={self.interval_level:g}:[{self.f_macro_interval[0]:.4g}, {self.f_macro_interval[1]:.4g}]")
        return (f"ThresholdResult(strategy={self.strategy!r}, n_labels={self.n_labels}, beta={self.beta:g}, "
                f"f_macro={self.f_macro:.6g}{bounds}{interval})")

    def to_series(self) -> Any:
        """The thresholds as a pandas Series indexed by the label names.

        The pandas form of ``thresholds``, which stays a numpy array whatever the input was. Needs pandas.

        Returns
        -------
        pandas.Series
            One threshold per label, named ``threshold``, indexed by the label names (index name ``label``).

        Raises
        ------
        ValueError
            The strategy's rule is not per-label thresholds (its state is in ``rule``).

        Examples
        --------
        >>> import numpy as np, xmlthresh
        >>> scores = np.array([[0.9, 0.2], [0.8, 0.7], [0.3, 0.6], [0.1, 0.1]])
        >>> labels = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
        >>> print(xmlthresh.fit_thresholds(scores, labels, label_names=["cat", "dog"]).to_series())
        label
        cat    0.8
        dog    0.6
        Name: threshold, dtype: float64
        """
        if self.thresholds is None:
            raise ValueError(f"strategy {self.strategy!r} has no per-label thresholds (its rule is in .rule)")
        import pandas as pd

        names = [name.item() if isinstance(name, np.generic) else name for name in self.label_names]
        return pd.Series(np.asarray(self.thresholds), index=pd.Index(names, name="label"), name="threshold")

    @property
    def uses_test_scores(self) -> bool:
        """True when ``predict(scores)`` re-optimises on ``scores`` (kind "uses test scores").

        Examples
        --------
        >>> import numpy as np, xmlthresh
        >>> xmlthresh.fit_thresholds(np.eye(3), np.eye(3)).uses_test_scores
        False
        """
        return self.kind == USES_TEST_SCORES

    def report(self) -> dict[str, Any]:
        """The fields the command line writes to ``result.json`` for the fit.

        Returns
        -------
        dict
            Metrics on the fit data (``f_macro``, ``macro_f``, ``micro_f``, ``precision``, ``recall``), the
            bounds, the strategy's diagnostics, ``strategy``, ``kind``, ``beta``, ``n_labels``, ``n_docs`` and
            ``fit_seconds`` (a copy: changing it changes nothing).

        Examples
        --------
        >>> import numpy as np, xmlthresh
        >>> report = xmlthresh.fit_thresholds(np.eye(3), np.eye(3)).report()
        >>> report["f_macro"], report["macro_f"], report["n_docs"], report["strategy"]
        (1.0, 1.0, 3, 'domain')
        """
        return dict(self._report)

    def predict(self, scores: Any) -> sp.csr_matrix:
        """Predict the labels of new documents from their scores.

        Parameters
        ----------
        scores : array-like or scipy.sparse CSR matrix, shape (documents, labels)
            Scores of the fitted labels, in the same order (a DataFrame's columns are matched by name); sparse
            top-k scores are never densified, and their missing entries predict only where the threshold is
            ``-inf``.

        Returns
        -------
        scipy.sparse.csr_matrix of bool, shape (documents, labels)
            True where a label is predicted for a document.

        Raises
        ------
        InputError
            Another number of labels than fitted, NaN scores, or DataFrame columns that are not the fitted
            labels.

        Examples
        --------
        >>> import numpy as np, xmlthresh
        >>> scores = np.array([[0.9, 0.2], [0.8, 0.7], [0.3, 0.6], [0.1, 0.1]])
        >>> labels = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
        >>> result = xmlthresh.fit_thresholds(scores, labels)
        >>> result.predict(np.array([[0.85, 0.65], [0.5, 0.5]])).toarray()
        array([[ True,  True],
               [False, False]])
        """
        scores = self._columns_in_fitted_order(scores)
        scores = check_scores(scores, n_labels=self.n_labels)
        if self.thresholds is not None:
            return apply_thresholds(scores, self.thresholds)
        from xmlthresh.data.scores import ScoredSplit

        pred = sp.csr_matrix(self._rule_estimator().predict_split(ScoredSplit(scores, name="predict")), dtype=bool)
        pred.eliminate_zeros()
        pred.sort_indices()
        return pred

    def _columns_in_fitted_order(self, scores: Any) -> Any:
        """A DataFrame of scores with its columns in the order of ``label_names`` (matched by name, as
        :func:`~xmlthresh.fit_thresholds` matches them: by position, reordered columns got other labels'
        thresholds); columns that are not the fitted labels are an :class:`InputError`. Anything else as given."""
        if not type(scores).__module__.startswith("pandas"):  # predicting imports no pandas for arrays
            return scores
        import pandas as pd

        if not isinstance(scores, pd.DataFrame):
            return scores
        fitted = [name.item() if isinstance(name, np.generic) else name for name in self.label_names]
        given = list(scores.columns)
        if given == fitted:
            return scores.to_numpy()
        if sorted(map(str, given)) != sorted(map(str, fitted)) or len(set(given)) != len(given):
            missing = [name for name in fitted if name not in set(given)][:3]
            extra = [name for name in given if name not in set(fitted)][:3]
            raise InputError(f"the scores' DataFrame columns are not the fitted labels (missing: {missing}, not "
                             f"fitted: {extra}); give one column per fitted label (result.label_names)")
        by_text = {str(name): name for name in given}
        return scores[[by_text[str(name)] for name in fitted]].to_numpy()

    def _rule_estimator(self) -> Any:
        if self._estimator is None:  # loaded from a file: rebuild the strategy from its parameters and rule
            from xmlthresh.config import plugins  # noqa: F401  (a plugin's strategy name loads the plugins)
            from xmlthresh.strategies import STRATEGIES

            estimator = STRATEGIES.get(self.strategy)(**self.params)
            estimator.restore_rule(self.rule, self.n_labels)
            object.__setattr__(self, "_estimator", estimator)
        return self._estimator

    # ------------------------------------------------------------------ save / load
    def to_json(self) -> dict[str, Any]:
        """The JSON object that :meth:`save` writes (the format is in the module :mod:`xmlthresh.result`).

        Returns
        -------
        dict
            Only JSON types: non-finite floats are the strings ``"inf"``, ``"-inf"``, ``"nan"``.

        Examples
        --------
        >>> import numpy as np, xmlthresh
        >>> payload = xmlthresh.fit_thresholds(np.eye(2), np.eye(2)).to_json()
        >>> payload["format"], payload["strategy"], payload["thresholds"]
        ('xmlthresh.thresholds', 'domain', [1.0, 1.0])
        """
        return {
            "format": FORMAT,
            "version": __version__,
            "strategy": self.strategy,
            "kind": self.kind,
            "params": _encode(self.params),
            "beta": _encode(self.beta),
            "include_predict_all": bool(self.include_predict_all),
            "n_labels": self.n_labels,
            "label_names": jsonable(np.asarray(self.label_names).tolist()),
            "f_macro": _encode(self.f_macro),
            "lower_bound": _encode(self.lower_bound),
            "upper_bound": _encode(self.upper_bound),
            "thresholds": None if self.thresholds is None else _encode(np.asarray(self.thresholds).tolist()),
            "rule": None if self.rule is None else _encode_rule(self.rule),
            "report": _encode(self.report()),
            "f_macro_interval": None if self.f_macro_interval is None else [float(v) for v in self.f_macro_interval],
            "interval_level": self.interval_level,
        }

    def save(self, path: str | Path) -> Path:
        """Write the result as a JSON file, atomically (a failed write leaves no partial file).

        Parameters
        ----------
        path : str or pathlib.Path
            Where to write (an existing file is replaced).

        Returns
        -------
        pathlib.Path
            ``path``.

        Examples
        --------
        >>> import numpy as np, tempfile, pathlib, xmlthresh
        >>> result = xmlthresh.fit_thresholds(np.eye(2), np.eye(2))
        >>> path = result.save(pathlib.Path(tempfile.mkdtemp()) / "thresholds.json")
        >>> xmlthresh.ThresholdResult.load(path).thresholds
        array([1., 1.])
        """
        from xmlthresh._util.files import write_text_atomic

        path = Path(path)
        write_text_atomic(path, json.dumps(self.to_json(), indent=1, allow_nan=False) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "ThresholdResult":
        """Read a thresholds file written by :meth:`save`.

        Floats load back bit for bit, and predicting with a threshold rule needs only numpy and scipy.

        Parameters
        ----------
        path : str or pathlib.Path
            A file written by :meth:`save` of an xmlthresh with the same major version.

        Returns
        -------
        ThresholdResult
            The saved result (its ``version`` is the one that wrote the file).

        Raises
        ------
        InputError
            No such file, not JSON, not a thresholds file, a field missing or of the wrong type, or written by
            another major version; the message says which.

        Examples
        --------
        >>> import numpy as np, tempfile, pathlib, xmlthresh
        >>> scores = np.array([[0.9, 0.2], [0.8, 0.7], [0.3, 0.6], [0.1, 0.1]])
        >>> labels = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
        >>> path = xmlthresh.fit_thresholds(scores, labels).save(pathlib.Path(tempfile.mkdtemp()) / "t.json")
        >>> loaded = xmlthresh.ThresholdResult.load(path)
        >>> loaded.f_macro, loaded.predict(scores).toarray().astype(int).tolist()
        (1.0, [[1, 0], [1, 1], [0, 1], [0, 0]])
        """
        path = Path(path)
        try:
            payload = json.loads(read_text(path))
        except FileNotFoundError:
            raise InputError(f"{path}: no such thresholds file") from None
        except TextEncodingError:
            raise
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: not a readable thresholds file (JSON): {exc}") from None
        return cls.from_json(payload, where=str(path))

    @classmethod
    def from_json(cls, payload: Any, where: str = "thresholds file") -> "ThresholdResult":
        """The result described by a JSON object of the file format (what :meth:`to_json` gives).

        Parameters
        ----------
        payload : dict
            The file's JSON object.
        where : str, default "thresholds file"
            What to call the source in error messages (:meth:`load` passes the path).

        Returns
        -------
        ThresholdResult
            The result, its fields checked as :meth:`load` checks them.

        Raises
        ------
        InputError
            Not a thresholds object, a field missing or of the wrong type, another major version.

        Examples
        --------
        >>> import numpy as np, xmlthresh
        >>> result = xmlthresh.fit_thresholds(np.eye(2), np.eye(2))
        >>> xmlthresh.ThresholdResult.from_json(result.to_json()).thresholds
        array([1., 1.])
        >>> xmlthresh.ThresholdResult.from_json({"format": "csv"})
        Traceback (most recent call last):
        ...
        xmlthresh._util.errors.InputError: thresholds file: not an xmlthresh thresholds file (expected "format": "xmlthresh.thresholds")
        """
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise InputError(f"{where}: not an xmlthresh thresholds file (expected \"format\": \"{FORMAT}\")")
        missing = [name for name in FIELDS if name not in payload]
        if missing:
            raise InputError(f"{where}: missing field(s) {', '.join(missing)}; the file is incomplete or was "
                             "not written by ThresholdResult.save")
        written, ours = str(payload["version"]), __version__
        if _major(written) != _major(ours):
            raise InputError(f"{where}: written by xmlthresh {written}, this is xmlthresh {ours}: the major "
                             "versions differ, so the format may have changed; load it with a matching "
                             "version, or fit the thresholds again")
        _check_field_types(payload, where)
        n_labels = payload["n_labels"]
        if len(payload["label_names"]) != n_labels:  # name the fields that disagree, whichever was edited
            given = payload["thresholds"]
            also = "" if given is None else f" and {len(given)} thresholds"
            raise InputError(f"{where}: n_labels is {n_labels} but the file holds {len(payload['label_names'])} label "
                             f"names{also}; they must agree (fit and save the thresholds again rather than editing "
                             "the file)")
        try:  # the rule a fit applies: a file edited by hand must not bring back what a fit refuses
            label_names = check_label_names(payload["label_names"], n_labels, what="label_names")
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        thresholds = payload["thresholds"]
        rule = payload["rule"]
        if (thresholds is None) == (rule is None):
            raise InputError(f"{where}: exactly one of 'thresholds' and 'rule' must be given")
        if thresholds is not None:
            thresholds = _decode_floats(thresholds, where, "thresholds")
            if thresholds.shape != (n_labels,):
                raise InputError(f"{where}: 'thresholds' must hold one number (or \"inf\" / \"-inf\") per label, "
                                 f"{n_labels} in all; it holds {thresholds.size}")
            if np.isnan(thresholds).any():  # name the entry: a file edited by hand has one bad value, not a count
                first = int(np.flatnonzero(np.isnan(thresholds))[0])
                raise InputError(f"{where}: thresholds[{first}] (label {label_names[first].item()!r}) is NaN; a "
                                 "threshold is a number, \"inf\" (never predict) or \"-inf\" (predict every document)")
        result = cls(
            thresholds=thresholds,
            f_macro=_decode(payload["f_macro"]),
            lower_bound=_decode(payload["lower_bound"]),
            upper_bound=_decode(payload["upper_bound"]),
            strategy=str(payload["strategy"]),
            params=_decode(payload["params"]),
            beta=_decode(payload["beta"]),
            kind=str(payload["kind"]),
            label_names=label_names,
            include_predict_all=bool(payload["include_predict_all"]),
            rule=None if rule is None else _decode_rule(rule, where),
            version=written,
            f_macro_interval=_decode_interval(payload.get("f_macro_interval"), where),
            interval_level=_decode_level(payload.get("interval_level"), where),
            _report=_decode(payload["report"]),
        )
        if result.rule is not None:  # a rule edited by hand is checked now, as a fit checks its parameters
            try:
                result._rule_estimator()
            except (ValueError, TypeError, KeyError) as exc:
                raise InputError(f"{where}: its rule cannot be used: {first_line(exc)}") from None
        return result


#: the JSON type every field of a thresholds file must have (a file edited by hand with "false" in quotes was
#: read by truthiness: "include_predict_all": "false" loaded as True)
FIELD_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "version": ((str,), "text"),
    "strategy": ((str,), "text"),
    "kind": ((str,), "text"),
    "params": ((dict,), "an object"),
    "beta": ((int, float), "a positive finite number"),
    "include_predict_all": ((bool,), "true or false"),
    "n_labels": ((int,), "an integer >= 0"),
    "label_names": ((list,), "a list of names"),
    "f_macro": ((int, float, str), "a number"),
    "lower_bound": ((int, float, str, type(None)), "a number or null"),
    "upper_bound": ((int, float, str, type(None)), "a number or null"),
    "thresholds": ((list, type(None)), "a list or null"),
    "rule": ((dict, type(None)), "an object or null"),
    "report": ((dict,), "an object"),
}


def _check_field_types(payload: dict[str, Any], where: str) -> None:
    """Every field of the file has its JSON type (:data:`FIELD_TYPES`); bool is not taken for a number."""
    for name, (types, described) in FIELD_TYPES.items():
        value = payload[name]
        wrong = not isinstance(value, types) or (isinstance(value, bool) and bool not in types)
        if isinstance(value, str) and str in types and name in ("f_macro", "lower_bound", "upper_bound"):
            wrong = value not in _NON_FINITE  # numbers are written as numbers, non-finite ones as "inf"/"nan"
        if name == "n_labels" and not wrong:
            wrong = value < 0
        if name == "beta" and not wrong:
            wrong = not (0 < value < math.inf)
        if wrong:
            raise InputError(f"{where}: field {name!r} must be {described}, got {value!r}")


# ---------------------------------------------------------------------- JSON encoding
_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _decode_interval(value: Any, where: str) -> tuple[float, float] | None:
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value)
            and 0 <= value[0] <= value[1] <= 1):
        raise InputError(f"{where}: 'f_macro_interval' must be null or [low, high] with 0 <= low <= high <= 1, "
                         f"got {value!r}")
    return float(value[0]), float(value[1])


def _decode_level(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if not _is_number(value) or not 0 < value < 1:
        raise InputError(f"{where}: 'interval_level' must be null or a number in (0, 1), got {value!r}")
    return float(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _major(version: str) -> str:
    return version.split(".", 1)[0]


def _encode(value: Any) -> Any:
    """JSON-ready value: non-finite floats become the strings "inf", "-inf", "nan"."""
    value = jsonable(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {key: _encode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_encode(item) for item in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    if isinstance(value, dict):
        return {key: _decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decode(item) for item in value]
    return value


def _decode_floats(values: Any, where: str, what: str) -> np.ndarray:
    """A list of numbers of a saved file (non-finite ones as the strings "inf", "-inf", "nan"); the first entry
    that is none of them is named with its index and value (a file edited by hand has one bad entry)."""
    if not isinstance(values, list):
        raise InputError(f"{where}: '{what}' must be a list of numbers or \"inf\" / \"-inf\", got "
                         f"{type(values).__name__}")
    for index, value in enumerate(values):
        if not ((isinstance(value, (int, float)) and not isinstance(value, bool)) or value in _NON_FINITE):
            raise InputError(f"{where}: {what}[{index}] is {value!r}; an entry is a number, \"inf\" or \"-inf\"")
    return np.array([_NON_FINITE[v] if isinstance(v, str) else float(v) for v in values], dtype=np.float64)


def _encode_rule(rule: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in rule.items():
        if isinstance(value, np.ndarray):
            out[key] = {"dtype": value.dtype.str, "shape": list(value.shape), "values": _encode(value.ravel().tolist())}
        else:
            out[key] = _encode(value)
    return out


def _decode_rule(rule: Any, where: str) -> dict[str, Any]:
    if not isinstance(rule, dict):
        raise InputError(f"{where}: 'rule' must be an object")
    out = {}
    for key, value in rule.items():
        if isinstance(value, dict) and set(value) == {"dtype", "shape", "values"}:
            try:
                dtype = np.dtype(value["dtype"])
                values = _decode_floats(value["values"], where, f"rule.{key}") if dtype.kind == "f" else \
                    np.asarray(value["values"], dtype=dtype)
                out[key] = values.astype(dtype, copy=False).reshape(value["shape"])
            except (TypeError, ValueError) as exc:
                raise InputError(f"{where}: array 'rule.{key}' is malformed: {exc}") from None
        else:
            out[key] = _decode(value)
    return out
