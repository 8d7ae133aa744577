"""The Hydra application behind ``xmlthresh ...`` (:mod:`xmlthresh.cli.entry`): one job per composed config.

The primary config and every built-in option group ship inside the package (``xmlthresh/conf/``), so an
installed package runs from any directory; the user's ``conf/`` and the plugins' option folders are joined
through ``hydra.searchpath`` (:func:`xmlthresh._util.paths.config_search_dirs`). Errors the user can fix
(bad data, unknown names, bad parameters, missing files) are shown as one readable line, exit code 1.
"""

from __future__ import annotations

import logging
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from xmlthresh._util.errors import first_line
from xmlthresh.config.compose import register_resolvers

log = logging.getLogger("xmlthresh")


def user_errors() -> tuple[type[BaseException], ...]:
    """The errors printed as one line without a traceback (:func:`xmlthresh._util.errors.user_error_types`)."""
    from xmlthresh._util.errors import user_error_types

    return user_error_types()


#: the option groups every run composes (``~group`` would delete one; ``ranker`` and ``experiment`` are optional)
REQUIRED_GROUPS = ("strategy", "dataset", "protocol", "estimator", "cde_dataset")
#: the key of each group's options that names the registered class they build (a data set's ``name`` is a
#: parameter of some loaders: ``dataset=mulan dataset.name=emotions``)
REGISTRY_KEY = {"strategy": "name", "ranker": "name", "protocol": "name", "estimator": "name", "cde_dataset": "name",
                "dataset": "loader"}
#: ``group=option`` on the command line (``+group=``, ``++group=`` and ``group@package=`` too)
_GROUP_OVERRIDE = re.compile(r"^\+{0,2}(?P<group>[A-Za-z_][\w/]*)(?:@[\w.]*)?=(?P<value>.*)$")
#: arguments after which Hydra's config search path is not the one :mod:`xmlthresh.config.options` lists
_OTHER_SEARCH_PATH = ("--config-dir", "-cd", "--config-path", "-cp", "hydra.searchpath=", "+hydra.searchpath=")


def unknown_option_message(args: Sequence[str]) -> str | None:
    """The one-line error for the first ``group=option`` of ``args`` whose option does not exist (with the
    known options), or None when every one exists.

    Hydra itself says so in a dozen lines (the options one per line and its search path), and says nothing at
    all for an optional group (``ranker=nosuch`` was silently dropped): this check runs before Hydra composes
    anything, for every group of :data:`xmlthresh.config.options.GROUPS`, optional ones included, and for every
    value of a sweep (``-m strategy=domain,nosuch`` fails before a sweep or its MLflow parent run exists).
    Values Hydra computes (``choice(...)``, ``glob(...)``, interpolations, quoted text) are left to Hydra,
    and so is everything when the command line changes the config search path."""
    from xmlthresh.config.options import GROUPS, options

    if any(arg.startswith(_OTHER_SEARCH_PATH) for arg in args):
        return None
    for arg in args:
        deleted = re.fullmatch(r"~(?P<group>\w+)(=.*)?", arg)
        if deleted is not None and deleted["group"] in REQUIRED_GROUPS:  # Hydra deleted it: a traceback later
            group = deleted["group"]
            return (f"{arg}: the {group} group cannot be left out (every run reads one {group} option); choose "
                    f"another with {group}=<option> (xmlthresh list {group})")
        renamed = re.fullmatch(r"\+{0,2}(?P<group>\w+)\.(?P<key>name|loader)=(?P<value>.*)", arg)
        if renamed is not None and REGISTRY_KEY.get(renamed["group"]) == renamed["key"]:
            group, value = renamed["group"], renamed["value"]
            return (f"{arg}: {group}.{renamed['key']} is what the chosen {group} option builds, set by the option "
                    f"itself; choose the option instead: {group}={value} (its settings come with it)")
        match = _GROUP_OVERRIDE.match(arg)
        if match is None or match["group"] not in GROUPS:
            continue
        value = match["value"].strip()
        group = match["group"]
        if value.startswith("[") and value.endswith("]"):  # Hydra merges the options of a list into one config
            listed = value[1:-1].replace(" ", "") or "<option>,<option>"
            advice = ("give one preset per command (a preset may hold a sweep of its own)" if group == "experiment"
                      else f"give one, or sweep them: -m {group}={listed}")
            return (f"{group}={value}: a group takes one option, not a list (Hydra would merge the options into one "
                    f"config, the later overriding the earlier); {advice}")
        if group == "experiment" and ("," in value or value.startswith(("glob(", "choice("))):
            return (f"experiment={value}: presets cannot be swept (each holds a sweep of its own, which a sweep over "
                    "presets drops: every job would be the default run); run one preset per command")
        if not value or any(c in value for c in "()[]{}$*'\"\\ "):
            continue
        known = [option.name for option in options(group)]
        for name in value.split(","):
            if name == "null":  # Hydra's answer is a traceback: "Config group override must be a string"
                return (f"{group}=null: a group takes the name of one of its options ({', '.join(known[:6])}"
                        f"{', ...' if len(known) > 6 else ''}); to leave an optional group out, write ~{group}")
            if name not in known:
                return (f"unknown {group} option {name!r}; known: {', '.join(known) or '(none)'} "
                        f"(xmlthresh list describes them; your own go to conf/{group}/<name>.yaml)")
    return None


