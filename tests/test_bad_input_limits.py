"""Numbers that fit their type but not the machine or the generator: seeds wherever a parameter is named one,
parallel worker counts, shares of features, and sizes that need more memory than there is. Each is refused
(or reported) in one line that names the option."""

from __future__ import annotations

import pytest

from helpers import run_cli
from xmlthresh._util.errors import memory_message
from xmlthresh._util.typed_params import MAX_SEED, SEED_KEYS, parameter_types
from xmlthresh.cde.registry import CDE_DATASETS, ESTIMATORS
from xmlthresh.config.plugins import load_plugins
from xmlthresh.datasets import DATASETS
from xmlthresh.rankers.registry import RANKERS
from xmlthresh.strategies import STRATEGIES
from xmlthresh.validation import InputError, check_n_jobs

REGISTRIES = (STRATEGIES, RANKERS, DATASETS, ESTIMATORS, CDE_DATASETS)


def _seeded() -> list[tuple[object, str, str]]:
    load_plugins()
    return [(registry, name, key) for registry in REGISTRIES for name in registry.names()
            for key in parameter_types(registry.get(name)) if key in SEED_KEYS]


@pytest.mark.fast
def test_every_seed_parameter_of_every_option_takes_zero_to_two_to_the_32_minus_one():
    seeded = _seeded()
    assert len(seeded) >= 10  # the synthetic data sets, the CDE estimators, the randomised strategies, ...
    for registry, name, key in seeded:
        try:  # some options need more than a seed to be built (mulan, a name): only the seed must not be refused
            registry.build(name, {key: MAX_SEED}, check_available=False)
        except ValueError as exc:
            assert f"{registry.kind}.{key}" not in str(exc), (name, exc)
        for bad in (-1, MAX_SEED + 1):
            with pytest.raises(InputError, match=rf"{registry.kind}\.{key} must be .*, got {bad}"):
                registry.build(name, {key: bad}, check_available=False)


@pytest.mark.fast
def test_a_negative_data_set_seed_on_the_command_line_names_the_option(isolated_home):
    proc = run_cli(["dataset.seed=-1", "tracking.enabled=false", "plots=false"])
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        f"xmlthresh: error: dataset.seed must be a seed, an integer in [0, {MAX_SEED}], got -1")


@pytest.mark.fast
@pytest.mark.parametrize("workers", [0, 10**12, -(10**12), 2.0, True])
def test_a_worker_count_outside_what_joblib_can_use_is_refused(workers):
    with pytest.raises(InputError, match=r"estimator\.n_jobs must be a number of parallel workers: 1 to 1024"):
        check_n_jobs("estimator.n_jobs", workers)


@pytest.mark.fast
@pytest.mark.parametrize("workers", [None, 1, 2, -1, -2, 1024])
def test_a_worker_count_joblib_can_use_is_kept(workers):
    assert check_n_jobs("estimator.n_jobs", workers) == workers


@pytest.mark.fast
@pytest.mark.parametrize("share", [-1, 0, 0.0, 1.5, "abc", True])
def test_a_share_of_features_outside_what_a_forest_takes_names_the_option(share):
    with pytest.raises(InputError, match=r"estimator\.max_features must be a share of the features in \(0, 1\]"):
        ESTIMATORS.build("rfcde", {"max_features": share})


@pytest.mark.fast
@pytest.mark.parametrize("share", [0.5, 1.0, 3, "sqrt", "log2", None])
def test_a_share_of_features_a_forest_takes_is_kept(share):
    assert ESTIMATORS.build("rfcde", {"max_features": share}).max_features == share


@pytest.mark.fast
def test_the_memory_message_names_the_large_sizes_given():
    exc = MemoryError("Unable to allocate 80.0 TiB for an array with shape (1000000001000, 11) and data type float64")
    message = memory_message(exc, ["task=cde", "cde_dataset.n_train=1000000000000", "cde.n_samples=16",
                                   "+estimator.bandwidth_grid=[0.1,200000]"])
    assert message == ("not enough memory for this run (Unable to allocate 80.0 TiB for an array with shape "
                       "(1000000001000, 11) and data type float64); lower the sizes given "
                       "(cde_dataset.n_train=1000000000000, estimator.bandwidth_grid=[0.1,200000])")
    assert memory_message(MemoryError(), []).startswith("not enough memory for this run (an allocation failed); "
                                                        "lower the sizes of the data set")


@pytest.mark.fast
def test_a_size_that_cannot_be_allocated_is_one_line_naming_it(isolated_home):
    proc = run_cli(["task=cde", "cde_dataset.n_train=1000000000000", "tracking.enabled=false", "plots=false"])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("xmlthresh: error: not enough memory for this run (Unable to allocate")
    assert last.endswith("lower the sizes given (cde_dataset.n_train=1000000000000)")
