"""Compile the package's numba kernels into its on-disk cache (``cache=True``), on tiny inputs: started by
tests/conftest.py in a low-priority background process when a large selection of tests starts, so that on a
fresh checkout the compilation (about a minute of CPU) runs on the second core while the first tests run,
instead of inside whichever tests call a kernel first.

Nothing here is checked: a kernel the tests reach before it is cached is compiled by the test process as
usual (and a signature this script does not reach, too). Every step is independent and best effort.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def steps():
    """The warm-up steps, in the order the suite first needs them (tests/cde runs before tests/test_*.py)."""

    def generators():
        sys.path.insert(0, str(Path(__file__).parent))
        from _generator_hashes import generator_hashes

        generator_hashes(small=True)

    def strategies():
        import xmlthresh.config.plugins  # noqa: F401  (the plugins' strategies too)
        from xmlthresh.strategies import STRATEGIES

        for name in STRATEGIES.names():
            try:
                STRATEGIES.get(name)().warm_up()
            except Exception:  # an optional dependency missing, say: the tests say so themselves
                pass

    def branch_and_bound():
        from xmlthresh.data.ranked_lists import RankedLists
        from xmlthresh.strategies import STRATEGIES

        lists = RankedLists.from_relevance_lists([[0, 0, 0, 1, 0, 0], [1, 0, 1, 1, 0, 1]], [1, 4], num_docs=6)
        STRATEGIES.get("domain")(refine="bnb").fit_lists(lists)

    def protocols():
        from xmlthresh.run.job import run_job

        lists = {"loader": "synthetic", "name": "synthetic", "n_labels": 20, "num_docs": 120}
        scores = {"loader": "synthetic_xmc", "name": "synthetic_xmc", "n_labels": 40, "num_docs": 100}
        with tempfile.TemporaryDirectory() as tmp:
            for dataset, strategies in ((lists, ("domain", "independent")), (scores, ("domain", "independent", "pu"))):
                for protocol in ("oracle", "holdout"):
                    for strategy in strategies:
                        cfg = {"strategy": {"name": strategy}, "protocol": protocol, "warm_up": False,
                               "plots": False, "dataset": dataset, "tracking": {"enabled": False}}
                        run_job(cfg, Path(tmp) / f"{dataset['name']}-{protocol}-{strategy}")

    def readers():
        import numpy as np

        from xmlthresh.data.ranked_list_format import read_ranked_lists
        from xmlthresh.data.stratify import stratified_holdout

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "lists.txt"
            path.write_text("7 2 1 0 1\n9 3 0 0 1 0 1\n")
            read_ranked_lists(path, num_docs=6, progress=False)
        stratified_holdout(np.random.default_rng(0).random((30, 4)) < 0.4, 0.3)

    return [generators, strategies, branch_and_bound, protocols, readers]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:  # no run, store or derived cache outside it; no download
        os.environ.update(XMLTHRESH_HOME=tmp, XMLTHRESH_CACHE=str(Path(tmp) / "cache"), XMLTHRESH_OFFLINE="1")
        for step in steps():
            try:
                step()
            except Exception as exc:  # best effort: say which step did not run, go on
                print(f"warm-up step {step.__name__} failed: {exc!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