def run(args: Sequence[str] | None = None) -> None:
    """The command line's Hydra application, after the check of its option names (one line, exit code 1,
    for an unknown one: see :func:`unknown_option_message`); Hydra's own errors about the command line or the
    composition (a key that is not in the config, a malformed override) are one line too
    (:func:`one_line_hydra_errors`)."""
    from xmlthresh.config.schema import switch_override_problem

    given = sys.argv[1:] if args is None else args
    message = (unknown_option_message(given) or switch_override_problem(given) or empty_place_message(given)
               or command_shape_message(given))
    if message is not None:
        print(f"xmlthresh: error: {message}", file=sys.stderr)
        sys.exit(1)
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


def command_shape_message(args: Sequence[str]) -> str | None:
    """The one-line error for a command line Hydra would take in a way the user did not mean, or answer with a
    traceback: a group chosen twice (the last won without a word), ``--cfg`` with ``-m`` (Hydra's "Only one of
    --run, --multirun, --cfg"), and a sweeper parameter without a preset that holds a sweep (Hydra's
    "Unexpected type for root: NoneType")."""
    seen: dict[str, str] = {}
    for arg in args:
        key = arg.split("=", 1)[0] if "=" in arg and not arg.startswith(("-", "~")) else ""
        if not key or key.startswith(("hydra.", "hydra/", "+hydra")):
            continue
        key = key.lstrip("+")
        if key in seen:
            what = f"the {key} group is chosen" if "." not in key and key in REGISTRY_KEY or key == "experiment" \
                else f"{key} is given"
            sweep = ", or sweep the values with -m key=a,b" if key != "experiment" else ""
            return f"{seen[key]} and {arg}: {what} twice (the last would win without a word); give it once{sweep}"
        seen[key] = arg
    if any(arg in ("--cfg", "-c") for arg in args) and any(arg in ("-m", "--multirun") for arg in args):
        return ("--cfg shows the config of one job: drop -m and give one value per key (each job of the sweep "
                "is that config with its values)")
    if "experiment" not in seen:
        for arg in args:
            if arg.lstrip("+").startswith("hydra.sweeper.params."):
                key, _, value = arg.lstrip("+").partition("=")
                swept = key.removeprefix("hydra.sweeper.params.")
                return (f"{arg}: a sweeper parameter extends the sweep of a preset (experiment=...); to sweep {swept} "
                        f"here, give its values directly: -m {swept}={value.strip(chr(34) + chr(39))}")
    return None


#: Hydra's settings of where a run writes: an empty value is the current directory, without a word
_PLACES = ("hydra.run.dir", "hydra.sweep.dir")


def empty_place_message(args: Sequence[str]) -> str | None:
    """The one-line error for ``hydra.run.dir=`` or ``hydra.sweep.dir=`` given an empty value (the run wrote its
    files, or a sweep its job folders, into the directory the command was started from), or None."""
    for arg in args:
        key, _, value = arg.lstrip("+").partition("=")
        if key in _PLACES and "=" in arg and not value.strip().strip("'\""):
            return (f"{key} is empty, which is the directory the command runs in; give a folder, or leave {key} "
                    "out for a new folder under runs/")
    return None


