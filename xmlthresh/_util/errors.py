"""The root of the errors a user can fix: every message of this kind says what is wrong and what to do.

:class:`InputError` is a ``ValueError`` (so ``except ValueError`` keeps working for library users); the
registry's :class:`~xmlthresh._util.registry.ConfigError` and the validators of :mod:`xmlthresh.validation`
raise it or its subclasses. It lives here, below every other module, so that the registry and the validators
share it without importing each other.
"""

from __future__ import annotations


class InputError(ValueError):
    """Invalid user input (scores, labels, thresholds files, options); the message says what to do.

    A ``ValueError``, so ``except ValueError`` catches it too. The command line prints it as one line
    (``xmlthresh: error: ...``) with exit code 1.

    Examples
    --------
    >>> import numpy as np, xmlthresh
    >>> try:
    ...     xmlthresh.fit_thresholds(np.zeros((3, 2)), np.zeros((3, 3)))
    ... except xmlthresh.InputError as error:
    ...     print(isinstance(error, ValueError))
    True
    """


class UserFacingError(Exception):
    """A base for errors of the user's environment that are not a ``ValueError`` (data that cannot be had, e.g.
    :class:`~xmlthresh.data.download.DataUnavailableError`): the entry points print them as one line."""


def user_error_types() -> tuple[type[BaseException], ...]:
    """Errors caused by the input, the configuration or the place files go (malformed files, inconsistent
    data and bad parameters are ValueErrors; unknown names, missing data, a plugin whose dependency is not
    installed, a full disk, a read-only directory, a tracking store that cannot be used): every entry point
    (the command line, ``xmlthresh explain``, ``python -m xmlthresh.report``) prints them as one line with exit
    code 1. The classes are imported when an error happens, not with this module."""
    from xmlthresh._util.files import WriteFailedError
    from xmlthresh._util.paths import CacheNotWritableError
    from xmlthresh._util.registry import UnavailableError, UnknownNameError

    return (ValueError, UserFacingError, UnknownNameError, UnavailableError, WriteFailedError, CacheNotWritableError)


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message (its type's name when the message is empty): what
    an entry point prints after ``error:``."""
    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__


#: an override whose value is at least this large is named as a size that may not fit in memory
LARGE_SIZE = 10_000


def memory_message(exc: MemoryError, overrides: "list[str] | tuple[str, ...]" = ()) -> str:
    """One line for a run that asked for more memory than the machine has: what could not be allocated, and
    the sizes given on the command line that are large enough to be the cause (the fix is to lower them).

    A ``MemoryError`` is raised deep inside numpy or another library, far from the option that caused it
    (``cde_dataset.n_train=1e12`` failed in the generator with "Unable to allocate 80.0 TiB"): without this
    line the user saw a traceback that named no option."""
    what = first_line(exc) if str(exc).strip() else "an allocation failed"
    large = [override.lstrip("+~") for override in overrides if _is_large(override.split("=", 1)[-1])]
    fix = (f"lower the sizes given ({', '.join(large)})" if large else
           "lower the sizes of the data set, the ranker or the estimator (xmlthresh --cfg job shows them)")
    return f"not enough memory for this run ({what}); {fix}"


def _is_large(text: str) -> bool:
    """Whether an override's value is a number, or a list holding one, of at least :data:`LARGE_SIZE`."""
    for part in text.strip("[]()").split(","):
        try:
            if abs(float(part)) >= LARGE_SIZE:
                return True
        except ValueError:
            continue
    return False
