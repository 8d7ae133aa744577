"""Fingerprints of every real ARFF data set as the loaders deliver it, to show that a change of the ARFF reader
or of the feature encoding leaves the matrices bit for bit as they were.

``dump OUT.json`` loads every Mulan folder and every HMC folder under ``$XMLTHRESH_DATA`` through the dataset
plugins (``mulan``, ``hmc``; default parameters, the feature cache bypassed by a fresh ``$XMLTHRESH_CACHE``) and
records, per split, the dtype, shape and sha256 of the feature and label matrices (CSR: of ``data``,
``indices`` and ``indptr``; dense: of the C-ordered bytes), the feature and label names, and per ARFF file the
parsed attribute matrix of :func:`xmlthresh.data.arff.read_arff`. It also records the wall and CPU time of
parsing all files. ``compare A.json B.json`` prints what differs (exit status 1 when anything does).

Run from a checkout: ``PYTHONPATH=. python benchmarks/arff_equivalence.py dump /tmp/before.json``. For a
"fresh machine" timing, point ``NUMBA_CACHE_DIR`` at an empty directory as well.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp


def fingerprint(matrix: Any) -> dict[str, Any]:
    """dtype, shape, storage and sha256 of a dense array or a sparse matrix (CSR parts hashed separately)."""
    if sp.issparse(matrix):
        csr = matrix
        return {"format": csr.format, "dtype": str(csr.dtype), "shape": list(csr.shape), "nnz": int(csr.nnz),
                "indices_dtype": str(csr.indices.dtype), "indptr_dtype": str(csr.indptr.dtype),
                "data": _sha(csr.data), "indices": _sha(csr.indices), "indptr": _sha(csr.indptr)}
    array = np.asarray(matrix)
    return {"format": "dense", "dtype": str(array.dtype), "shape": list(array.shape), "dense": _sha(array)}


def _sha(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def _names(names: Any) -> str:
    return hashlib.sha256("\n".join(map(str, [] if names is None else list(names))).encode()).hexdigest()


def mulan_folders(root: Path) -> list[str]:
    """Folders that look like Mulan data sets: an XML beside ARFF files."""
    return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.xml")) and any(p.glob("*.arff")))


def hmc_names(root: Path) -> list[str]:
    """Names of the HMC data sets (``hmc_<name>/<name>.train.arff``)."""
    return sorted(p.name[len("hmc_"):] for p in root.glob("hmc_*") if (p / f"{p.name[4:]}.train.arff").is_file())


def dump(out: Path) -> dict[str, Any]:
    """Load everything (fresh feature cache) and write the fingerprints to ``out``."""
    root = Path(os.environ["XMLTHRESH_DATA"])
    os.environ["XMLTHRESH_CACHE"] = tempfile.mkdtemp(prefix="arff-equivalence-cache-")
    os.environ["XMLTHRESH_OFFLINE"] = "1"
    from xmlthresh.data.arff import read_arff
    from xmlthresh.datasets import DATASETS

    record: dict[str, Any] = {"datasets": {}, "files": {}, "timing": {}}
    files = sorted(p for p in root.rglob("*.arff") if p.parent.name in mulan_folders(root) or
                   p.parent.name.startswith("hmc_"))
    wall, cpu = time.perf_counter(), time.process_time()
    for path in files:
        table = read_arff(path)
        record["files"][str(path.relative_to(root))] = {
            "values": fingerprint(table.values), "attributes": len(table.attributes),
            "text": {str(j): _names(column.tolist()) for j, column in table.text.items()}}
    record["timing"]["parse_all_files"] = {"files": len(files), "wall_s": time.perf_counter() - wall,
                                           "cpu_s": time.process_time() - cpu}
    wall, cpu = time.perf_counter(), time.process_time()
    jobs = [("mulan", name) for name in mulan_folders(root)] + [("hmc", name) for name in hmc_names(root)]
    for loader, name in jobs:
        data = DATASETS.get(loader)(name=name).load()
        assert data.info["cache"]["hit"] is False, "the feature cache was not bypassed"
        record["datasets"][f"{loader}/{name}"] = {
            "splits": {split: {"X": fingerprint(data.X[split]), "Y": fingerprint(data.Y[split])} for split in data.X},
            "feature_names": _names(data.feature_names), "label_names": _names(data.label_names),
            "n_features": len(data.feature_names) if data.feature_names is not None else None,
            "missing_feature_values": data.info.get("missing_feature_values")}
    record["timing"]["load_all_datasets"] = {"datasets": len(jobs), "wall_s": time.perf_counter() - wall,
                                             "cpu_s": time.process_time() - cpu}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1, sort_keys=True))
    return record


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per difference between two dumps (empty: bit-identical)."""
    problems: list[str] = []
    for section in ("files", "datasets"):
        for key in sorted(set(before[section]) | set(after[section])):
            if key not in before[section] or key not in after[section]:
                problems.append(f"{section}/{key}: only in {'after' if key not in before[section] else 'before'}")
                continue
            problems.extend(_diff(f"{section}/{key}", before[section][key], after[section][key]))
    return problems


def _diff(where: str, a: Any, b: Any) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [line for k in sorted(set(a) | set(b)) for line in _diff(f"{where}/{k}", a.get(k), b.get(k))]
    return [] if a == b else [f"{where}: {a!r} -> {b!r}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("dump").add_argument("out", type=Path)
    compare_parser = sub.add_parser("compare")
    compare_parser.add_argument("before", type=Path)
    compare_parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        record = dump(args.out)
        print(json.dumps(record["timing"], indent=1))
        return 0
    before, after = (json.loads(p.read_text()) for p in (args.before, args.after))
    problems = compare(before, after)
    n_same = sum(1 for section in ("files", "datasets") for key in before[section]
                 if not any(p.startswith(f"{section}/{key}/") or p.startswith(f"{section}/{key}:") for p in problems))
    print(f"{n_same} of {len(before['files']) + len(before['datasets'])} files/datasets identical")
    print("\n".join(problems))
    print("timing before:", json.dumps(before["timing"]), "\ntiming after: ", json.dumps(after["timing"]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
