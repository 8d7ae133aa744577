"""Hydra's repeated compositions spared (xmlthresh.cli.hydra_shortcuts): every job of a sweep gets the config it
gets without them, with half the compositions."""

from __future__ import annotations

import os
import subprocess
import sys



_COUNTING_SWEEP = """
import sys
from hydra._internal.config_loader_impl import ConfigLoaderImpl
calls = []
original = ConfigLoaderImpl.load_configuration
def counted(self, *args, **kwargs):
    calls.append(1)
    return original(self, *args, **kwargs)
ConfigLoaderImpl.load_configuration = counted
sys.argv = ["xmlthresh", "-m", "strategy=domain,independent,coordinate", "dataset=example", "tracking.enabled=false",
            "hydra.sweep.dir=" + sys.argv[1]]
from xmlthresh.cli.entry import main
main()
print("COMPOSITIONS", len(calls))
"""


def test_a_sweep_composes_each_job_once_and_its_jobs_get_the_same_configs(tmp_path, isolated_home):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = {}
    for shortcuts in ("1", "0"):
        sweep_dir = tmp_path / f"sweep{shortcuts}"
        proc = subprocess.run([sys.executable, "-c", _COUNTING_SWEEP, str(sweep_dir)], capture_output=True, text=True,
                              env={**env, "XMLTHRESH_HYDRA_SHORTCUTS": shortcuts}, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        count = int(proc.stdout.rsplit("COMPOSITIONS", 1)[1])
        jobs = {}
        for job in sorted(p for p in sweep_dir.iterdir() if p.is_dir() and p.name.isdigit()):
            jobs[job.name] = tuple((job / ".hydra" / name).read_text().replace(str(sweep_dir), "<sweep dir>")
                                   for name in ("config.yaml", "overrides.yaml", "hydra.yaml"))
        runs[shortcuts] = (count, jobs)
    (with_count, with_jobs), (without_count, without_jobs) = runs["1"], runs["0"]
    assert len(with_jobs) == 3 and with_jobs == without_jobs
    # without: the mode check, the sweep's master config, and each job twice (the batch check, the launch)
    assert without_count == 2 + 2 * 3 and with_count == 1 + 3
