"""The figure presets of the reference work's chapters 2-3: each composes as a sweep, and its jobs on tiny
data write the files its report reads; the report writes its table and picture with finite numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import composed

from xmlthresh.config import register_resolvers
from xmlthresh.job import run_job
from xmlthresh.studies import write_study_report

PNG = b"\x89PNG"


def sweep_params(preset: str) -> tuple[dict, dict]:
    """The preset's sweep parameters and its resolved config (the hydra section composed like the CLI)."""
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"experiment={preset}"], return_hydra_config=True)
    params = OmegaConf.to_container(cfg.hydra.sweeper.params)
    return params, {key: OmegaConf.to_container(cfg[key]) if OmegaConf.is_config(cfg[key]) else cfg[key]
                    for key in ("plots", "report", "strategy", "dataset")}


@pytest.mark.slow  # two jobs drawing every picture of a run: ~5-9 s
def test_argv_preset_overlays_the_curves_of_its_jobs(tmp_path):
    params, cfg = sweep_params("argv")
    assert params["dataset"] == "espgame,wikilshtc,corel5k" and cfg["report"]["kind"] == "argv"
    assert cfg["plots"] is True
    tiny = (["dataset=synthetic", "dataset.n_labels=12", "dataset.num_docs=60"],
            ["dataset=synthetic", "dataset.n_labels=20", "dataset.num_docs=90", "beta=2"])
    for job, overrides in enumerate(tiny):
        run_job(composed("strategy=linearization", "plots=true", *overrides), tmp_path / str(job))
        assert (tmp_path / str(job) / "argv.csv").is_file()
    paths = write_study_report("argv", tmp_path)
    assert paths["png"].read_bytes().startswith(PNG)
    table = pd.read_csv(paths["csv"])
    assert list(table["n_labels"]) == [12, 20] and list(table["beta"]) == [1, 2]
    assert np.isfinite(table[["crossing_angle_deg", "f_macro"]].to_numpy(dtype=float)).all()