def hydra_message(exc: BaseException) -> str:
    """Hydra's multi-line message of a composition error as one line: its lines joined with "; ", the options
    listed one per line as "a, b, c", OmegaConf's ``full_key:`` / ``object_type=`` details and the config
    search path left out."""
    text = str(exc)
    if exc.__cause__ is not None and str(exc.__cause__) not in text:
        text += "\n" + str(exc.__cause__)
    parts: list[str] = []
    listing = False  # inside "Available options in 'group':" and its tab-indented names
    for raw in text.split("Config search path:")[0].splitlines():
        line = raw.strip()
        if not line or line.startswith(("full_key:", "object_type=", "reference_type=")):
            continue
        if listing and raw.startswith("\t"):
            parts[-1] += ("" if parts[-1].endswith(":") else ",") + f" {line}"
            continue
        listing = line.endswith(":")
        parts.append(line)
    joined = ""
    for part in parts:
        joined += part if not joined else (" " if joined.endswith(".") else "; ") + part
    return joined


#: what Hydra's override parser says when a value breaks its grammar (an unquoted ~, space, $, non-ASCII letter)
_GRAMMAR_ERRORS = ("LexerNoViableAltException", "no viable alternative", "mismatched input", "token recognition error")


def grammar_message(message: str) -> str | None:
    """Hydra's bare grammar error for a value it cannot parse ("LexerNoViableAltException: dataset.path=~/s.npz;
    ^; See https://hydra.cc/...", its caret pointing at nothing once on one line) as one line that names the
    override and says how to write it: quoted for Hydra, inside the shell's quotes. None for another message."""
    if not any(marker in message for marker in _GRAMMAR_ERRORS) or "extraneous input" in message:
        return None
    override = next((arg for arg in sys.argv[1:] if arg.split("=", 1)[0] and arg in message), None)
    if override is None or "=" not in override:
        return None
    key, value = override.split("=", 1)
    return (f"Hydra's override grammar cannot read {override!r}: a value with spaces, ~, $, quotes or non-ASCII "
            f"letters must be quoted for Hydra, inside the shell's quotes: '{key}=\"{value}\"'")


def hydra_advice_message(message: str) -> str | None:
    """Hydra's advice that does not fit this command line, as the advice that does: "To append to your config
    use +bta=2" for a top-level key that is not a setting (``+bta`` is refused in turn), "use +hydra.launcher.
    n_jobs" for a launcher setting of a launcher not chosen, "use 'override experiment: ...'" (a defaults-list
    syntax) for ``+group=option``. None for another message."""
    import difflib

    from xmlthresh.config.schema import XmlthreshConfig
    from dataclasses import fields

    found = re.search(r"Could not override '(?P<key>[^']+)'\. To append to your config use \+(?P<given>[^\s;]+)", message)
    if found is not None and found["key"].startswith("hydra.launcher."):
        return (f"{found['key']}: the chosen launcher has no such setting; the parallel launcher's settings need "
                f"it chosen first: hydra/launcher=joblib {found['given']} (with -m)")
    if found is not None and "." not in found["key"]:
        key = found["key"]
        settings = sorted(item.name for item in fields(XmlthreshConfig))
        near = difflib.get_close_matches(key.lower(), settings, n=1, cutoff=0.6)
        guess = f"did you mean {near[0]}? " if near else ""
        return (f"unknown setting {key!r}; {guess}the settings are listed by xmlthresh --help (xmlthresh --cfg job "
                "shows them with their values)")
    group = re.search(r"Multiple values for (?P<group>\w+)\. To override a value use 'override (?P=group): "
                      r"(?P<option>[^']+)'", message)
    if group is not None:
        return (f"+{group['group']}={group['option']}: the {group['group']} group has an option already; choose "
                f"another without the +: {group['group']}={group['option']}")
    return None


