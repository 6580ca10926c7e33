"""The syntax of a Java properties file (``java.util.Properties.load``), which Kafka's
``server.properties`` and ``meta.properties`` use: ``parse_properties(text) -> dict`` and its
inverse ``format_properties(pairs) -> text``. What the keys mean is ``properties``' business.

The syntax, as Java reads it:

- A *natural* line ends at ``\\n``, ``\\r`` or ``\\r\\n``. A line that ends in an odd number of
  backslashes continues on the next one, whose leading white space is dropped.
- A line whose first non-blank character is ``#`` or ``!`` is a comment; a blank line is
  skipped. (Only at the start of a *logical* line: a continued line that begins with ``#`` is
  data.) White space is space, tab and form feed.
- The key runs to the first unescaped ``=``, ``:`` or white space; then white space, at most one
  ``=`` or ``:``, and white space again are skipped; the rest of the line is the value (its
  trailing white space kept).
- Escapes in keys and values: ``\\t \\n \\r \\f``, ``\\uXXXX`` (exactly four hex digits; a
  surrogate pair of them is one character), and a backslash before any other character stands
  for that character (``\\=``, ``\\:``, ``\\ ``, ``\\#``, ``\\\\``).
- A key given twice: the later one wins.

One difference: Java reads the bytes as ISO-8859-1, we read UTF-8 (``read_properties``), so a
file holding non-ASCII characters written by hand means what it shows. Files Kafka writes are
ASCII (it escapes everything else as ``\\uXXXX``) and read the same either way.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

WHITESPACE = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_ESCAPED = {v: k for k, v in _ESCAPES.items()}
MAX_FILE_BYTES = 1 << 20
"""A configuration file larger than this is refused (nothing we read is anywhere near it)."""


class PropertiesSyntaxError(ValueError):
    """A properties text Java would refuse too (a malformed ``\\uXXXX``); the message names the
    line."""


def _logical_lines(text: str) -> Iterable[tuple[int, str]]:
    """(first line number, logical line) for every line that is not blank or a comment, with
    continuations joined."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    while i < len(lines):
        number = i + 1
        line = lines[i].lstrip(WHITESPACE)
        i += 1
        if not line or line[0] in "#!":
            continue
        parts = []
        while _continues(line):
            parts.append(line[:-1])
            if i >= len(lines):
                line = ""
                break
            line = lines[i].lstrip(WHITESPACE)
            i += 1
        parts.append(line)
        yield number, "".join(parts)


def _continues(line: str) -> bool:
    """Whether ``line`` ends in an odd number of backslashes."""
    run = len(line) - len(line.rstrip("\\"))
    return run % 2 == 1


def _unescape(text: str, number: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(text):  # a lone backslash at the very end (only at end of file)
            break
        nxt = text[i + 1]
        if nxt == "u":
            digits = text[i + 2:i + 6]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise PropertiesSyntaxError(
                    f"line {number}: malformed \\uXXXX escape {text[i:i + 6]!r} "
                    "(want exactly four hex digits)")
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
    return _join_surrogates("".join(out))


def _join_surrogates(text: str) -> str:
    """A ``\\uD83D\\uDE00`` pair is one character (Java strings are UTF-16)."""
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _split_key(line: str) -> tuple[str, str]:
    """The raw (still escaped) key and value of a logical line."""
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" or c in WHITESPACE:
            break
        i += 1
    key, rest = line[:i], line[i:]
    rest = rest.lstrip(WHITESPACE)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(WHITESPACE)
    return key, rest


def parse_properties(text: str) -> dict[str, str]:
    """The key/value pairs of a properties text, in file order (a repeated key keeps its first
    position and its last value)."""
    result: dict[str, str] = {}
    for number, line in _logical_lines(text):
        raw_key, raw_value = _split_key(line)
        result[_unescape(raw_key, number)] = _unescape(raw_value, number)
    return result


def read_properties(path: Path) -> dict[str, str]:
    """``parse_properties`` of the file ``path``; ``OSError``/``UnicodeDecodeError``/
    ``PropertiesSyntaxError`` for the caller to turn into a message naming the file."""
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise PropertiesSyntaxError(f"larger than {MAX_FILE_BYTES} bytes")
    return parse_properties(data.decode("utf-8"))


def escape(text: str, *, key: bool = False) -> str:
    """``text`` written so that ``parse_properties`` reads it back unchanged: backslashes and
    control characters escaped, non-ASCII as ``\\uXXXX`` (pairs above U+FFFF), ``= : # !``
    escaped, and white space escaped everywhere in a key and leading in a value."""
    out: list[str] = []
    for i, c in enumerate(text):
        if c == "\\":
            out.append("\\\\")
        elif c in _ESCAPED:
            out.append("\\" + _ESCAPED[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif c == " " and (key or i == 0):
            out.append("\\ ")
        elif " " <= c <= "~":
            out.append(c)
        else:
            units = c.encode("utf-16-be", "surrogatepass")
            out.extend(f"\\u{int.from_bytes(units[j:j + 2], 'big'):04X}"
                       for j in range(0, len(units), 2))
    return "".join(out)


def format_properties(pairs: Iterable[tuple[str, str]], comments: Iterable[str] = ()) -> str:
    """A properties text: ``#`` comment lines, then one ``key=value`` line per pair."""
    lines = [f"#{c}" if c else "#" for c in comments]
    lines += [f"{escape(k, key=True)}={escape(v)}" for k, v in pairs]
    return "".join(line + "\n" for line in lines)
