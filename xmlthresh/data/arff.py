"""Reader for Weka ARFF files (dense and sparse) and the encoding of their attributes as features and labels.

Supported: ``@relation``; ``@attribute`` of type ``numeric``/``real``/``integer``, nominal ``{v1, v2, ...}``,
``string``, ``date`` and Clus's ``hierarchical <edges>`` (the class attribute of hierarchical multi-label
data sets); quoted names and values (``'...'`` or ``"..."`` with backslash escapes); ``%`` comment lines;
missing values ``?``; dense rows (``v1,v2,...``) and sparse rows (``{index value, ...}``, 0-based indices,
an omitted entry is 0 -- for a nominal attribute its first declared value). Not supported (clear error):
``relational`` attributes, instance weights, dense and sparse rows mixed in one file.

:func:`read_arff` returns an :class:`ArffTable`: one float64 matrix over all attributes (dense, or CSR for a
sparse file) holding numbers, and for nominal attributes the index of the value in its declaration; NaN
marks a missing value. Text attributes (string, date, hierarchical) are kept as strings beside it. The
shape always comes from the header: a sparse row that omits trailing zero columns does not shrink it.

Conversion is vectorised (one numpy conversion per block of columns, no Python object per value kept);
only when a conversion fails does a slow scan look for the offending line to report it. Every malformed
input raises :class:`ArffFormatError` naming the file, the line and the problem.

:class:`FeatureEncoder` turns the attribute matrix into a numeric design matrix fitted on training rows
(one-hot nominal attributes, mean/mode imputation); :func:`binary_label_matrix` reads 0/1 label attributes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np
import scipy.sparse as sp

NUMERIC, NOMINAL, STRING, DATE, HIERARCHICAL = "numeric", "nominal", "string", "date", "hierarchical"
TEXT_KINDS = (STRING, DATE, HIERARCHICAL)
MISSING = "?"

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_NUMERIC_TYPES = ("numeric", "real", "integer")


class ArffFormatError(ValueError):
    """A file that does not follow the ARFF format (message: file, line when known, problem)."""


def _error(source: str, line: int | None, problem: str) -> ArffFormatError:
    where = f"{source} line {line}" if line else source
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


# ------------------------------------------------------------------------------------------------ reading
def read_arff(path: str | Path) -> ArffTable:
    """Parse the ARFF file ``path`` (UTF-8, Latin-1 as fallback)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise _error(str(path), None, "file not found") from None
    try:
        return parse_arff(raw.decode("utf-8"), source=str(path), encoding="utf-8")
    except UnicodeDecodeError:
        return parse_arff(raw.decode("latin-1"), source=str(path), encoding="latin-1")


_DATA_LINE = re.compile(r"^[ \t]*@data(?:[ \t][^\n]*)?\r?$", re.IGNORECASE | re.MULTILINE)


def parse_arff(text: str, source: str = "<string>", encoding: str = "utf-8") -> ArffTable:
    """Parse the text of an ARFF file (``source`` names it in error messages).

    The data section goes through the numba kernel (:func:`_scan_data`); quoted values, line endings other
    than ``\\n`` / ``\\r\\n`` and every malformed input go through the Python reader (:func:`_parse_python`),
    which is also the one place that words the error messages."""
    found = _DATA_LINE.search(text)
    if found is None:
        return _parse_python(text, source)
    header_lines = text[:found.start()].splitlines()
    relation, attributes, data_line = _parse_header(header_lines + ["@data"], source)
    body = text[found.end() + 1:] if found.end() < len(text) else ""
    parsed = _parse_fast(body, attributes, first_line=data_line + 2, encoding=encoding)
    if parsed is None:
        return _parse_python(text, source)
    values, text_columns, row_line = parsed
    return ArffTable(source, relation, attributes, values, text_columns, row_line, data_line + 1)


def _parse_python(text: str, source: str) -> ArffTable:
    """The reference reader: one Python pass over the lines, vectorised conversion per block of columns."""
    lines = text.splitlines()
    relation, attributes, data_line = _parse_header(lines, source)
    first = _first_data_line(lines, data_line)
    if first is not None and lines[first].lstrip().startswith("{"):
        values, text_columns, row_line = _parse_sparse(lines, data_line, attributes, source)
    else:
        values, text_columns, row_line = _parse_dense(lines, data_line, attributes, source)
    return ArffTable(source, relation, attributes, values, text_columns, row_line, data_line + 1)


def _first_data_line(lines: list[str], data_line: int) -> int | None:
    for i in range(data_line + 1, len(lines)):
        stripped = lines[i].strip()
        if stripped and not stripped.startswith("%"):
            return i
    return None


def _parse_header(lines: list[str], source: str) -> tuple[str, tuple[Attribute, ...], int]:
    """(relation, attributes, 0-based index of the ``@data`` line)."""
    relation = ""
    attributes: list[Attribute] = []
    seen: dict[str, int] = {}
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        keyword = stripped.split(None, 1)[0].lower()
        line_no = i + 1
        if keyword == "@relation":
            rest = stripped[len("@relation"):].strip()
            relation = _read_name(rest, source, line_no)[0] if rest else ""
        elif keyword == "@attribute":
            attribute = _parse_attribute(stripped[len("@attribute"):].strip(), source, line_no)
            if attribute.name in seen:
                raise _error(source, line_no, f"attribute {attribute.name!r} is declared twice "
                                              f"(first on line {seen[attribute.name]})")
            seen[attribute.name] = line_no
            attributes.append(attribute)
        elif keyword == "@data":
            if not attributes:
                raise _error(source, line_no, "@data before any @attribute")
            return relation, tuple(attributes), i
        else:
            raise _error(source, line_no, f"expected @relation, @attribute or @data, found {stripped[:40]!r}")
    raise _error(source, None, "no @data line: the header is incomplete or this is not an ARFF file")