def hydra_sweep_message(message: str) -> str | None:
    """Hydra's "Sweeping over Hydra's configuration is not supported : 'hydra.sweeper.params.beta=1,2'" as the
    fix: a sweep's values under ``hydra.sweeper.params`` are one text for Hydra, so they are quoted (as the
    README's presets write them); other ``hydra.*`` settings cannot be swept. None for another message."""
    found = re.search(r"Sweeping over Hydra's configuration is not supported : '(?P<override>[^']+)'", message)
    if found is None:
        return None
    override = found["override"]
    key, _, value = override.partition("=")
    if key.startswith("hydra.sweeper.params."):
        swept = key.removeprefix("hydra.sweeper.params.")
        if not any(arg.lstrip("+").startswith("experiment=") for arg in sys.argv[1:]):
            return f"{override}: to sweep {swept} here, give its values directly: -m {swept}={value}"
        return (f"{override}: the values a sweeper parameter sweeps are one text for Hydra; quote them, inside the "
                f"shell's quotes: '{key}=\"{value}\"'")
    return f"{override}: Hydra's own settings (hydra.*) take one value; give one, and sweep the options instead"


_NOT_IN_STRUCT = re.compile(r"Could not override '(?P<group>[A-Za-z_]\w*)\.(?P<key>[^']+)'.*Key '[^']*' is not in struct")


def missing_group_key_message(message: str, args: Sequence[str]) -> str | None:
    """Hydra's "Could not override 'cde_dataset.phi'. To append to your config use +cde_dataset.phi=1" for a key
    that the chosen option of a group does not have, as one line naming the options that have it and the
    keys of the chosen one (its advice to add the key with ``+`` would only make the option refuse it later);
    None when ``message`` is not about a key of an option group."""
    from xmlthresh.config.options import GROUPS, option_keys, options

    found = _NOT_IN_STRUCT.search(message)
    if found is None or found["group"] not in GROUPS:
        return None
    group, key = found["group"], found["key"]
    keys = {option.name: option_keys(option) for option in options(group)}
    having = [name for name, known in keys.items() if key in known]
    chosen = chosen_options(group, args)
    lacking = [name for name in chosen if name in keys and key not in keys[name]]
    if not lacking:
        where = f"the chosen {group} option has no key {key!r}"
    else:
        shown = ", ".join(sorted(keys[lacking[0]] - {"name"})) or "none"
        where = f"{group}={lacking[0]} has no key {key!r} (its keys: {shown})"
    if having:
        return (f"{group}.{key}: {where}; only {group}={', '.join(having)} "
                f"{'has' if len(having) == 1 else 'have'} it: drop {group}.{key}, or set it in a command that "
                f"chooses {'that option' if len(having) == 1 else 'one of those'}")
    return f"{group}.{key}: {where}, and no {group} option has it; xmlthresh list {group} describes the options"


#: ``group.key=value`` with no ``+`` before it
_GROUP_KEY = re.compile(r"^(?P<group>[A-Za-z_]\w*)\.(?P<key>[A-Za-z_][\w.]*)=")


def keys_of_swept_options(args: Sequence[str]) -> list[str]:
    """``args`` with ``group.key=value`` given as ``++group.key=value`` where a sweep chooses options of
    ``group`` that all have ``key`` but the group's default option does not.

    Why: Hydra composes a sweep's base config before it sweeps, with the group's default option and without
    the swept choice, so ``-m strategy=linearization,linearization_region strategy.grid=10`` was refused
    ("Could not override 'strategy.grid'") although both swept strategies have ``grid``. ``++`` is Hydra's
    documented "set, adding the key where it is missing": the base config takes it, and every job, whose
    option has the key, sets it as plain ``strategy.grid=10`` would."""
    from xmlthresh.config.options import GROUPS, option_keys, options

    if not any(arg in ("-m", "--multirun") for arg in args):
        return list(args)
    out = []
    for arg in args:
        match = _GROUP_KEY.match(arg)
        if match is not None and match["group"] in GROUPS:
            group, key = match["group"], match["key"].split(".")[0]
            keys = {option.name: option_keys(option) for option in options(group)}
            chosen = swept_options(group, args, list(keys))
            default = chosen_options(group, [])
            if len(chosen) > 1 and all(key in keys.get(name, set()) for name in chosen) \
                    and not all(key in keys.get(name, set()) for name in default):
                arg = f"++{arg}"
        out.append(arg)
    return out


