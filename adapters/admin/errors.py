"""The one error of the admin commands: a refusal whose message says what is wrong."""

from __future__ import annotations


class AdminError(Exception):
    """The command was refused or failed; nothing was written. ``code`` is Kafka's error name
    where Kafka has one (``TOPIC_ALREADY_EXISTS``, ``UNKNOWN_TOPIC_OR_PARTITION``, ...)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code


class ZooKeeperUnreachable(AdminError):
    """No ZooKeeper server of the connect string answered in time (or the session was lost)."""
