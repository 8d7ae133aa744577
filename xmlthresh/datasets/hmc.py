"""``hmc``: hierarchical multi-label data sets in the Clus ARFF format (Vens et al., Machine Learning 73(2),
2008), as collected by C-HMCNN (GitHub ``EGiunchiglia/C-HMCNN``, ``HMC_data/``).

``dataset=hmc dataset.name=cellcycle_GO`` reads ``$XMLTHRESH_DATA/hmc_cellcycle_GO/cellcycle_GO.{train,valid,
test}.arff`` (``dataset.path`` for another folder) -- the data set's own train / validation / test split.

The class attribute ``class hierarchical <entries>`` declares the hierarchy (``hierarchy``):

* ``dag`` (Gene Ontology): entries are ``parent/child`` edges, nodes are terms (``GO0003674``, ``root``);
* ``tree`` (FunCat): entries are paths (``01``, ``01/02``), a node's parent is its path without the last part;
* ``auto`` (default): ``dag`` when every entry is one ``a/b`` edge and some edge starts at ``root``.

A row's class field lists ``@``-separated terms; its labels are their ancestor closure (each term and every
ancestor). The labels are all nodes of the hierarchy except ``drop_terms`` (default: ``root`` and, for a
``dag``, the three GO roots GO0003674, GO0005575, GO0008150 -- which every GO row would carry), ordered by
depth (shortest distance from a top node) then name, as C-HMCNN does: 4,122 labels for cellcycle_GO, also
those that never occur. The other attributes are features (numeric, or nominal one-hot); missing values
``?`` are imputed with the mean / most frequent value of the train split and counted in ``info``.
"""

from __future__ import annotations

import logging
from collections import deque
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.arff import (ArffFormatError, ArffTable, HIERARCHICAL, TEXT_KINDS, check_same_attributes, count_missing,
                         read_arff, select_columns)
from xmlthresh.data.download import DataUnavailableError, RemoteFile, ensure_file
from xmlthresh.data.feature_cache import cached_build
from xmlthresh.data.feature_encoding import FeatureEncoder
from xmlthresh.data.multilabel import MultiLabelData
from xmlthresh._util.paths import data_dir
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS

log = logging.getLogger(__name__)

#: bump when the loader's output for the same files and parameters changes (invalidates cache entries)
LOADER_VERSION = 1

_CHMCNN = "https://raw.githubusercontent.com/EGiunchiglia/C-HMCNN/e887855ab4b3b8f22e4fafc80a0a33c1d1ac0041/HMC_data"

#: the raw files of the public origin, by path relative to the data directory
KNOWN_FILES: dict[str, RemoteFile] = {
    remote.relpath: remote
    for remote in (
        RemoteFile("hmc_cellcycle_GO/cellcycle_GO.train.arff",
                   f"{_CHMCNN}/datasets_GO/cellcycle_GO/cellcycle_GO.train.arff",
                   "84b1e37e1b8db8361d77808fcd2fd565ea42fc1f4a26401a314f9d28d48a56be"),
        RemoteFile("hmc_cellcycle_GO/cellcycle_GO.valid.arff",
                   f"{_CHMCNN}/datasets_GO/cellcycle_GO/cellcycle_GO.valid.arff",
                   "d0a95ce316e388231a3dd4261a39a0765aa27e7c232fe2cc302415798cd77dec"),
        RemoteFile("hmc_cellcycle_GO/cellcycle_GO.test.arff",
                   f"{_CHMCNN}/datasets_GO/cellcycle_GO/cellcycle_GO.test.arff",
                   "7fc5630e627e18b77f6531f7f4c8072813f6099872039e85091ba1ca4a9161ef"),
    )
}

#: file suffix of each split
SPLIT_FILES = {"train": "train", "validation": "valid", "test": "test"}
GO_ROOTS = ("GO0003674", "GO0005575", "GO0008150")  # molecular function, cellular component, biological process


class HMCFormatError(ValueError):
    """An HMC data set whose files are inconsistent (message: file, line when known, problem)."""


