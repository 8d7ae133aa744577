"""The registry of dataset plugins (name -> loader class with ``load()``), discovered from this package's
modules."""

from xmlthresh._util.registry import Registry

DATASETS: Registry = Registry("dataset", package="xmlthresh.datasets",
                              modules={"ranked_lists": "ranked_list_loader", "scores": "score_loader"})
