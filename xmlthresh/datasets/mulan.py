"""``mulan``: multi-label benchmark data sets in the Mulan layout (ARFF files + an XML naming the labels).

``dataset=mulan dataset.name=corel5k`` reads the folder ``$XMLTHRESH_DATA/corel5k/`` (``dataset.path`` for
another folder, absolute or relative to the data directory). The folder is listed to find its files:

* ``<name>.xml`` (or its only ``*.xml``): the label attributes, by name;
* ``<stem>-train[-sparse].arff`` and ``<stem>-test[-sparse].arff`` (canonical split, e.g.
  ``Corel5k-train-sparse.arff``), or a single ``<name>[-sparse].arff`` (no split: cal500, foodtruck) whose
  test split is carved here (``test_fraction``, iterative stratification, seed ``seed + 1``).

Labels are the attributes the XML names, indexed by NAME in the XML's order (which may differ from the
attribute order; ``\\'`` in a name equals ``'``); the label count comes from the XML, never from the data. The
other attributes are features: numeric ones as they are, nominal ones one-hot (two values: one 0/1 column),
missing values ``?`` imputed with the mean / most frequent value of the final training rows and counted in
``info["missing_feature_values"]``. ``drop_attributes`` names attributes to ignore (default: the known
identifier attributes, i.e. ``protein`` of genbase). Sparse ARFF gives CSR features, dense ARFF dense ones.

A validation split of ``validation_fraction`` of the training rows is carved with iterative stratification
(Sechidis et al. 2011, :mod:`xmlthresh.data.stratify`) and seed ``seed``; 0 means no validation split.
The result is cached (:mod:`xmlthresh.data.feature_cache`); a known Mulan folder that is missing is
downloaded from GitHub ``tsoumakas/mulan`` and verified by sha256.
"""

from __future__ import annotations

import dataclasses
import logging
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.arff import (TEXT_KINDS, check_finite_columns, check_same_attributes, count_missing, read_arff,
                                  select_columns)
from xmlthresh.data.arff_labels import binary_label_matrix
from xmlthresh.data.download import DataUnavailableError, RemoteFile, check_once, ensure_file
from xmlthresh.data.feature_cache import cached_build
from xmlthresh.data.feature_encoding import FeatureEncoder
from xmlthresh.data.multilabel import MultiLabelData
from xmlthresh.data.stratify import stratified_holdout
from xmlthresh._util.paths import data_dir
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS

log = logging.getLogger(__name__)

#: bump when the loader's output for the same files and parameters changes (invalidates cache entries)
LOADER_VERSION = 1

_MULAN = ("https://raw.githubusercontent.com/tsoumakas/mulan/43f6389095ad71984264db4387a8074b22bc7d4a/"
          "data/multi-label")

