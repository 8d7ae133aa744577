"""The command line as typed, checked before Hydra composes anything: the names of options (every value of a
sweep), the shape of the command (a group or key given twice, a group deleted or renamed from outside, presets
swept, ``--cfg`` with ``-m``, a sweeper parameter without a preset, an empty run folder), and the keys a sweep
sets on options other than the group's default.

Why here: Hydra answers these with a traceback, with advice that leads into another error, or not at all
(the last of two values wins without a word). Each check returns the one line the command prints (exit code 1)
or None; :func:`xmlthresh.cli.hydra_app.run` runs them in order.
"""

from __future__ import annotations

import re
from typing import Sequence


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
                        f"(xmlthresh list describes them; your own go to conf/{group}/<name>.yaml of the project "
                        "root, XMLTHRESH_HOME, or of the source checkout)")
    return None


def command_shape_message(args: Sequence[str]) -> str | None:
    """The one-line error for a command line Hydra would take in a way the user did not mean, or answer with a
    traceback: two presets (the last won without a word, and started a study of hundreds of jobs), ``--cfg``
    with ``-m`` (Hydra's "Only one of --run, --multirun, --cfg"), and a sweeper parameter without a preset that
    holds a sweep (Hydra's "Unexpected type for root: NoneType"). Another key given twice is Hydra's "the last
    wins", which scripts rely on (a base command with an override appended): :func:`repeated_keys_note` says it."""
    seen = _first_of_each_key(args)
    presets = [arg for arg in args if arg.lstrip("+").startswith("experiment=")]
    if len(presets) > 1:
        return (f"{' and '.join(presets)}: two presets; a preset is a whole study (the last would win without a word): "
                "give one")
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


def preset_sweep_note(args: Sequence[str]) -> str | None:
    """For ``--cfg job`` of a preset that is a sweep: the config shown is the base its jobs start from, and the
    keys each job sets (``experiment=holdout_vs_oracle --cfg job`` showed the default run, and nothing said
    that no job of the preset runs with it). None for a preset without a sweep, or no preset."""
    import yaml

    from xmlthresh.config.options import options

    chosen = [arg.split("=", 1)[1] for arg in args if arg.lstrip("+").startswith("experiment=")]
    found = {option.name: option for option in options("experiment")}
    if not chosen or chosen[-1] not in found:
        return None
    option = found[chosen[-1]]
    try:
        content = yaml.safe_load((option.folder / "experiment" / f"{option.name}.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    hydra_cfg = (content or {}).get("hydra") or {}
    swept = list(((hydra_cfg.get("sweeper") or {}).get("params") or {}))
    if not swept:
        return None
    return (f"experiment={option.name} is a sweep (run it with -m): the config shown is the base of its jobs; each "
            f"job sets {', '.join(swept)}")


def _first_of_each_key(args: Sequence[str]) -> dict[str, str]:
    """key -> the first override that sets it (``+`` dropped; Hydra's own ``hydra.*`` settings left out)."""
    seen: dict[str, str] = {}
    for arg in args:
        key = arg.split("=", 1)[0].lstrip("+") if "=" in arg and not arg.startswith(("-", "~")) else ""
        if key and not key.startswith(("hydra.", "hydra/")):
            seen.setdefault(key, arg)
    return seen


def repeated_keys_note(args: Sequence[str]) -> str | None:
    """One line naming each key given more than once and the value used (the last, as Hydra takes it), and
    each value a sweep lists twice, or None: said, since a value the user typed is dropped (or run again)."""
    last: dict[str, str] = {}
    repeated: list[str] = []
    for arg in args:
        key = arg.split("=", 1)[0].lstrip("+") if "=" in arg and not arg.startswith(("-", "~")) else ""
        if not key or key.startswith(("hydra.", "hydra/")):
            continue
        if key in last and key not in repeated:
            repeated.append(key)
        last[key] = arg
    notes = []
    if repeated:
        notes.append("given more than once, the last is used: " + ", ".join(last[key] for key in repeated))
    for arg in last.values():  # a value repeated inside one sweep: its jobs are the same job twice
        key, _, value = arg.lstrip("+").partition("=")
        values = [part.strip() for part in value.split(",")] if not re.search(r"[(\[{'\"]", value) else []
        twice = sorted({part for part in values if values.count(part) > 1})
        if twice:
            notes.append(f"{arg} sweeps {', '.join(twice)} more than once (the same job again)")
    return "; ".join(notes) or None


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
