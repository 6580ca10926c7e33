"""Kafka's UUIDs (topic ids, incarnation ids, cluster ids): 16 bytes, printed as 22 characters
of URL-safe base64 without padding (``GU_rXds2FGppL1JqXYpx2g``)."""

from __future__ import annotations

import base64

Uuid = bytes
"""Exactly 16 bytes. The core never makes one up: ids arrive in events."""

ZERO_UUID: Uuid = bytes(16)


def uuid_to_base64(value: Uuid) -> str:
    if len(value) != 16:
        raise ValueError(f"a UUID is 16 bytes, not {len(value)}")
    return base64.urlsafe_b64encode(value).decode("ascii").rstrip("=")


def uuid_from_base64(text: str) -> Uuid:
    """The inverse of ``uuid_to_base64``; a clear ``ValueError`` for anything else."""
    if len(text) != 22:
        raise ValueError(f"a UUID prints as 22 base64 characters, not {len(text)}: {text!r}")
    try:
        value = base64.urlsafe_b64decode(text + "==")
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not URL-safe base64: {text!r}") from exc
    if uuid_to_base64(value) != text:
        raise ValueError(f"not a canonical UUID: {text!r}")
    return value


def uuid_of(n: int) -> Uuid:
    """A deterministic id for tests and the checker's world: ``n`` in the low 8 bytes."""
    return n.to_bytes(16, "big")
