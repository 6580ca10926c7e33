"""The errors of the znode codecs (``adapters.zookeeper.codec``)."""

from __future__ import annotations


class ZnodeDecodeError(ValueError):
    """A znode's data is not what Kafka writes there. ``path`` names the znode, ``reason`` the fault.

    The controller skips and reports such a znode (the partition or admin request is left
    alone); it never applies half of it.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type, tuple[str, str]]:  # picklable (Spark, multiprocessing)
        return (type(self), (self.path, self.reason))


class ZnodeEncodeError(ValueError):
    """A value cannot be written to ``path`` (wrong kind of value, or out of Kafka's ranges)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return (type(self), (self.path, self.reason))
