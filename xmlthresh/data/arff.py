"""Weka ARFF files (dense and sparse) read through liac-arff (``import arff``) into one attribute matrix.

liac-arff parses the header and the data; this adapter adds what the loaders need on top of it:

* the matrix shape comes from the header: a sparse file whose last columns hold only zeros keeps them (the
  CSR matrix is built here with ``shape=(rows, attributes)``, not inferred from the largest index seen);
* Clus's ``hierarchical <entries>`` class attribute (HMC data sets) and ``date`` attributes, which liac-arff
  does not know, are handed to it as ``string`` and kept as text, the hierarchy entries beside them;
* names quoted in the header have their backslash escapes resolved (``'Swainson\\'s Thrush'``), as Weka does;
* the 1-based line of every data row and of every attribute declaration, for error messages downstream;
* every malformed input raises :class:`ArffFormatError` naming the file and, when liac-arff knows it, the
  line (liac-arff's own exceptions do not name the file), plus a few header checks liac-arff skips (text
  outside ``@``-declarations, a nominal value declared twice or empty).

:func:`read_arff` returns an :class:`ArffTable`: one float64 matrix over all attributes (dense, or CSR for a
sparse file) holding numbers, and for nominal attributes the index of the value in its declaration (an
omitted sparse entry is 0, i.e. the first declared value); NaN marks a missing value ``?``. Text attributes
(string, date, hierarchical) are NaN there and their strings are kept in ``text``. liac-arff's rules apply to
the rest: a file is sparse when its first data row is (``{index value, ...}``, 0-based indices); a dense row
in a sparse file is an error, a sparse row in a dense file is expanded; an index repeated within a sparse row
keeps its last value; ``integer`` attributes are truncated to integers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import arff as liac_arff
import numpy as np
import scipy.sparse as sp

from xmlthresh.data.text_encoding import decode_text

NUMERIC, NOMINAL, STRING, DATE, HIERARCHICAL = "numeric", "nominal", "string", "date", "hierarchical"
TEXT_KINDS = (STRING, DATE, HIERARCHICAL)
MISSING = "?"

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
#: liac-arff's rule for ``@attribute <name> <type>`` (the same split, so the names line up with its output)
_ATTRIBUTE = re.compile(r"^(\".*\"|'.*'|[^{}%,\s]*)\s+(.+)$")
_LINE_IN_MESSAGE = re.compile(r",? (?:at|in) line -?\d+\.?")


class ArffFormatError(ValueError):
    """A file that does not follow the ARFF format (message: file, line when known, problem)."""


def format_error(source: str, line: int | None, problem: str) -> ArffFormatError:
    """The :class:`ArffFormatError` for ``problem`` at ``line`` of ``source`` (no line: the file as a whole)."""
    where = f"{source} line {line}" if line and line > 0 else source
    return ArffFormatError(f"{where}: {problem}")


@dataclass(frozen=True)
class Attribute:
    """One ``@attribute``: its name (unquoted, escapes resolved), kind and, for a nominal attribute, its
    declared values (for a hierarchical one: the entries of its hierarchy, e.g. ``parent/child`` edges)."""

    name: str
    kind: str
    values: tuple[str, ...] = ()
    line: int = 0

    def signature(self) -> tuple[str, str, tuple[str, ...]]:
        """What must agree between two files of the same data set (the line number need not)."""
        return self.name, self.kind, self.values


@dataclass(frozen=True)
class ArffTable:
    """The content of one ARFF file.

    ``values`` (rows x attributes, float64; CSR for a sparse file): numbers, nominal value codes (index into
    ``attributes[j].values``), NaN = missing; text attributes are NaN there and their strings are in
    ``text[j]`` (object array, ``'?'`` when missing). ``row_line[i]`` is the 1-based line of row i."""

    source: str
    relation: str
    attributes: tuple[Attribute, ...]
    values: np.ndarray | sp.csr_matrix
    text: dict[int, np.ndarray]
    row_line: np.ndarray
    data_line: int

    @property
    def n_rows(self) -> int:
        return self.values.shape[0]

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.values)

    def rows(self, index: np.ndarray) -> "ArffTable":
        """The table restricted to the rows ``index`` (in that order)."""
        index = np.asarray(index, dtype=np.int64)
        return ArffTable(self.source, self.relation, self.attributes, self.values[index],
                         {j: column[index] for j, column in self.text.items()}, self.row_line[index],
                         self.data_line)


@dataclass(frozen=True)
class _Declaration:
    """What the header scan keeps of one ``@attribute`` line before liac-arff reads it."""

    line: int
    quoted: bool
    text_kind: str | None  # DATE or HIERARCHICAL: handed to liac-arff as string
    entries: tuple[str, ...]


# ------------------------------------------------------------------------------------------------ reading
def read_arff(path: str | Path) -> ArffTable:
    """Parse the ARFF file ``path`` (UTF-8, or the Unicode encoding its byte-order mark names; Latin-1 as
    fallback)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise format_error(str(path), None, "file not found") from None
    return parse_arff(decode_text(raw, str(path), fallback="latin-1"), source=str(path))


