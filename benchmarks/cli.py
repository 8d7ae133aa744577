"""What a user waits for: whole commands of the command line, CPU and wall, warm and cold, next to the floor.

    python benchmarks/cli.py                 # every command, median of 5, the table of docs/benchmarks.md
    python benchmarks/cli.py --repeat 3 --no-wikilshtc --no-page

Each command runs as a fresh process (``python -m xmlthresh ...``) in a temporary project home (its own
``runs/`` and MLflow store, created by one untimed run first), so the numbers are those of a user's second
and later runs. CPU is user + system time of the process and its children (``RUSAGE_CHILDREN`` deltas);
wall is the elapsed time. A tracked single run sends its record to MLflow from a detached background
process (``tracking.sync=background``): the user does not wait for it, so "CPU s" is the command's
foreground CPU (all descendants less the background syncer, which notes its own CPU in the run's record)
and the syncer's CPU is its own column. After all commands every tracked run must be in the MLflow store
(checked with ``MlflowClient``; the table says how many). "cold" runs with an empty numba cache (``NUMBA_CACHE_DIR`` pointing at a new
directory), i.e. the first run on a fresh machine. The sweeps' CPU includes their joblib workers (this
process becomes the reaper of orphaned descendants, so the workers that outlive their launcher are counted).
The floor is ``python -c "import numpy, numba"`` measured in the same run, and every ratio is taken on CPU
against it. The sweep rows are 12-job sweeps (6 ranked-list strategies x espgame, example)
with the basic and the joblib launcher, reported per job.

Writes ``benchmarks/cli.md`` and, unless ``--no-page``, the table into docs/benchmarks.md between
``<!-- cli-benchmark:start -->`` and ``<!-- cli-benchmark:end -->``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import PROJECT_ROOT, ensure_data_env, machine_description, markdown_table, replace_between_markers

START, END = "<!-- cli-benchmark:start -->", "<!-- cli-benchmark:end -->"
SWEEP_STRATEGIES = "domain,domain_fast,independent,coordinate,linearization,linearization_region"

#: (label, arguments of python -m xmlthresh, or None for the floor); the issue's targets in the last column
COMMANDS = [
    ("floor: python -c 'import numpy, numba'", None, ""),
    ("xmlthresh (embedded default)", [], ""),
    ("strategy=domain dataset=espgame", ["strategy=domain", "dataset=espgame"], "<= 3.5 s"),
    ("... tracking.enabled=false plots=false", ["strategy=domain", "dataset=espgame", "tracking.enabled=false",
                                                "plots=false"], "<= 2x floor"),
    ("strategy=domain dataset=wikilshtc", ["strategy=domain", "dataset=wikilshtc"], "<= 4.5 s"),
    ("xmlthresh list", ["list"], "<= 1.5x floor"),
    ("xmlthresh --help", ["--help"], "<= 1.5x floor"),
]


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``): a joblib
    sweep's worker processes outlive their launcher (which ends with ``os._exit``), are reparented here instead
    of to init, and their CPU time reaches ``RUSAGE_CHILDREN`` when :func:`reap_orphans` waits for them.
    Without it the joblib rows would leave out the workers, i.e. the jobs themselves."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans(timeout: float = 120.0) -> None:
    """Wait for descendants left behind by the last command (see :func:`become_subreaper`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)
    print(f"warning: descendants still running {timeout:.0f} s after the command; their CPU is not counted",
          file=sys.stderr)


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(foreground CPU seconds of the command and every descendant, wall seconds of the command, CPU seconds of
    its background MLflow syncer) of one run; fails loudly when the command fails. The syncer is waited for
    (reaped) before the next command starts, so runs do not overlap."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sync = background_sync_cpu(proc.stdout)
    return total - sync, wall, sync


def background_sync_cpu(stdout: str) -> float:
    """The CPU seconds the background syncer of the run printed in ``stdout`` noted in its record (0 when the
    run sent nothing in the background; a syncer still running after the reaping timeout counts 0)."""
    if "sending in the background" not in stdout or "result: " not in stdout:
        return 0.0
    record = Path(stdout.split("result: ")[1].split()[0]).parent / "run_record.json"
    try:
        return float(json.loads(record.read_text()).get("sync_cpu_seconds", 0.0))
    except (OSError, ValueError):
        return 0.0


def median_run(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, float, float]:
    runs = [measure(argv, env) for _ in range(repeat)]
    return tuple(statistics.median(run[i] for run in runs) for i in range(3))


def mlflow_rows(home: Path) -> int:
    """Runs in the benchmark home's MLflow store (every experiment), read with ``MlflowClient``."""
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{home / 'runs' / 'mlflow.db'}")
    experiments = [e.experiment_id for e in client.search_experiments()]
    return len(client.search_runs(experiments, max_results=50_000)) if experiments else 0


