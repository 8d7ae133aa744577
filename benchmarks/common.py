"""Helpers shared by ``run.py`` and ``scaling.py``: timing, peak memory, machine description, markdown.

Timing: every measurement records wall time (``time.perf_counter``) and CPU time of the process
(``time.process_time``); the machine may be shared, so the CPU time is the number to compare and the ratios
are computed on it. A step is repeated and the median reported.

Peak memory: the Linux kernel keeps the high-water mark of the resident set (``VmHWM`` in
``/proc/self/status``); writing ``5`` to ``/proc/self/clear_refs`` resets it to the current RSS. Resetting
before a step and reading after it gives the peak RSS *during that step* in a long-lived process. Where that
is not available (not Linux), only the process's ``ru_maxrss`` is reported.
"""

from __future__ import annotations

import gc
import os
import platform
import re
import resource
import shlex
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

PROJECT_ROOT = Path(__file__).resolve().parents[1]
README_START = "<!-- benchmark:start -->"
README_END = "<!-- benchmark:end -->"


def ensure_data_env() -> None:
    """Point XMLTHRESH_DATA at the shared pre-filled data beside the checkout when unset (as the Makefile)."""
    shared = PROJECT_ROOT.parent / "shared" / "datasets"
    if "XMLTHRESH_DATA" not in os.environ and (shared / "README.md").is_file():
        os.environ["XMLTHRESH_DATA"] = str(shared)


# ---------------------------------------------------------------------------------------------- memory
def _status_kb(field_name: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_mb() -> float | None:
    kb = _status_kb("VmRSS")
    return None if kb is None else kb / 1024


_peak_before_resets = 0.0  # the process's peak RSS up to the last reset (a reset also lowers ru_maxrss)


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark to the current RSS; False where not supported.

    The mark reset is the one ``getrusage`` reports as ``ru_maxrss`` too: the peak so far is kept here, and
    :func:`max_rss_mb` combines both."""
    global _peak_before_resets
    _peak_before_resets = max(_peak_before_resets, peak_mb() or 0.0,
                              resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        return True
    except OSError:
        return False


def peak_mb() -> float | None:
    """Peak RSS since the last :func:`reset_peak` (or since the start), MB."""
    kb = _status_kb("VmHWM")
    return None if kb is None else kb / 1024


def max_rss_mb() -> float:
    """Peak RSS of this process over its whole life, MB (ru_maxrss, KiB on Linux, and the peaks before any
    :func:`reset_peak`)."""
    return max(_peak_before_resets, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


# ---------------------------------------------------------------------------------------------- timing
@dataclass
class Timing:
    """Medians over the repetitions of one step."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    peak_mb: float | None = None  # max over repetitions of the peak RSS during the step
    extra_mb: float | None = None  # ... minus the RSS just before the step
    note: str = ""

    @property
    def wall_s(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_s(self) -> float:
        return statistics.median(self.cpu)

    @property
    def n(self) -> int:
        return len(self.cpu)


def measure(run: Callable[[], Any], repeats: int, prepare: Callable[[], Any] | None = None,
            budget_s: float | None = None) -> tuple[Timing, Any]:
    """Run ``run(prepared)`` (or ``run()``) ``repeats`` times; ``prepare`` (untimed) makes its input each time.

    Stops repeating once one repetition took more than ``budget_s`` CPU seconds (noted). Returns the timing
    and the last result.
    """
    timing = Timing()
    result = None
    for rep in range(max(1, repeats)):
        arg = prepare() if prepare is not None else None
        gc.collect()
        before = rss_mb()
        tracked = reset_peak()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        result = run(arg) if prepare is not None else run()
        timing.cpu.append(time.process_time() - cpu0)
        timing.wall.append(time.perf_counter() - wall0)
        if tracked:
            peak = peak_mb()
            if peak is not None:
                timing.peak_mb = max(timing.peak_mb or 0.0, peak)
                if before is not None:
                    timing.extra_mb = max(timing.extra_mb or 0.0, peak - before)
        del arg
        if budget_s is not None and timing.cpu[-1] > budget_s and rep + 1 < repeats:
            timing.note = f"repeats cut to {rep + 1}: one run took {timing.cpu[-1]:.0f} s CPU > budget {budget_s:g} s"
            break
    return timing, result


# ---------------------------------------------------------------------------------------------- machine
def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    match = re.search(r"^model name\s*:\s*(.+)$", text, flags=re.MULTILINE)
    return match.group(1).strip() if match else platform.machine()


def memory_gb() -> tuple[float | None, float | None]:
    """(total, available) memory of the machine in GB, from /proc/meminfo."""
    values: dict[str, float] = {}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("MemTotal", "MemAvailable"):
                values[key] = int(rest.split()[0]) / 1024**2
    except OSError:
        pass
    return values.get("MemTotal"), values.get("MemAvailable")


def machine_description() -> dict[str, str]:
    import numba
    import numpy

    total, _ = memory_gb()
    try:
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    return {
        "cpu": cpu_model(),
        "cores": str(os.cpu_count()),
        "memory": f"{total:.0f} GB" if total else "n/a",
        "load average (1/5/15 min) at start": load,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "os": f"{platform.system()} {platform.release()}",
    }


def command_line() -> str:
    """The exact command of this run, with the data environment that changes its meaning."""
    env = " ".join(f"{key}={shlex.quote(os.environ[key])}" for key in ("XMLTHRESH_DATA", "XMLTHRESH_CACHE")
                   if key in os.environ)
    try:
        script = str(Path(sys.argv[0]).resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        script = sys.argv[0]
    python = sys.executable
    try:
        python = str(Path(python).relative_to(PROJECT_ROOT))
    except ValueError:
        pass
    command = " ".join(shlex.quote(part) for part in [python, script, *sys.argv[1:]])
    return f"{env} {command}".strip()


# ---------------------------------------------------------------------------------------------- markdown
def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def replace_between_markers(path: Path, body: str, start_marker: str = README_START,
                            end_marker: str = README_END) -> bool:
    """Replace the text between the benchmark markers of ``path`` by ``body``; False (and a message) when the
    file or its markers are missing. The markers themselves stay; nothing else in the file changes."""
    README_START, README_END = start_marker, end_marker  # noqa: N806 (the names of the messages below)
    if not path.is_file():
        print(f"{path} does not exist: benchmark section not updated", file=sys.stderr)
        return False
    text = path.read_text()
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < 0 or end < start:
        print(
            f"{path} has no benchmark section: add the lines {README_START} and {README_END} where the table "
            f"should go (the table is in the results file)",
            file=sys.stderr,
        )
        return False
    head = text[: start + len(README_START)]
    tail = text[end:]
    path.write_text(f"{head}\n{body.strip()}\n{tail}")
    return True


def fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds >= 100:
        return f"{seconds:.0f}"
    if seconds >= 1:
        return f"{seconds:.2f}"
    if seconds >= 0.001:
        return f"{seconds:.4f}"
    return f"{seconds:.1e}"


def fmt_ratio(value: float | None) -> str:
    if value is None:
        return "–"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def fmt_mb(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def metric_name(*parts: str) -> str:
    """An MLflow metric name (letters, digits, _ - . / and spaces only)."""
    return ".".join(re.sub(r"[^A-Za-z0-9_\-/ ]", "_", part) for part in parts)