#: (path relative to the data directory, sha256) of the Mulan files; origin: data/multi-label/<path>
_MULAN_SHA256 = (
    ("bibtex/bibtex-test.arff", "9b03329cde64d3f994bdf7fbbac3f3b10fe185c311cb9ae725475f59c7f3f922"),
    ("bibtex/bibtex-train.arff", "8dcc9de6e0b2cebaec8c1f4fac78431adeeb73cfd3ab879b530a66d366e59174"),
    ("bibtex/bibtex.xml", "08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232"),
    ("birds/birds-test.arff", "51ba6326d65ccdd7c755b6461280eb6d2769c7f59d8e12fd4250f91e6ca28326"),
    ("birds/birds-train.arff", "8f215db6ee163149901e753977f631ba8bea0e0e8e1abc42b234414822f8ae36"),
    ("birds/birds.xml", "0f4ea547b2b3d538c8402662daf689e0d4520cc8b4f5ba113c2e7c01700f010f"),
    ("cal500/cal500.arff", "cfe6097ba5fd6e8584e54911ab9783dcab34e898446b7c9370c71d477eae56d3"),
    ("cal500/cal500.xml", "877e128531268d7661faa3e44f7bb43cbcda829c0895e49879168775b192728c"),
    ("corel5k/Corel5k-test-sparse.arff", "e8f8e9cd052c43ba7bdfdf99d242f461fc8c2a03163466d921e576887b51d8a7"),
    ("corel5k/Corel5k-train-sparse.arff", "19eb253c447144bea74ffa86b4731a56022addae2ba7d0aab72ad07fdc02e9b3"),
    ("corel5k/Corel5k.xml", "54ef6a6ccb7ca9b77524052b34b306d5d501661a5609b9d1cc7085b2b597679d"),
    ("delicious/delicious-test.arff", "2dfb01723a819914b0ca83361177ed413ce3f2169851d9f228d4692915d63944"),
    ("delicious/delicious-train.arff", "030186cdb542ebdd32052fcdbb1ebe30115b3a22518c1b4b198c45eb827aebe1"),
    ("delicious/delicious.xml", "4e0c0f93c7d86a39b9fca4aaefaa00e9428f2c80277732dfbf03ca48e2c14da2"),
    ("emotions/emotions-test.arff", "f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f"),
    ("emotions/emotions-train.arff", "bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98"),
    ("emotions/emotions.xml", "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0"),
    ("enron/enron-test.arff", "2f3aad54a8f54caaab4ab01246fe9dd385ba944a2633028f52747b57eac5474e"),
    ("enron/enron-train.arff", "2988cefc1cdf7a8004a20ef84615cc8fa1b5d7434c16687283b41454e2d9d194"),
    ("enron/enron.xml", "ed40c92d7f613eed51714912cab10dddc4ce456262137d8fef230d44c7f4457b"),
    ("flags/flags-test.arff", "09f6136fae47dcc2f0f491efd6401a11072cbfb0bfbb2666c63b35bb06aeeb16"),
    ("flags/flags-train.arff", "1861cdab7f8baf1aef6fb6198f304465ddfd99b7f9a435337c604119522df3c5"),
    ("flags/flags.xml", "7c9ed21a91b716b91f811323e20ee5a260ea2da62a5edcfeb1b91ec855a48f17"),
    ("foodtruck/foodtruck.arff", "f69e028cd3427b009a2b3147d78e6c955bc43c9dc1434d23e589a206fa332be3"),
    ("foodtruck/foodtruck.xml", "a018e2a20480ef0c90c588ecc0bc4912f272a091fc26b00482377338e48b0c0d"),
    ("genbase/genbase-test.arff", "0e988520bedab39aa3f23f08f646c769bcdb6f9119ee298fd92b37127b226a36"),
    ("genbase/genbase-train.arff", "37670db2c2b308a1c163d05501819526f1d65d659638ddfb76812d4ce384b5c6"),
    ("genbase/genbase.xml", "198e8a1d7070e9603119e02e626cedc589db7577339b307b06f5192047b69eb9"),
    ("medical/medical-test.arff", "6be472e75a6c0b0916187f343a398011b1b26f8f0ddc682c575312ad3532f6c4"),
    ("medical/medical-train.arff", "c764f45756ab1c553b8b4eaaf5605a5610a43bbbcf37492d0f1a12bf9c9e2244"),
    ("medical/medical.xml", "51fa9d5c09e48caff3f0a0c75db1c9aa85944f8e35451f3ad8bd56fc422286ce"),
    ("scene/scene-test.arff", "ea38d20296b3ff7e220f477a3b802a9bcb2d768881fe6ee163efbc97ea527a42"),
    ("scene/scene-train.arff", "b53ba93bdf412de922e3960389bcee24744fa3e872ce610511fc1d750888b64d"),
    ("scene/scene.xml", "55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5"),
    ("yeast/yeast-test.arff", "4aaac102bff9669a765bf0b378602e5cc8c3b181048282e2f003117b496d552a"),
    ("yeast/yeast-train.arff", "e759dc991ff54694a4ff9c4314f3be0d6fd2b1994a4b563f57e416394c6aebbd"),
    ("yeast/yeast.xml", "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247"),
)

#: the raw Mulan files of the public origin, by relative path (downloaded and verified when missing)
KNOWN_FILES: dict[str, RemoteFile] = {
    relpath: RemoteFile(relpath, f"{_MULAN}/{relpath}", sha256) for relpath, sha256 in _MULAN_SHA256
}

#: attributes that identify an instance rather than describe it (dropped unless ``drop_attributes`` is given)
DEFAULT_DROP: dict[str, tuple[str, ...]] = {"genbase": ("protein",)}


