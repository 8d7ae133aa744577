"""The registry of first-stage rankers (name -> estimator class), and which of them can run here.

Every ranker is registered whatever its optional dependencies: one whose dependency is missing is listed by
:func:`unavailable_rankers` with the install hint, and raises :class:`RankerUnavailableError` (same hint)
when it is fitted -- importing xmlthresh never fails because of it.
"""

from __future__ import annotations

from xmlthresh._util.registry import Registry

RANKERS: Registry = Registry("ranker", package="xmlthresh.rankers")


def unavailable_rankers() -> dict[str, str]:
    """Registered rankers that cannot run in this environment -> why, with the install hint."""
    reasons = {name: RANKERS.get(name).unavailable_reason() for name in RANKERS.names()}
    return {name: reason for name, reason in reasons.items() if reason}


def available_rankers() -> list[str]:
    """Names of the registered rankers whose dependencies are installed."""
    return [name for name in RANKERS.names() if not RANKERS.get(name).unavailable_reason()]