def _parse_attribute(spec: str, source: str, line_no: int) -> Attribute:
    if not spec:
        raise _error(source, line_no, "@attribute without a name")
    name, end = _read_name(spec, source, line_no)
    type_spec = spec[end:].strip()
    lowered = type_spec.lower()
    if not type_spec:
        raise _error(source, line_no, f"attribute {name!r} has no type")
    if lowered in _NUMERIC_TYPES:
        return Attribute(name, NUMERIC, line=line_no)
    if type_spec.startswith("{"):
        if not type_spec.endswith("}"):
            raise _error(source, line_no, f"nominal attribute {name!r}: missing closing brace")
        values = tuple(_unquote(piece, source, line_no) for piece in _split_outside_quotes(type_spec[1:-1],
                                                                                              source, line_no))
        if not values or any(value == "" for value in values):
            raise _error(source, line_no, f"nominal attribute {name!r} declares an empty value")
        if len(set(values)) != len(values):
            raise _error(source, line_no, f"nominal attribute {name!r} declares a value twice")
        return Attribute(name, NOMINAL, values, line_no)
    if lowered == "string":
        return Attribute(name, STRING, line=line_no)
    if lowered.split(None, 1)[0] == "date":
        return Attribute(name, DATE, line=line_no)
    if lowered.split(None, 1)[0] == "hierarchical":
        entries = tuple(entry.strip() for entry in type_spec.split(None, 1)[1].split(",")) \
            if len(type_spec.split(None, 1)) == 2 else ()
        if not entries or any(not entry for entry in entries):
            raise _error(source, line_no, f"hierarchical attribute {name!r}: empty or malformed hierarchy")
        return Attribute(name, HIERARCHICAL, entries, line_no)
    if lowered == "relational":
        raise _error(source, line_no, f"attribute {name!r}: relational attributes are not supported")
    raise _error(source, line_no, f"attribute {name!r}: unknown type {type_spec[:40]!r}")


def _read_name(text: str, source: str, line_no: int) -> tuple[str, int]:
    """A (possibly quoted) name at the start of ``text``: (name, index after it)."""
    if text[0] in "'\"":
        return _read_quoted(text, 0, source, line_no)
    end = 0
    while end < len(text) and not text[end].isspace() and text[end] != "{":
        end += 1
    return text[:end], end


def _read_quoted(text: str, start: int, source: str, line_no: int) -> tuple[str, int]:
    quote = text[start]
    out: list[str] = []
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        if char == quote:
            return "".join(out), i + 1
        out.append(char)
        i += 1
    raise _error(source, line_no, f"unterminated quote {text[start:start + 40]!r}")


def _split_outside_quotes(text: str, source: str, line_no: int) -> list[str]:
    """Split on commas that are not inside quotes; pieces keep their quotes (see :func:`_unquote`)."""
    pieces: list[str] = []
    current: list[str] = []
    quote = ""
    i = 0
    while i < len(text):
        char = text[i]
        if quote:
            current.append(char)
            if char == "\\" and i + 1 < len(text):
                current.append(text[i + 1])
                i += 2
                continue
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
            current.append(char)
        elif char == ",":
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    if quote:
        raise _error(source, line_no, f"unterminated quote in {text[:60]!r}")
    pieces.append("".join(current))
    return pieces


def _unquote(piece: str, source: str, line_no: int) -> str:
    piece = piece.strip()
    if piece and piece[0] in "'\"":
        value, end = _read_quoted(piece, 0, source, line_no)
        if piece[end:].strip():
            raise _error(source, line_no, f"unexpected text after quoted value {piece[:40]!r}")
        return value
    return piece


def _has_quote(line: str) -> bool:
    return "'" in line or '"' in line


