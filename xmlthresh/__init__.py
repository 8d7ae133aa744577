"""xmlthresh: find, certify and benchmark decision thresholds for (extreme) multi-label classification.

The package is organised by concept (see README): ``data`` holds the ranked-list model and its loaders,
``datasets`` the registered dataset plugins, ``strategies`` the registered threshold strategies,
``metrics`` the quality measures, ``tracking`` the MLflow layer and ``cli`` the Hydra entry point.
"""

__version__ = "0.1.0"
