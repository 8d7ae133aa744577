"""The run configuration outside the command line: the resolvers the primary config uses, and
:func:`compose` -- the resolved config ``xmlthresh <overrides>`` would run, as plain Python values.

Used by the Hydra application, by :func:`xmlthresh.load_dataset` and by the tests, so that every path to a
configuration composes the same files the CLI does (the package's ``conf/``, the user's, the plugins').
"""

from __future__ import annotations

from typing import Any, Sequence

from xmlthresh._util.paths import config_search_dirs, runs_dir


def register_resolvers() -> None:
    """Resolvers and the typed schema (:mod:`xmlthresh.config.schema`) the primary config uses (idempotent;
    also needed in sweep worker processes)."""
    from omegaconf import OmegaConf

    from xmlthresh.config.schema import register_schema

    register_schema()
    OmegaConf.register_new_resolver("xmlthresh_runs_dir", lambda: str(runs_dir()), replace=True)
    OmegaConf.register_new_resolver(
        "xmlthresh_searchpath", lambda: [d.as_uri() for d in config_search_dirs()], replace=True
    )
    OmegaConf.register_new_resolver("xmlthresh_with_plugin_estimators", _with_plugin_estimators, replace=True)


def _with_plugin_estimators(*names: str) -> str:
    """The resolver's body: imports the plugins only when a preset asks for them."""
    from xmlthresh.config.plugins import with_plugin_estimators

    return with_plugin_estimators(*names)


def compose(overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The resolved config of ``xmlthresh <overrides>`` (without the ``hydra`` section) as a dict. Inside a
    running Hydra application its global state is reused; otherwise it is initialised for this call only."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    register_resolvers()
    if GlobalHydra.instance().is_initialized():
        cfg = hydra_compose(config_name="config", overrides=list(overrides))
    else:
        with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
            cfg = hydra_compose(config_name="config", overrides=list(overrides))
    container = OmegaConf.to_container(cfg, resolve=True)
    container.pop("hydra", None)
    return container