def command(args: list[str] | None) -> list[str]:
    return [sys.executable, "-c", "import numpy, numba"] if args is None else [sys.executable, "-m", "xmlthresh", *args]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (the median is reported)")
    parser.add_argument("--cold-repeat", type=int, default=3, help="runs with an empty numba cache")
    parser.add_argument("--no-wikilshtc", action="store_true", help="skip the WikiLSHTC command")
    parser.add_argument("--no-sweeps", action="store_true", help="skip the 12-job sweeps")
    parser.add_argument("--only-sweeps", action="store_true",
                        help="only the floor and the 12-job sweeps (e.g. to compare two versions of the code)")
    parser.add_argument("--sweep-repeat", type=int, default=1, help="timed runs of each sweep (median)")
    parser.add_argument("--no-page", "--no-readme", dest="no_page", action="store_true",
                        help="do not update docs/benchmarks.md")
    args = parser.parse_args(argv)
    if args.only_sweeps:
        args.no_page = True  # a partial table never replaces the page's

    ensure_data_env()
    subreaper = become_subreaper()
    home = Path(tempfile.mkdtemp(prefix="xmlthresh-cli-bench-"))
    env = {**os.environ, "XMLTHRESH_HOME": str(home), "PYTHONPATH": str(PROJECT_ROOT),
           "XMLTHRESH_TRACKING_SYNC": "background"}  # the default a user gets
    tracked = 0  # tracked runs started, each must end up in MLflow
    measure(command(["dataset=espgame"]), env)  # creates the store, fills the caches: later runs are warm
    tracked += 1
    rows, cpu = [], {}
    for label, cmd, target in COMMANDS:
        if args.no_wikilshtc and cmd and "dataset=wikilshtc" in cmd:
            continue
        if args.only_sweeps and cmd is not None:
            continue
        measure(command(cmd), env)  # warm this command's caches
        cpu[label], wall, sync = median_run(command(cmd), env, args.repeat)
        if cmd is not None and cmd[:1] not in (["list"], ["--help"]) and "tracking.enabled=false" not in cmd:
            tracked += 1 + args.repeat
        rows.append([label, "warm", f"{cpu[label]:.2f}", f"{wall:.2f}", f"{sync:.2f}" if sync else "", target])
        print(f"{label}: warm CPU {cpu[label]:.2f} s, wall {wall:.2f} s, background sync {sync:.2f} s", file=sys.stderr)
    cold = []
    for _ in range(0 if args.only_sweeps else args.cold_repeat):
        cold_env = {**env, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="numba-cold-")}
        cold.append(measure(command([]), cold_env))
        tracked += 1
    if cold:
        cold_cpu, cold_wall, cold_sync = (statistics.median(run[i] for run in cold) for i in range(3))
        rows.append(["xmlthresh (embedded default)", "cold (empty numba cache)", f"{cold_cpu:.2f}",
                     f"{cold_wall:.2f}", f"{cold_sync:.2f}", "<= 2x warm"])
    if not args.no_sweeps:
        for launcher in ("basic", "joblib"):
            sweep = ["-m", f"strategy={SWEEP_STRATEGIES}", "dataset=espgame,example", "force=true"]
            if launcher == "joblib":
                sweep.append("hydra/launcher=joblib")
            measure(command(sweep), env)  # warm
            total_cpu, total_wall, _ = median_run(command(sweep), env, args.sweep_repeat)
            tracked += 13 * (1 + args.sweep_repeat)  # 12 children and the parent
            rows.append([f"12-job sweep, {launcher} launcher", "warm, per job", f"{total_cpu / 12:.2f}",
                         f"{total_wall / 12:.2f}", "", "<= 1 s per job"])
    subprocess.run(command(["sync", "--wait"]), env=env, capture_output=True, text=True, check=True)
    present = mlflow_rows(home)
    floor = cpu[COMMANDS[0][0]]
    for row in rows:
        row.insert(5, f"{float(row[2]) / floor:.1f}x")
    machine = machine_description()
    table = markdown_table(["command", "run", "CPU s", "wall s", "background sync CPU s", "CPU / floor", "target"],
                           rows)
    body = (f"Measured by `python benchmarks/cli.py` (median of {args.repeat}; cold: median of {args.cold_repeat}) on "
            f"{machine['cpu']}, {machine['cores']} cores, load {machine['load average (1/5/15 min) at start']}:\n\n"
            f"{table}\n\nCPU is that of the command and all its descendants"
            f"{'' if subreaper else ' except orphaned joblib workers (no subreaper here)'}, less the background "
            f"syncer of a single run (its own column). MLflow rows afterwards: {present} of the {tracked} tracked runs "
            f"(and sweep parents) the benchmark started.\n")
    if not args.only_sweeps:
        (PROJECT_ROOT / "benchmarks" / "cli.md").write_text(f"# Command-line timings\n\n{body}")
    print(body)
    if not args.no_page:
        replace_between_markers(PROJECT_ROOT / "docs" / "benchmarks.md", body, START, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
