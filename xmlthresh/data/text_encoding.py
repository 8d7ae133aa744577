"""How the text files a user gives are decoded: UTF-8, or the Unicode encoding their byte-order mark names,
and a bad byte named by file, line and byte rather than by a codec's position.

Why: a file saved as "Unicode" by a spreadsheet or Notepad is UTF-16 with a mark (bytes FF FE); read as
UTF-8 its first line became ``'ÿþ@\\x00r\\x00...'`` and the parsers blamed a token they could not show. A stray
Latin-1 byte gave Python's "'utf-8' codec can't decode byte 0xe9 in position 82", which names neither the
file nor the line. Every text format of the data layer decodes here, and a format read as bytes (ranked
lists, parsed by a compiled kernel) asks :func:`unicode_mark` for a message before it parses.
"""

from __future__ import annotations

import codecs

from xmlthresh._util.errors import InputError

#: the byte-order marks, longest first (UTF-32's little-endian mark starts with UTF-16's)
MARKS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"), (codecs.BOM_UTF8, "UTF-8"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


class TextEncodingError(InputError):
    """A text file that is not UTF-8 (nor marked as another Unicode encoding); the message names the file, the
    line, the byte and the fix."""


def unicode_mark(raw: bytes) -> str | None:
    """The encoding a byte-order mark at the start of ``raw`` names (``"UTF-16"``, ...), or None."""
    for mark, name in MARKS:
        if raw.startswith(mark):
            return name
    return None


def decode_text(raw: bytes, source: str, fallback: str | None = None) -> str:
    """``raw`` as text: by the Unicode encoding its byte-order mark names (the mark removed), else as UTF-8;
    bytes that are not UTF-8 are read with ``fallback`` when one is given (ARFF files are often Latin-1), else
    a :class:`TextEncodingError` names ``source``, the line and the byte."""
    marked = unicode_mark(raw)
    if marked is not None:
        try:
            return raw.decode({"UTF-8": "utf-8-sig", "UTF-16": "utf-16", "UTF-32": "utf-32"}[marked])
        except UnicodeDecodeError as exc:
            raise TextEncodingError(f"{source}: starts with a {marked} byte-order mark but is not {marked} text "
                                    f"({exc.reason}); re-save it as UTF-8") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if fallback is not None:
            return raw.decode(fallback)
        line = raw.count(b"\n", 0, exc.start) + 1
        raise TextEncodingError(f"{source} line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); re-save the "
                                "file as UTF-8") from None


def read_text(path, source: str | None = None, fallback: str | None = None) -> str:
    """The file ``path`` decoded by :func:`decode_text` (``source`` names it in messages; the path by
    default)."""
    with open(path, "rb") as handle:
        raw = handle.read()
    return decode_text(raw, str(path) if source is None else source, fallback)
