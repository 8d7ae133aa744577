"""Which seed reached which random choice of a run: the ``seeds`` record of ``result.json``.

The top-level ``seed`` is the one knob of a repetition: by default every random choice of a run follows it,
through an interpolation (``${seed}``) in the option's YAML, so each can still be set on its own.

* ``run`` -- ``seed``: the top-level seed itself;
* ``dataset_split`` -- ``dataset.seed`` (default ``${seed}``): the validation split carved from train
  (mulan and its shorthands, xmlrepo);
* ``dataset_test_split`` -- ``dataset.seed + 1``: the test split of Mulan sets without a test file (cal500);
* ``dataset_generator`` -- ``dataset.seed`` (default 0): which synthetic data set is generated (synthetic,
  synthetic_xmc, synthetic_large). It defines the data set rather than a random choice made on it, so it
  stays fixed unless set (``dataset.seed='${seed}'`` draws a new data set per repetition);
* ``ranker`` -- ``seed`` (or an explicit ``ranker.random_state``): the ranker's ``random_state`` (br_logreg);
* ``holdout_halves`` -- ``protocol.seed`` (default ``${seed}``): ranked lists under holdout, each label's halves;
* ``folds`` -- ``protocol.seed`` (default ``${seed}``): crossfit, the shuffled k-fold assignment;
* ``strategy`` -- ``strategy.seed`` (default ``${seed}``): randomized strategies (xcolumns_fw, xcolumns_bca).

Only the seeds a run actually used appear (a canonical validation split, as HMC's, uses none; knn has no
``random_state``). The values come from what the loaders and rankers report they used, not from the config.
"""

from __future__ import annotations

from typing import Any, Mapping

from xmlthresh.data.multilabel import MultiLabelData, ScoreData
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh._util.registry import ConfigError
from xmlthresh._util.typed_params import MAX_SEED  # numba's and numpy's legacy generators take 32 bits
from xmlthresh.validation import check_int


def loader_seeds(data: Any, dataset: Any) -> dict[str, int]:
    """Seeds the data set's loader used: the splits it carved (from its ``info``) or the generator seed."""
    if isinstance(data, MultiLabelData):
        seeds = {}
        for record, split in (("dataset_split", "validation_split"), ("dataset_test_split", "test_split")):
            carved = data.info.get(split)
            if isinstance(carved, Mapping) and "seed" in carved:
                seeds[record] = int(carved["seed"])
        return seeds
    generator_seed = getattr(dataset, "seed", None)
    return {"dataset_generator": int(generator_seed)} if generator_seed is not None else {}


def seeds_used(run_seed: int, loader: Mapping[str, int], data: RankedLists | ScoreData, protocol: Any,
               ranked_here: bool, strategy_params: Mapping[str, Any]) -> dict[str, int]:
    """The ``seeds`` record of a run (see module docstring).

    ``loader``: :func:`loader_seeds`; ``data``: what the strategy is fitted on (after ranking); ``protocol``: the
    :class:`~xmlthresh.run.protocols.ProtocolSpec`; ``ranked_here``: whether a ranker of this run scored the data."""
    seeds: dict[str, int] = {"run": int(run_seed), **loader}
    if ranked_here and isinstance(data, ScoreData):
        random_state = (data.info.get("ranker_params") or {}).get("random_state")
        if random_state is not None:
            seeds["ranker"] = int(random_state)
    if protocol.name == "holdout" and isinstance(data, RankedLists):
        seeds["holdout_halves"] = protocol.seed
    out_of_fold = data.info.get("out_of_fold") if isinstance(data, ScoreData) else None
    if protocol.name == "crossfit" and isinstance(out_of_fold, Mapping):
        seeds["folds"] = int(out_of_fold["fold_seed"])
    if strategy_params.get("seed") is not None:
        seeds["strategy"] = int(strategy_params["seed"])
    return seeds




def run_seed(value: Any) -> int:
    """The top-level seed, strictly an integer in [0, :data:`MAX_SEED`] (``seed=1.5`` or ``seed=true`` is an
    error, not truncated; a seed that would wrap onto another is refused)."""
    try:
        return check_int("seed", value, 0, MAX_SEED)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