class MulanFormatError(ValueError):
    """A Mulan folder whose files are missing, malformed or inconsistent (message: file, problem)."""


@DATASETS.register("mulan")
class MulanDataset(Dataset):
    """A Mulan data set (see the module docstring); ``load()`` returns :class:`MultiLabelData`."""

    def __init__(self, name: str | None = None, path: str | None = None, validation_fraction: float = 0.25,
                 test_fraction: float = 0.25, seed: int = 0, drop_attributes: Sequence[str] | None = None,
                 include_predict_all: bool = True, first_n_labels: int | None = None):
        if not name and path:  # the folder names the set (a run recorded "???" for every such folder)
            name = Path(str(path)).expanduser().name or None
        if not name:
            raise ValueError("dataset 'mulan' needs a name: dataset.name=<folder under $XMLTHRESH_DATA>, or "
                             "dataset.path=<its folder>")
        super().__init__(name=name, include_predict_all=include_predict_all, first_n_labels=first_n_labels)
        self.path = path
        self.validation_fraction = float(validation_fraction)
        self.test_fraction = float(test_fraction)
        self.seed = int(seed)
        self.drop_attributes = None if drop_attributes is None else [str(a) for a in drop_attributes]
        if not 0.0 <= self.validation_fraction < 1.0:
            raise ValueError(f"validation_fraction must lie in [0, 1), got {validation_fraction}")
        if not 0.0 < self.test_fraction < 1.0:
            raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction}")


    def _load(self) -> MultiLabelData:
        layout = self.layout()
        drop = self.drop_attributes if self.drop_attributes is not None else list(DEFAULT_DROP.get(self.name, ()))
        params: dict[str, Any] = {"validation_fraction": self.validation_fraction, "seed": self.seed,
                                  "drop_attributes": drop}
        if "all" in layout.arff:
            params["test_fraction"] = self.test_fraction
        return cached_build("mulan", self.name, layout.sources, params, LOADER_VERSION,
                            lambda: build_mulan(self.name, layout, validation_fraction=self.validation_fraction,
                                                test_fraction=self.test_fraction, seed=self.seed, drop=drop))

    def folder(self) -> Path:
        if self.path is None:
            return data_dir() / self.name
        candidate = Path(self.path).expanduser()
        return candidate if candidate.is_absolute() else data_dir() / candidate

    def layout(self) -> "MulanLayout":
        """The folder's files; a missing known folder (or a missing file of it) is downloaded first."""
        folder = self.folder()
        known = [] if self.path is not None else [
            remote for relpath, remote in KNOWN_FILES.items() if relpath.split("/")[0] == folder.name]
        try:
            layout = discover(folder, self.name)
        except DataUnavailableError:
            if not known:
                raise
            for remote in known:
                ensure_file(remote)
            return discover(folder, self.name)
        for remote in known:  # a published file already here: a cut or edited copy is said (once per version)
            if remote.local_path.is_file():
                check_once(remote.local_path, remote.sha256)
        return layout


class MulanLayout:
    """The files of a Mulan folder: the label XML and the ARFF file of each split (``train``/``test``, or
    ``all`` for a data set without a canonical split)."""

    def __init__(self, xml: Path, arff: dict[str, Path]):
        self.xml = xml
        self.arff = arff

    @property
    def sources(self) -> list[Path]:
        return [self.xml, *self.arff.values()]