@DATASETS.register("hmc")
class HMCDataset(Dataset):
    """A Clus hierarchical multi-label data set (see the module docstring); ``load()`` returns
    :class:`MultiLabelData` with the splits ``train``, ``validation`` and ``test``."""

    def __init__(self, name: str, path: str | None = None, hierarchy: str = "auto",
                 drop_terms: Sequence[str] | None = None, include_predict_all: bool = True,
                 first_n_labels: int | None = None):
        if not name:
            raise ValueError("dataset 'hmc' needs a name, e.g. dataset.name=cellcycle_GO")
        if hierarchy not in ("auto", "dag", "tree"):
            raise ValueError(f"hierarchy must be 'auto', 'dag' or 'tree', got {hierarchy!r}")
        super().__init__(name=name, include_predict_all=include_predict_all, first_n_labels=first_n_labels)
        self.path = path
        self.hierarchy = hierarchy
        self.drop_terms = None if drop_terms is None else [str(t) for t in drop_terms]


    def _load(self) -> MultiLabelData:
        files = self.files()
        params = {"hierarchy": self.hierarchy, "drop_terms": self.drop_terms}
        return cached_build("hmc", self.name, list(files.values()), params, LOADER_VERSION,
                            lambda: build_hmc(self.name, files, hierarchy=self.hierarchy, drop_terms=self.drop_terms))

    def folder(self) -> Path:
        if self.path is None:
            return data_dir() / f"hmc_{self.name}"
        candidate = Path(self.path).expanduser()
        return candidate if candidate.is_absolute() else data_dir() / candidate

    def files(self) -> dict[str, Path]:
        """The ARFF file of each split; missing known files are downloaded (and verified) first."""
        folder = self.folder()
        files = {split: folder / f"{self.name}.{suffix}.arff" for split, suffix in SPLIT_FILES.items()}
        for split, path in files.items():
            if path.is_file():
                continue
            remote = KNOWN_FILES.get(f"{folder.name}/{path.name}") if self.path is None else None
            if remote is None:
                present = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else "folder missing"
                raise DataUnavailableError(
                    f"{path} does not exist: an HMC data set needs {self.name}.train.arff, {self.name}.valid.arff "
                    f"and {self.name}.test.arff in {folder} (found: {present}); set XMLTHRESH_DATA or dataset.path")
            files[split] = ensure_file(remote)
        return files


class Hierarchy:
    """The nodes of a class hierarchy, their parents, and the ancestor closure as a sparse matrix."""

    def __init__(self, nodes: list[str], parents: dict[str, list[str]], kind: str, topological: list[str]):
        self.nodes = nodes  # label order: depth, then name
        self.parents = parents
        self.kind = kind
        self.topological = topological  # parents before children
        self.index = {node: i for i, node in enumerate(nodes)}

    @classmethod
    def parse(cls, attribute, kind: str, source: str) -> "Hierarchy":
        entries = list(attribute.values)
        if kind == "auto":
            edges = all(entry.count("/") == 1 for entry in entries)
            kind = "dag" if edges and any(entry.split("/")[0] == "root" for entry in entries) else "tree"
        parents: dict[str, list[str]] = {}
        if kind == "dag":
            for entry in entries:
                parts = entry.split("/")
                if len(parts) != 2 or not parts[0] or not parts[1]:
                    raise HMCFormatError(f"{source} line {attribute.line}: hierarchy entry {entry!r} is not a "
                                         "'parent/child' edge (use hierarchy=tree for path entries)")
                parent, child = parts
                parents.setdefault(parent, [])
                if parent not in parents.setdefault(child, []):
                    parents[child].append(parent)
        else:
            for entry in entries:
                parts = entry.split("/")
                if any(not part for part in parts):
                    raise HMCFormatError(f"{source} line {attribute.line}: hierarchy entry {entry!r} is not a path")
                for depth in range(1, len(parts) + 1):
                    node = "/".join(parts[:depth])
                    parent = "/".join(parts[:depth - 1]) if depth > 1 else "root"
                    parents.setdefault(parent, [])
                    if parent not in parents.setdefault(node, []):
                        parents[node].append(parent)
        depth, topological = _order(parents, source, attribute.line)
        nodes = sorted(parents, key=lambda node: (depth[node], node))
        return cls(nodes, parents, kind, topological)

    def closure(self) -> sp.csr_matrix:
        """Nodes x nodes, entry (n, a) set when a is n or one of its ancestors."""
        ancestors: dict[str, set[int]] = {}
        for node in self.topological:
            own = {self.index[node]}
            for parent in self.parents[node]:
                own |= ancestors[parent]
            ancestors[node] = own
        rows = np.repeat(np.arange(len(self.nodes)), [len(ancestors[n]) for n in self.nodes])
        cols = np.fromiter((a for n in self.nodes for a in sorted(ancestors[n])), dtype=np.int64, count=len(rows))
        return sp.csr_matrix((np.ones(len(rows), dtype=bool), (rows, cols)), shape=(len(self.nodes),) * 2)

    def term(self, token: str) -> int | None:
        """Index of a term as written in a row (tree paths also with ``.`` separators)."""
        found = self.index.get(token)
        if found is None and self.kind == "tree":
            found = self.index.get(token.replace(".", "/"))
        return found


def _order(parents: dict[str, list[str]], source: str, line: int) -> tuple[dict[str, int], list[str]]:
    """(shortest distance of every node from a top node (one without parents), a topological order:
    parents before children); a cycle is an error."""
    children: dict[str, list[str]] = {node: [] for node in parents}
    for node, ps in parents.items():
        for parent in ps:
            children[parent].append(node)
    indegree = {node: len(ps) for node, ps in parents.items()}
    ready = deque(sorted(node for node, d in indegree.items() if d == 0))
    topological: list[str] = []
    while ready:
        node = ready.popleft()
        topological.append(node)
        for child in children[node]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    if len(topological) != len(parents):
        cyclic = sorted(node for node, d in indegree.items() if d > 0)
        raise HMCFormatError(f"{source} line {line}: the hierarchy has a cycle through {cyclic[:3]}")
    depth = {node: 0 for node, ps in parents.items() if not ps}
    queue = deque(sorted(depth))
    while queue:
        node = queue.popleft()
        for child in children[node]:
            if child not in depth:
                depth[child] = depth[node] + 1
                queue.append(child)
    return depth, topological


