"""Hydra 1.3 composes the whole config tree more often than a run needs: these context managers spare the
repetitions, without changing what any job receives.

Measured on this project's tree (about 30 option folders and the plugins' ones): one composition costs
0.25 s of CPU. A single run composed twice (once only to read ``hydra.mode``), every job of a sweep twice
(the sweeper composes each job to check the batch, the launcher composes it again to run it).

* :func:`mode_from_command_line` -- no composition to read ``hydra.mode`` when only ``-m`` can set it;
* :func:`compose_each_job_once` -- the launcher receives the config the sweeper's check composed.

Each one patches a Hydra internal for the duration of the block and restores it after;
``tests/test_hydra_shortcuts.py`` checks that a sweep's jobs get the configs they get without them.
Not done, measured: sharing the parsed config files between compositions. Hydra merges the overrides into
the loaded primary config in place, so every load needs a deep copy, which costs 0.2 of the 0.25 s saved.
"""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack, contextmanager
from typing import Any, Iterator, Sequence

#: arguments after which the config may set ``hydra.mode`` (a preset, an override, another primary config)
_MAY_SET_MODE = ("experiment", "mode", "hydra=", "--config", "-cn", "-cd", "-cp")


@contextmanager
def mode_from_command_line(args: Sequence[str]) -> Iterator[None]:
    """Spare Hydra composing the whole config once just to read ``hydra.mode`` (``Hydra.get_mode``).

    ``hydra.mode`` is set only by the presets (``experiment=...``: ``mode: MULTIRUN``) or an explicit override,
    and the primary config leaves it null. So when no argument mentions a preset, the mode, the ``hydra``
    group or another config (:data:`_MAY_SET_MODE`), ``get_mode`` answers None without composing: what it
    returns for a null ``hydra.mode``, after which Hydra takes the mode from ``-m`` as usual."""
    if any(token in arg for arg in args for token in _MAY_SET_MODE):
        yield
        return
    from hydra._internal.hydra import Hydra

    original = Hydra.get_mode
    Hydra.get_mode = lambda self, config_name, overrides: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        Hydra.get_mode = original  # type: ignore[method-assign]


@contextmanager
def compose_each_job_once() -> Iterator[None]:
    """The config a sweeper composes for one job to check the batch (``Sweeper.validate_batch_is_legal``:
    every job is composed before any runs, so that a bad override fails the sweep at once) is kept and
    handed to the launcher when it asks for the same job's config (``load_sweep_config`` with the same master
    config and overrides), instead of composing it a second time. The check only composes and discards, so
    each kept config goes to exactly one launcher call; calls from anywhere else compose as usual."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    original = ConfigLoaderImpl.load_sweep_config
    checked: dict[tuple[int, tuple[str, ...]], Any] = {}

    def load_sweep_config(self: ConfigLoaderImpl, master_config: Any, sweep_overrides: list[str]) -> Any:
        key = (id(master_config), tuple(sweep_overrides))
        if sys._getframe(1).f_code.co_name == "validate_batch_is_legal":
            checked[key] = original(self, master_config, sweep_overrides)
            return checked[key]
        if key in checked:
            return checked.pop(key)
        return original(self, master_config, sweep_overrides)

    ConfigLoaderImpl.load_sweep_config = load_sweep_config  # type: ignore[method-assign]
    try:
        yield
    finally:
        ConfigLoaderImpl.load_sweep_config = original  # type: ignore[method-assign]


@contextmanager
def fewer_compositions(args: Sequence[str]) -> Iterator[None]:
    """Both shortcuts of this module for one command line (none with ``XMLTHRESH_HYDRA_SHORTCUTS=0``)."""
    if os.environ.get("XMLTHRESH_HYDRA_SHORTCUTS") == "0":
        yield
        return
    with ExitStack() as stack:
        stack.enter_context(mode_from_command_line(args))
        stack.enter_context(compose_each_job_once())
        yield