def discover(folder: Path, name: str) -> MulanLayout:
    """Find the XML and the ARFF files in ``folder`` (see the module docstring for the names)."""
    if folder.is_file():
        raise DataUnavailableError(
            f"{folder} is a file; a Mulan data set is the folder that holds its <name>.xml and ARFF files: "
            f"dataset.path={folder.parent}")
    if not folder.is_dir():
        raise DataUnavailableError(
            f"{folder} does not exist: put the Mulan files of {name!r} (<name>.xml and <name>-train.arff / "
            f"<name>-test.arff, or <name>.arff) there, or set XMLTHRESH_DATA / dataset.path")
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    xmls = [p for p in files if p.suffix.lower() == ".xml"]
    if not xmls:
        raise DataUnavailableError(f"{folder}: no label XML (<name>.xml) found; files: {[p.name for p in files]}")
    if len(xmls) > 1:
        preferred = [p for p in xmls if p.stem.lower() == name.lower()]
        if len(preferred) != 1:
            raise MulanFormatError(f"{folder}: several XML files {[p.name for p in xmls]}; expected one named {name}.xml")
        xmls = preferred
    arff: dict[str, list[Path]] = {"train": [], "test": [], "all": []}
    for p in files:
        if p.suffix.lower() != ".arff":
            continue
        stem = p.stem.lower()
        stem = stem[: -len("-sparse")] if stem.endswith("-sparse") else stem
        if stem.endswith("-train"):
            arff["train"].append(p)
        elif stem.endswith("-test"):
            arff["test"].append(p)
        else:
            arff["all"].append(p)
    chosen: dict[str, Path] = {}
    for split, candidates in arff.items():
        if len(candidates) > 1:
            # the same split as dense and sparse ARFF: identical content, the sparse one parses faster
            sparse = [p for p in candidates if p.stem.lower().endswith("-sparse")]
            if len(candidates) == 2 and len(sparse) == 1:
                candidates = sparse
            else:
                raise MulanFormatError(f"{folder}: several {split} ARFF files {[p.name for p in candidates]}; "
                                       "keep one per split or point dataset.path at a folder with one data set")
        if candidates:
            chosen[split] = candidates[0]
    if "train" in chosen and "test" in chosen:
        return MulanLayout(xmls[0], {"train": chosen["train"], "test": chosen["test"]})
    if "train" in chosen or "test" in chosen:
        missing = "test" if "train" in chosen else "train"
        raise DataUnavailableError(f"{folder}: found {chosen.get('train', chosen.get('test')).name} but no {missing} "
                                   f"ARFF file (*-{missing}.arff)")
    if "all" in chosen:
        return MulanLayout(xmls[0], {"all": chosen["all"]})
    raise DataUnavailableError(f"{folder}: no ARFF file (<name>-train.arff / <name>-test.arff or <name>.arff); "
                               f"files: {[p.name for p in files]}")


def read_label_names(xml: Path) -> list[str]:
    """The label names of a Mulan XML in document order (nested labels of a hierarchy included)."""
    try:
        root = ElementTree.parse(xml).getroot()
    except ElementTree.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise MulanFormatError(f"{xml}{f' line {line}' if line else ''}: not valid XML ({exc})") from None
    except FileNotFoundError:
        raise DataUnavailableError(f"{xml} does not exist") from None
    names: list[str] = []
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] != "label":
            continue
        label = element.get("name")
        if label is None or not label.strip():
            raise MulanFormatError(f"{xml}: a <label> element has no name attribute")
        names.append(label_key(label))
    if not names:
        raise MulanFormatError(f"{xml}: declares no <label name=...> elements")
    seen: set[str] = set()
    for label in names:
        if label in seen:
            raise MulanFormatError(f"{xml}: label {label!r} is declared twice")
        seen.add(label)
    return names


def label_key(name: str) -> str:
    """A label or attribute name as matched between XML and ARFF: ``\\'`` and ``\\"`` mean ``'`` and ``"``."""
    return name.replace("\\'", "'").replace('\\"', '"')


