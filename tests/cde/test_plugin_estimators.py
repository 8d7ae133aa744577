"""Presets that compare every estimator (``experiment=cde_xanes``) include the installed estimator plugins
(mdn, flow) through the resolver ``xmlthresh_with_plugin_estimators``; an unavailable one is left out."""

from __future__ import annotations

import importlib.util

from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from xmlthresh.config import plugins
from xmlthresh.config.compose import register_resolvers
from xmlthresh.run.sweep import count_jobs

BUILT_INS = ["marginal", "nnkcde", "ckde", "gmm", "rfcde", "flexcode"]


def _preset(overrides=()):
    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        return compose(config_name="config", overrides=["experiment=cde_xanes", *overrides], return_hydra_config=True)


def test_cde_xanes_sweeps_the_built_ins_and_every_runnable_plugin_estimator():
    cfg = _preset()
    swept = str(cfg.hydra.sweeper.params.estimator).split(",")
    extra = plugins.plugin_estimators()
    assert swept == BUILT_INS + extra
    for name, module in (("mdn", "xmlthresh_mdn"), ("flow", "xmlthresh_flow")):
        installed = importlib.util.find_spec(module) is not None
        runnable = installed and all(importlib.util.find_spec(m) for m in ("torch",) + (("zuko",) if name == "flow" else ()))
        assert (name in extra) == bool(runnable), (name, extra)
    assert count_jobs(cfg) == 6 * 3 * len(swept)


def test_the_command_line_still_replaces_the_estimator_list():
    cfg = _preset()
    OmegaConf.set_readonly(cfg, False)
    cfg.hydra.overrides.task = ["estimator=marginal,gmm"]
    assert count_jobs(cfg) == 6 * 3 * 2


def test_plugin_estimators_are_appended_once_and_unavailable_ones_left_out(monkeypatch):
    monkeypatch.setattr(plugins, "plugin_estimators", lambda: ["flow", "mdn"])
    assert plugins.with_plugin_estimators("marginal", " mdn") == "marginal,mdn,flow"
    monkeypatch.undo()

    class Unrunnable:
        __module__ = "somewhere_else.estimator"

        @staticmethod
        def unavailable_reason():
            return "torch not installed"

    class Runnable:
        __module__ = "somewhere_else.estimator"

    from types import SimpleNamespace

    import xmlthresh.config.options as options
    from xmlthresh.cde.registry import ESTIMATORS

    fakes = {"unrunnable": Unrunnable, "runnable": Runnable, "no_option": Runnable}
    real_get, real_names, real_options = ESTIMATORS.get, ESTIMATORS.names, options.options
    monkeypatch.setattr(ESTIMATORS, "names", lambda: real_names() + list(fakes))
    monkeypatch.setattr(ESTIMATORS, "get", lambda name: fakes.get(name) or real_get(name))
    monkeypatch.setattr(options, "options", lambda group: real_options(group) + (
        [SimpleNamespace(name="unrunnable"), SimpleNamespace(name="runnable")] if group == "estimator" else []))
    found = plugins.plugin_estimators()
    assert "runnable" in found and "unrunnable" not in found and "no_option" not in found
    assert not set(BUILT_INS) & set(found)
