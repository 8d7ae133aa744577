"""``pooled``: the recommended rule for thresholds that are applied to new documents.

``domain`` finds the exact F-macro optimum of the documents it is fitted on, and that optimum drifts to the
ends of the PR curves (precision 1 from a label's top one or two fit documents, or "predict all") which do
not hold on new documents (docs/theory.md#consistency-and-precision-floor). ``pooled`` is ``domain`` on a
controlled problem whose defaults were chosen on the development collection of the transfer study
(docs/pooled.md; the confirmation collection is measured with them, never tuned on):

* ``smoothing`` -- each cut's precision is shrunk towards the label's prior by that many pseudo-documents
  (:func:`xmlthresh.data.objective.smoothed`): a cut that wins on one or two documents no longer looks perfect;
* ``max_predicted_per_positive`` -- a label predicts at most that many documents per fit positive
  (:func:`xmlthresh.data.objective.with_predicted_cap`): F-macro is not won by predicting every document, and
  micro precision stays at least micro recall / cap;
* ``fallback="top"`` -- a label without a fit positive predicts the new documents scored at least as high as
  its best fit document, unless its scores tie there (:mod:`xmlthresh.strategies.pooling`);
* ``polish="none"`` -- the sweep's state as it is, the rule that was confirmed (``domain`` polishes by default);
* ``pooling`` -- partial pooling of thresholds towards labels of similar fit frequency, available but off by
  default: on the development collection it lowered test F-macro (docs/pooling.md).

The certified bounds are those of the controlled problem on the fit documents (``info_['objective']`` names
it), not of new documents: that is what the population interval (``interval`` of the run config) is for.
"""

from __future__ import annotations

from xmlthresh.strategies.domain import DomainStrategy
from xmlthresh.strategies.registry import STRATEGIES

#: the defaults chosen on the development collection (docs/pooled.md)
DEFAULT_SMOOTHING = 10.0
DEFAULT_MAX_PREDICTED_PER_POSITIVE = 20.0
DEFAULT_FALLBACK = "top"
#: the confirmed rule is the sweep's state as it is: polishing it was not part of what the development
#: collection chose nor of what the confirmation collection measured
DEFAULT_POLISH = "none"


@STRATEGIES.register("pooled")
class PooledStrategy(DomainStrategy):
    """``domain`` with the transfer defaults of the module docstring (each parameter as in ``domain``)."""

    def __init__(
        self, beta: float = 1.0, refine: str = "none", gap_tol: float = 1e-9, max_nodes: int = 100_000,
        min_precision: float = 0.0, smoothing: float = DEFAULT_SMOOTHING, pooling: float | str = 0.0,
        fallback: str = DEFAULT_FALLBACK, pooling_space: str = "score",
        max_predicted_per_positive: float | None = DEFAULT_MAX_PREDICTED_PER_POSITIVE, polish: str = DEFAULT_POLISH,
    ) -> None:
        super().__init__(beta=beta, refine=refine, gap_tol=gap_tol, max_nodes=max_nodes, min_precision=min_precision,
                         smoothing=smoothing, pooling=pooling, fallback=fallback, pooling_space=pooling_space,
                         max_predicted_per_positive=max_predicted_per_positive, polish=polish)
