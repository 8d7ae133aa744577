"""xmlthresh's warnings: Python warnings with categories of their own, so that a library user can filter,
silence or raise them (``warnings.filterwarnings("ignore", category=xmlthresh.PredictAllWarning)``) instead
of reading log lines; the command line routes them to its log (:func:`route_to_log`).

* :class:`XmlthreshWarning` -- the base of all of them;
* :class:`PredictAllWarning` -- many labels predict every document at the chosen thresholds (such rules
  win F-macro on the fit documents and rarely transfer);
* :class:`IgnoredSettingWarning` -- a setting that does not apply to this input (a score-only option on
  ranked lists) and was left out;
* :class:`DataWarning` -- a data file that is unusual but usable (lists that hold fewer relevant documents
  than their size).
"""

from __future__ import annotations

import logging
import warnings


class XmlthreshWarning(UserWarning):
    """The base category of every warning xmlthresh issues: filter it to treat them all alike.

    Examples
    --------
    >>> import warnings, xmlthresh
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", xmlthresh.XmlthreshWarning)  # every xmlthresh warning raises
    ...     issubclass(xmlthresh.PredictAllWarning, xmlthresh.XmlthreshWarning)
    True
    """


class PredictAllWarning(XmlthreshWarning):
    """More than half of the labels predict every document at the chosen thresholds.

    Such rules win F-macro on the fit documents and rarely transfer to new ones.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np, xmlthresh
    >>> rng = np.random.default_rng(0)
    >>> labels = rng.random((20, 30)) < 0.9  # most documents relevant, scores that rank at random
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", xmlthresh.PredictAllWarning)
    ...     result = xmlthresh.fit_thresholds(rng.random((20, 30)), labels)
    >>> print(caught[0].message)
    DomainStrategy: ... of 30 labels (... %) predict every document at the chosen thresholds; such rules rarely transfer (consider strategy='pooled' or min_precision)
    """


class IgnoredSettingWarning(XmlthreshWarning):
    """A setting that does not apply to the input it was given, and was left out.

    Examples
    --------
    >>> import warnings, xmlthresh
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.filterwarnings("ignore", category=xmlthresh.IgnoredSettingWarning)  # silence them
    ...     warnings.warn("a score-only option on ranked lists", xmlthresh.IgnoredSettingWarning)
    >>> caught
    []
    """


class DataWarning(XmlthreshWarning):
    """A data file that is unusual but usable as it is (lists that hold fewer relevant documents than their
    size, ...).

    Examples
    --------
    >>> import warnings, xmlthresh
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", xmlthresh.DataWarning)  # stop on an unusual data file
    ...     try:
    ...         warnings.warn("5 lists hold fewer relevant documents than their size", xmlthresh.DataWarning)
    ...     except xmlthresh.DataWarning as caught:
    ...         print(caught)
    5 lists hold fewer relevant documents than their size
    """


def warn(message: str, category: type[XmlthreshWarning] = XmlthreshWarning, stacklevel: int = 2) -> None:
    """Issue ``message`` as a warning of ``category`` (attributed ``stacklevel`` frames above the caller)."""
    warnings.warn(message, category, stacklevel=stacklevel + 1)


def route_to_log() -> None:
    """Show warnings as one log line each, as the command line's other messages are: logging's own
    ``captureWarnings`` sends them to the ``py.warnings`` logger, and a filter there keeps the first line
    (without the file name and source line for xmlthresh's own categories). The filters still decide which
    warnings are shown."""
    logging.captureWarnings(True)
    logger = logging.getLogger("py.warnings")
    if not any(isinstance(existing, _OneLine) for existing in logger.filters):
        logger.addFilter(_OneLine())


class _OneLine(logging.Filter):
    """Rewrites a captured warning (``<file>:<line>: <Category>: <message>`` plus the source line) to one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage().split("\n", 1)[0]
        for category in (XmlthreshWarning, *_subclasses(XmlthreshWarning)):
            marker = f": {category.__name__}: "
            if marker in text:
                text = text[text.index(marker) + 2:]
                break
        record.msg, record.args = text, ()
        return True


def _subclasses(category: type) -> list[type]:
    found = []
    for sub in category.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found
