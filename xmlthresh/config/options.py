"""The options a user can type, read from the option folders alone (no plugin or numerical library imported).

Every option is a YAML file ``<folder>/<group>/<option>.yaml`` of the package's ``conf/``, the user's
``conf/``, a folder plugin's or an installed plugin's ``conf/`` (:func:`xmlthresh._util.paths.config_search_dirs`);
the first folder wins on a name clash, as in Hydra. Its description is the first line of the comment at the
top of the file. ``xmlthresh list`` prints this catalogue; it is what Hydra composes, so the listing can
never name an option that does not compose.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xmlthresh._util.paths import config_search_dirs

#: the option groups, in the order they are listed
GROUPS = ("strategy", "dataset", "ranker", "protocol", "estimator", "cde_dataset", "experiment")
PACKAGE_CONF = Path(__file__).resolve().parents[1] / "conf"  # xmlthresh/conf
#: width of a listed option's line (its description is cut beyond it)
LINE_WIDTH = 110
#: the top-level keys only one task reads (``--cfg job`` hides the other task's; a sweep over keys its task
#: does not read would run identical jobs)
TASK_KEYS = {"thresholds": ("strategy", "dataset", "protocol", "ranker", "beta", "ceiling", "achievable"),
             "cde": ("estimator", "cde_dataset", "cde")}


def unread_task_keys(task: str, overrides: list[str]) -> list[str]:
    """The keys of ``overrides`` (``key=value``, ``group=option``) that belong to another task than ``task``
    only (``task=cde strategy=pooled beta=3``: strategy and beta, which a CDE run ignores)."""
    if task not in TASK_KEYS:
        return []
    others = {key for other, keys in TASK_KEYS.items() if other != task for key in keys} - set(TASK_KEYS[task])
    found = []
    for override in overrides:
        key = override.lstrip("+~").split("=", 1)[0]
        if key.split(".")[0].split("/")[0] in others and key not in found:
            found.append(key)
    return found


@dataclass(frozen=True)
class Option:
    group: str
    name: str  # what follows ``group=`` on the command line (``transfer/domain_floor`` for a subfolder)
    description: str
    folder: Path  # the option folder it comes from


def option_folders() -> list[Path]:
    """The package's ``conf/`` first, then every joined folder, in Hydra's priority order."""
    return [PACKAGE_CONF, *[d for d in config_search_dirs() if d != PACKAGE_CONF]]


def options(group: str) -> list[Option]:
    """Every option of ``group``, sorted by name; a name defined in two folders is listed once (the first)."""
    found: dict[str, Option] = {}
    for folder in option_folders():
        root = folder / group
        for path in sorted(root.rglob("*.yaml")) if root.is_dir() else []:
            name = path.relative_to(root).with_suffix("").as_posix()
            found.setdefault(name, Option(group, name, _description(path), folder))
    return [found[name] for name in sorted(found)]


def option_keys(option: Option, depth: int = 0) -> set[str]:
    """The top-level keys of an option's YAML, with those of the options of its group it lists in its
    ``defaults`` (``- /cde_dataset/surd@_here_``, ``- surd``); empty when the file cannot be read."""
    import yaml

    try:
        content = yaml.safe_load((option.folder / option.group / f"{option.name}.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return set()
    if not isinstance(content, dict):
        return set()
    keys = {str(key) for key in content if key != "defaults"}
    for entry in content.get("defaults") or []:
        if not isinstance(entry, str) or entry == "_self_" or depth > 8:
            continue
        name = entry.split("@", 1)[0]
        name = name[len(f"/{option.group}/"):] if name.startswith(f"/{option.group}/") else name
        parent = next((o for o in options(option.group) if o.name == name), None)
        if parent is not None:
            keys |= option_keys(parent, depth + 1)
    return keys


def default_option(group: str) -> str | None:
    """The option the packaged config (``xmlthresh/conf/config.yaml``) chooses for ``group``, or None."""
    import yaml

    try:
        defaults = yaml.safe_load((PACKAGE_CONF / "config.yaml").read_text(encoding="utf-8")).get("defaults", [])
    except (OSError, yaml.YAMLError, AttributeError):
        return None
    for entry in defaults:
        if isinstance(entry, dict):
            for key, value in entry.items():
                if str(key).replace("optional ", "").strip() == group and isinstance(value, str):
                    return value
    return None


def _description(path: Path) -> str:
    """The first line of the file's leading comment, without the ``#`` (empty without a comment)."""
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                stripped = line.strip()
                if stripped.startswith("# @package"):
                    continue
                return stripped.lstrip("#").strip() if stripped.startswith("#") else ""
    except OSError:
        return ""
    return ""


def option_lines(group: str) -> list[str]:
    """``group:`` and one line per option (name, description cut at :data:`LINE_WIDTH`), as listed by
    ``xmlthresh list`` and ``xmlthresh --help``."""
    lines = [f"{group}:"]
    for option in options(group):
        line = f"  {option.name:<26} {option.description}".rstrip()
        lines.append(line if len(line) <= LINE_WIDTH else line[: LINE_WIDTH - 3] + "...")
    return lines
