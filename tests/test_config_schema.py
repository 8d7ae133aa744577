"""The typed schema of the primary config (xmlthresh.config.schema): every top-level key of config.yaml is in
it, switches convert what means a bool and refuse the rest at composition, numbers are numbers, and an
unknown key is refused."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ValidationError

from xmlthresh.config.compose import compose
from xmlthresh.config.schema import XmlthreshConfig

CONFIG = Path(__file__).resolve().parents[1] / "xmlthresh" / "conf" / "config.yaml"


def _fields(node) -> dict:
    return {f.name: f for f in dataclasses.fields(node)}


def test_every_key_of_the_primary_config_is_in_the_schema_with_the_same_default():
    written = {k: v for k, v in yaml.safe_load(CONFIG.read_text()).items() if k not in ("defaults", "hydra")}
    schema = _fields(XmlthreshConfig)
    assert set(written) <= set(schema), sorted(set(written) - set(schema))
    plain = XmlthreshConfig()
    for key, value in written.items():
        default = getattr(plain, key)
        if dataclasses.is_dataclass(default):
            assert set(value) == set(_fields(type(default))), key
            for inner, inner_value in value.items():
                if not str(inner_value).startswith("${"):  # interpolations resolve at run time
                    assert getattr(default, inner) == inner_value, f"{key}.{inner}"
        else:
            assert default == value, key
    groups = {"strategy", "dataset", "protocol", "ranker", "estimator", "cde_dataset"}
    assert set(schema) == set(written) | groups


@pytest.mark.parametrize("text, value", [("no", False), ("off", False), ("false", False), ("0", False),
                                         ("yes", True), ("on", True), ("true", True), ("1", True)])
def test_switches_convert_what_means_a_bool(text, value):
    cfg = compose([f"force={text}", f"tracking.enabled={text}", f"warm_up={text}", f"report.enabled={text}",
                   f"ceiling={text}", f"achievable={text}", f"cde.save_per_point={text}"])
    assert cfg["force"] is cfg["tracking"]["enabled"] is cfg["warm_up"] is cfg["report"]["enabled"] is value
    assert cfg["ceiling"] is cfg["achievable"] is cfg["cde"]["save_per_point"] is value


@pytest.mark.parametrize("override", ["force=nope", "tracking.enabled=abc", "warm_up=maybe",
                                      "interval.resamples=x", "interval.level=high", "cde.n_samples=many",
                                      "nosuchkey=1", "tracking.nosuch=1"])
def test_nonsense_is_refused_at_composition(override):
    with pytest.raises((ConfigCompositionException, ValidationError)):
        compose([override])


def test_the_command_line_refuses_a_nonsense_switch_in_one_line_before_any_job(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", "tracking.enabled=nope", f"hydra.run.dir={tmp_path}"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "xmlthresh: error: tracking.enabled must be true or false (yes/no, on/off, 1/0), got 'nope'"]
    assert not (tmp_path / "result.json").exists()


def test_every_experiment_preset_uses_only_declared_top_level_keys():
    """Unknown top-level keys are refused (``+tpyo=1`` was accepted and ignored): no preset may need one."""
    from xmlthresh.config.compose import compose
    from xmlthresh.config.options import options
    from xmlthresh.config.schema import unknown_top_level_keys

    presets = [option.name for option in options("experiment")]
    assert presets
    undeclared = {name: unknown_top_level_keys(compose([f"experiment={name}"]).keys()) for name in presets}
    assert not {name: keys for name, keys in undeclared.items() if keys}
    assert unknown_top_level_keys(["strategy", "seed", "tpyo", "hydra"]) == ["tpyo"]
