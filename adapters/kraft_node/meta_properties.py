"""``meta.properties``: the file that marks a directory as formatted for one node of one cluster.

Version 1 (KRaft mode, KIP-631) holds ``version=1``, ``cluster.id`` (22 characters of URL-safe
base64 without padding: 16 bytes) and ``node.id``; every directory of ``log.dirs`` and the
``metadata.log.dir`` has one (``kcontrol storage format`` writes them). Version 0 was
ZooKeeper mode's: ``broker.id`` and an optional cluster id; such a directory is refused. Keys
we do not know (``directory.id``, which Kafka 3.7+ adds) are ignored.

``check_at_start(settings) -> cluster_id`` is what a node runs before it opens anything: every
directory formatted, with one cluster id and this node's id. Files are written atomically: a
temporary file, fsync, rename over, fsync of the directory. Random cluster ids come from
``os.urandom`` here, in the adapter; the cores never make one up.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from adapters.kraft_node.java_properties import (
    PropertiesSyntaxError,
    format_properties,
    read_properties,
)
from adapters.kraft_node.settings import NodeSettings
from fsm.kraft.records.uuid import ZERO_UUID, uuid_from_base64, uuid_of, uuid_to_base64

FILE_NAME = "meta.properties"
VERSION = 1
COMMENT = ("", "Written by kcontrol storage format (meta.properties version 1, KRaft mode)")
"""The comment lines at the top of the file: Kafka writes the date there; ours is fixed, so a
file is a function of its contents."""
RESERVED_CLUSTER_IDS = frozenset({ZERO_UUID, uuid_of(1)})
"""Kafka's reserved UUIDs (``Uuid.ZERO_UUID`` and ``Uuid.ONE_UUID``, the metadata topic's id):
not a cluster id."""


class StorageError(Exception):
    """A directory that is not formatted as this node needs; the message names it and says
    what to do."""


@dataclass(frozen=True, slots=True)
class MetaProperties:
    cluster_id: str
    node_id: int
    version: int = VERSION


def check_cluster_id(text: str) -> str:
    """``text`` if it is a cluster id (22 characters of URL-safe base64 of 16 bytes, not a
    reserved id), else a ``ValueError`` saying why."""
    try:
        value = uuid_from_base64(text)
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a cluster id: {exc}; want 22 characters of URL-safe "
                         "base64 of 16 bytes (kcontrol storage random-uuid makes one)") from None
    if value in RESERVED_CLUSTER_IDS:
        raise ValueError(f"{text!r} is a reserved UUID, not a cluster id")
    return text


def random_cluster_id() -> str:
    """A fresh cluster id from ``os.urandom`` (as Kafka's ``Uuid.randomUuid``: never a reserved
    id, never one that starts with '-', which a command line would take for an option)."""
    while True:
        text = uuid_to_base64(os.urandom(16))
        if not text.startswith("-") and uuid_from_base64(text) not in RESERVED_CLUSTER_IDS:
            return text


def meta_path(directory: Path) -> Path:
    return Path(directory) / FILE_NAME


def read_meta(directory: Path) -> MetaProperties | None:
    """The version 1 ``meta.properties`` of ``directory``, or None when there is none; a
    ``StorageError`` naming the file for one that cannot be read, is corrupt or is version 0."""
    path = meta_path(directory)
    try:
        props = read_properties(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, PropertiesSyntaxError) as exc:
        raise StorageError(f"{path}: corrupt, not a properties file ({exc})") from None
    version = props.get("version", "").strip()
    if version == "0":
        broker = props.get("broker.id", "?").strip()
        raise StorageError(f"{path}: version 0 (broker.id={broker}), written by a "
                           "ZooKeeper-mode broker; a KRaft node needs a directory formatted "
                           "with kcontrol storage format (version 1)")
    if version != str(VERSION):
        raise StorageError(f"{path}: corrupt or unknown: version is {version or 'missing'!r}, "
                           f"want {VERSION}")
    cluster_id = props.get("cluster.id", "").strip()
    try:
        check_cluster_id(cluster_id)
    except ValueError as exc:
        raise StorageError(f"{path}: corrupt: cluster.id {exc}") from None
    node_text = props.get("node.id", "").strip()
    if not re.fullmatch(r"[0-9]+", node_text) or int(node_text) > 2**31 - 1:
        raise StorageError(f"{path}: corrupt: node.id {node_text or 'missing'!r} is not a "
                           "node id")
    return MetaProperties(cluster_id=cluster_id, node_id=int(node_text))


def meta_text(meta: MetaProperties) -> str:
    return format_properties([("cluster.id", meta.cluster_id), ("node.id", str(meta.node_id)),
                              ("version", str(meta.version))], COMMENT)


def write_meta(directory: Path, meta: MetaProperties) -> Path:
    """Write ``meta`` as ``directory``'s ``meta.properties`` atomically (the directory must
    exist); returns the file's path."""
    check_cluster_id(meta.cluster_id)
    path = meta_path(directory)
    tmp = path.with_name(FILE_NAME + ".tmp")
    data = meta_text(meta).encode("ascii")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path


def node_dirs(settings: NodeSettings) -> tuple[Path, ...]:
    """Every directory a node keeps data in: ``log.dirs`` then ``metadata.log.dir`` (once)."""
    dirs = list(settings.log_dirs)
    if settings.metadata_log_dir not in dirs:
        dirs.append(settings.metadata_log_dir)
    return tuple(dirs)


def format_hint(config: str) -> str:
    given = config if config.startswith("--") else f"--config {config}"
    return (f"run kcontrol storage format {given} --cluster-id ID (kcontrol storage "
            "random-uuid prints a new ID)")


def check_at_start(settings: NodeSettings, config: str = "FILE") -> str:
    """The cluster id every directory of the node is formatted with; a ``StorageError`` naming
    the directory when one is missing, unformatted, corrupt, of another node or of another
    cluster than the first. ``config`` is the properties file, for the hint in the message."""
    cluster_id: str | None = None
    first: Path | None = None
    for directory in node_dirs(settings):
        if not directory.is_dir():
            what = "is not a directory" if directory.exists() else "does not exist"
            raise StorageError(f"{directory}: {what}: the node's storage is not formatted; "
                               f"{format_hint(config)}")
        meta = read_meta(directory)
        if meta is None:
            raise StorageError(f"{directory}: no {FILE_NAME}: the directory is not formatted; "
                               f"{format_hint(config)}")
        if meta.node_id != settings.node_id:
            raise StorageError(f"{directory}: formatted for node.id {meta.node_id}, but this "
                               f"node's node.id is {settings.node_id}")
        if cluster_id is None:
            cluster_id, first = meta.cluster_id, directory
        elif meta.cluster_id != cluster_id:
            raise StorageError(f"{directory}: formatted for cluster.id {meta.cluster_id}, but "
                               f"{first} for cluster.id {cluster_id}: the node's directories "
                               "belong to different clusters")
    assert cluster_id is not None  # node_dirs is never empty
    return cluster_id