def parse_arff(text: str, source: str = "<string>") -> ArffTable:
    """Parse the text of an ARFF file (``source`` names it in error messages)."""
    lines = text.splitlines()
    data_index, declarations, header = _scan_header(lines, source)
    row_line = np.array([i + 1 for i in range(data_index + 1, len(lines))
                         if (row := lines[i].strip()) and not row.startswith("%")], dtype=np.int64)
    sparse = len(row_line) > 0 and lines[row_line[0] - 1].lstrip().startswith("{")
    decoder = liac_arff.ArffDecoder()
    try:
        decoded = decoder.decode(header + lines[data_index:], encode_nominal=True,
                                 return_type=liac_arff.COO if sparse else liac_arff.DENSE)
    except liac_arff.ArffException as exc:
        raise _liac_error(exc, lines, source, data_index, header) from None
    except ValueError as exc:  # e.g. an unsupported escape sequence in a quoted value: liac-arff passes it on
        raise format_error(source, None, f"{exc}") from None
    attributes = _attributes(decoded["attributes"], declarations, source)
    n_rows, n_attributes = len(row_line), len(attributes)
    text_columns = [j for j, a in enumerate(attributes) if a.kind in TEXT_KINDS]
    if sparse:
        _check_repeated_indices(decoded["data"], lines, row_line, attributes, source)
        values, text = _sparse_values(decoded["data"], n_rows, n_attributes, text_columns)
    else:
        values, text = _dense_values(decoded["data"], n_rows, n_attributes, text_columns)
    return ArffTable(source, decoded["relation"], attributes, values, text, row_line, data_index + 1)



def _scan_header(lines: list[str], source: str) -> tuple[int, list[_Declaration], list[str]]:
    """(0-based index of the ``@data`` line, one declaration per ``@attribute``, the header lines as handed
    to liac-arff: date and hierarchical types rewritten to ``string``)."""
    declarations: list[_Declaration] = []
    header = list(lines)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        keyword = stripped.split(None, 1)[0].lower()
        if keyword == "@relation":
            continue
        if keyword == "@data":
            if not declarations:
                raise format_error(source, i + 1, "@data before any @attribute")
            return i, declarations, header[:i]
        if keyword != "@attribute":
            raise format_error(source, i + 1, f"expected @relation, @attribute or @data, found {stripped[:40]!r}")
        found = _ATTRIBUTE.match(stripped[len("@attribute"):].strip())
        if found is None:
            raise format_error(source, i + 1, f"@attribute needs a name and a type, found {stripped[:60]!r}")
        name, type_spec = found.groups()
        if name[:1] in ("'", '"') and (len(name) < 2 or name[-1] != name[0]):
            raise format_error(source, i + 1, f"unterminated quote in the attribute name {name[:40]!r}")
        words = type_spec.split(None, 1)
        text_kind = {"date": DATE, "hierarchical": HIERARCHICAL}.get(words[0].lower())
        entries: tuple[str, ...] = ()
        if text_kind is not None:
            header[i] = f"@attribute {name} string"
        if text_kind == HIERARCHICAL:
            entries = tuple(entry.strip() for entry in words[1].split(",")) if len(words) == 2 else ()
            if not entries or not all(entries):
                raise format_error(source, i + 1, f"hierarchical attribute {name!r}: empty or malformed hierarchy")
        declarations.append(_Declaration(i + 1, name[:1] in ("'", '"'), text_kind, entries))
    raise format_error(source, None, "no @data line: the header is incomplete or this is not an ARFF file")


def _attributes(decoded: list[tuple[str, object]], declarations: list[_Declaration],
                source: str) -> tuple[Attribute, ...]:
    """liac-arff's ``(name, type)`` pairs as :class:`Attribute` (kinds, lines, escapes, nominal checks)."""
    attributes = []
    for (name, spec), declaration in zip(decoded, declarations):
        if declaration.quoted:
            name = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), name)
        line = declaration.line
        if isinstance(spec, list):
            values = tuple(spec)
            if not values or any(value is None or value == "" for value in values):
                raise format_error(source, line, f"nominal attribute {name!r} declares an empty value")
            if len(set(values)) != len(values):
                raise format_error(source, line, f"nominal attribute {name!r} declares a value twice")
            attributes.append(Attribute(name, NOMINAL, values, line))
        elif declaration.text_kind is not None:
            attributes.append(Attribute(name, declaration.text_kind, declaration.entries, line))
        else:
            attributes.append(Attribute(name, STRING if spec == "STRING" else NUMERIC, (), line))
    return tuple(attributes)


