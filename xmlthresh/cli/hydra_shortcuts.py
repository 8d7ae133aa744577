"""Hydra 1.3 composes the whole config tree more often than a run needs: these context managers spare the
repetitions, without changing what any job receives.

Measured on this project's tree (about 30 option folders and the plugins' ones): one composition costs
0.25 s of CPU. A single run composed twice (once only to read ``hydra.mode``), every job of a sweep twice
(the sweeper composes each job to check the batch, the launcher composes it again to run it).

* :func:`mode_from_command_line` -- no composition to read ``hydra.mode`` when only ``-m`` can set it;
* :func:`compose_each_job_once` -- the launcher receives the config the sweeper's check composed;
* :func:`joblib_workers_compose_nothing` -- joblib's workers receive that config instead of composing it.

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


def execute_composed_job(sweep_config: Any, hydra_context: Any, task_function: Any,
                         singleton_state: dict[Any, Any]) -> Any:
    """One job of a joblib sweep in its worker, from the config the launching process composed (Hydra's
    ``hydra_joblib_launcher._core.execute_job`` without its ``load_sweep_config``)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.singleton import Singleton
    from hydra.core.utils import run_job, setup_globals

    setup_globals()
    Singleton.set_state(singleton_state)
    HydraConfig.instance().set_config(sweep_config)
    return run_job(hydra_context=hydra_context, config=sweep_config, task_function=task_function,
                   job_dir_key="hydra.sweep.dir", job_subdir_key="hydra.sweep.subdir")


def _launch_composed(launcher: Any, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Any:
    """Hydra's joblib ``_core.launch`` (same logging, same ``Parallel`` settings), except that each job's
    config is composed here, in the launching process -- where :func:`compose_each_job_once` hands over the
    one the batch check composed -- and sent to the worker, which no longer composes it again."""
    from pathlib import Path

    from hydra.core.singleton import Singleton
    from hydra.core.utils import JobReturn, configure_log, filter_overrides, setup_globals
    from hydra_plugins.hydra_joblib_launcher import _core
    from joblib import Parallel, delayed
    from omegaconf import open_dict

    setup_globals()
    configure_log(launcher.config.hydra.hydra_logging, launcher.config.hydra.verbose)
    sweep_dir = Path(str(launcher.config.hydra.sweep.dir))
    sweep_dir.mkdir(parents=True, exist_ok=True)
    joblib_cfg = launcher.joblib
    joblib_cfg["backend"] = "loky"  # as Hydra's: the threading backend is incompatible with Hydra
    _core.process_joblib_cfg(joblib_cfg)
    _core.log.info("Joblib.Parallel({}) is launching {} jobs".format(
        ",".join(f"{k}={v}" for k, v in joblib_cfg.items()), len(job_overrides)))
    _core.log.info(f"Launching jobs, sweep output dir : {sweep_dir}")
    configs = []
    for idx, overrides in enumerate(job_overrides):
        _core.log.info("\t#{} : {}".format(idx, " ".join(filter_overrides(overrides))))
        config = launcher.hydra_context.config_loader.load_sweep_config(launcher.config, list(overrides))
        with open_dict(config):
            config.hydra.job.id = f"{config.hydra.job.name}_{initial_job_idx + idx}"
            config.hydra.job.num = initial_job_idx + idx
        configs.append(config)
    singleton_state = Singleton.get_state()
    runs = Parallel(**joblib_cfg)(delayed(execute_composed_job)(config, launcher.hydra_context,
                                                                launcher.task_function, singleton_state)
                                  for config in configs)
    assert all(isinstance(run, JobReturn) for run in runs)
    return runs


@contextmanager
def joblib_workers_compose_nothing(args: Sequence[str]) -> Iterator[None]:
    """With ``hydra/launcher=joblib`` each worker composed its job's config again (0.25 s of CPU per job, on
    top of the batch check's composition in the launching process): :func:`_launch_composed` composes it
    once, where the check already did. Only for a command that can be a sweep (``-m`` or a preset: importing
    the plugin imports joblib), and a no-op without Hydra's joblib launcher plugin."""
    if not any(arg in ("-m", "--multirun") or "experiment" in arg for arg in args):
        yield
        return
    try:
        from hydra_plugins.hydra_joblib_launcher import _core
    except ImportError:
        yield
        return
    original = _core.launch
    _core.launch = _launch_composed
    try:
        yield
    finally:
        _core.launch = original


@contextmanager
def fewer_compositions(args: Sequence[str]) -> Iterator[None]:
    """The shortcuts of this module for one command line (none with ``XMLTHRESH_HYDRA_SHORTCUTS=0``)."""
    if os.environ.get("XMLTHRESH_HYDRA_SHORTCUTS") == "0":
        yield
        return
    with ExitStack() as stack:
        stack.enter_context(mode_from_command_line(args))
        stack.enter_context(compose_each_job_once())
        stack.enter_context(joblib_workers_compose_nothing(args))
        yield
