"""Scalar parameters of every config group are checked by one mechanism (``xmlthresh.validation``'s
``check_int`` / ``check_number`` / ``check_bool`` / ``check_beta``, called from the plugins'
``_check_params`` when ``Registry.build`` makes them): a wrong type or range is one error naming the
parameter -- never a truncation (4.5 -> 4), a truthy string (``maybe``) or an overflow deep in a kernel."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from xmlthresh.datasets import DATASETS
from xmlthresh._util.registry import ConfigError
from xmlthresh.config.seeds import run_seed
from xmlthresh.strategies import STRATEGIES
from xmlthresh.validation import BETA_RANGE, InputError, check_beta, check_bool, check_int, check_number


@pytest.mark.parametrize("value", [4.5, 4.0, "4", "abc", True, None, [4]])
def test_check_int_refuses_what_is_not_an_integer(value):
    with pytest.raises(InputError, match=r"^n must be an integer >= 1, got "):
        check_int("n", value, 1)


def test_check_int_accepts_integers_in_range_and_optional_none():
    assert check_int("n", np.int64(3), 1) == 3 and type(check_int("n", np.int64(3), 1)) is int
    assert check_int("n", None, 1, optional=True) is None
    with pytest.raises(InputError, match=r"n must be an integer in \[1, 9\], got 10$"):
        check_int("n", 10, 1, 9)


@pytest.mark.parametrize("value", ["maybe", "no", "true", 1, 0, None])
def test_check_bool_accepts_only_true_and_false(value):
    with pytest.raises(InputError, match=r"flag must be true or false, got "):
        check_bool("flag", value)
    assert check_bool("flag", True) is True and check_bool("flag", np.False_) is False


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, "0.5", False])
def test_check_number_refuses_non_finite_out_of_range_and_text(value):
    with pytest.raises(InputError, match=r"^x must be a finite number >= 0"):
        check_number("x", value, 0)
    assert check_number("x", 2, 0, strict_minimum=True) == 2.0


@pytest.mark.parametrize("value", [1e200, 1e7, 0, -1, math.nan, math.inf, "abc", True, 1e-9])
def test_beta_outside_the_accepted_range_names_beta_and_the_range(value):
    """beta=1e200 overflowed beta**2 inside the domain kernel (OverflowError traceback)."""
    with pytest.raises(InputError, match=r"^beta must be a number in \[1e-06, 1e\+06\]"):
        check_beta(value)
    with pytest.raises(ValueError, match=r"^beta must be a number in"):
        STRATEGIES.build("domain", {"beta": value})


def test_the_ends_of_the_beta_range_fit_without_overflow():
    from xmlthresh.data.ranked_lists import RankedLists

    lists = RankedLists.from_relevance_lists([[1, 0, 1, 0], [0, 1, 1, 1]], [2, 3], num_docs=4)
    for beta in BETA_RANGE:
        f = STRATEGIES.build("domain", {"beta": beta}).fit_lists(lists).f_macro_
        assert 0 <= f <= 1


@pytest.mark.parametrize("value", [1.5, "abc", True])
def test_seed_must_be_an_integer(value):
    with pytest.raises(ConfigError, match=r"^seed must be an integer in \[0, 4294967295\], got "):
        run_seed(value)


@pytest.fixture
def example_file(tmp_path) -> Path:
    path = tmp_path / "lists.txt"
    path.write_text("1 2 1 0 1 0\n2 1 0 1 0 0\n")
    return path


@pytest.mark.parametrize("params, message", [
    ({"num_docs": 4.5}, r"dataset.num_docs must be an integer >= 1 \(or null\), got 4.5 \(float\)"),
    ({"num_docs": "abc"}, r"dataset.num_docs must be an integer >= 1 \(or null\), got 'abc' \(str\)"),
    ({"num_docs": 0}, r"dataset.num_docs must be an integer >= 1 \(or null\), got 0"),
    ({"include_predict_all": "maybe"}, r"dataset.include_predict_all must be true or false, got 'maybe'"),
    ({"first_n_labels": 1.5}, r"dataset.first_n_labels must be an integer >= 1 \(or null\), got 1.5"),
    ({"cache": "maybe"}, r"dataset.cache must be true or false, got 'maybe'"),
])
def test_dataset_parameters_are_checked_when_built(example_file, params, message):
    with pytest.raises(ValueError, match=message):
        DATASETS.build("ranked_lists", {"path": str(example_file), **params})
    with pytest.raises(ValueError, match=message):  # and by load(), for objects made directly
        DATASETS.get("ranked_lists")(path=str(example_file), **params).load()


def test_the_registry_reads_switch_words_by_type_and_the_constructor_stays_strict(example_file):
    """Built from a config (the command line's path), ``no`` / ``yes`` mean false / true, as for every switch of
    the typed schema; a class constructed directly in Python takes only True and False."""
    built = DATASETS.build("ranked_lists", {"path": str(example_file), "include_predict_all": "no", "cache": "yes"})
    assert built.include_predict_all is False and built.cache is True
    with pytest.raises(ValueError, match=r"dataset.include_predict_all must be true or false, got 'no'"):
        DATASETS.get("ranked_lists")(path=str(example_file), include_predict_all="no").load()


def test_common_dataset_checks_reach_every_dataset_plugin():
    with pytest.raises(ValueError, match="dataset.include_predict_all must be true or false"):
        DATASETS.build("synthetic", {"include_predict_all": "maybe"})


def test_good_dataset_parameters_still_load(example_file):
    lists = DATASETS.build("ranked_lists", {"path": str(example_file), "num_docs": 4,
                                            "include_predict_all": False}).load()
    assert lists.num_docs == 4 and not lists.include_predict_all


def test_repeated_class_ids_are_an_error_unless_allowed(tmp_path, monkeypatch):
    """Three lines with id 1 gave three rows label_id=1 in thresholds.csv; the reference Example.txt (80 copies
    of id 0) opts in with allow_duplicate_ids, and its preset says so."""
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "dup.txt"
    path.write_text("1 1 1 0\n1 1 0 1\n1 2 1 1\n")
    for cache in (False, True):
        with pytest.raises(ValueError, match=r"class id 1 appears on lines 1, 2, 3; .*dataset.allow_duplicate_ids"):
            DATASETS.build("ranked_lists", {"path": str(path), "cache": cache}).load()
        lists = DATASETS.build("ranked_lists", {"path": str(path), "cache": cache, "allow_duplicate_ids": True}).load()
        assert lists.label_ids.tolist() == [1, 1, 1]


@pytest.mark.parametrize("name, params, message", [
    ("knn", {"k": 2.5}, r"ranker.k must be an integer >= 1, got 2.5 \(float\)"),
    ("knn", {"top_k": True}, r"ranker.top_k must be an integer >= 1 \(or null\), got True"),
    ("br_logreg", {"C": "abc"}, r"ranker.C must be a finite number > 0, got 'abc'"),
    ("br_logreg", {"C": float("nan")}, r"ranker.C must be a finite number > 0, got nan"),
    ("br_logreg", {"max_iter": 10.5}, r"ranker.max_iter must be an integer >= 1, got 10.5"),
])
def test_ranker_parameters_are_checked_when_built(name, params, message):
    from xmlthresh.rankers import RANKERS

    with pytest.raises(ValueError, match=message):
        RANKERS.build(name, params, check_available=False)