def swept_options(group: str, args: Sequence[str], known: Sequence[str]) -> list[str]:
    """The options of ``group`` a sweep's ``group=a,b`` or ``group=glob(...)`` chooses (``known``: the group's
    option names, which a glob is matched against); empty when the command line does not sweep the group."""
    import fnmatch

    for arg in reversed(args):
        match = _GROUP_OVERRIDE.match(arg)
        if match is None or match["group"] != group:
            continue
        value = match["value"].strip()
        globbed = re.fullmatch(r"glob\((?P<inner>.*)\)", value)
        if globbed is None:
            return [name.strip() for name in value.split(",") if name.strip()] if "," in value else []
        include, _, exclude = globbed["inner"].partition("exclude=")
        patterns = [p.strip(" []'\"") for p in include.rstrip(", ").split(",") if p.strip(" []'\"")]
        excluded = [p.strip(" []'\"") for p in exclude.split(",") if p.strip(" []'\"")]
        return [name for name in known if any(fnmatch.fnmatch(name, p) for p in patterns)
                and not any(fnmatch.fnmatch(name, p) for p in excluded)]
    return []


def chosen_options(group: str, args: Sequence[str]) -> list[str]:
    """The options of ``group`` the command line chooses (every value of a sweep), else the packaged default
    (none when a preset is given: it may choose another)."""
    from xmlthresh.config.options import default_option

    chosen: list[str] = []
    for arg in args:
        match = _GROUP_OVERRIDE.match(arg)
        if match is not None and match["group"] == group:
            chosen = [name.strip() for name in match["value"].strip("[]").split(",") if name.strip()]
    if chosen:
        return chosen
    if any((m := _GROUP_OVERRIDE.match(arg)) is not None and m["group"] == "experiment" for arg in args):
        return []
    default = default_option(group)
    return [default] if default else []


@contextmanager
def one_line_hydra_errors() -> Iterator[None]:
    """While the block runs, Hydra's composition errors (``CompactHydraException``: an override of a key that
    is not in the config, a malformed override, a missing option inside a preset) print as one line
    ``xmlthresh: error: ...`` with exit code 1, instead of Hydra's several lines.

    Hydra reports errors itself unless its documented switch ``HYDRA_FULL_ERROR=1`` is set, in which case
    they propagate: so the switch is set for the duration, and the compact errors are caught here. A user who
    set ``HYDRA_FULL_ERROR=1`` still gets Hydra's traceback; other exceptions keep their full traceback."""
    import os

    import yaml
    from hydra.errors import CompactHydraException, HydraException

    user_wants_traceback = os.environ.get("HYDRA_FULL_ERROR") == "1"
    previous = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        yield
    except CompactHydraException as exc:
        if user_wants_traceback:
            raise
        message = hydra_message(exc)
        message = (missing_group_key_message(message, sys.argv[1:]) or grammar_message(message)
                   or hydra_sweep_message(message) or hydra_advice_message(message) or message)
        print(f"xmlthresh: error: {message}", file=sys.stderr)
        sys.exit(1)
    except HydraException as exc:  # Hydra's own refusals that are not "compact" (a sweep type its sweeper lacks)
        if user_wants_traceback:
            raise
        message = hydra_message(exc)
        if "does not support sweep type" in message:
            message += ("; the basic sweeper takes lists of values (key=a,b,c, range(...), choice(...)): "
                        "interval(...) needs a sweeper plugin that samples, e.g. hydra/sweeper=optuna")
        print(f"xmlthresh: error: {message}", file=sys.stderr)
        sys.exit(1)
    except yaml.YAMLError as exc:  # an option file of the user's conf/ or a plugin that is not valid YAML
        if user_wants_traceback:
            raise
        where = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        print(f"xmlthresh: error: an option file is not valid YAML: {where}; fix the file", file=sys.stderr)
        sys.exit(1)
    finally:
        if previous is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = previous


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
        outcome = "resumed" if result.get("resumed_from") else "done"
        record_job_outcome(context["sweep_dir"], context["job_num"], outcome)
    headline = result.get("rel_loss_approx") if result.get("task") == "cde" else result.get("f_macro")
    return None if result.get("skipped") or headline is None else float(headline)
