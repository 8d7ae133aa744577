"""The library entry point for score matrices: :func:`fit_thresholds`.

You have a score matrix (dense, or the sparse top-k CSR output of an extreme classifier) and the true 0/1
labels of the same documents; you want one decision threshold per label that maximises F-macro, with a
certificate of how close to optimal it is::

    import xmlthresh
    result = xmlthresh.fit_thresholds(scores, labels, strategy="domain")
    result.thresholds, result.f_macro, result.lower_bound, result.upper_bound
    predictions = result.predict(new_scores)          # boolean CSR, documents x labels
    result.save("thresholds.json"); xmlthresh.ThresholdResult.load("thresholds.json")

Every registered strategy is reachable by name, the peers of installed plugins included
(``python -m xmlthresh list``). This is the same computation as the CLI's oracle protocol on a score file
(``dataset=scores``): the same thresholds and the same numbers.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from xmlthresh.data.scores import ScoredSplit, check_native_threshold
from xmlthresh.config import plugins  # noqa: F401  (registries load the plugins when a name is not built in)
from xmlthresh.result import ThresholdResult
from xmlthresh.strategies import STRATEGIES, BaseStrategy
from xmlthresh.validation import (InputError, check_bool, check_label_names, check_labels, check_scores,
                                  match_frames)
from xmlthresh._util.registry import UnknownNameError


def fit_thresholds(scores: Any, labels: Any, strategy: str = "domain", beta: float = 1.0, *,
                   label_names: Sequence[Any] | None = None, include_predict_all: bool = True,
                   native_threshold: float | None = None, interval: float | None = None,
                   interval_resamples: int = 30, interval_seed: int = 0, new_documents: int | None = None,
                   **params: Any) -> ThresholdResult:
    """Fit per-label decision thresholds maximising F-macro = F_beta(mean precision, mean recall).

    Parameters
    ----------
    scores : array-like or scipy.sparse CSR matrix, shape (documents, labels)
        Dense float scores, a pandas DataFrame (its columns name the labels and are matched to ``labels``'
        by name), or the sparse top-k scores of an extreme classifier (missing entries are unscored and rank
        below every scored document; never densified).
    labels : array-like or scipy.sparse matrix, shape (documents, labels)
        0/1 or bool relevance of the same documents and labels.
    strategy : str, default "domain"
        A registered strategy: ``domain`` (the exact optimum with certified bounds), ``pooled`` (for
        thresholds applied to new documents), ``independent``, ``coordinate``, ``scut``, ``native``, the peers
        ``xcolumns_fw``, ``lml_thresholding``, ... (``xmlthresh list strategy``).
    beta : float, default 1.0
        The beta of F_beta (recall weighs beta times as much as precision).
    label_names : sequence, optional
        One name per label, saved with the thresholds (default: a DataFrame's columns, else 0..n-1).
    include_predict_all : bool, default True
        Whether "predict every document" is a candidate for a label.
    native_threshold : float, optional
        The scores' own decision threshold (0.5 for probabilities, 0 for margins), which ``strategy="native"``
        and ``fallback="native"`` use.
    interval : float, optional
        A level in (0, 1), e.g. 0.9, to also get ``f_macro_interval``: where the F-macro of these thresholds on
        ``new_documents`` new documents of the same distribution falls with that probability, from
        ``interval_resamples`` bootstrap refits drawn with ``interval_seed`` (docs/interval.md measures its
        coverage). It costs that many refits, so it is off by default.
    interval_resamples, interval_seed, new_documents : int
        The bootstrap's size, seed and the number of new documents (default: as many as fitted).
    **params
        The strategy's parameters (``refine="bnb"``, ``smoothing=10``, ...).

    Returns
    -------
    ThresholdResult
        ``thresholds`` (a numpy array; ``to_series()`` for pandas), ``f_macro`` on the fit data, the certified
        ``lower_bound`` / ``upper_bound`` (None for a strategy without a certificate), ``predict``, ``save``.

    Raises
    ------
    InputError
        A subclass of ``ValueError``: scores or labels of the wrong shape or dtype, NaN, labels that are not
        0/1, an unknown strategy parameter or a value out of its range; the message says what to change.
    UnknownNameError
        An unknown strategy name (the message lists the known ones).

    Warns
    -----
    PredictAllWarning
        When more than half of the labels predict every document (such rules rarely transfer).

    Notes
    -----
    The certified bounds hold for *these* documents, not for new ones: ``domain`` is the exact optimum of the
    fit data, and fitted on one labelled sample and applied to another its thresholds drift to the ends of
    the PR curves. For thresholds applied to new documents use ``strategy="pooled"`` (``domain`` with
    precision smoothing, at most 20 predictions per fit positive and a fallback for labels without a fit
    positive; chosen on the development collection of the transfer study, docs/pooled.md), which
    :class:`~xmlthresh.ThresholdClassifier` uses by default, and ``interval`` for what to expect on new data.
    Labels without a relevant document are left out of F-macro (threshold +inf: never predict). Strategies
    of kind "uses test scores" (``xcolumns_bca``) choose their predictions on the scores they predict: the
    result has no per-label thresholds, and ``predict(scores)`` re-optimises on them.

    Examples
    --------
    >>> import numpy as np, xmlthresh
    >>> scores = np.array([[0.9, 0.2], [0.8, 0.7], [0.3, 0.6], [0.1, 0.1]])
    >>> labels = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> result = xmlthresh.fit_thresholds(scores, labels)
    >>> result.thresholds
    array([0.8, 0.6])
    >>> result.f_macro, result.lower_bound == result.upper_bound
    (1.0, True)
    >>> result.predict(np.array([[0.85, 0.65]])).toarray()
    array([[ True,  True]])
    """
    estimator = make_strategy(strategy, beta, params)
    unused = [key for key, value, default in (("interval_resamples", interval_resamples, 30),
                                               ("interval_seed", interval_seed, 0), ("new_documents", new_documents, None))
              if value != default]
    if interval is None and unused:  # they were dropped without a word
        raise InputError(f"{', '.join(unused)} set the population interval, which interval=<level> asks for (e.g. "
                         "interval=0.9); without it they do nothing")
    if interval is not None:
        from xmlthresh.strategies.interval import check_interval

        check_interval(interval, interval_resamples)
        if isinstance(interval_seed, bool) or not isinstance(interval_seed, (int, np.integer)) or interval_seed < 0:
            raise InputError(f"interval_seed must be an integer >= 0, got {interval_seed!r}")
        if new_documents is not None and (isinstance(new_documents, bool)
                                          or not isinstance(new_documents, (int, np.integer)) or new_documents < 1):
            raise InputError(f"new_documents must be a positive integer or None, got {new_documents!r}")
    include_predict_all = check_bool("include_predict_all", include_predict_all)
    scores, labels, frame_names = align_frames(scores, labels)
    if label_names is None:
        label_names = frame_names
    elif frame_names is not None and frame_names != list(range(len(frame_names))):
        given = [str(name) for name in np.asarray(label_names, dtype=object).ravel()]
        if given != [str(name) for name in frame_names]:  # one of the two names was dropped without a word
            raise InputError(f"label_names {given[:4]}{' ...' if len(given) > 4 else ''} differ from the DataFrame's "
                             f"column names {frame_names[:4]}{' ...' if len(frame_names) > 4 else ''}, which name "
                             "the labels already; drop label_names, or rename the columns")
    scores = check_scores(scores)
    labels = check_labels(labels, scores.shape)
    names = _label_names(label_names, scores.shape[1])
    split = ScoredSplit(scores, labels, name="fit", include_predict_all=include_predict_all,
                        native_threshold=check_native_threshold(native_threshold, "fit_thresholds"))
    started = time.perf_counter()
    estimator.fit_scores(split)
    seconds = time.perf_counter() - started
    report = {**estimator.report(), "strategy": strategy, "kind": estimator.kind, "beta": estimator.beta,
              "include_predict_all": bool(include_predict_all), "native_threshold": split.native_threshold,
              "n_labels": int(np.count_nonzero(estimator.kept_labels_)), "n_docs": int(split.n_docs),
              "fit_seconds": seconds}
    thresholds = getattr(estimator, "score_thresholds_", None)
    found: dict[str, Any] = {}
    if interval is not None:
        from xmlthresh.strategies.interval import out_of_bootstrap_interval

        found = out_of_bootstrap_interval(estimator, split, interval, interval_resamples, seed=int(interval_seed),
                                          apparent=estimator.f_macro_, new_documents=new_documents)
        report.update(found)
    ends = found.get("f_macro_interval")
    return ThresholdResult(
        thresholds=None if thresholds is None else np.array(thresholds, dtype=np.float64),
        f_macro=float(estimator.f_macro_),
        lower_bound=estimator.lower_bound_,
        upper_bound=estimator.upper_bound_,
        strategy=strategy,
        params=estimator.get_params(),
        beta=estimator.beta,
        kind=estimator.kind,
        label_names=names,
        include_predict_all=bool(include_predict_all),
        rule=None if thresholds is not None else estimator.rule_state(),
        f_macro_interval=None if ends is None else (float(ends[0]), float(ends[1])),
        interval_level=None if interval is None else float(interval),
        _report=report,
        _estimator=estimator,
    )


def make_strategy(name: str, beta: float, params: dict[str, Any]) -> BaseStrategy:
    """An unfitted strategy by registry name (a plugin's name loads the plugins), with its parameters checked."""
    if not isinstance(name, str):
        given = getattr(name, "registry_name", "") or getattr(type(name), "registry_name", "")
        hint = f"strategy={given!r}" if given else "strategy='domain'"
        what = f"the class {name.__name__}" if isinstance(name, type) else f"a {type(name).__name__}"
        raise InputError(f"strategy must be a strategy's name (text), got {what}; e.g. {hint}, its parameters as "
                         "keyword arguments")
    if name not in STRATEGIES:
        call = _preset_as_call(name)
        if call is not None:
            raise UnknownNameError(f"strategy {name!r} is a preset of the command line (strategy={name}), not a "
                                   f"strategy; in Python it reads {call}")
    return STRATEGIES.build(name, {"beta": beta, **params})  # a plugin's name loads the plugins


def _preset_as_call(name: str) -> str | None:
    """``fit_thresholds(S, Y, 'domain', min_precision=0.1)`` for a strategy preset of the command line
    (``transfer/domain_floor``): its strategy and the parameters it sets apart from that strategy's own option;
    None when ``name`` is no preset (or the framework that composes them is not installed)."""
    from xmlthresh.config.options import options

    if name not in [option.name for option in options("strategy")]:
        return None
    try:
        from xmlthresh.config.compose import compose

        preset = dict(compose([f"strategy={name}"])["strategy"])
        base = dict(compose([f"strategy={preset['name']}"])["strategy"])
    except Exception:  # noqa: BLE001 - without Hydra (the lean install) or a broken option: the plain refusal
        return None
    changed = "".join(f", {key}={value!r}" for key, value in preset.items() if key != "name" and base.get(key) != value)
    return f"fit_thresholds(scores, labels, {preset['name']!r}{changed})"


def _label_names(label_names: Sequence[Any] | None, n_labels: int) -> np.ndarray:
    if label_names is None:
        return np.arange(n_labels)
    return check_label_names(label_names, n_labels)


def align_frames(scores: Any, labels: Any) -> tuple[Any, Any, list[Any] | None]:
    """pandas DataFrames of scores and labels matched by name, as pandas users expect, not by position (label
    columns in another order gave another F-macro without a word): the labels' columns and rows are put in
    the order of the scores'; columns or rows that do not match are an :class:`InputError`. Returns the two
    inputs (arrays) and the scores' column names (the label names), or the inputs unchanged and None when the
    scores are not a DataFrame."""
    if not any(type(given).__module__.startswith("pandas") for given in (scores, labels)):
        return scores, labels, None  # no DataFrame: pandas is not even imported
    import pandas as pd

    for frame, what in ((scores, "scores"), (labels, "labels")):
        if isinstance(frame, pd.DataFrame) and isinstance(frame.columns, pd.MultiIndex):
            raise InputError(f"the {what}' DataFrame has MultiIndex columns ({frame.columns.nlevels} levels); the "
                             "labels need one name each: flatten them first, e.g. frame.columns = "
                             "['/'.join(map(str, c)) for c in frame.columns]")
    if not isinstance(scores, pd.DataFrame):
        if isinstance(labels, pd.DataFrame):
            return scores, labels.to_numpy(), list(labels.columns)
        return scores, labels, None
    names = list(scores.columns)
    if len(set(names)) != len(names):
        repeated = scores.columns[scores.columns.duplicated()][0]
        raise InputError(f"the scores' DataFrame repeats the column {repeated!r}; every label needs a column of its own")
    if isinstance(labels, pd.DataFrame):
        matched = match_frames(scores, labels, ("scores", "labels"), ("the scores'", "the labels'"))
        labels = _frame_values(matched, "labels")
    return _frame_values(scores, "scores"), labels, names


def _frame_values(frame: Any, what: str) -> np.ndarray:
    """A DataFrame's values as a plain array: pandas' nullable dtypes (``Float64``, ``Int64``, ``boolean``) give
    object arrays otherwise, which the checks refuse without saying why; a missing value (``pd.NA``) of them
    becomes NaN and is then reported as such."""
    if all(isinstance(dtype, np.dtype) and dtype.kind in "biuf" for dtype in frame.dtypes):
        return frame.to_numpy()
    try:
        return frame.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise InputError(f"the {what}' DataFrame holds columns that are not numbers (dtypes: "
                         f"{sorted(set(map(str, frame.dtypes)))}); convert them, e.g. frame.astype(float)") from None


def load_dataset(name: str | None = None, /, *, seed: int = 0, **params: Any) -> Any:
    """Load a data set by its option name, as the command line loads it.

    Raw files are looked up under ``$XMLTHRESH_DATA`` (downloaded and verified on first use when their
    origin is public), derived caches go to ``$XMLTHRESH_CACHE``. Needs the framework extra
    (``pip install "xmlthresh[bench]"``): the options are composed by Hydra as on the command line.

    Parameters
    ----------
    name : str
        The option name (``"espgame"``, ``"corel5k"``, ``"synthetic_xmc"``, ...: what ``xmlthresh list
        dataset`` shows).
    seed : int, default 0
        The run seed that options refer to as ``${seed}`` (the validation split of a Mulan set, ...).
    **params
        Overrides of the option's parameters (``first_n_labels=100``; ``name=`` too:
        ``load_dataset("mulan", name="emotions")``).

    Returns
    -------
    RankedLists or ScoreData or MultiLabelData
        :class:`~xmlthresh.data.ranked_lists.RankedLists` for ranked-list files and generators (what
        ``ThresholdStrategy.fit_lists`` fits), :class:`~xmlthresh.data.multilabel.ScoreData` for score files
        and simulated rankers, :class:`~xmlthresh.data.multilabel.MultiLabelData` for features and labels
        (Mulan, the Extreme Classification Repository).

    Raises
    ------
    UnknownNameError
        ``name`` is not a dataset option (the message lists the known ones).
    ModuleNotFoundError
        The framework extra is not installed (the message names the pip command).
    InputError
        A parameter the data set does not take, or a value out of its range.

    Examples
    --------
    The embedded synthetic data set (200 labels, 2,000 documents, generated in-process):

    >>> import xmlthresh
    >>> lists = xmlthresh.load_dataset("synthetic")
    >>> lists.n_labels, lists.num_docs
    (200, 2000)
    >>> from xmlthresh.strategies import STRATEGIES
    >>> model = STRATEGIES.get("domain")(beta=1.0).fit_lists(lists)
    >>> round(model.f_macro_, 4), model.lower_bound_ <= model.f_macro_ <= model.upper_bound_
    (0.3746, True)
    """
    from xmlthresh.datasets import DATASETS
    from xmlthresh.config.options import options
    from xmlthresh._util.extras import framework_required
    from xmlthresh._util.registry import UnknownNameError
    from xmlthresh.config.seeds import run_seed

    known = [option.name for option in options("dataset")]
    if name is None:  # load_dataset(name="synthetic"): name= is the setting of the options that have one
        raise InputError(f"load_dataset needs the dataset option as its first argument (load_dataset("
                         f"{params.get('name', 'synthetic')!r})); name= sets the parameter of the options that have "
                         "one (load_dataset('mulan', name='emotions'))")
    if name not in known:
        raise UnknownNameError(f"unknown dataset {name!r}; known: {', '.join(known)}")
    try:  # the options are composed as the command line composes them: by Hydra, part of the framework
        from xmlthresh.config.compose import compose

        option = compose([f"dataset={name}", f"seed={run_seed(seed)}"])["dataset"]
    except ModuleNotFoundError as exc:
        raise framework_required(exc, "load_dataset") from None
    option.update(params)
    loader = option.pop("loader", None) or option.get("name")
    try:
        return DATASETS.build(loader, option).load()
    except ModuleNotFoundError as exc:  # a reader of the framework (liac-arff for Mulan's files, ...)
        raise framework_required(exc, f"load_dataset({name!r})") from None