def build_hmc(name: str, files: dict[str, Path], hierarchy: str = "auto",
              drop_terms: Sequence[str] | None = None) -> MultiLabelData:
    """Parse, check and encode an HMC data set (no cache; see :class:`HMCDataset`)."""
    tables = {split: read_arff(path) for split, path in files.items()}
    reference = tables["train"]
    for table in tables.values():
        check_same_attributes(reference, table)
    class_columns = [j for j, a in enumerate(reference.attributes) if a.kind == HIERARCHICAL]
    if len(class_columns) != 1:
        raise HMCFormatError(f"{reference.source}: expected one 'hierarchical' class attribute, found "
                             f"{len(class_columns)}")
    class_column = class_columns[0]
    tree = Hierarchy.parse(reference.attributes[class_column], hierarchy, reference.source)
    if drop_terms is None:  # the defaults apply where they exist
        default = ["root", *GO_ROOTS] if tree.kind == "dag" else ["root"]
        drop_terms = [t for t in default if t in tree.index]
    unknown = [t for t in drop_terms if t not in tree.index]
    if unknown:
        raise HMCFormatError(f"drop_terms {unknown} are not nodes of the hierarchy of {reference.source}")
    dropped = {tree.index[t] for t in drop_terms if t in tree.index}
    keep = np.array([i for i in range(len(tree.nodes)) if i not in dropped], dtype=np.int64)
    closure = tree.closure()

    labels: dict[str, sp.csr_matrix] = {}
    unlabelled: dict[str, int] = {}
    for split, table in tables.items():
        terms = _row_terms(table, class_column, tree)
        Y = (terms.astype(np.int64) @ closure.astype(np.int64)).astype(bool).tocsr()[:, keep]
        Y.sort_indices()
        labels[split] = Y
        unlabelled[split] = int(np.count_nonzero(np.diff(terms.indptr) == 0))

    feature_columns = [j for j, a in enumerate(reference.attributes) if j != class_column]
    text = [reference.attributes[j].name for j in feature_columns if reference.attributes[j].kind in TEXT_KINDS]
    if text:
        raise HMCFormatError(f"{reference.source}: attributes {text[:5]} are string/date attributes, which cannot "
                             "be features")
    feature_values = {split: select_columns(table.values, feature_columns) for split, table in tables.items()}
    encoder = FeatureEncoder(tuple(reference.attributes[j] for j in feature_columns)).fit(feature_values["train"])
    X = {split: encoder.transform(values) for split, values in feature_values.items()}
    info: dict[str, Any] = {
        "loader": "hmc", "files": {split: str(path) for split, path in files.items()},
        "hierarchy": tree.kind, "hierarchy_nodes": len(tree.nodes),
        "dropped_terms": [tree.nodes[i] for i in sorted(dropped)],
        "rows_without_labels": unlabelled,
        "missing_feature_values": {split: count_missing(values) for split, values in feature_values.items()},
        "imputation": "mean (numeric) / most frequent value (nominal) of the train split",
        "test_split": "canonical (the data set's own train/valid/test files)",
    }
    if encoder.n_all_missing_:
        info["features_missing_in_all_train_rows"] = encoder.n_all_missing_
    log.info("%s: imputed %d missing feature values", name, sum(info["missing_feature_values"].values()))
    return MultiLabelData(name=name, X=X, Y=labels, label_names=np.array([tree.nodes[i] for i in keep], dtype=str),
                          feature_names=encoder.feature_names_, info=info)


def _row_terms(table: ArffTable, column: int, tree: Hierarchy) -> sp.csr_matrix:
    """Rows x nodes: the terms each row's class field lists (before the ancestor closure)."""
    fields = table.text[column]
    indptr = [0]
    indices: list[int] = []
    for r, field in enumerate(fields.tolist()):
        field = field.strip()
        if field and field != "?":
            for token in field.split("@"):
                node = tree.term(token.strip())
                if node is None:
                    raise ArffFormatError(f"{table.source} line {int(table.row_line[r])}: class term "
                                          f"{token.strip()!r} is not a node of the declared hierarchy")
                indices.append(node)
        indptr.append(len(indices))
    terms = sp.csr_matrix((np.ones(len(indices), dtype=bool), np.asarray(indices, dtype=np.int64),
                           np.asarray(indptr, dtype=np.int64)), shape=(table.n_rows, len(tree.nodes)))
    terms.sum_duplicates()
    return terms
