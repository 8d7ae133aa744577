"""The Hydra application behind ``xmlthresh ...`` (:mod:`xmlthresh.cli.entry`): one job per composed config.

The primary config and every built-in option group ship inside the package (``xmlthresh/conf/``), so an
installed package runs from any directory; the user's ``conf/`` and the plugins' option folders are joined
through ``hydra.searchpath`` (:func:`xmlthresh._util.paths.config_search_dirs`). Errors the user can fix
(bad data, unknown names, bad parameters, missing files) are shown as one readable line, exit code 1.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any, Sequence

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from xmlthresh._util.errors import first_line
from xmlthresh.cli.command_line import (REGISTRY_KEY, command_shape_message, empty_place_message,
                                        keys_of_swept_options, repeated_keys_note, unknown_option_message)
from xmlthresh.cli.hydra_messages import one_line_hydra_errors
from xmlthresh.config.compose import register_resolvers

log = logging.getLogger("xmlthresh")


def user_errors() -> tuple[type[BaseException], ...]:
    """The errors printed as one line without a traceback (:func:`xmlthresh._util.errors.user_error_types`)."""
    from xmlthresh._util.errors import user_error_types

    return user_error_types()


def run(args: Sequence[str] | None = None) -> None:
    """The command line's Hydra application, after the checks of the command line as typed (one line, exit
    code 1: :mod:`xmlthresh.cli.command_line`); Hydra's own errors about the command line or the composition (a
    key that is not in the config, a malformed override) are one line too
    (:mod:`xmlthresh.cli.hydra_messages`)."""
    from xmlthresh.config.schema import switch_override_problem

    given = sys.argv[1:] if args is None else args
    message = (unknown_option_message(given) or switch_override_problem(given) or empty_place_message(given)
               or command_shape_message(given))
    if message is not None:
        print(f"xmlthresh: error: {message}", file=sys.stderr)
        sys.exit(1)
    note = repeated_keys_note(given)
    if note is not None:
        print(f"xmlthresh: note: {note}", file=sys.stderr)
    sys.argv[1:] = keys_of_swept_options(given)
    with one_line_hydra_errors():
        hydra_main()


def decode_interpolated_text(node: Any, resolved: Any) -> None:
    """In ``resolved`` (``node`` resolved), each value given as an interpolation whose result is text that
    reads as a number or a switch (``beta=${oc.env:B}`` with ``B=2``: OmegaConf's ``oc.env`` gives text) as
    that number or switch, as the same text typed on the command line would be; other text stays text (a
    path). Why: the number checks refused "'2' (str)", and the fix (``oc.decode``) was nowhere said."""
    import yaml
    from omegaconf import DictConfig, ListConfig

    keys = list(node.keys()) if isinstance(node, DictConfig) else range(len(node)) if isinstance(node, ListConfig) else []
    for key in keys:
        value = resolved[key]
        if OmegaConf.is_interpolation(node, key):
            if isinstance(value, str):
                try:
                    decoded = yaml.safe_load(value)
                except yaml.YAMLError:
                    continue
                if isinstance(decoded, (bool, int, float)):
                    resolved[key] = decoded
        elif isinstance(value, (dict, list)):
            decode_interpolated_text(node[key], value)


def option_file_problem(container: dict, choices: dict) -> str | None:
    """What is wrong with an option file (the user's ``conf/``, a plugin's) that composed without an error: an
    option with nothing to build (an empty file, or no ``name:``; a traceback ``KeyError: 'name'`` later), and a
    preset whose keys landed under ``experiment.*`` (its file lacks ``# @package _global_``, so ``beta: 2`` there
    did nothing, without a word). None when every chosen option is whole."""
    for group, key in REGISTRY_KEY.items():
        option = container.get(group)
        chosen = choices.get(group)
        if chosen is None or (group == "ranker" and option is None):
            continue
        if not isinstance(option, dict) or not (option.get(key) or (group == "dataset" and option.get("name"))):
            return (f"{group}={chosen}: the option names nothing to build: its file ({group}/{chosen}.yaml) is empty "
                    f"or lacks '{key}: <a registered {group}>' (xmlthresh list {group} shows the options)")
    preset = container.get("experiment")
    if isinstance(preset, dict) and preset:
        return (f"experiment={choices.get('experiment')}: its settings ({', '.join(map(str, list(preset)[:5]))}) "
                "landed under experiment.* and would do nothing: a preset's file starts with the line "
                "'# @package _global_' (as the packaged presets do)")
    return None


register_resolvers()


@hydra.main(version_base="1.3", config_path="pkg://xmlthresh.conf", config_name="config")
def hydra_main(cfg: DictConfig) -> float | None:
    """One job of a run or of a sweep (Hydra calls it with the composed config)."""
    from xmlthresh.run.job import run_job, summary  # heavy imports after Hydra parsed the command line
    from xmlthresh.run.sweep import job_context, record_job_outcome

    register_resolvers()
    from xmlthresh._util.notices import route_to_log
    from xmlthresh.config.schema import unknown_top_level_keys

    route_to_log()  # a warning is a log line of the job, in its log file too

    unknown = unknown_top_level_keys(cfg.keys())
    if unknown:  # the struct-open schema lets a user's group in; a key nothing declares is a typo
        print(f"xmlthresh: error: unknown top-level key(s) {', '.join(unknown)}; the settings are listed by "
              "xmlthresh --help (xmlthresh --cfg job shows them with their values)", file=sys.stderr)
        sys.exit(1)
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        container = OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as exc:  # an interpolation that does not resolve (${oc.env:UNSET}, ${nosuch})
        where = f" (in {exc.full_key})" if getattr(exc, "full_key", None) else ""
        print(f"xmlthresh: error: {first_line(exc)}{where}; set what it refers to, or give the value itself",
              file=sys.stderr)
        sys.exit(1)
    decode_interpolated_text(cfg, container)
    problem = option_file_problem(container, dict(HydraConfig.get().runtime.choices))
    if problem is not None:
        print(f"xmlthresh: error: {problem}", file=sys.stderr)
        sys.exit(1)
    tracking = container.get("tracking")
    if isinstance(tracking, dict) and tracking.get("uri"):  # relative to where the command started, not the job's
        from xmlthresh.tracking.store import absolute_sqlite_uri  # folder (hydra.job.chdir=true)

        tracking["uri"] = absolute_sqlite_uri(str(tracking["uri"]), HydraConfig.get().runtime.cwd)
    context = job_context()
    if not context.get("multirun"):  # a sweep checks this once, for the keys it varies (run.sweep)
        from xmlthresh.config.options import unread_task_keys

        swept = OmegaConf.select(HydraConfig.get(), "sweeper.params") or {}
        if swept:  # a preset's sweep run as one job (hydra.mode=RUN): its sweep was dropped without a word
            print(f"xmlthresh: error: this configuration is a sweep (hydra.sweeper.params: {', '.join(swept)}) "
                  "run as a single job; drop hydra.mode=RUN (or run it with -m)", file=sys.stderr)
            sys.exit(1)

        sweep_only = [override.split("=", 1)[0].lstrip("+") for override in context.get("override_list", [])
                      if override.lstrip("+").startswith(("report.", "force="))]
        if sweep_only:  # harmless, but the user expected them to do something
            print(f"xmlthresh: note: {', '.join(sweep_only)} act on sweeps (-m); this single run does not read "
                  f"{'it' if len(sweep_only) == 1 else 'them'}", file=sys.stderr)
        task = str(cfg.get("task", "thresholds"))
        unread = unread_task_keys(task, context.get("override_list", []))
        if unread:
            print(f"xmlthresh: error: task={task} does not read {', '.join(unread)}; drop them, or run the task "
                  "they belong to", file=sys.stderr)
            sys.exit(1)
    if context.get("multirun"):
        from xmlthresh.run.parent_watch import watch_parent_if_sweep_worker

        watch_parent_if_sweep_worker()  # a joblib worker must not outlive a launcher killed with kill -9
    try:
        result = run_job(container, run_dir, resolved_yaml=OmegaConf.to_yaml(cfg, resolve=True), context=context)
    except Exception as exc:
        if isinstance(exc, MemoryError):  # raised deep in numpy, far from the option that caused it
            from xmlthresh._util.errors import memory_message

            exc = MemoryError(memory_message(exc, context.get("override_list", [])))
        from xmlthresh.tracking.mlflow_runs import mlflow_error_types

        if isinstance(exc, mlflow_error_types()):  # a store or server that refused a request (a 404 of a proxy)
            from xmlthresh._util.errors import UserFacingError

            exc = UserFacingError(
                f"the tracking store {container.get('tracking', {}).get('uri') or 'runs/mlflow.db'} refused a request "
                f"({first_line(exc)}); fix tracking.uri (or run with tracking.enabled=false); a run that finished "
                "is kept and sent by xmlthresh sync once the store works")
        if context.get("multirun"):
            # one failing job must not stop the sweep: its MLflow run is FAILED, the parent counts it
            if isinstance(exc, (*user_errors(), MemoryError)):
                log.error("job %s failed: %s", context.get("job_num"), exc)
            else:
                log.exception("job %s failed", context.get("job_num"))
            print(f"xmlthresh: job {context.get('job_num')} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            record_job_outcome(context["sweep_dir"], context["job_num"], "failed")
            return None
        if isinstance(exc, (*user_errors(), MemoryError)):
            print(f"xmlthresh: error: {exc}", file=sys.stderr)
            sys.exit(1)
        from xmlthresh._util.places import placement_message

        message = placement_message(exc)
        if message is not None:  # a place the job writes to: one line here, before Hydra adds its own
            print(f"xmlthresh: error: {message}", file=sys.stderr)
            sys.exit(1)
        raise
    print(summary(result))
    if context.get("multirun"):  # for the launching terminal's progress line
        outcome = "resumed" if result.get("resumed_from") else "skipped" if result.get("skipped") else "done"
        record_job_outcome(context["sweep_dir"], context["job_num"], outcome)
    headline = result.get("rel_loss_approx") if result.get("task") == "cde" else result.get("f_macro")
    return None if result.get("skipped") or headline is None else float(headline)
