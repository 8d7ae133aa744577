"""Where options and outputs live: every built-in option group inside the package, the project's ``conf/``
only for the user's additions, no option defined twice, outputs under the project root's ``runs/``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import PACKAGE_CONF
from hydra import compose, initialize_config_module
from hydra.errors import MissingConfigException

from xmlthresh._util import paths
from xmlthresh.tracking import mlflow_runs as tracking
from xmlthresh.cli.entry import register_resolvers

CHECKOUT = Path(__file__).resolve().parents[1]
BUILT_IN_GROUPS = {"strategy", "dataset", "ranker", "estimator", "cde_dataset", "experiment"}


def compose_config(*overrides: str):
    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def options(conf_dir: Path) -> list[str]:
    """``group/option`` of every YAML below ``conf_dir`` (nested groups included)."""
    return [p.relative_to(conf_dir).with_suffix("").as_posix() for p in conf_dir.rglob("*.yaml")]


def test_every_built_in_group_ships_inside_the_package():
    groups = {p.name for p in PACKAGE_CONF.iterdir() if p.is_dir() and any(p.glob("*.yaml"))}
    assert BUILT_IN_GROUPS <= groups
    assert (PACKAGE_CONF / "config.yaml").is_file()


def test_the_checkout_conf_folder_holds_no_yaml_and_no_option_is_defined_twice():
    assert (CHECKOUT / "conf" / "README.md").is_file()
    assert not list((CHECKOUT / "conf").rglob("*.yaml")), "built-in options belong in xmlthresh/conf/"
    seen: dict[str, Path] = {}
    for conf_dir in [PACKAGE_CONF, *paths.config_search_dirs()]:
        for option in options(conf_dir):
            if option == "config":
                continue
            assert option not in seen, f"{option} is in {seen.get(option)} and in {conf_dir}"
            seen[option] = conf_dir
    assert {"strategy/domain", "dataset/synthetic", "dataset/counterexample"} <= set(seen)


def test_a_users_conf_folder_adds_options_and_groups(isolated_home):
    (isolated_home / "conf" / "dataset").mkdir(parents=True)
    (isolated_home / "conf" / "dataset" / "my_lists.yaml").write_text(
        "loader: synthetic\nn_labels: 7\nnum_docs: 50\nseed: 3\n")
    (isolated_home / "conf" / "my_group").mkdir()
    (isolated_home / "conf" / "my_group" / "a.yaml").write_text("value: 42\n")
    assert isolated_home / "conf" in paths.config_search_dirs()
    cfg = compose_config("dataset=my_lists", "+my_group=a")
    assert cfg.dataset.n_labels == 7 and cfg.my_group.value == 42


def test_a_user_file_named_like_a_built_in_option_is_shadowed_by_the_built_in(isolated_home):
    (isolated_home / "conf" / "strategy").mkdir(parents=True)
    (isolated_home / "conf" / "strategy" / "domain.yaml").write_text("name: independent\n")
    assert compose_config("strategy=domain").strategy.name == "domain"


def test_an_unknown_option_is_still_unknown(isolated_home):
    with pytest.raises(MissingConfigException, match="strategy/nope"):
        compose_config("strategy=nope")


# ------------------------------------------------------------------------------------------- project root
def test_checkout_is_the_project_root_of_an_editable_install(monkeypatch):
    monkeypatch.delenv("XMLTHRESH_HOME", raising=False)
    assert paths.source_checkout() == CHECKOUT
    assert paths.runs_dir() == CHECKOUT / "runs"
    if (CHECKOUT / ".git").exists():  # the code's own commit, whatever $XMLTHRESH_HOME says
        head = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True)
        assert head.stdout.strip() and tracking.git_commit().startswith(head.stdout.strip())


def test_installed_package_writes_to_the_current_directory(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    (site / "xmlthresh").mkdir(parents=True)
    (site / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')  # a stray file is not a checkout
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setattr(paths, "_PACKAGE_DIR", site / "xmlthresh")
    monkeypatch.delenv("XMLTHRESH_HOME", raising=False)
    monkeypatch.chdir(work)
    assert paths.source_checkout() is None
    assert paths.runs_dir() == work.resolve() / "runs"
    assert paths.project_roots() == [work.resolve()]
    for cached in (tracking.git_commit, tracking._git_state, tracking.source_tags):  # asked once per process
        cached.cache_clear()
    try:
        assert tracking.git_commit() == "unknown"  # not the commit of whatever repository the user works in
    finally:  # the next test asks again, for the real package directory
        for cached in (tracking.git_commit, tracking._git_state, tracking.source_tags):
            cached.cache_clear()
    monkeypatch.setenv("XMLTHRESH_HOME", str(tmp_path / "home"))
    assert paths.runs_dir() == (tmp_path / "home").resolve() / "runs"