def _liac_error(exc: liac_arff.ArffException, lines: list[str], source: str, data_index: int,
                header: list[str]) -> ArffFormatError:
    """liac-arff's exception with the file named, its line and, for a data row, the row's beginning and,
    for a value liac-arff rejects, which attribute it belongs to."""
    line = exc.line if 0 < exc.line <= len(lines) else None
    problem = _LINE_IN_MESSAGE.sub("", str(exc), count=1).rstrip(" :.")
    if line and isinstance(exc, (liac_arff.BadNumericalValue, liac_arff.BadNominalValue)):
        culprit = _culprit(lines[line - 1].strip(), header + lines[data_index:data_index + 1])
        if culprit:
            return format_error(source, line, culprit)
    if line and isinstance(exc, liac_arff.BadDataFormat):  # "Bad @DATA instance format" said nothing of why
        culprit = _shape_culprit(lines[line - 1].strip(), header + lines[data_index:data_index + 1])
        if culprit:
            return format_error(source, line, culprit)
    excerpt = _row_excerpt(lines, line, data_index)
    return format_error(source, line, problem if line and problem.endswith(lines[line - 1].strip()) else problem + excerpt)


def _check_repeated_indices(coo: tuple[list, list, list], lines: list[str], row_line: np.ndarray,
                            attributes: list[Attribute], source: str) -> None:
    """A sparse row that gives one attribute twice (``{0 0.5,0 0.2,3 1}``) named by line and attribute: the
    reader kept the last value without a word (the xmlrepo reader refuses the same). A row whose pieces
    outnumber the entries read from it is one; only that row is parsed again, to name the index."""
    _, rows, _ = coo
    read = np.bincount(np.asarray(rows, dtype=np.int64), minlength=len(row_line))
    written = np.array([lines[line - 1].count(",") + 1 if lines[line - 1].strip() not in ("{}", "{ }") else 0
                        for line in row_line], dtype=np.int64)
    suspects = np.flatnonzero(written > read)
    for row in suspects:
        line = int(row_line[row])
        indices = [piece.split(None, 1)[0] for piece in lines[line - 1].strip().strip("{}").split(",") if piece.strip()]
        seen: set[str] = set()
        for index in indices:
            if index in seen and index.isdigit() and int(index) < len(attributes):
                raise format_error(source, line, f"sparse index {index} (attribute {attributes[int(index)].name!r}) "
                                                 "appears more than once in the row; give each attribute once")
            seen.add(index)


def _shape_culprit(row: str, header: list[str]) -> str | None:
    """What is wrong with the shape of a plain (unquoted) row liac-arff refused: a sparse index beyond the
    attributes, or a dense row with another number of values than the header declares; None otherwise."""
    if "'" in row or '"' in row:
        return None
    n_attributes = len(liac_arff.ArffDecoder().decode(header)["attributes"])
    if row.startswith("{"):
        for piece in row.strip("{}").split(","):
            index = piece.split(None, 1)[0] if piece.strip() else ""
            if index.isdigit() and int(index) >= n_attributes:
                return (f"sparse index {index} is beyond the {n_attributes} attributes the header declares (indices run "
                        f"0 to {n_attributes - 1})")
        return None
    n_values = len(row.split(","))
    if n_values != n_attributes:
        return f"the row has {n_values} values, the header declares {n_attributes} attributes"
    return None


def _culprit(row: str, header: list[str]) -> str | None:
    """Which attribute's value of a plain (unquoted) row liac-arff could not convert, in words; None when
    the row needs liac-arff's quoting rules to split it."""
    if "'" in row or '"' in row:
        return None
    declared = liac_arff.ArffDecoder().decode(header)["attributes"]
    if row.startswith("{"):
        pairs = [piece.split(None, 1) for piece in row.strip("{}").split(",") if piece.strip()]
        cells = [(int(p[0]), p[1].strip()) for p in pairs if len(p) == 2 and p[0].isdigit() and int(p[0]) < len(declared)]
    else:
        cells = [(j, token.strip()) for j, token in enumerate(row.split(",")[:len(declared)])]
    for j, token in cells:
        name, spec = declared[j]
        if token == MISSING:
            continue
        if isinstance(spec, list) and token not in spec:
            return f"value {token!r} is not declared for nominal attribute {name!r} {{{','.join(spec)}}}"
        if spec in ("NUMERIC", "REAL", "INTEGER"):
            try:
                float(token)
            except ValueError:
                return f"attribute {name!r}: {token!r} is not a number"
    return None


def _row_excerpt(lines: list[str], line: int | None, data_index: int) -> str:
    if line is None or line <= data_index + 1:
        return ""
    row = lines[line - 1].strip()
    return f" (row {row[:60] + ('...' if len(row) > 60 else '')!r})"