def _parse_dense(lines: list[str], data_line: int, attributes: tuple[Attribute, ...],
                 source: str) -> tuple[np.ndarray, dict[int, np.ndarray], np.ndarray]:
    n_attributes = len(attributes)
    rows: list[list[str]] = []
    row_line: list[int] = []
    quoted_rows: set[int] = set()
    for i in range(data_line + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("%"):
            continue
        if stripped.startswith("{"):
            raise _error(source, i + 1, "sparse row in a dense file (mixing dense and sparse rows is not supported)")
        if _has_quote(stripped):
            tokens = [_unquote(piece, source, i + 1) for piece in _split_outside_quotes(stripped, source, i + 1)]
            quoted_rows.add(len(rows))
        else:
            tokens = stripped.split(",")
        if len(tokens) != n_attributes:
            hint = " (instance weights {w} are not supported)" if tokens[-1].strip().startswith("{") else ""
            raise _error(source, i + 1, f"expected {n_attributes} comma-separated values, found {len(tokens)}{hint}")
        rows.append(tokens)
        row_line.append(i + 1)
    lines_of_rows = np.asarray(row_line, dtype=np.int64)
    n_rows = len(rows)
    values = np.full((n_rows, n_attributes), np.nan)
    text_columns: dict[int, np.ndarray] = {}
    if n_rows == 0:
        for j, attribute in enumerate(attributes):
            if attribute.kind in TEXT_KINDS:
                text_columns[j] = np.empty(0, dtype=object)
        return values, text_columns, lines_of_rows
    columns = list(zip(*rows))
    del rows
    numeric = [j for j, attribute in enumerate(attributes) if attribute.kind == NUMERIC]
    if numeric:
        values[:, numeric] = _to_float_block([columns[j] for j in numeric], [attributes[j] for j in numeric],
                                             lines_of_rows, source).T
    for domain, members in _nominal_domains(attributes).items():
        block = np.array([columns[j] for j in members]).reshape(len(members), n_rows)
        try:
            values[:, members] = _nominal_codes(block, domain, strip=True).T
        except _UndeclaredValue as bad:
            member, row = bad.position
            raise _undeclared(source, int(lines_of_rows[row]), bad.token, attributes[members[member]]) from None
    for j, attribute in enumerate(attributes):
        if attribute.kind in TEXT_KINDS:
            column = np.array([token.strip() for token in columns[j]], dtype=object)
            text_columns[j] = column
    return values, text_columns, lines_of_rows


def _nominal_domains(attributes: tuple[Attribute, ...]) -> dict[tuple[str, ...], list[int]]:
    """Nominal attributes grouped by their declared values (one vectorised lookup per group)."""
    domains: dict[tuple[str, ...], list[int]] = {}
    for j, attribute in enumerate(attributes):
        if attribute.kind == NOMINAL:
            domains.setdefault(attribute.values, []).append(j)
    return domains


def _to_float_block(columns: list[tuple[str, ...]], attributes: list[Attribute], row_line: np.ndarray,
                    source: str) -> np.ndarray:
    """Numeric columns (tuples of tokens) -> float array (columns x rows); ``?`` -> NaN."""
    try:
        return np.array(columns, dtype=np.float64)
    except ValueError:
        pass
    out = np.empty((len(columns), len(row_line)))
    for c, column in enumerate(columns):
        try:
            out[c] = np.array(column, dtype=np.float64)
            continue
        except ValueError:
            pass
        cleaned = ["nan" if token.strip() == MISSING else token for token in column]
        try:
            out[c] = np.array(cleaned, dtype=np.float64)
        except ValueError:
            for r, token in enumerate(cleaned):
                try:
                    float(token)
                except ValueError:
                    raise _error(source, int(row_line[r]), f"attribute {attributes[c].name!r}: "
                                                           f"{token.strip()!r} is not a number") from None
    return out


class _UndeclaredValue(Exception):
    """A token of a nominal attribute that its declaration does not list (at ``position`` in the block)."""

    def __init__(self, token: str, position: tuple[int, ...]):
        super().__init__(token)
        self.token, self.position = token, position


def _nominal_codes(block: np.ndarray, domain: tuple[str, ...], strip: bool) -> np.ndarray:
    """Tokens of nominal attributes sharing ``domain`` -> value codes (float, NaN for ``?``)."""
    if block.size == 0:
        return np.zeros(block.shape)
    if strip:
        block = np.char.strip(block)
    unique, inverse = np.unique(block, return_inverse=True)
    code_of = {value: float(code) for code, value in enumerate(domain)}
    code_of.setdefault(MISSING, np.nan)
    lookup = np.empty(len(unique))
    for u, token in enumerate(unique.tolist()):
        code = code_of.get(token)
        if code is None:
            raise _UndeclaredValue(token, tuple(int(w) for w in np.argwhere(block == token)[0]))
        lookup[u] = code
    return lookup[inverse.reshape(block.shape)]


def _undeclared(source: str, line: int, token: str, attribute: Attribute) -> ArffFormatError:
    return _error(source, line, f"value {token!r} is not declared for nominal attribute {attribute.name!r} "
                                f"{{{','.join(attribute.values)}}}")


def _parse_sparse(lines: list[str], data_line: int, attributes: tuple[Attribute, ...],
                  source: str) -> tuple[sp.csr_matrix, dict[int, np.ndarray], np.ndarray]:
    n_attributes = len(attributes)
    index_tokens: list[str] = []
    value_tokens: list[str] = []
    counts: list[int] = []
    row_line: list[int] = []
    for i in range(data_line + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("%"):
            continue
        line_no = i + 1
        if not stripped.startswith("{"):
            raise _error(source, line_no, "dense row in a sparse file (mixing dense and sparse rows is not supported)")
        if not stripped.endswith("}"):
            raise _error(source, line_no, "sparse row does not end with '}'")
        if "}" in stripped[:-1]:
            raise _error(source, line_no, "malformed sparse row (instance weights {w} are not supported)")
        inner = stripped[1:-1].strip()
        if not inner:
            counts.append(0)
            row_line.append(line_no)
            continue
        if _has_quote(inner):
            pairs = []
            for piece in _split_outside_quotes(inner, source, line_no):
                parts = piece.strip().split(None, 1)
                if len(parts) != 2:
                    raise _error(source, line_no, f"sparse entry {piece.strip()!r} is not 'index value'")
                pairs.append((parts[0], _unquote(parts[1], source, line_no)))
            index_tokens.extend(p[0] for p in pairs)
            value_tokens.extend(p[1] for p in pairs)
            counts.append(len(pairs))
        else:
            tokens = inner.replace(",", " ").split()
            n_items = inner.count(",") + 1
            if len(tokens) != 2 * n_items:
                bad = next((piece.strip() for piece in inner.split(",") if len(piece.split()) != 2), inner)
                raise _error(source, line_no, f"sparse entry {bad!r} is not 'index value'")
            index_tokens.extend(tokens[0::2])
            value_tokens.extend(tokens[1::2])
            counts.append(n_items)
        row_line.append(line_no)
    lines_of_rows = np.asarray(row_line, dtype=np.int64)
    n_rows = len(counts)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    row_of_entry = np.repeat(np.arange(n_rows), counts)
    try:
        index = np.array(index_tokens, dtype=np.int64)
    except ValueError:
        for e, token in enumerate(index_tokens):
            if not token.lstrip("-").isdigit():
                raise _error(source, int(lines_of_rows[row_of_entry[e]]),
                             f"sparse index {token!r} is not an integer") from None
        raise
    bad = (index < 0) | (index >= n_attributes)
    if np.any(bad):
        e = int(np.flatnonzero(bad)[0])
        raise _error(source, int(lines_of_rows[row_of_entry[e]]),
                     f"sparse index {index[e]} outside the {n_attributes} declared attributes (0..{n_attributes - 1})")
    key = row_of_entry * n_attributes + index
    if len(key) > 1 and np.any(np.diff(key) <= 0):
        order = np.argsort(key, kind="stable")
        dup = np.flatnonzero(np.diff(key[order]) == 0)
        if len(dup):
            e = int(order[dup[0]])
            raise _error(source, int(lines_of_rows[row_of_entry[e]]),
                         f"attribute index {index[e]} appears twice in the sparse row")
        index = index[order]
        value_tokens = [value_tokens[e] for e in order]
        row_of_entry = row_of_entry[order]
    kinds = np.array([attribute.kind for attribute in attributes], dtype=object)
    entry_kind = kinds[index]
    data = np.full(len(index), np.nan)
    tokens = np.array(value_tokens, dtype=object)
    is_numeric = entry_kind == NUMERIC
    if np.any(is_numeric):
        numeric_tokens = tokens[is_numeric].tolist()
        try:
            converted = np.array(numeric_tokens, dtype=np.float64)
        except ValueError:
            converted = np.empty(len(numeric_tokens))
            entries = np.flatnonzero(is_numeric)
            for n, token in enumerate(numeric_tokens):
                if token == MISSING:
                    converted[n] = np.nan
                    continue
                try:
                    converted[n] = float(token)
                except ValueError:
                    e = int(entries[n])
                    raise _error(source, int(lines_of_rows[row_of_entry[e]]),
                                 f"attribute {attributes[index[e]].name!r}: {token!r} is not a number") from None
        data[is_numeric] = converted
    for domain, members in _nominal_domains(attributes).items():
        in_domain = np.isin(index, members)
        if not np.any(in_domain):
            continue
        entries = np.flatnonzero(in_domain)
        try:
            data[entries] = _nominal_codes(np.array(tokens[entries].tolist(), dtype=str), domain, strip=False)
        except _UndeclaredValue as bad:
            e = int(entries[bad.position[0]])
            raise _undeclared(source, int(lines_of_rows[row_of_entry[e]]), bad.token,
                              attributes[int(index[e])]) from None
    text_columns: dict[int, np.ndarray] = {}
    for j, attribute in enumerate(attributes):
        if attribute.kind in TEXT_KINDS:
            column = np.full(n_rows, "", dtype=object)
            entries = np.flatnonzero(index == j)
            column[row_of_entry[entries]] = tokens[entries]
            text_columns[j] = column
    values = sp.csr_matrix((data, index, indptr), shape=(n_rows, n_attributes))
    values.eliminate_zeros()  # explicit zeros (value 0 / first nominal value) are implicit; NaN stays
    return values, text_columns, lines_of_rows


# ------------------------------------------------------------------------------- fast path (numba kernel)
_KIND_CODE = {NUMERIC: 0, NOMINAL: 1, STRING: 2, DATE: 2, HIERARCHICAL: 2}
_MAX_SLOW = 4096  # tokens the kernel hands back to Python's float() (nan, inf, > 19 digits, ...)
_POW10 = np.array([10.0 ** k for k in range(23)])  # exactly representable powers of ten
(_OK, _MALFORMED, _TOO_MANY_SLOW) = (0, 1, 2)


def _parse_fast(body: str, attributes: tuple[Attribute, ...], first_line: int,
                encoding: str) -> tuple[np.ndarray | sp.csr_matrix, dict[int, np.ndarray], np.ndarray] | None:
    """The data section through :func:`_scan_data`; None when the Python reader must handle it (quotes,
    unusual line endings, or anything malformed -- it then words the error)."""
    if "'" in body or '"' in body or body.count("\r") != body.count("\r\n"):
        return None
    buf = np.frombuffer(body.encode(encoding), dtype=np.uint8)
    stripped = body.lstrip()
    while stripped.startswith("%"):
        stripped = stripped.split("\n", 1)[1].lstrip() if "\n" in stripped else ""
    sparse = stripped.startswith("{")
    kind = np.array([_KIND_CODE[a.kind] for a in attributes], dtype=np.int64)
    domains: dict[tuple[str, ...], int] = {}
    domain_of = np.full(len(attributes), -1, dtype=np.int64)
    for j, attribute in enumerate(attributes):
        if attribute.kind == NOMINAL:
            domain_of[j] = domains.setdefault(attribute.values, len(domains))
    encoded = [[value.encode(encoding) for value in domain] for domain in domains]
    domain_ptr = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in encoded], out=domain_ptr[1:])
    flat = [value for domain in encoded for value in domain]
    value_ptr = np.zeros(len(flat) + 1, dtype=np.int64)
    np.cumsum([len(v) for v in flat], out=value_ptr[1:])
    value_bytes = np.frombuffer(b"".join(flat), dtype=np.uint8)  # read-only like buf: one compiled signature
    text_attributes = [j for j, a in enumerate(attributes) if a.kind in TEXT_KINDS]
    text_slot = np.full(len(attributes), -1, dtype=np.int64)
    text_slot[text_attributes] = np.arange(len(text_attributes))
    max_rows = body.count("\n") + 1
    max_entries = (body.count(",") + body.count("{") + 1) if sparse else 0
    (status, n_rows, dense, data, index, row_count, row_line, text_span, n_slow, slow_entry, slow_start,
     slow_end) = _scan_data(buf, first_line, sparse, kind, domain_of, domain_ptr, value_ptr, value_bytes, text_slot,
                            len(text_attributes), max_rows, max_entries, _MAX_SLOW)
    if status != _OK:
        return None
    if n_slow:  # tokens beyond the exact fast path: Python's float (nan, inf, many digits); else malformed
        target = data if sparse else dense.reshape(-1)
        try:
            target[slow_entry[:n_slow]] = [float(bytes(buf[a:b]).decode(encoding)) for a, b in
                                           zip(slow_start[:n_slow].tolist(), slow_end[:n_slow].tolist())]
        except ValueError:
            return None
    row_line = row_line[:n_rows].copy()
    text_columns: dict[int, np.ndarray] = {}
    for j in text_attributes:
        spans = text_span[:n_rows, text_slot[j]]
        text_columns[j] = np.array([bytes(buf[a:b]).decode(encoding) if b >= a else "" for a, b in spans.tolist()],
                                   dtype=object)
    if sparse:
        n_entries = int(row_count[:n_rows].sum())
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(row_count[:n_rows], out=indptr[1:])
        values = sp.csr_matrix((data[:n_entries].copy(), index[:n_entries].copy(), indptr),
                               shape=(n_rows, len(attributes)))
        values.eliminate_zeros()
        return values, text_columns, row_line
    return dense[:n_rows].copy(), text_columns, row_line


