"""The Hydra application behind ``xmlthresh ...`` (:mod:`xmlthresh.cli`): one job per composed config.

The primary config and every built-in option group ship inside the package (``xmlthresh/conf/``), so an
installed package runs from any directory; the user's ``conf/`` and the plugins' option folders are joined
through ``hydra.searchpath`` (:func:`xmlthresh.paths.config_search_dirs`). Errors the user can fix
(bad data, unknown names, bad parameters, missing files) are shown as one readable line, exit code 1.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from .config import register_resolvers

log = logging.getLogger("xmlthresh")


def user_errors() -> tuple[type[BaseException], ...]:
    """Errors caused by the input or the configuration (malformed files, inconsistent data, bad parameters are
    ValueErrors; unknown names, missing data, a plugin whose dependency is not installed) or the place files
    go (a full disk, a read-only directory): reported as one line, without a traceback. Imported when an
    error happens, not with the module (``--help`` stays light)."""
    from .data.download import DataUnavailableError
    from .files import WriteFailedError
    from .registry import UnavailableError, UnknownNameError

    return (ValueError, DataUnavailableError, UnknownNameError, UnavailableError, WriteFailedError)


register_resolvers()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def hydra_main(cfg: DictConfig) -> float | None:
    """One job of a run or of a sweep (Hydra calls it with the composed config)."""
    from .job import run_job, summary  # heavy imports after Hydra parsed the command line
    from .sweep import job_context, record_job_outcome

    register_resolvers()
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    container = OmegaConf.to_container(cfg, resolve=True)
    context = job_context()
    try:
        result = run_job(container, run_dir, resolved_yaml=OmegaConf.to_yaml(cfg, resolve=True), context=context)
    except Exception as exc:
        if context.get("multirun"):
            # one failing job must not stop the sweep: its MLflow run is FAILED, the parent counts it
            if isinstance(exc, user_errors()):
                log.error("job %s failed: %s", context.get("job_num"), exc)
            else:
                log.exception("job %s failed", context.get("job_num"))
            print(f"xmlthresh: job {context.get('job_num')} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            record_job_outcome(context["sweep_dir"], context["job_num"], "failed")
            return None
        if isinstance(exc, user_errors()):
            print(f"xmlthresh: error: {exc}", file=sys.stderr)
            sys.exit(1)
        raise
    print(summary(result))
    if context.get("multirun"):  # for the launching terminal's progress line
        outcome = "resumed" if result.get("resumed_from") else "done"
        record_job_outcome(context["sweep_dir"], context["job_num"], outcome)
    headline = result.get("rel_loss_approx") if result.get("task") == "cde" else result.get("f_macro")
    return None if result.get("skipped") or headline is None else float(headline)