def _dense_values(rows: list[list], n_rows: int, n_attributes: int,
                  text_columns: list[int]) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """liac-arff's dense rows (numbers, nominal codes, None = missing) -> float matrix and text columns."""
    if not text_columns:
        values = np.array(rows, dtype=np.float64).reshape(n_rows, n_attributes)
        return values, {}
    table = np.array(rows, dtype=object).reshape(n_rows, n_attributes)
    text = {j: np.array([MISSING if v is None else v for v in table[:, j]], dtype=object) for j in text_columns}
    table[:, text_columns] = None
    return table.astype(np.float64), text


def _sparse_values(coo: tuple[list, list, list], n_rows: int, n_attributes: int,
                   text_columns: list[int]) -> tuple[sp.csr_matrix, dict[int, np.ndarray]]:
    """liac-arff's COO triplets -> CSR of the header's shape (explicit zeros dropped, NaN kept); text
    attributes go to their own columns (``''`` when a row omits them, ``'?'`` when missing)."""
    data, rows, cols = coo
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    text: dict[int, np.ndarray] = {}
    if text_columns:
        entries = np.array(data, dtype=object)
        for j in text_columns:
            column = np.full(n_rows, "", dtype=object)
            mine = cols == j
            column[rows[mine]] = [MISSING if v is None else v for v in entries[mine]]
            text[j] = column
        keep = ~np.isin(cols, text_columns)
        data, rows, cols = entries[keep].tolist(), rows[keep], cols[keep]
    values = sp.csr_matrix((np.array(data, dtype=np.float64), (rows, cols)), shape=(n_rows, n_attributes))
    values.eliminate_zeros()  # explicit zeros (value 0 / first nominal value) are implicit; NaN stays
    values.sort_indices()
    return values, text


def check_same_attributes(reference: ArffTable, table: ArffTable) -> None:
    """Raise :class:`ArffFormatError` unless ``table`` declares the same attributes as ``reference`` (names,
    types, nominal values, hierarchy), e.g. the train and test files of one data set."""
    ours = [a.signature() for a in reference.attributes]
    theirs = [a.signature() for a in table.attributes]
    if ours == theirs:
        return
    if len(ours) != len(theirs):
        raise format_error(table.source, None, f"{len(theirs)} attributes, but {reference.source} has {len(ours)}")
    j = next(j for j, (a, b) in enumerate(zip(ours, theirs)) if a != b)
    mine, other = table.attributes[j], reference.attributes[j]
    what = (f"the hierarchy of attribute #{j + 1} {mine.name!r}" if mine.kind == other.kind == HIERARCHICAL
            else f"attribute #{j + 1} {_describe(mine)}")
    raise format_error(table.source, mine.line, f"{what} differs from {reference.source} line {other.line} ({_describe(other)})")


def _describe(attribute: Attribute) -> str:
    values = f" {{{','.join(attribute.values)}}}" if attribute.kind == NOMINAL and len(attribute.values) <= 12 else ""
    return f"{attribute.name!r} {attribute.kind}{values}"


# ------------------------------------------------------------------------------------ attribute columns
def select_columns(values: np.ndarray | sp.csr_matrix, columns: list[int] | np.ndarray) -> np.ndarray | sp.csr_matrix:
    """The attribute matrix restricted to ``columns`` (CSR stays CSR)."""
    columns = np.asarray(columns, dtype=np.int64)
    if sp.issparse(values):
        return values.tocsc()[:, columns].tocsr()
    return values[:, columns]

def check_finite_columns(table: "ArffTable", columns: list[int]) -> None:
    """An infinite value in ``columns`` of ``table`` (ARFF's numbers include ``inf``, which the reader keeps)
    named by line and attribute, for columns that become features: NaN is a missing value (``?``) and is
    imputed, an infinity is not. Without this, the first to notice was a scikit-learn model, far from the
    file."""
    values = select_columns(table.values, columns)
    entries = values.tocoo() if sp.issparse(values) else None
    data = entries.data if entries is not None else values.ravel()
    infinite = np.flatnonzero(np.isinf(data))
    if not len(infinite):
        return
    e = int(infinite[0])
    row, col = (int(entries.row[e]), int(entries.col[e])) if entries is not None else divmod(e, values.shape[1])
    name = table.attributes[columns[col]].name
    raise format_error(table.source, int(table.row_line[row]), f"attribute {name!r} has the value {data[e]:g}; "
                                                               "values must be finite (write ? for a missing value)")


def count_missing(values: np.ndarray | sp.csr_matrix) -> int:
    """Number of missing (NaN) entries."""
    data = values.data if sp.issparse(values) else values
    return int(np.count_nonzero(np.isnan(data)))
