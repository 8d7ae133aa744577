"""LibMultiLabel (National Taiwan University's library for multi-label classification, liblinear underneath)
as an xmlthresh plugin (entry point ``xmlthresh.plugins`` -> ``libmultilabel = "xmlthresh_libmultilabel"``).

Importing this package registers two rankers and one strategy; it never fails for a missing libmultilabel
(imported inside the methods): the classes then list as unavailable with the install hint.

* ``ranker=lml_linear``   -- LibMultiLabel's linear one-vs-rest model (``linear.train_1vsrest``, liblinear
  options), scores are its decision values (native threshold 0);
* ``ranker=lml_tree``     -- its tree model for large label sets (``linear.train_tree``, Bonsai-style), scores
  are its probability estimates;
* ``strategy=lml_thresholding`` -- its micromacro-freq thresholding rule (Micro-F1 + Macro-F1, labels in order
  of decreasing frequency; "On the Thresholding Strategy for Infrequent Labels in Multi-label Classification",
  CIKM 2023) applied to the fit split's scores, so that it is compared on the same cross-fitted scores as
  every other strategy.
"""

from . import rankers, thresholding  # noqa: F401  (registration side effect)

__version__ = "0.1.0"
