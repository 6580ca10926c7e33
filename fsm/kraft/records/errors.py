"""The one error a metadata record's bytes or JSON can raise on the way in."""

from __future__ import annotations


class MalformedRecord(ValueError):
    """Bytes or JSON that are not a metadata record we know. The message names the record
    type, the field and (for bytes) the byte offset where decoding stopped."""
