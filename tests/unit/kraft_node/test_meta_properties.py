"""``meta.properties`` version 1: the round trip, the refusals of ``read_meta`` (version 0,
corrupt) and of ``check_at_start`` (missing, another node, another cluster), cluster ids."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from adapters.kraft_node.meta_properties import (
    MetaProperties,
    StorageError,
    check_at_start,
    check_cluster_id,
    meta_path,
    random_cluster_id,
    read_meta,
    write_meta,
)
from adapters.kraft_node.properties import settings_from_properties
from tests.unit.kraft_node.test_properties import COMBINED

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
OTHER = "3Db5QLSqSZieL3rJBUUegA"


def node(tmp_path: Path, **more: str):  # type: ignore[no-untyped-def]
    return settings_from_properties({**COMBINED, "log.dirs": f"{tmp_path}/a,{tmp_path}/b",
                                     "metadata.log.dir": f"{tmp_path}/m", **more})


def format_all(settings, cluster_id: str = CLUSTER, node_id: int | None = None) -> None:  # type: ignore[no-untyped-def]
    for d in (*settings.log_dirs, settings.metadata_log_dir):
        d.mkdir(parents=True, exist_ok=True)
        write_meta(d, MetaProperties(cluster_id, settings.node_id if node_id is None else node_id))


def test_round_trip_and_the_exact_text(tmp_path: Path) -> None:
    meta = MetaProperties(CLUSTER, 7)
    path = write_meta(tmp_path, meta)
    assert read_meta(tmp_path) == meta
    assert path.read_text() == ("#\n#Written by kcontrol storage format (meta.properties "
                                "version 1, KRaft mode)\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n"
                                "node.id=7\nversion=1\n")
    assert not (tmp_path / "meta.properties.tmp").exists()


def test_kafkas_own_file_reads_including_keys_we_do_not_know(tmp_path: Path) -> None:
    meta_path(tmp_path).write_text("#\n#Tue Dec 01 10:08:08 PST 2020\ncluster.id="
                                   f"{OTHER}\nversion=1\nnode.id=0\n"
                                   "directory.id=b6Lk7WxsTLGrwfNpIqm1WA\n")
    assert read_meta(tmp_path) == MetaProperties(OTHER, 0)


def test_missing_is_none(tmp_path: Path) -> None:
    assert read_meta(tmp_path) is None


@pytest.mark.parametrize(("text", "fragment"), [
    ("version=0\nbroker.id=3\ncluster.id=abc\n", "version 0 (broker.id=3)"),
    ("cluster.id=MkU3OEVBNTcwNTJENDM2Qg\nnode.id=1\n", "version is 'missing'"),
    ("version=2\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\nnode.id=1\n", "version is '2'"),
    ("version=1\ncluster.id=not-a-uuid\nnode.id=1\n", "cluster.id 'not-a-uuid' is not"),
    ("version=1\nnode.id=1\n", "cluster.id"),
    ("version=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\nnode.id=-1\n", "node.id '-1'"),
    ("version=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n", "node.id 'missing'"),
    ("version=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\nnode.id=\u0661\n", "node.id '\u0661'"),
    ("version=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\nnode.id=1\n", "reserved"),
])
def test_refused_files_name_themselves(tmp_path: Path, text: str, fragment: str) -> None:
    meta_path(tmp_path).write_text(text)
    with pytest.raises(StorageError) as info:
        read_meta(tmp_path)
    assert str(info.value).startswith(f"{meta_path(tmp_path)}: ")
    assert fragment in str(info.value)


def test_undecodable_bytes_are_corrupt(tmp_path: Path) -> None:
    meta_path(tmp_path).write_bytes(b"version=1\n\xff\xfe\n")
    with pytest.raises(StorageError, match="corrupt"):
        read_meta(tmp_path)


def test_an_unreadable_file_is_named(tmp_path: Path) -> None:
    meta_path(tmp_path).mkdir()  # unreadable as a file, even for root
    with pytest.raises(StorageError, match=f"{meta_path(tmp_path)}: cannot be read"):
        read_meta(tmp_path)


def test_check_at_start_returns_the_cluster_id(tmp_path: Path) -> None:
    s = node(tmp_path)
    format_all(s)
    assert check_at_start(s) == CLUSTER


def test_check_at_start_missing_directory_or_file_says_how_to_format(tmp_path: Path) -> None:
    s = node(tmp_path)
    with pytest.raises(StorageError, match=f"{tmp_path}/a: does not exist.*kcontrol storage "
                                           "format --config n.properties --cluster-id"):
        check_at_start(s, "n.properties")
    format_all(s)
    meta_path(s.metadata_log_dir).unlink()
    with pytest.raises(StorageError, match=f"{tmp_path}/m: no meta.properties.*storage format"):
        check_at_start(s)


def test_check_at_start_another_node(tmp_path: Path) -> None:
    s = node(tmp_path)
    format_all(s, node_id=2)
    with pytest.raises(StorageError, match=f"{tmp_path}/a: formatted for node.id 2, but this "
                                           "node's node.id is 1"):
        check_at_start(s)


def test_check_at_start_directories_of_two_clusters(tmp_path: Path) -> None:
    s = node(tmp_path)
    format_all(s)
    write_meta(tmp_path / "b", MetaProperties(OTHER, 1))
    with pytest.raises(StorageError, match=f"{tmp_path}/b: formatted for cluster.id {OTHER}, "
                                           f"but {tmp_path}/a for cluster.id {CLUSTER}"):
        check_at_start(s)


def test_check_at_start_version_0(tmp_path: Path) -> None:
    s = node(tmp_path)
    format_all(s)
    meta_path(tmp_path / "m").write_text("version=0\nbroker.id=1\n")
    with pytest.raises(StorageError, match="ZooKeeper-mode"):
        check_at_start(s)


def test_the_metadata_dir_among_log_dirs_is_checked_once(tmp_path: Path) -> None:
    s = replace(node(tmp_path), metadata_log_dir=tmp_path / "b")
    format_all(s)
    assert check_at_start(s) == CLUSTER


def test_cluster_ids() -> None:
    assert check_cluster_id(CLUSTER) == CLUSTER
    for bad in ["", "MkU3OEVBNTcwNTJENDM2Q", "MkU3OEVBNTcwNTJENDM2Qg==", "MkU3OEVBNTcwNTJENDM2Q+",
                "MkU3OEVBNTcwNTJENDM2Q!", "AAAAAAAAAAAAAAAAAAAAAQ", "MkU3OEVBNTcwNTJENDM2Qh"]:
        with pytest.raises(ValueError):
            check_cluster_id(bad)
    ids = {random_cluster_id() for _ in range(200)}
    assert len(ids) == 200
    for text in ids:
        assert check_cluster_id(text) == text and not text.startswith("-")


def test_write_meta_refuses_a_bad_cluster_id(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a cluster id"):
        write_meta(tmp_path, MetaProperties("nope", 1))
    assert not meta_path(tmp_path).exists()
