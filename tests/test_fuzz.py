"""Fuzzing as a test: option keys and values drawn from the schema (and nonsense) for the command line, and
arrays, dtypes, sparse layouts and DataFrames for the library API. Whatever is drawn, the outcome is one of two:
a result that keeps the invariants (F in [0, 1], lower <= F <= upper, one threshold per label), or one clear
error (the command line: exit code 1 and one line, never a traceback; the API: one ``ValueError``). Bounded so
that the suite stays within its time (a few dozen examples each, seeded)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xmlthresh
from helpers import run_cli
from xmlthresh._util.typed_params import parameter_types
from xmlthresh.datasets import DATASETS
from xmlthresh.strategies import STRATEGIES

#: values a user may type for any key: sensible ones, edge cases and nonsense
NONSENSE = ("abc", "-1", "0", "1", "2.5", "1e309", "nan", "inf", "-inf", "[]", "[-1]", "[0.5,2]", "null", "yes",
            "no", "maybe", "18446744073709551616", "''", "{}", "{a:1}", "1e6", "-0.0", "true")
#: a line of the run's log (Hydra's format), which may precede the error line
LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d [\d:,]+\]\[")
#: top-level keys of the thresholds task (and the default strategy's and data set's parameters below)
TOP_LEVEL = ("seed", "beta", "warm_up", "ceiling", "achievable", "force", "interval.level", "interval.resamples")


def _keys() -> list[str]:
    strategy = [f"strategy.{key}" for key in parameter_types(STRATEGIES.get("domain")) if key != "beta"]
    dataset = [f"dataset.{key}" for key in parameter_types(DATASETS.get("synthetic")) if key != "name"]
    return [*TOP_LEVEL, *strategy, *dataset]


KEYS = _keys()


@pytest.mark.slow
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(NONSENSE)), min_size=1, max_size=2,
                unique_by=lambda pair: pair[0]))
def test_any_key_with_any_value_is_a_valid_result_or_one_line(tmp_path_factory, overrides):
    tmp = tmp_path_factory.mktemp("fuzz")
    args = [f"hydra.run.dir={tmp}/run", "tracking.enabled=false", "plots=false", "warm_up=false",
            "dataset.n_labels=8", "dataset.num_docs=60", *(f"{key}={value}" for key, value in overrides)]
    proc = run_cli(args)
    code, out, err = proc.returncode, proc.stdout, proc.stderr
    assert "Traceback" not in err and "Traceback" not in out, (args, err)
    if code == 0:
        result = json.loads((tmp / "run" / "result.json").read_text())
        f_macro = result["f_macro"]
        assert 0.0 <= f_macro <= 1.0, (args, f_macro)
        bounded = result.get("objective_f_macro", f_macro)  # the bounds are of the objective fitted
        if _known(result.get("lower_bound")) and _known(result.get("upper_bound")):
            assert result["lower_bound"] - 1e-9 <= bounded <= result["upper_bound"] + 1e-9, (args, result)
    else:
        lines = [line for line in err.strip().splitlines() if line.strip() and not LOG_LINE.match(line)]
        assert code == 1 and len(lines) == 1 and lines[0].startswith("xmlthresh: error: "), (args, code, err)


def _matrix(draw, shape: tuple[int, int], dtype: str, layout: str, seed: int):
    rng = np.random.default_rng(seed)
    values = rng.random(shape)
    if dtype == "complex":
        values = values + 1j * rng.random(shape)
    elif dtype == "object":
        values = values.astype(object)
    elif dtype == "nan":
        values[0, 0] = np.nan
    else:
        values = values.astype(dtype)
    if layout == "dense":
        return values
    if layout == "frame":
        return pd.DataFrame(values, columns=[f"c{k}" for k in range(shape[1])])
    keep = rng.random(shape) < 0.5
    sparse = sp.coo_matrix(np.where(keep, values, 0)) if dtype not in ("object",) else sp.coo_matrix(keep)
    return {"csr": sparse.tocsr, "csc": sparse.tocsc, "coo": lambda: sparse}[layout]()


@st.composite
def _inputs(draw):
    n_docs, n_labels = draw(st.integers(0, 30)), draw(st.integers(0, 6))
    seed = draw(st.integers(0, 2**16))
    scores = _matrix(draw, (n_docs, n_labels), draw(st.sampled_from(["float64", "float32", "int8", "bool", "complex",
                                                                     "object", "nan"])),
                     draw(st.sampled_from(["dense", "csr", "csc", "coo", "frame"])), seed)
    label_shape = draw(st.sampled_from([(n_docs, n_labels), (n_docs, n_labels + 1)]))
    rng = np.random.default_rng(seed + 1)
    labels = rng.random(label_shape) < 0.3
    labels = draw(st.sampled_from([labels, labels.astype(np.int8), labels.astype(np.int64), sp.csr_matrix(labels),
                                   labels.astype(float) * 2, pd.DataFrame(labels)]))
    strategy = draw(st.sampled_from(["domain", "independent", "coordinate", "pooled", "scut"]))
    return scores, labels, strategy


def _known(bound) -> bool:
    return bound is not None and not math.isnan(bound)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True)
@given(_inputs())
def test_any_array_layout_or_dtype_gives_a_valid_result_or_one_value_error(inputs):
    scores, labels, strategy = inputs
    try:
        result = xmlthresh.fit_thresholds(scores, labels, strategy=strategy)
    except ValueError as exc:  # InputError is a ValueError: one message, naming the problem
        assert str(exc).strip() and "\n" not in str(exc).strip()
        return
    assert 0.0 <= result.f_macro <= 1.0
    bounded = result.report().get("objective_f_macro", result.f_macro)  # the bounds are of the objective fitted
    if _known(result.lower_bound):
        assert result.lower_bound - 1e-9 <= bounded
    if _known(result.upper_bound):
        assert bounded <= result.upper_bound + 1e-9
    n_labels = scores.shape[1]
    if result.thresholds is not None:
        assert result.thresholds.shape == (n_labels,)
    assert len(result.label_names) == n_labels
