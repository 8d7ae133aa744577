"""Console entry point: ``xmlthresh strategy=domain dataset=espgame beta=2`` (= ``python -m xmlthresh ...``).

Light on purpose: ``xmlthresh list`` and ``xmlthresh --help`` are answered from the option folders without
importing Hydra, a numerical library or a plugin; everything else goes to the Hydra application
(:mod:`xmlthresh.cli.hydra_app`), which imports the job's modules only after Hydra has parsed the command line.
``--hydra-help`` still shows Hydra's own flags; ``--cfg job`` shows the config of the chosen task only
(:func:`task_config`). Shell completion is Hydra's, on the console script: ``eval "$(xmlthresh -sc
install=bash)"`` (not ``python .../__main__.py -sc ...``: that file is not a script of its own).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import logging
import os
import re
import sys

from xmlthresh._util.places import hydra_output_folder, placement_message


def register_resolvers() -> None:
    """The resolvers the primary config uses (idempotent; see :func:`xmlthresh.config.compose.register_resolvers`)."""
    from xmlthresh.config.compose import register_resolvers as register

    register()


def main() -> None:
    """Console entry point (``xmlthresh ...`` and ``python -m xmlthresh ...``).

    ``xmlthresh list`` lists every option of every group and the plugins (read from the option folders:
    nothing heavy is imported); ``xmlthresh list --check`` also imports the plugins and every registered class;
    ``xmlthresh explain <overrides>`` spells out a small threshold problem (:mod:`xmlthresh.cli.explain`);
    ``xmlthresh sync [--wait]`` sends the run records not yet in MLflow (:mod:`xmlthresh.tracking.sync`);
    ``xmlthresh ui`` serves MLflow's UI on the project's store (:mod:`xmlthresh.tracking.ui`).
    """
    if sys.argv[1:] in (["--help"], ["-h"]):
        print(help_text())
        return
    if sys.argv[1:2] == ["explain"]:
        from xmlthresh.cli.explain import main as explain

        code = explain(sys.argv[2:])
        if code:
            sys.exit(code)
        return
    if sys.argv[1:2] == ["ui"]:
        from xmlthresh.tracking.ui import command as ui

        code = ui(sys.argv[2:])
        if code:
            sys.exit(code)
        return
    if sys.argv[1:2] == ["sync"]:
        from xmlthresh.tracking.sync import command as sync

        code = sync(sys.argv[2:])
        if code:
            sys.exit(code)
        return
    if sys.argv[1:2] == ["list"]:
        import argparse

        from xmlthresh.config.options import GROUPS
        from xmlthresh.config.plugins import BROKEN, describe

        parser = argparse.ArgumentParser(prog="xmlthresh list", description=(
            "The options of every group (or of the groups named), the plugins and the option folders."))
        parser.add_argument("groups", nargs="*", metavar="GROUP", help=f"only these groups ({', '.join(GROUPS)})")
        parser.add_argument("--check", action="store_true", help="also import the plugins and every registered "
                            "class, and build every option of your conf/ and the plugins'")
        options = parser.parse_args(sys.argv[2:])
        unknown = [group for group in options.groups if group not in GROUPS]
        if unknown:
            parser.error(f"unknown group {unknown[0]!r}; the groups are {', '.join(GROUPS)}")
        listing = describe(check=options.check, groups=options.groups)
        print(listing)
        if options.check and f"  {BROKEN} " in listing:  # a check that finds a broken option fails
            sys.exit(1)
        return
    from xmlthresh._util.paths import environment_problem

    sys.argv[1:] = multirun_flag_first(sys.argv[1:])
    problem = stray_word_problem(sys.argv[1:]) or environment_problem()
    absolute_environment_paths()
    if problem is not None:
        print(f"xmlthresh: error: {problem}", file=sys.stderr)
        sys.exit(1)
    from xmlthresh.cli import hydra_app
    from xmlthresh.run import sweep

    sweep.last_sweep_failures, sweep.last_sweep_problem = 0, None  # this command's, not an earlier one's in-process
    try:
        if shows_job_config(sys.argv[1:]):
            _show_job_config(hydra_app.run)
            from xmlthresh.cli.command_line import preset_sweep_note

            note = preset_sweep_note(sys.argv[1:])
            if note is not None:
                print(f"xmlthresh: note: {note}", file=sys.stderr)
            return
        hydra_app.run()
    except BaseException as exc:  # a sweep that stopped half-way must not leave its parent run RUNNING
        sweep.close_unfinished_sweep(exc)
        message = placement_message(exc, hydra_output_folder())
        if message is None:
            raise
        print(f"xmlthresh: error: {message}", file=sys.stderr)
        sys.exit(1)
    if sweep.last_sweep_problem:
        print(f"xmlthresh: {sweep.last_sweep_problem}", file=sys.stderr)
        sys.exit(1)
    if sweep.last_sweep_failures:
        print(f"xmlthresh: {sweep.last_sweep_failures} job(s) of the sweep failed (their errors are above, and in "
              "MLflow when tracking is on)", file=sys.stderr)
        sys.exit(1)




#: the environment variables that name folders (the project's, the derived caches', the raw data's)
PATH_VARIABLES = ("XMLTHRESH_HOME", "XMLTHRESH_CACHE", "XMLTHRESH_DATA")


def absolute_environment_paths() -> None:
    """Make the folders the environment names relative to the directory the command starts in absolute (for
    this process and the ones it starts): under ``hydra.job.chdir=true`` a job runs in its own folder, and a
    relative ``XMLTHRESH_HOME`` put the project's runs and MLflow store inside the job's folder. A leading ``~``
    is the user's home, as everywhere else (it made a folder named ``~`` in the working directory)."""
    for name in PATH_VARIABLES:
        value = os.environ.get(name, "")
        if value.strip() and not os.path.isabs(value):  # a ~ the shell left (a quoted .env file) is the home
            os.environ[name] = os.path.abspath(os.path.expanduser(value))


