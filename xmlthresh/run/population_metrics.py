"""Population metrics of a run: how good the fitted thresholds are for the whole population, when the data
set's generative model is known in closed form (``dataset.population()``, e.g. dense ``synthetic_xmc``,
:mod:`xmlthresh.datasets.synthetic_xmc_posterior`).

The population optimum is the exact domain sweep over a fine grid of thresholds per label: the best grid
point (achievable) and the sweep's upper bound over the grid's hull.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xmlthresh.data.multilabel import ScoreData
from xmlthresh.datasets.synthetic_xmc_posterior import GRID_POINTS, XmcPopulation
from xmlthresh.strategies.base import BaseStrategy
from xmlthresh.strategies.domain import turning_group_sweep


def population_optimum(population: XmcPopulation, beta: float = 1.0,
                       grid_points: int = GRID_POINTS) -> dict[str, float | np.ndarray]:
    """Population-optimal F-macro over a grid of thresholds per label (plus predict all): the best grid point
    (``f_macro``, ``thresholds``) and the exact sweep's upper bound over the grid's hull (``upper_bound``)."""
    t, candidates = population.grid_candidates(grid_points)
    choice, upper, _ = turning_group_sweep(candidates, beta)
    thresholds = t[choice]
    lower = population.f_macro(thresholds, beta)
    return {"f_macro": lower, "upper_bound": max(float(upper), lower), "thresholds": thresholds}


def population_metrics(dataset: Any, data: Any, strategy: BaseStrategy, beta: float) -> dict[str, Any]:
    """For a data set whose generative model is known in closed form: the population F-macro of the score
    thresholds the fitted rule applies to the test split, the population optimum and the regret. Empty for
    other data sets and for rules without per-label score thresholds."""
    population = dataset.population()
    if population is None or not isinstance(data, ScoreData):
        return {}
    thresholds = strategy.thresholds_for(data.splits["test"])
    if thresholds is None:
        return {}
    best = population_optimum(population, beta)
    value = population.f_macro(thresholds, beta)
    return {"population_f_macro": value, "population_optimum": best["f_macro"],
            "population_upper_bound": best["upper_bound"], "population_regret": best["f_macro"] - value}
