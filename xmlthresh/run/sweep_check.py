"""The values a sweep varies, checked before any job: a Hydra callback that runs before the sweep's own
(:class:`xmlthresh.run.sweep.MlflowSweepCallback`, which makes the parent run), listed first in the primary
config's ``hydra.callbacks``.

Why a module of its own: the check builds each job's parts as the task does
(:func:`xmlthresh.run.threshold_task.build_parts`), and the sweep's bookkeeping sits below the tasks.
"""

from __future__ import annotations

import sys
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from xmlthresh.run.sweep import job_overrides, sweep_values


class SweptValueCheck(Callback):
    """Refuses a sweep with a value its job would refuse, before any job runs (one line, exit code 1)."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        problem = swept_value_problem(config)
        if problem is not None:
            print(f"xmlthresh: error: {problem}", file=sys.stderr)
            raise SystemExit(1)  # SystemExit passes Hydra's handler of callback errors, which would only warn


def swept_value_problem(config: DictConfig) -> str | None:
    """A value the sweep varies that its job would refuse before reading data, or None.

    Why: ``-m beta=1,abc`` ran job 0, then failed job 1 on the bad value and exited 1 after the work was done;
    every other setting is checked before any job. Each distinct swept value is checked once, in the first job
    that has it: that job's config is composed as Hydra will compose it and its parts are built by the
    registries' checked builders (:func:`xmlthresh.run.threshold_task.build_parts`; for ``task=cde`` its seed).
    Only errors of the user's input stop the sweep; anything else is left to the job, which reports it."""
    jobs = job_overrides(config)
    values = sweep_values(config) or {}
    swept = {key.lstrip("+~") for key, count in values.items() if count > 1}
    if not jobs or len(jobs) < 2 or not swept:
        return None
    from xmlthresh._util.errors import first_line, user_error_types
    from xmlthresh.config.compose import compose
    from xmlthresh.config.plugins import load_plugins
    from xmlthresh.config.seeds import run_seed
    from xmlthresh.run.threshold_task import build_parts

    load_plugins()  # a plugin's strategy or ranker is checked like a built-in one
    checked: set[str] = set()
    for job in jobs:
        new = [override for override in job
               if override.split("=", 1)[0].lstrip("+~") in swept and override not in checked]
        if not new:
            continue
        checked.update(new)
        try:
            cfg = compose([override for override in job if not override.lstrip("+~").startswith("hydra")])
            if str(cfg.get("task", "thresholds")) == "thresholds":
                build_parts(cfg)
            else:
                run_seed(cfg.get("seed", 0))
        except Exception as exc:  # noqa: BLE001 - only the user's input stops the sweep here
            if not isinstance(exc, user_error_types()):
                return None
            return f"{', '.join(new)}: {first_line(exc)} (checked before any job: none was run)"
    return None
