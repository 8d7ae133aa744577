"""The root of the errors a user can fix: every message of this kind says what is wrong and what to do.

:class:`InputError` is a ``ValueError`` (so ``except ValueError`` keeps working for library users); the
registry's :class:`~xmlthresh._util.registry.ConfigError` and the validators of :mod:`xmlthresh.validation`
raise it or its subclasses. It lives here, below every other module, so that the registry and the validators
share it without importing each other.
"""

from __future__ import annotations


class InputError(ValueError):
    """Invalid user input (scores, labels, thresholds files, options); the message says what to do."""