# status of one data cell (see _cell_value)
_CELL_OK, _CELL_TEXT, _CELL_SLOW, _CELL_BAD = 0, 1, 2, 3


@numba.njit(cache=True)
def _is_blank(byte):
    return byte == 32 or byte == 9 or byte == 13


@numba.njit(cache=True)
def _fast_number(buf, start, end, pow10):
    """(ok, value): the correctly rounded value of a decimal literal when an exact fast path exists (at most
    19 significant digits, mantissa <= 2^53, |decimal exponent| <= 22: one IEEE operation on exact operands,
    Clinger 1990); ok False otherwise (Python's float then decides)."""
    i = start
    negative = False
    if i < end and (buf[i] == 45 or buf[i] == 43):
        negative = buf[i] == 45
        i += 1
    mantissa = np.uint64(0)
    digits = 0
    exponent = 0
    any_digit = False
    while i < end and 48 <= buf[i] <= 57:
        any_digit = True
        if digits >= 19:
            return False, 0.0
        mantissa = mantissa * np.uint64(10) + np.uint64(buf[i] - 48)
        if mantissa > 0:
            digits += 1
        i += 1
    if i < end and buf[i] == 46:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            any_digit = True
            if digits >= 19:
                return False, 0.0
            mantissa = mantissa * np.uint64(10) + np.uint64(buf[i] - 48)
            if mantissa > 0:
                digits += 1
            exponent -= 1
            i += 1
    if not any_digit:
        return False, 0.0
    if i < end and (buf[i] == 101 or buf[i] == 69):
        i += 1
        exponent_negative = False
        if i < end and (buf[i] == 45 or buf[i] == 43):
            exponent_negative = buf[i] == 45
            i += 1
        if i >= end:
            return False, 0.0
        written = 0
        while i < end and 48 <= buf[i] <= 57:
            if written < 100000:
                written = written * 10 + (buf[i] - 48)
            i += 1
        exponent += -written if exponent_negative else written
    if i != end:
        return False, 0.0
    if mantissa == 0:
        return True, -0.0 if negative else 0.0
    if mantissa > np.uint64(9007199254740992) or exponent < -22 or exponent > 22:
        return False, 0.0
    value = float(mantissa) * pow10[exponent] if exponent >= 0 else float(mantissa) / pow10[-exponent]
    return True, -value if negative else value


