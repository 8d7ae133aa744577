"""Hydra's and OmegaConf's refusals of a command line or a composition, as the one line the command prints:
its multi-line messages joined, its grammar errors shown quoted, and its advice replaced where it does not fit
this command line ("use +bta=2" for a mistyped setting, "use 'override group: option'", "use
+cde_dataset.phi=1" for a key that another option has).

:func:`one_line_hydra_errors` applies them while Hydra runs (:func:`xmlthresh.cli.hydra_app.run`).
"""

from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from typing import Iterator, Sequence

from xmlthresh.cli.command_line import chosen_options


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
