"""The console entry point ends the process fast (os._exit after the usual exit handlers) without losing
output or the exit status."""

from __future__ import annotations

import subprocess
import sys


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xmlthresh", *args], capture_output=True, text=True, timeout=300)


def test_fast_exit_keeps_the_output_and_the_exit_status(tmp_path):
    done = _run("tracking.enabled=false", "plots=false", f"hydra.run.dir={tmp_path}/ok")
    assert done.returncode == 0, done.stderr
    assert "F-macro 0.3746035" in done.stdout and (tmp_path / "ok" / "result.json").is_file()
    assert "fitting domain on synthetic" in (tmp_path / "ok" / "xmlthresh.log").read_text()  # the log file is flushed
    failed = _run("beta=abc", "tracking.enabled=false", f"hydra.run.dir={tmp_path}/bad")
    assert failed.returncode == 1 and "xmlthresh: error: beta must be a number in" in failed.stderr


def test_the_fast_exit_does_not_wait_for_idle_joblib_workers():
    """A joblib sweep leaves loky's reusable workers idle (they linger 300 s); the fast exit must shut them down
    as the interpreter would, not join them: a joblib sweep's command used to hang 5 minutes after its last job.
    The exit handlers registered while the command ran (here: the one that prints) still run, and the exit code
    is the command's."""
    script = ("import sys, time, atexit\nsys.argv = ['xmlthresh', 'list']\nimport joblib\n"
              "from xmlthresh.cli import entry as cli\nstart = time.monotonic()\n"
              "def command():\n"
              "    assert joblib.Parallel(n_jobs=2)(joblib.delayed(abs)(-i) for i in range(4)) == [0, 1, 2, 3]\n"
              "    atexit.register(lambda: print(f'exit handlers after {time.monotonic() - start:.1f} s'))\n"
              "    sys.exit(3)\n"
              "cli.main = command\ncli.console()\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "exit handlers after" in proc.stdout
    assert float(proc.stdout.split("after ")[1].split(" s")[0]) < 60  # not loky's 300 s idle timeout


def test_main_called_as_a_function_returns():
    script = ("import sys\nsys.argv = ['xmlthresh', 'list']\nfrom xmlthresh.cli.entry import main\nmain()\n"
              "print('still here')\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("still here")


def test_the_first_run_of_a_version_says_once_that_it_compiles(tmp_path, monkeypatch, caplog):
    import logging

    from xmlthresh.run.jit_notice import announce_compilation, compilation_done

    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path))
    with caplog.at_level(logging.INFO, logger="xmlthresh"):
        assert announce_compilation()
        compilation_done()
        assert not announce_compilation()
    assert sum("compiling numba kernels" in record.message for record in caplog.records) == 1