def build_mulan(name: str, layout: MulanLayout, validation_fraction: float = 0.25, test_fraction: float = 0.25,
                seed: int = 0, drop: Sequence[str] = ()) -> MultiLabelData:
    """Parse, check, split and encode a Mulan data set (no cache; see :class:`MulanDataset`)."""
    label_names = read_label_names(layout.xml)
    tables = {split: read_arff(path) for split, path in layout.arff.items()}
    empty = [table.source for table in tables.values() if table.n_rows == 0]
    if empty:  # found later as scikit-learn's "Found array with 0 sample(s) ... required by SimpleImputer"
        raise MulanFormatError(f"{empty[0]} has no data rows (nothing after @data); a Mulan split needs at least "
                               "one document")
    if len({table.is_sparse for table in tables.values()}) > 1:  # one split dense, another sparse: both valid ARFF
        tables = {split: table if table.is_sparse else dataclasses.replace(table, values=sp.csr_matrix(table.values))
                  for split, table in tables.items()}  # (scipy's hstack refused the mix: "blocks must be 2-D")
    reference = next(iter(tables.values()))
    for table in tables.values():
        check_same_attributes(reference, table)
    attribute_of = {label_key(a.name): j for j, a in enumerate(reference.attributes)}
    missing = [label for label in label_names if label not in attribute_of]
    if missing:
        raise MulanFormatError(f"{layout.xml}: {len(missing)} label(s) of the XML are not attributes of "
                               f"{reference.source}: {missing[:5]}")
    label_columns = [attribute_of[label] for label in label_names]
    unknown_drop = [a for a in drop if label_key(a) not in attribute_of]
    if unknown_drop:
        raise MulanFormatError(f"drop_attributes {unknown_drop} are not attributes of {reference.source}")
    dropped = {attribute_of[label_key(a)] for a in drop}
    if dropped & set(label_columns):
        raise MulanFormatError(f"drop_attributes {list(drop)} include a label of {layout.xml}")
    feature_columns = [j for j in range(len(reference.attributes)) if j not in dropped and j not in set(label_columns)]
    text = [reference.attributes[j].name for j in feature_columns if reference.attributes[j].kind in TEXT_KINDS]
    if text:
        raise MulanFormatError(f"{reference.source}: attributes {text[:5]} are string/date attributes, which "
                               "cannot be features; list them in drop_attributes")
    if not feature_columns:
        raise MulanFormatError(f"{reference.source}: no feature attributes left besides the {len(label_columns)} labels")
    for table in tables.values():
        check_finite_columns(table, feature_columns)
    label_attributes = [reference.attributes[j] for j in label_columns]
    labels: dict[str, Any] = {}
    missing_labels: dict[str, int] = {}
    for split, table in tables.items():
        labels[split], missing_labels[split] = binary_label_matrix(
            select_columns(table.values, label_columns), label_attributes, table.source, table.row_line)

    info: dict[str, Any] = {"loader": "mulan", "files": {split: str(path) for split, path in layout.arff.items()},
                            "labels_xml": str(layout.xml), "sparse_arff": reference.is_sparse,
                            "dropped_attributes": [reference.attributes[j].name for j in sorted(dropped)]}
    if "all" in tables:
        keep, held_out = stratified_holdout(labels["all"], test_fraction, seed=seed + 1)
        tables = {"train": tables["all"].rows(keep), "test": tables["all"].rows(held_out)}
        labels = {"train": labels["all"][keep], "test": labels["all"][held_out]}
        info["test_split"] = {"method": "iterative stratification (Sechidis et al. 2011)",
                              "fraction": test_fraction, "seed": seed + 1}
    else:
        info["test_split"] = "canonical (the data set's own train/test files)"
    if validation_fraction > 0:
        keep, held_out = stratified_holdout(labels["train"], validation_fraction, seed=seed)
        tables = {"train": tables["train"].rows(keep), "validation": tables["train"].rows(held_out),
                  "test": tables["test"]}
        labels = {"train": labels["train"][keep], "validation": labels["train"][held_out], "test": labels["test"]}
        info["validation_split"] = {"method": "iterative stratification (Sechidis et al. 2011) of the train rows",
                                    "fraction": validation_fraction, "seed": seed}
    feature_values = {split: select_columns(table.values, feature_columns) for split, table in tables.items()}
    encoder = FeatureEncoder(tuple(reference.attributes[j] for j in feature_columns)).fit(feature_values["train"])
    X = {split: encoder.transform(values) for split, values in feature_values.items()}
    info["n_attributes"] = len(reference.attributes)
    info["n_feature_attributes"] = len(feature_columns)
    info["missing_feature_values"] = {split: count_missing(values) for split, values in feature_values.items()}
    info["imputation"] = "mean (numeric) / most frequent value (nominal) of the train split"
    if encoder.n_all_missing_:
        info["features_missing_in_all_train_rows"] = encoder.n_all_missing_
    if any(missing_labels.values()):
        info["missing_label_values_as_irrelevant"] = missing_labels
        log.warning("%s: %d missing label values read as 'not relevant'", name, sum(missing_labels.values()))
    n_missing = sum(info["missing_feature_values"].values())
    if n_missing:
        log.info("%s: imputed %d missing feature values (%s)", name, n_missing, info["imputation"])
    return MultiLabelData(name=name, X=X, Y=labels, label_names=np.array(label_names, dtype=str),
                          feature_names=encoder.feature_names_, info=info)
