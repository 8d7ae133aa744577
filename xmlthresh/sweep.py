"""Sweeps (Hydra multirun) in MLflow: one parent run per sweep, one child run per job, resume.

:class:`MlflowSweepCallback` runs in the launching process. Before any job starts it creates the store, the
experiment and the parent run, and writes the parent's id to ``<sweep dir>/mlflow_parent_run_id`` -- every
job, in whatever worker process, reads it from there and logs its run as a child. When the sweep ends, the
parent records how many children there are, how many ran and finished, failed or were skipped, and how many
jobs were resumed (already finished in an earlier sweep: a job whose configuration hash matches a FINISHED
run is not run again unless ``force=true``; it still gets a child run, a copy of the run it reuses tagged
``xmlthresh.reused_run_id``, so the sweep and its report keep every job). A sweep with a failed job ends FAILED and the command exits with code 1.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from .files import write_text_atomic
from .tracking import (default_tracking_uri, finish_sweep_parent, log_files_to_run, start_sweep_parent,
                       sweep_children)
from .tracking_store import TrackingStoreError

log = logging.getLogger(__name__)

PARENT_FILE = "mlflow_parent_run_id"
RESUMED_DIR = "resumed"

#: failures of the last sweep finished in this process (read by the CLI to set the exit code)
last_sweep_failures = 0


def parent_run_id(sweep_dir: str | Path) -> str | None:
    """The sweep's parent run id, when the callback created one."""
    path = Path(sweep_dir) / PARENT_FILE
    return path.read_text().strip() if path.is_file() else None


def mark_resumed(sweep_dir: str | Path, job_num: int, run_id: str) -> None:
    """Remember that job ``job_num`` was already done (its earlier run id), for the parent's counts."""
    write_text_atomic(Path(sweep_dir) / RESUMED_DIR / f"{job_num}", run_id + "\n")


class MlflowSweepCallback(Callback):
    """Creates and closes the parent run of a sweep (see module docstring)."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        global last_sweep_failures
        last_sweep_failures = 0
        tracking = config.get("tracking", {})
        if not tracking.get("enabled", True):
            return
        uri = tracking.get("uri") or default_tracking_uri()
        sweep_dir = Path(config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        arguments = " ".join(config.hydra.overrides.task)
        launcher = OmegaConf.select(config, "hydra.launcher._target_", default="?")
        try:
            parent = start_sweep_parent(uri, tracking.get("experiment", "xmlthresh"), sweep_dir, arguments, launcher)
        except TrackingStoreError as exc:
            # Hydra turns a callback's exception into a warning and launches every job anyway (each failing
            # on the same store): stop the sweep here with the one line (SystemExit passes Hydra's handler)
            print(f"xmlthresh: error: {exc}", file=sys.stderr)
            raise SystemExit(1) from None
        write_text_atomic(sweep_dir / PARENT_FILE, parent + "\n")
        log.info("sweep parent run %s in %s", parent, uri)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        global last_sweep_failures
        tracking = config.get("tracking", {})
        sweep_dir = Path(config.hydra.sweep.dir)
        parent = parent_run_id(sweep_dir)
        if not tracking.get("enabled", True) or parent is None:
            return
        uri = tracking.get("uri")
        children = sweep_children(uri, parent)
        statuses = [child.status for child in children if not child.reused]
        skipped = sum(child.skipped for child in children if not child.reused)
        resumed = sum(child.reused for child in children)  # reused children: already finished before
        failed = statuses.count("FAILED")
        counts = {"n_children": len(children), "n_finished": statuses.count("FINISHED"), "n_failed": failed,
                  "n_skipped": skipped, "n_resumed": resumed}
        finish_sweep_parent(uri, parent, counts, failed=bool(failed))
        last_sweep_failures = failed
        log.info("sweep finished: %s", ", ".join(f"{k[2:]} {v}" for k, v in counts.items()))
        report = config.get("report", {}) or {}
        if report.get("enabled", False):
            self._write_report(config, parent, sweep_dir, report)

    @staticmethod
    def _write_report(config: DictConfig, parent: str, sweep_dir: Path, report: Any) -> None:
        """The comparison table of this sweep, in ``<sweep dir>/report/`` and as artifacts of the parent."""
        from .report import load_runs, write_report

        tracking = config.get("tracking", {})
        runs = load_runs(tracking.get("uri"), tracking.get("experiment", "xmlthresh"), sweep=parent,
                         metrics=list(report.get("metrics", []) or []))
        paths = write_report(runs, sweep_dir / "report", reference=report.get("reference", "domain"),
                             title=report.get("title", "xmlthresh sweep"))
        study = report.get("kind")
        if study:  # a study preset: its own report (from the jobs' result.json files) beside the comparison
            from .studies import write_study_report

            study_paths = write_study_report(str(study), sweep_dir)
            print(study_paths["markdown"].read_text())
            paths.update({f"{study}_{key}": value for key, value in study_paths.items()})
        log_files_to_run(tracking.get("uri"), parent, paths.values())
        print(paths["markdown"].read_text())
        print(f"report: {paths['html']}")


def job_context() -> dict[str, Any]:
    """Where this job runs: multirun or not, its number, sweep dir, launcher (empty outside Hydra)."""
    if not HydraConfig.initialized():
        return {}
    hydra_cfg = HydraConfig.get()
    multirun = hydra_cfg.mode.name == "MULTIRUN"
    return {
        "multirun": multirun,
        "job_num": int(hydra_cfg.job.num) if multirun else 0,
        "sweep_dir": str(hydra_cfg.sweep.dir) if multirun else None,
        "launcher": OmegaConf.select(hydra_cfg, "launcher._target_", default="?"),
    }