#: the words that start a subcommand instead of a run
SUBCOMMANDS = ("explain", "list", "ui", "sync")


def stray_word_problem(args: list[str]) -> str | None:
    """The one line for a word that is neither a subcommand, a flag (or its value) nor an override
    ``key=value`` (``xmlthresh lsit`` got Hydra's "Error parsing override 'lsit'; missing EQUAL"); None when
    there is none. Call it on the arguments as :func:`multirun_flag_first` orders them."""
    import difflib

    skip = False
    for arg in args:
        if skip or arg.startswith(("-", "~")) or "=" in arg:
            skip = arg in _FLAGS_WITH_VALUE or (arg == "--info" and not skip)
            continue
        near = difflib.get_close_matches(arg, SUBCOMMANDS, n=1, cutoff=0.5)
        hint = f"did you mean xmlthresh {near[0]}? " if near else ""
        return (f"{arg!r} is neither a subcommand ({', '.join(SUBCOMMANDS)}) nor a setting key=value; {hint}"
                "xmlthresh --help lists both")
    return None


#: Hydra's flags that take a value (``--cfg job``) and those that take none or an optional one
_FLAGS_WITH_VALUE = ("--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--config-name", "-cn",
                     "--config-dir", "-cd", "--experimental-rerun")
_FLAGS_ALONE = ("-m", "--multirun", "--resolve", "--run", "-r")


def multirun_flag_first(args: list[str]) -> list[str]:
    """``args`` with Hydra's flags (``-m``, ``--cfg job``, ``--info``, ...) moved before the overrides: Hydra's
    parser takes them only there (``xmlthresh a=1 -m b=2,3`` and ``xmlthresh beta=2 --cfg job seed=1`` were a
    usage dump with exit code 2); their meaning does not depend on the place. A flag's value goes with it."""
    flags: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _FLAGS_WITH_VALUE and i + 1 < len(args):
            flags += args[i:i + 2]
            i += 2
            continue
        if arg in _FLAGS_ALONE or arg.startswith("--info"):
            if arg == "--info" and i + 1 < len(args) and "=" not in args[i + 1] and not args[i + 1].startswith("-"):
                flags += args[i:i + 2]  # --info config, --info searchpath, ...
                i += 2
                continue
            flags.append(arg)
        else:
            rest.append(arg)
        i += 1
    multirun = [arg for arg in flags if arg in ("-m", "--multirun")]
    flags = multirun[:1] + [arg for arg in flags if arg not in ("-m", "--multirun")]
    return flags + rest


def shows_job_config(args: list[str]) -> bool:
    """Whether the command line asks Hydra for the job's config as a whole (``--cfg job`` / ``-c job``,
    no ``--package``, not a sweep)."""
    asked = "--cfg=job" in args or any(flag in args and args[args.index(flag) + 1:args.index(flag) + 2] == ["job"]
                                       for flag in ("--cfg", "-c"))
    whole = not ({"-p", "--package", "-m", "--multirun"} & set(args)) and not any(a.startswith("--package=") for a in args)
    return asked and whole