@numba.njit(cache=True)
def _nominal_code(buf, start, end, domain, domain_ptr, value_ptr, value_bytes):
    """Index of the token among the domain's declared values, -1 when it is not declared."""
    length = end - start
    for v in range(domain_ptr[domain], domain_ptr[domain + 1]):
        if value_ptr[v + 1] - value_ptr[v] != length:
            continue
        same = True
        for k in range(length):
            if buf[start + k] != value_bytes[value_ptr[v] + k]:
                same = False
                break
        if same:
            return v - domain_ptr[domain]
    return -1


@numba.njit(cache=True)
def _cell_value(buf, start, end, kind, domain, domain_ptr, value_ptr, value_bytes, pow10):
    """(status, value) of one data cell [start, end): _CELL_OK with the value (NaN for ``?``), _CELL_TEXT for a
    string attribute (the caller keeps the span), _CELL_SLOW for a number without an exact fast path (Python's
    float decides later), _CELL_BAD for a nominal value that is not declared."""
    if kind == 2:
        return _CELL_TEXT, np.nan
    if end - start == 1 and buf[start] == 63:  # "?": missing
        return _CELL_OK, np.nan
    if kind == 0:
        ok, value = _fast_number(buf, start, end, pow10)
        return (_CELL_OK, value) if ok else (_CELL_SLOW, np.nan)
    if kind == 1:
        code = _nominal_code(buf, start, end, domain, domain_ptr, value_ptr, value_bytes)
        return (_CELL_OK, float(code)) if code >= 0 else (_CELL_BAD, np.nan)
    return _CELL_OK, np.nan


