"""The ``wikilshtc`` dataset plugin: fabricated stand-ins for the zip, and the real WikiLSHTC-325K lists."""

from __future__ import annotations

import json
import os
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from helpers import PACKAGE_CONF, no_data, run_cli
from xmlthresh.data import build_candidates, keyed_store
from xmlthresh.datasets import DATASETS
from xmlthresh.datasets import ranked_list_parse_cache as ranked_list_cache
from xmlthresh.datasets.wikilshtc import WIKI_N_LABELS, WIKI_NUM_DOCS, WikiLSHTC
from xmlthresh.strategies import STRATEGIES

WIKI = "berger/WikiXML_no_empty.zip"


@pytest.fixture
def fake_wiki(tmp_path, monkeypatch) -> Path:
    """A small zip in the place and format of the real one (truncated lists of 10, m = 50), offline."""
    data_dir = tmp_path / "data"
    (data_dir / "berger").mkdir(parents=True)
    lines = [
        "1 3 1 0 1 0 0 0 0 0 0 0",  # one relevant document outside the list: reachable by predict-all only
        "2 1 0 0 0 0 0 0 0 0 0 1",
        "3 12 1 1 1 1 1 1 1 1 1 1",
        "4 2 0 1 0 0 0 0 0 0 1 0",
    ]
    with zipfile.ZipFile(data_dir / WIKI, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("WikiXML_no_empty.txt", "\n".join(lines) + "\n")
    monkeypatch.setenv("XMLTHRESH_DATA", str(data_dir))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    return data_dir


def test_config_file_builds_the_registered_plugin():
    cfg = OmegaConf.to_container(OmegaConf.load(PACKAGE_CONF / "dataset" / "wikilshtc.yaml"))
    assert cfg == {"loader": "wikilshtc", "name": "wikilshtc", "path": WIKI, "num_docs": 587084,
                   "include_predict_all": True, "first_n_labels": None, "member": None, "cache": True}
    dataset = DATASETS.build(cfg.pop("loader"), cfg)
    assert isinstance(dataset, WikiLSHTC) and dataset.num_docs == WIKI_NUM_DOCS and dataset.cache


def test_loads_the_zip_with_the_true_number_of_documents(fake_wiki):
    dataset = DATASETS.get("wikilshtc")(num_docs=50)
    lists = dataset.load()
    assert lists.n_labels == 4 and lists.num_docs == 50 and lists.name == "wikilshtc"
    np.testing.assert_array_equal(lists.list_length, [10] * 4)
    np.testing.assert_array_equal(lists.relevant_rank, [1, 3, 10, *range(1, 11), 2, 9])
    assert lists.include_predict_all
    model = STRATEGIES.get("domain")().fit_lists(lists)
    assert model.lower_bound_ == model.f_macro_ <= model.upper_bound_
    candidates = build_candidates(lists)  # label 1: "predict all" uses m = 50, not the list length 10
    last = candidates.cand_ptr[1] - 1
    assert (candidates.cut[last], candidates.tp[last]) == (50, 3)


def test_predict_all_variant_and_first_labels(fake_wiki):
    with_all = STRATEGIES.get("domain")().fit_lists(DATASETS.get("wikilshtc")(num_docs=50).load())
    without = DATASETS.get("wikilshtc")(num_docs=50, include_predict_all=False).load()
    assert without.include_predict_all is False
    model = STRATEGIES.get("domain")().fit_lists(without)
    assert not np.any(model.cuts_ == 50)  # predict-all never chosen when not allowed
    assert model.f_macro_ <= with_all.f_macro_ + 1e-12
    assert DATASETS.get("wikilshtc")(num_docs=50, first_n_labels=2).load().n_labels == 2


def test_second_load_comes_from_the_cache(fake_wiki, monkeypatch, tmp_path):
    first = DATASETS.get("wikilshtc")(num_docs=50).load()
    assert len(list((tmp_path / "cache").rglob("*" + keyed_store.SUFFIX))) == 1
    monkeypatch.setattr(ranked_list_cache, "read_ranked_lists", lambda *a, **k: pytest.fail("parsed twice"))
    second = DATASETS.get("wikilshtc")(num_docs=50, include_predict_all=False).load()
    np.testing.assert_array_equal(first.relevant_rank, second.relevant_rank)
    assert second.include_predict_all is False
    assert DATASETS.get("wikilshtc")(num_docs=50, cache=False).load().n_labels == 4  # bypass works too


def test_num_docs_is_required_and_checked(fake_wiki):
    with pytest.raises(ValueError, match="num_docs is required.*587084"):
        DATASETS.get("wikilshtc")(num_docs=None).load()
    with pytest.raises(ValueError, match="list of 10 documents is longer than num_docs = 5"):
        DATASETS.get("wikilshtc")(num_docs=5).load()


def test_cli_runs_on_the_dataset(fake_wiki, tmp_path):
    proc = run_cli(["strategy=domain", "dataset=wikilshtc", "dataset.num_docs=50", "dataset.include_predict_all=false",
                    "tracking.enabled=false", f"hydra.run.dir={tmp_path / 'run'}"],
                   env={"XMLTHRESH_HOME": str(tmp_path / "home")})
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["dataset"] == "wikilshtc" and 0 < result["f_macro"] <= 1


# ---------------------------------------------------------------------------------------------- real data
@pytest.fixture(scope="module")
def wiki_timed(tmp_path_factory):
    """The real lists, parsed once into a fresh cache (timed), and a second load from that cache (timed)."""
    data = os.environ.get("XMLTHRESH_DATA")
    if not data or not (Path(data) / WIKI).is_file():
        pytest.skip(no_data(str(WIKI)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XMLTHRESH_CACHE", str(tmp_path_factory.mktemp("wiki-cache")))
        started = time.perf_counter()
        parsed = DATASETS.get("wikilshtc")().load()
        parse_seconds = time.perf_counter() - started
        started = time.perf_counter()
        cached = DATASETS.get("wikilshtc")().load()
        cache_seconds = time.perf_counter() - started
        without_predict_all = DATASETS.get("wikilshtc")(include_predict_all=False).load()
    return parsed, parse_seconds, cached, cache_seconds, without_predict_all


@pytest.mark.realdata
@pytest.mark.slow
def test_real_wiki_counts_and_timing(wiki_timed):
    lists, parse_seconds, cached, cache_seconds, _ = wiki_timed
    assert lists.n_labels == WIKI_N_LABELS == 283_350
    assert lists.num_docs == WIKI_NUM_DOCS == 587_084
    assert lists.list_length.max() == 1000 and np.all(lists.n_relevant >= 1)
    assert np.count_nonzero(lists.n_relevant > 1000) == 31  # datasets/README.md
    assert len(lists.relevant_rank) == 1_181_038
    assert parse_seconds <= 20.0, f"first parse took {parse_seconds:.1f} s"
    assert cache_seconds <= 1.0, f"load from cache took {cache_seconds:.2f} s"
    for field in ("relevant_rank", "label_ptr", "list_length", "n_relevant", "label_ids"):
        np.testing.assert_array_equal(getattr(lists, field), getattr(cached, field))


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.parametrize(
    "predict_all, optimum, f_macro_tb, macro_f_tb",
    [(True, 0.5102191, 0.455513, 0.281099), (False, 0.3453964, 0.324301, 0.281095)],
)
def test_real_wiki_reference_numbers(wiki_timed, predict_all, optimum, f_macro_tb, macro_f_tb):
    lists = wiki_timed[2] if predict_all else wiki_timed[4]
    assert lists.include_predict_all is predict_all
    domain = STRATEGIES.get("domain")().fit_lists(lists)
    assert domain.f_macro_ == pytest.approx(optimum, abs=1e-6)
    assert domain.upper_bound_ - domain.f_macro_ <= 1e-6
    independent = STRATEGIES.get("independent")().fit_lists(lists)
    assert independent.f_macro_ == pytest.approx(f_macro_tb, abs=1e-6)
    assert independent.metrics_["macro_f"] == pytest.approx(macro_f_tb, abs=1e-6)
