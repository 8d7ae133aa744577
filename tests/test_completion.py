"""The command line explains itself: shell completion on the console script (``eval "$(xmlthresh -sc
install=bash)"``, issue 14) and ``--cfg job`` showing only the groups the chosen task uses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from xmlthresh.cli.entry import shows_job_config, task_config

SCRIPT = Path(sys.executable).parent / "xmlthresh"


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on PATH")
def test_bash_completion_of_the_console_script_completes_options():
    """What docs/cli.md (Shell completion) tells users to do, in a real bash: install the completion, then complete
    a word."""
    assert SCRIPT.is_file(), "the console script is declared in pyproject.toml [project.scripts]"
    script = ('eval "$(xmlthresh -sc install=bash)"; COMP_LINE="xmlthresh strategy=do"; COMP_POINT=${#COMP_LINE}; '
              'COMP_WORDS=(xmlthresh strategy=do); COMP_CWORD=1; hydra_bash_completion; '
              'printf "%s\\n" "${COMPREPLY[@]}"; complete -p xmlthresh')
    env = {**os.environ, "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert {"strategy=domain", "strategy=domain_fast"} <= set(lines) and "strategy=independent" not in lines
    assert lines[-1].endswith("-F hydra_bash_completion xmlthresh")


def test_cfg_job_is_recognised_only_for_the_whole_job_config():
    assert shows_job_config(["--cfg", "job"]) and shows_job_config(["task=cde", "-c", "job"])
    assert shows_job_config(["--cfg=job"]) and not shows_job_config(["--cfg=job", "--package=strategy"])
    assert not shows_job_config(["--cfg", "hydra"]) and not shows_job_config(["--cfg", "job", "-p", "strategy"])
    assert not shows_job_config(["-m", "--cfg", "job"]) and not shows_job_config(["strategy=domain"])


def test_task_config_drops_the_blocks_of_the_other_task():
    text = ("strategy:\n  name: domain\nestimator:\n  name: nnkcde\n  k: 5\nseed: 0\ntask: cde\ncde:\n  n_samples: 256\n"
            "beta: 1.0\ntracking:\n  enabled: true\n")
    shown = task_config(text)
    assert shown.splitlines()[0] == "# task=cde: not shown, as this task does not use them: strategy, beta"
    assert "estimator:\n  name: nnkcde\n  k: 5\n" in shown and "cde:\n  n_samples: 256\n" in shown
    assert "strategy:" not in shown and "beta:" not in shown and "tracking:\n  enabled: true\n" in shown
    thresholds = task_config(text.replace("task: cde", "task: thresholds"))
    assert "estimator" not in thresholds.split("\n", 1)[1] and "cde:" not in thresholds and "strategy:" in thresholds


def test_cfg_job_of_a_cde_job_shows_no_strategy(tmp_path):
    env = {**os.environ, "XMLTHRESH_HOME": str(tmp_path)}
    proc = subprocess.run([str(SCRIPT), "task=cde", "--cfg", "job"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    top = [line.split(":")[0] for line in proc.stdout.splitlines() if line[:1].isalpha()]
    assert {"estimator", "cde_dataset", "cde", "seed", "tracking"} <= set(top)
    assert not {"strategy", "dataset", "protocol", "ranker", "beta"} & set(top)