@numba.njit(cache=True)
def _scan_data(buf, first_line, sparse, kind, domain_of, domain_ptr, value_ptr, value_bytes, text_slot, n_text,
               max_rows, max_entries, max_slow):
    """One pass over the data section (bytes after the ``@data`` line): dense rows into a (rows x attributes)
    matrix, or sparse rows into CSR parts; text tokens as byte spans; tokens beyond the exact number fast path
    as spans for Python. Any malformation returns status _MALFORMED (the Python reader then words it)."""
    n_attributes = len(kind)
    dense = np.empty((max_rows if not sparse else 0, n_attributes))
    data = np.empty(max_entries)
    index = np.empty(max_entries, dtype=np.int64)
    row_count = np.zeros(max_rows, dtype=np.int64)
    row_line = np.zeros(max_rows, dtype=np.int64)
    text_span = np.full((max_rows, max(n_text, 1), 2), -1, dtype=np.int64)
    text_span[:, :, 0] = 0
    slow_entry = np.empty(max_slow, dtype=np.int64)
    slow_start = np.empty(max_slow, dtype=np.int64)
    slow_end = np.empty(max_slow, dtype=np.int64)
    n_slow = 0
    n_rows = 0
    n_entries = 0
    n = len(buf)
    pos = 0
    line = first_line
    pow10 = _POW10
    while pos < n:
        end = pos
        while end < n and buf[end] != 10:
            end += 1
        s, e = pos, end
        while s < e and _is_blank(buf[s]):
            s += 1
        while e > s and _is_blank(buf[e - 1]):
            e -= 1
        if s < e and buf[s] != 37:
            if sparse:
                if buf[s] != 123 or buf[e - 1] != 125:
                    return (_MALFORMED, n_rows, dense, data, index, row_count, row_line, text_span, n_slow,
                            slow_entry, slow_start, slow_end)
                p = s + 1
                inner_end = e - 1
                while p < inner_end and _is_blank(buf[p]):
                    p += 1
                last = -1
                count = 0
                while p < inner_end:
                    q = p
                    while q < inner_end and buf[q] != 44:
                        q += 1
                    a, b = p, q
                    while a < b and _is_blank(buf[a]):
                        a += 1
                    while b > a and _is_blank(buf[b - 1]):
                        b -= 1
                    attribute = 0
                    i = a
                    while i < b and 48 <= buf[i] <= 57:
                        attribute = attribute * 10 + (buf[i] - 48)
                        if attribute >= n_attributes:
                            break
                        i += 1
                    if i == a or i >= b or not _is_blank(buf[i]) or attribute >= n_attributes or attribute <= last:
                        return (_MALFORMED, n_rows, dense, data, index, row_count, row_line, text_span, n_slow,
                                slow_entry, slow_start, slow_end)
                    last = attribute
                    while i < b and _is_blank(buf[i]):
                        i += 1
                    status, value = _cell_value(buf, i, b, kind[attribute], domain_of[attribute], domain_ptr,
                                                value_ptr, value_bytes, pow10)
                    if status == _CELL_TEXT:
                        text_span[n_rows, text_slot[attribute], 0] = i
                        text_span[n_rows, text_slot[attribute], 1] = b
                    elif status == _CELL_BAD:
                        return (_MALFORMED, n_rows, dense, data, index, row_count, row_line, text_span, n_slow,
                                slow_entry, slow_start, slow_end)
                    elif status == _CELL_SLOW:
                        if n_slow == max_slow:
                            return (_TOO_MANY_SLOW, n_rows, dense, data, index, row_count, row_line, text_span,
                                    n_slow, slow_entry, slow_start, slow_end)
                        slow_entry[n_slow] = n_entries
                        slow_start[n_slow] = i
                        slow_end[n_slow] = b
                        n_slow += 1
                    data[n_entries] = value
                    index[n_entries] = attribute
                    n_entries += 1
                    count += 1
                    if q >= inner_end:
                        break
                    p = q + 1
                    if p >= inner_end:  # a trailing comma
                        return (_MALFORMED, n_rows, dense, data, index, row_count, row_line, text_span, n_slow,
                                slow_entry, slow_start, slow_end)
                row_count[n_rows] = count
            else:
                attribute = 0
                p = s
                while True:
                    q = p
                    while q < e and buf[q] != 44:
                        q += 1
                    a, b = p, q
                    while a < b and _is_blank(buf[a]):
                        a += 1
                    while b > a and _is_blank(buf[b - 1]):
                        b -= 1
                    if attribute >= n_attributes or a == b:
                        return (_MALFORMED, n_rows, dense, data, index, row_count, row_line, text_span, n_slow,
                                slow_entry, slow_start, slow_end)
                    status, value = _cell_value(buf, a, b, kind[attribute], domain_of[attribute], domain_ptr,
                                                value_ptr, value_bytes, pow10)
                    if status == _CELL_TEXT:
                        text_span[n_rows, text_slot[attribute], 0] = a
                        text_span[n_rows, text_slot[attribute], 1] = b
                    elif status == _CELL_BAD:
                        return (_MALFORMED, n_rows, dense, data, index, row_count, row_line, text_span, n_slow,
                                slow_entry, slow_start, slow_end)
                    elif status == _CELL_SLOW:
                        if n_slow == max_slow:
                            return (_TOO_MANY_SLOW, n_rows, dense, data, index, row_count, row_line, text_span,
                                    n_slow, slow_entry, slow_start, slow_end)
                        slow_entry[n_slow] = n_rows * n_attributes + attribute
                        slow_start[n_slow] = a
                        slow_end[n_slow] = b
                        n_slow += 1
                    dense[n_rows, attribute] = value
                    attribute += 1
                    if q >= e:
                        break
                    p = q + 1
                if attribute != n_attributes:
                    return (_MALFORMED, n_rows, dense, data, index, row_count, row_line, text_span, n_slow,
                            slow_entry, slow_start, slow_end)
            row_line[n_rows] = line
            n_rows += 1
        pos = end + 1
        line += 1
    return (_OK, n_rows, dense, data, index, row_count, row_line, text_span, n_slow, slow_entry, slow_start,
            slow_end)


