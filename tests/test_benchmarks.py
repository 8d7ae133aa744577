"""The scalable synthetic generator (``synthetic_large``) and smoke runs of ``benchmarks/run.py`` and
``benchmarks/scaling.py`` on tiny inputs (each writes into a temporary directory only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from helpers import PACKAGE_CONF
from xmlthresh.datasets import DATASETS
from xmlthresh.datasets.synthetic_large import generate_ranked_lists_direct
from xmlthresh.strategies import STRATEGIES

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def small(**kwargs):
    params = dict(n_labels=5000, num_docs=20_000, mean_relevant=8.0, list_length=200, quality=1.0,
                  zipf_exponent=0.8, seed=3)
    params.update(kwargs)
    return generate_ranked_lists_direct(**params)


# ---------------------------------------------------------------------------------------------- generator
def test_shapes_and_invariants():
    lists = small()
    n = 5000
    assert lists.n_labels == n
    assert lists.label_ptr.shape == (n + 1,) and lists.n_relevant.shape == (n,)
    assert np.all(lists.list_length == 200) and lists.num_docs == 20_000
    assert lists.relevant_rank.dtype == np.int64
    # ranks inside the truncated lists, strictly increasing per label (RankedLists validates it, re-check here)
    assert lists.relevant_rank.min() >= 1 and lists.relevant_rank.max() <= 200
    label_of = np.repeat(np.arange(n), lists.n_relevant_in_list)
    same = label_of[1:] == label_of[:-1]
    assert np.all(np.diff(lists.relevant_rank)[same] > 0)
    assert np.all(lists.n_relevant_in_list <= np.minimum(lists.n_relevant, 200))


def test_every_label_has_relevant_documents():
    for mean in (1.0, 2.5, 50.0):
        lists = small(mean_relevant=mean)
        assert lists.n_relevant.min() >= 1  # no label without relevant documents
        assert lists.n_relevant.max() <= lists.num_docs
        assert lists.with_relevant_only()[1] == 0


def test_seeding():
    a, b, c = small(seed=11), small(seed=11), small(seed=12)
    for field in ("relevant_rank", "label_ptr", "n_relevant", "list_length"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.n_relevant, c.n_relevant)


def test_power_law_sizes_and_mean():
    lists = small(n_labels=200_000, num_docs=10**6, mean_relevant=20.0, zipf_exponent=0.9)
    sizes = np.sort(lists.n_relevant)[::-1].astype(float)
    assert abs(sizes.mean() / 20.0 - 1) < 0.02  # calibrated: E[mean s_k] = mean_relevant
    rank = np.arange(1, len(sizes) + 1)
    middle = (rank >= 10) & (sizes >= 30)  # above the rounding floor: the rank-frequency line
    slope = np.polyfit(np.log(rank[middle]), np.log(sizes[middle]), 1)[0]
    assert abs(slope + 0.9) < 0.1
    flat = small(zipf_exponent=0.0, mean_relevant=7.0)  # no power law: all labels of one size
    assert set(np.unique(flat.n_relevant)) <= {7}


def test_truncation_and_complete_lists():
    truncated = small(list_length=50, mean_relevant=30.0)
    assert truncated.relevant_rank.max() <= 50
    assert np.any(truncated.n_relevant_in_list < truncated.n_relevant)  # some relevant documents beyond L
    complete = small(num_docs=400, list_length=400, mean_relevant=30.0)
    assert np.array_equal(complete.n_relevant_in_list, complete.n_relevant)  # complete lists hold all of them
    assert complete.relevant_rank.max() <= 400


def test_quality_orders_rankers():
    """A better ranker (higher quality) puts relevant documents higher: higher precision at its cut-offs."""
    f = {q: STRATEGIES.get("independent")().fit_lists(small(quality=q)).f_macro_ for q in (0.5, 1.0, 3.0)}
    assert f[0.5] < f[1.0] < f[3.0]


def test_predict_all_flag_and_strategies_run():
    lists = small(include_predict_all=False)
    assert lists.include_predict_all is False
    model = STRATEGIES.get("domain")().fit_lists(lists)
    assert model.lower_bound_ <= model.upper_bound_ + 1e-12


def test_no_dense_matrix_at_scale():
    """10^5 labels x 10^6 documents: a dense matrix would need 10^11 cells; the generator stays small."""
    lists = generate_ranked_lists_direct(n_labels=100_000, num_docs=1_000_000, mean_relevant=10.0)
    assert 5e5 < len(lists.relevant_rank) < 1.2e6


def test_dataset_plugin_and_config():
    config = yaml.safe_load((PACKAGE_CONF / "dataset" / "synthetic_large.yaml").read_text())
    loader = config.pop("loader")
    assert loader == "synthetic_large"
    config.update(n_labels=300, mean_relevant=5.0)
    lists = DATASETS.get(loader)(**config).load()
    assert lists.n_labels == 300 and lists.name == "synthetic_large"


def test_invalid_parameters():
    for bad in (dict(n_labels=0), dict(list_length=0), dict(list_length=10**6), dict(mean_relevant=0.5),
                dict(quality=0.0), dict(zipf_exponent=-1.0)):
        with pytest.raises(ValueError):
            small(**bad)


# ---------------------------------------------------------------------------------------------- scripts
def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "XMLTHRESH_HOME": str(tmp_path / "home"), "XMLTHRESH_CACHE": str(tmp_path / "cache"),
           "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)


def test_run_quick_smoke(real_data, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- benchmark:start -->\nold table\n<!-- benchmark:end -->\noutro\n")
    out = tmp_path / "results.md"
    proc = _run([str(BENCHMARKS / "run.py"), "--quick", "--no-mlflow", "--repeats", "1", "--out", str(out),
                 "--readme", str(readme), "--skip", "linearization_grid_100"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    for needed in ("ESP Game", "load from cache", "candidates + hull chains", "domain (exact sweep)",
                   "domain_fast, 1000 directions", "linearization, bisection", "coordinate", "independent",
                   "floor: np.sort(precision)", "F 0.5685122", "Command:", "cores"):
        assert needed in text, needed
    assert "skipped: skipped on request" in text  # a skipped step is a row with its reason, not a crash
    updated = readme.read_text()
    assert updated.startswith("intro\n<!-- benchmark:start -->\n") and updated.endswith("<!-- benchmark:end -->\noutro\n")
    assert "old table" not in updated and "domain (exact sweep)" in updated


def test_readme_without_markers_is_left_alone(tmp_path, capsys):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import common
    finally:
        sys.path.remove(str(BENCHMARKS))
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    assert common.replace_between_markers(readme, "| table |") is False
    assert readme.read_text() == "no markers here\n"
    assert "benchmark:start" in capsys.readouterr().err


def test_scaling_tiny(tmp_path):
    out_dir = tmp_path / "scaling"
    proc = _run([str(BENCHMARKS / "scaling.py"), "--labels", "300,1000", "--repeats", "1", "--no-mlflow",
                 "--in-process", "--out-dir", str(out_dir)], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (out_dir / "scaling.png").stat().st_size > 1000
    text = (out_dir / "scaling.md").read_text()
    assert "| domain |" in text and "Check:" in text
    assert text.count("| 300 |") == 1 and "| 1,000 |" in text


def test_api_sparse_smoke(tmp_path):
    out = tmp_path / "api_sparse.md"
    proc = _run([str(BENCHMARKS / "api_sparse.py"), "--labels", "3000", "--docs", "500", "--top-k", "5",
                 "--repeats", "1", "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    for needed in ("fit_thresholds (domain), validation", "predict, test", "include_predict_all=False",
                   "3,000 labels x 500 documents", "Process peak RSS", "Target < 2 GB: met"):
        assert needed in text, needed


def test_cache_hits_smoke(real_data, tmp_path):
    """benchmarks/cache_hits.py on the smallest real file: one table row per cache, every one a number."""
    proc = _run([str(BENCHMARKS / "cache_hits.py"), "--datasets", "example", "--repeats", "1",
                 "--work-dir", str(tmp_path / "work")], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split("|")[1:-1] for line in proc.stdout.splitlines() if line.startswith("| example")]
    assert [row[1].strip() for row in rows] == ["xmlthresh", "joblib"]
    assert all(float(row[2]) >= 0 and float(row[3]) >= 0 for row in rows)
    assert list((tmp_path / "work" / "xmlthresh" / "example").rglob("*.entry"))  # the timed loads had an entry
