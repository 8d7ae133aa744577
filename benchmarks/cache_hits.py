"""Warm hits of the derived caches: how long a second ``load()`` of a data set takes when its parsed form is
already in the cache directory, and -- for comparison -- what ``joblib.Memory`` takes to return the same object.

Why: the parse cache (ranked lists, e.g. WikiLSHTC-325K) and the feature cache (Mulan sets, e.g. delicious) are
paid on every run of a sweep; their hit time is the floor of a run's start-up. The joblib column answers the
question "would a stock keyed cache be faster?" on the same payload, same disk, same process.

What is timed (median of ``--repeats``, wall and CPU seconds):

* ``xmlthresh``: ``DATASETS.get(option).load()`` with ``$XMLTHRESH_CACHE`` pointing at a fresh directory; the
  first, untimed load fills it, so every timed load is a hit.
* ``joblib``: ``joblib.Memory(<dir>).cache(f)(option)`` where ``f`` returns the object loaded above; the first,
  untimed call stores it, every timed call unpickles it. It skips everything the project's hit does besides
  reading (the checksums, the validation of :class:`RankedLists`), so it is a lower bound, not a replacement.

Usage (real data under ``$XMLTHRESH_DATA``, default ``../shared/datasets``)::

    .venv/bin/python benchmarks/cache_hits.py                        # wikilshtc and delicious, median of 5
    .venv/bin/python benchmarks/cache_hits.py --datasets example --repeats 3 --no-joblib
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ensure_data_env  # noqa: E402

#: option -> constructor parameters (of the dataset registry entry named ``loader``)
DATASETS_TIMED: dict[str, dict[str, Any]] = {
    "wikilshtc": {"loader": "wikilshtc"},
    "delicious": {"loader": "mulan", "name": "delicious"},
    "espgame": {"loader": "ranked_lists", "path": "berger/ESPGameNN.txt", "cache": True},
    "example": {"loader": "ranked_lists", "path": "berger/Example.txt", "cache": True,
                "allow_duplicate_ids": True},  # the reference file repeats class id 0
}

_LOADED: dict[str, Any] = {}


def _load(option: str) -> Any:
    from xmlthresh.datasets import DATASETS

    params = dict(DATASETS_TIMED[option])
    return DATASETS.get(params.pop("loader"))(**params).load()


def _from_memory(option: str) -> Any:
    """What joblib caches: the object the project loaded (the first call stores it, later calls unpickle it)."""
    return _LOADED[option]


def timed(call: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds) of ``repeats`` calls."""
    wall, cpu = [], []
    for _ in range(repeats):
        started, cpu_started = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    return statistics.median(wall), statistics.median(cpu)


def measure(option: str, repeats: int, with_joblib: bool, root: Path) -> dict[str, tuple[float, float]]:
    """Warm-hit times of ``option``: the project's cache and (optionally) joblib.Memory on the same object."""
    os.environ["XMLTHRESH_CACHE"] = str(root / "xmlthresh" / option)
    started = time.perf_counter()
    _LOADED[option] = _load(option)  # fills the cache
    print(f"{option}: first load (parse + store) {time.perf_counter() - started:.2f} s", file=sys.stderr)
    rows = {"xmlthresh": timed(lambda: _load(option), repeats)}
    if with_joblib:
        import joblib

        cached = joblib.Memory(root / "joblib" / option, verbose=0).cache(_from_memory)
        cached(option)  # stores
        rows["joblib"] = timed(lambda: cached(option), repeats)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["wikilshtc", "delicious"], choices=sorted(DATASETS_TIMED))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-joblib", action="store_true", help="time only the project's cache")
    parser.add_argument("--work-dir", type=Path, default=None,
                        help="where the caches go (default: a temporary directory, removed afterwards)")
    args = parser.parse_args(argv)
    ensure_data_env()
    with tempfile.TemporaryDirectory(prefix="xmlthresh-cache-hits-") as tmp:
        root = args.work_dir or Path(tmp)
        print(f"| data set | cache | wall ms (median of {args.repeats}) | CPU ms |")
        print("|---|---|---:|---:|")
        for option in args.datasets:
            for cache, (wall, cpu) in measure(option, args.repeats, not args.no_joblib, root).items():
                print(f"| {option} | {cache} | {1e3 * wall:.1f} | {1e3 * cpu:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