def check_same_attributes(reference: ArffTable, table: ArffTable) -> None:
    """Raise :class:`ArffFormatError` unless ``table`` declares the same attributes as ``reference`` (names,
    types, nominal values, hierarchy), e.g. the train and test files of one data set."""
    ours = [a.signature() for a in reference.attributes]
    theirs = [a.signature() for a in table.attributes]
    if ours == theirs:
        return
    if len(ours) != len(theirs):
        raise _error(table.source, None, f"{len(theirs)} attributes, but {reference.source} has {len(ours)}")
    j = next(j for j, (a, b) in enumerate(zip(ours, theirs)) if a != b)
    mine, other = table.attributes[j], reference.attributes[j]
    what = (f"the hierarchy of attribute #{j + 1} {mine.name!r}" if mine.kind == other.kind == HIERARCHICAL
            else f"attribute #{j + 1} {_describe(mine)}")
    raise _error(table.source, mine.line, f"{what} differs from {reference.source} line {other.line} ({_describe(other)})")


def _describe(attribute: Attribute) -> str:
    values = f" {{{','.join(attribute.values)}}}" if attribute.kind == NOMINAL and len(attribute.values) <= 12 else ""
    return f"{attribute.name!r} {attribute.kind}{values}"


# ---------------------------------------------------------------------------------- features and labels
def select_columns(values: np.ndarray | sp.csr_matrix, columns: list[int] | np.ndarray) -> np.ndarray | sp.csr_matrix:
    """The attribute matrix restricted to ``columns`` (CSR stays CSR)."""
    columns = np.asarray(columns, dtype=np.int64)
    if sp.issparse(values):
        return values.tocsc()[:, columns].tocsr()
    return values[:, columns]


def count_missing(values: np.ndarray | sp.csr_matrix) -> int:
    """Number of missing (NaN) entries."""
    data = values.data if sp.issparse(values) else values
    return int(np.count_nonzero(np.isnan(data)))


def positive_value(attribute: Attribute) -> int:
    """Code of the value a two-valued nominal attribute encodes as 1: the larger number when both values are
    numbers (``{0,1}`` -> ``1``), the yes/true one of yes/no-like pairs, else the second declared value."""
    first, second = attribute.values
    try:
        return int(float(second) > float(first))
    except ValueError:
        pass
    for code, value in enumerate(attribute.values):
        if value.lower() in ("yes", "y", "true", "t"):
            return code
    return 1