def task_config(text: str) -> str:
    """The YAML of ``--cfg job`` less the top-level blocks of the task not chosen (a CDE job has no strategy,
    a thresholds job no estimator); a comment at the top says what is left out."""
    from xmlthresh.config.options import TASK_KEYS

    chosen = re.search(r"^task: *(\S+)", text, re.M)
    task = chosen.group(1) if chosen else "thresholds"
    hidden = [key for other, keys in TASK_KEYS.items() if other != task for key in keys if key not in TASK_KEYS.get(task, ())]
    kept, dropping, dropped = [], False, []
    for line in text.splitlines(keepends=True):
        top = re.match(r"^([A-Za-z_][\w.]*):", line)
        if top:
            dropping = top.group(1) in hidden
            if dropping:
                dropped.append(top.group(1))
        if not dropping:
            kept.append(line)
    note = f"# task={task}: not shown, as this task does not use them: {', '.join(dropped)}\n" if dropped else ""
    return note + "".join(kept)


def _show_job_config(hydra_main) -> None:
    """Run Hydra's ``--cfg job`` with its output captured, then print :func:`task_config` of it."""
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            hydra_main()
    finally:
        sys.stdout.write(task_config(buffer.getvalue()))


def console() -> None:
    """The ``xmlthresh`` console script and ``python -m xmlthresh``: :func:`main`, then a fast exit.

    The interpreter's own finalization of the modules a run loaded (numba's compiled kernels above all) costs
    about a second of CPU after the work is done (benchmarks/cli.py). So the process ends with ``os._exit``
    from an exit handler registered before any other of this command's: exit handlers run last-registered
    first, and the interpreter runs them after joining non-daemon threads and the shutdown callbacks of the
    worker pools (joblib's loky, concurrent.futures). Everything the normal exit does runs -- the thread
    joins, every exit handler registered while the command ran, the flush of the output -- and only the
    teardown of the modules afterwards is skipped. Called as a library function, :func:`main` exits normally."""
    exit_code = [0]

    def exit_now() -> None:
        logging.shutdown()  # registered at logging's import, i.e. before this handler: it would not run
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:  # the reader went first (xmlthresh --help | head -1): nothing left to say
            pass
        os._exit(exit_code[0])

    atexit.register(exit_now)
    try:
        main()
    except ModuleNotFoundError as exc:  # the lean install: the framework is an extra
        from xmlthresh._util.extras import missing_extra

        command = sys.argv[1] if sys.argv[1:2] and sys.argv[1] in ("explain", "ui", "sync", "list") else ""
        message = missing_extra(exc, f"xmlthresh {command}".strip())
        if message is None:
            exit_code[0] = 1
            raise
        print(f"xmlthresh: error: {message}", file=sys.stderr)
        exit_code[0] = 1
    except SystemExit as exc:
        exit_code[0] = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        print("xmlthresh: interrupted", file=sys.stderr)
        exit_code[0] = 130  # the shell's code for a command stopped by Ctrl-C
    except BrokenPipeError:  # the reader of the output closed it (| head): as other commands, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        exit_code[0] = 1
    except BaseException:
        exit_code[0] = 1
        raise
    sys.exit(exit_code[0])


EXAMPLES = (
    ("xmlthresh", "the default job: domain on embedded synthetic data (certified F-macro)"),
    ("xmlthresh strategy=domain dataset=espgame beta=2", "exact thresholds on the ESP Game lists, F_2"),
    ("xmlthresh -m strategy=domain,independent,pu dataset=corel5k protocol=holdout report.enabled=true",
     "a sweep with its comparison report"),
)


def help_text() -> str:
    """``xmlthresh --help``: what the program does, every option group with its options (one line each, from
    the option folders), the top-level settings and three example commands."""
    from xmlthresh.config.options import GROUPS, option_lines

    lines = ["xmlthresh: find, certify and benchmark decision thresholds for (extreme) multi-label classification.",
             "", "Usage: xmlthresh [group=option ...] [key=value ...]   (-m: a sweep over comma-separated values)", ""]
    for group in GROUPS:
        lines += option_lines(group)
    lines += ["", "settings: seed, beta, task (thresholds | cde), plots, figures, plot_labels, ceiling, achievable, warm_up, force, "
              "report.*, tracking.*",
              "(xmlthresh --cfg job shows those of the chosen task with their values)", "", "Examples:"]
    for command, what in EXAMPLES:
        lines += [f"  {command}", f"      {what}"]
    lines += ["", "xmlthresh list: the options and the plugins; xmlthresh explain dataset=...: a small threshold "
              "problem spelled out; xmlthresh sync [--wait]: send the runs not yet in MLflow (a single run's go in "
              "the background); xmlthresh ui [--port N]: MLflow's UI on the project's runs; xmlthresh --hydra-help: Hydra's "
              "own flags.",
              'Shell completion (bash; zsh after bashcompinit): eval "$(xmlthresh -sc install=bash)"']
    return "\n".join(lines)