@dataclass
class FeatureEncoder:
    """A numeric design matrix from ARFF attributes, fitted on the training rows (scikit-learn style).

    * numeric: one column, missing values -> mean of the training rows (0 when all are missing);
    * nominal with two values: one 0/1 column (1 = :func:`positive_value`; named ``attr`` for numeric
      ``{0,1}``, else ``attr=value``); more values: one indicator column per value (``attr=value``);
      missing values -> the most frequent value of the training rows (ties: first declared).

    A sparse input gives a CSR output (one-hot columns of nominal attributes with more than two values, or
    whose value 1 is not code 1, are dense columns inside it); a dense input a dense float64 array.
    """

    attributes: tuple[Attribute, ...]
    fill_: np.ndarray = field(init=False, repr=False)
    feature_names_: np.ndarray = field(init=False, repr=False)
    n_all_missing_: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        unsupported = [a.name for a in self.attributes if a.kind not in (NUMERIC, NOMINAL)]
        if unsupported:
            raise ValueError(f"attributes {unsupported[:5]} are not numeric or nominal and cannot be features")
        self.attributes = tuple(self.attributes)
        self._copy = np.array([a.kind == NUMERIC or (len(a.values) == 2 and positive_value(a) == 1)
                               for a in self.attributes], dtype=bool)

    def fit(self, values: np.ndarray | sp.csr_matrix) -> "FeatureEncoder":
        n_rows = values.shape[0]
        n_attr = len(self.attributes)
        if values.shape[1] != n_attr:
            raise ValueError(f"{values.shape[1]} columns for {n_attr} attributes")
        if sp.issparse(values):
            coo = values.tocoo()
            col, val = coo.col, coo.data
        else:
            col = np.tile(np.arange(n_attr), n_rows)
            val = values.ravel()
        present = ~np.isnan(val)
        n_missing = np.bincount(col[~present], minlength=n_attr)
        n_present = n_rows - n_missing
        total = np.bincount(col[present], weights=val[present], minlength=n_attr)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n_present > 0, total / np.maximum(n_present, 1), 0.0)
        fill = mean.copy()
        nominal = [j for j, a in enumerate(self.attributes) if a.kind == NOMINAL]
        if nominal:
            width = max(len(self.attributes[j].values) for j in nominal)
            is_nominal = np.zeros(n_attr, dtype=bool)
            is_nominal[nominal] = True
            keep = present & is_nominal[col]
            counts = np.bincount(col[keep] * width + val[keep].astype(np.int64), minlength=n_attr * width)
            counts = counts.reshape(n_attr, width)
            if sp.issparse(values):  # implicit entries are code 0
                stored = np.bincount(col, minlength=n_attr)
                counts[:, 0] += n_rows - stored
            fill[nominal] = np.argmax(counts[nominal], axis=1)
        self.n_all_missing_ = int(np.count_nonzero((n_present == 0) & (n_rows > 0)))
        self.fill_ = fill
        names: list[str] = []
        for attribute in self.attributes:
            if attribute.kind == NUMERIC:
                names.append(attribute.name)
            elif len(attribute.values) == 2:
                positive = positive_value(attribute)
                numeric_01 = sorted(attribute.values) == ["0", "1"]
                names.append(attribute.name if numeric_01 else f"{attribute.name}={attribute.values[positive]}")
            else:
                names.extend(f"{attribute.name}={value}" for value in attribute.values)
        self.feature_names_ = np.array(names, dtype=str)
        return self

    def transform(self, values: np.ndarray | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
        n_rows = values.shape[0]
        copy_cols = np.flatnonzero(self._copy)
        widths = np.array([1 if self._copy[j] or len(a.values) == 2 else len(a.values)
                           for j, a in enumerate(self.attributes)], dtype=np.int64)
        start = np.concatenate([[0], np.cumsum(widths)])
        n_out = int(start[-1])
        expanded = [j for j in range(len(self.attributes)) if not self._copy[j]]
        if sp.issparse(values):
            csc = values.tocsc()
            block = csc[:, copy_cols]
            block.data = np.where(np.isnan(block.data), self.fill_[copy_cols][np.repeat(
                np.arange(len(copy_cols)), np.diff(block.indptr))], block.data)
            parts = [block]
            positions = [start[copy_cols]]
            if expanded:
                dense = np.asarray(csc[:, expanded].toarray())
                parts.append(sp.csc_matrix(self._expand(dense, expanded)))
                positions.append(np.concatenate([np.arange(start[j], start[j + 1]) for j in expanded]))
            stacked = sp.hstack(parts, format="csc")
            order = np.empty(n_out, dtype=np.int64)
            order[np.concatenate(positions)] = np.arange(n_out)
            out = stacked[:, order].tocsr()
            out.eliminate_zeros()
            out.sort_indices()
            return out
        out = np.empty((n_rows, n_out))
        block = values[:, copy_cols]
        out[:, start[copy_cols]] = np.where(np.isnan(block), self.fill_[copy_cols][None, :], block)
        if expanded:
            dense = self._expand(values[:, expanded], expanded)
            out[:, np.concatenate([np.arange(start[j], start[j + 1]) for j in expanded])] = dense
        return out

    def _expand(self, codes: np.ndarray, attributes: list[int]) -> np.ndarray:
        """Indicator columns of the attributes that are not copied (codes: rows x len(attributes))."""
        columns = []
        for c, j in enumerate(attributes):
            code = np.where(np.isnan(codes[:, c]), self.fill_[j], codes[:, c])
            attribute = self.attributes[j]
            if len(attribute.values) == 2:
                columns.append((code == positive_value(attribute))[:, None])
            else:
                columns.append(code[:, None] == np.arange(len(attribute.values))[None, :])
        return np.hstack(columns).astype(np.float64) if columns else np.empty((codes.shape[0], 0))


def binary_label_matrix(values: np.ndarray | sp.csr_matrix, attributes: tuple[Attribute, ...] | list[Attribute],
                        source: str = "", row_line: np.ndarray | None = None) -> tuple[sp.csr_matrix, int]:
    """0/1 label attributes (nominal declaring ``1``, or numeric 0/1) -> (CSR bool matrix, missing count).

    A missing label value counts as "not relevant" and is counted. A nominal label must declare the value
    ``1``; a numeric one must hold only 0 and 1 (else :class:`ArffFormatError` with the line).
    """
    positive = np.empty(len(attributes))
    for c, attribute in enumerate(attributes):
        if attribute.kind == NOMINAL:
            if "1" not in attribute.values:
                raise _error(source, attribute.line, f"label attribute {attribute.name!r} "
                                                     f"{{{','.join(attribute.values)}}} has no value '1'")
            positive[c] = attribute.values.index("1")
        elif attribute.kind == NUMERIC:
            positive[c] = 1.0
        else:
            raise _error(source, attribute.line, f"label attribute {attribute.name!r} is of type {attribute.kind}; "
                                                 "labels must be nominal {0,1} or numeric 0/1")
    numeric = np.array([a.kind == NUMERIC for a in attributes], dtype=bool)
    if sp.issparse(values):
        coo = values.tocoo()
        row, col, val = coo.row, coo.col, coo.data
        n_missing = int(np.count_nonzero(np.isnan(val)))
        zero_positive = np.flatnonzero(positive == 0)  # value 1 declared first: implicit entries are relevant
        if len(zero_positive):
            dense = values.tocsc()[:, zero_positive].toarray()
            extra_row, extra_c = np.nonzero(dense == 0)  # implicit or explicit code 0 (NaN stays missing)
            keep = ~np.isin(col, zero_positive)
            row = np.concatenate([row[keep], extra_row])
            col = np.concatenate([col[keep], zero_positive[extra_c]])
            val = np.concatenate([val[keep], np.zeros(len(extra_row))])
    else:
        row, col = np.indices(values.shape).reshape(2, -1)
        val = values.ravel()
        n_missing = int(np.count_nonzero(np.isnan(val)))
    missing = np.isnan(val)
    bad = numeric[col] & ~missing & (val != 0) & (val != 1)
    if np.any(bad):
        e = int(np.flatnonzero(bad)[0])
        line = int(row_line[row[e]]) if row_line is not None else None
        raise _error(source, line, f"label attribute {attributes[col[e]].name!r} has value {val[e]:g}; "
                                   "labels must be 0 or 1")
    hit = ~missing & (val == positive[col])
    labels = sp.csr_matrix((np.ones(int(hit.sum()), dtype=bool), (row[hit], col[hit])),
                           shape=values.shape, dtype=bool)
    labels.sum_duplicates()
    labels.sort_indices()
    return labels, n_missing
