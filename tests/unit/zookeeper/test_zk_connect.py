"""``--zookeeper-auth``: parsing ``user:password``, the ACL kcontrol creates znodes with, and
the kazoo client ``make_client`` builds (no server needed: see
tests/integration/runtime/test_runtime_acl.py for the ensemble)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from kazoo.security import OPEN_ACL_UNSAFE, Permissions, make_digest_acl_credential

from adapters.cli import main
from adapters.cli.zk_options import parse_zookeeper_auth
from adapters.zookeeper.connect import ZkAuth, ZkAuthError, default_acl, make_client, secure_acl


@pytest.mark.parametrize(("text", "user", "password"), [
    ("kcontrol:secret", "kcontrol", "secret"),
    ("a:b:c", "a", "b:c"),  # ZooKeeper's digest splits at the first colon
    ("user:pass word", "user", "pass word"),
])
def test_parse(text: str, user: str, password: str) -> None:
    auth = ZkAuth.parse(text)
    assert (auth.user, auth.password, auth.credential) == (user, password, text)
    assert password not in repr(auth)


@pytest.mark.parametrize(("text", "message"), [
    ("", "no ':'"),
    ("kcontrol", "no ':'"),
    (":secret", "user is empty"),
    ("kcontrol:", "password of user 'kcontrol' is empty"),
    ("kc ontrol:secret", "spaces or control characters"),
    ("kc\x01:secret", "spaces or control characters"),
])
def test_parse_errors_are_clear_and_never_repeat_the_password(text: str, message: str) -> None:
    with pytest.raises(ZkAuthError, match=message) as info:
        ZkAuth.parse(text)
    assert "secret" not in str(info.value)


def test_secure_acl_is_world_read_and_all_for_the_identity() -> None:
    auth = ZkAuth("kcontrol", "secret")
    world, own = secure_acl(auth)
    assert (world.perms, world.id.scheme, world.id.id) == (Permissions.READ, "world", "anyone")
    assert (own.perms, own.id.scheme) == (Permissions.ALL, "digest")
    assert own.id.id == make_digest_acl_credential("kcontrol", "secret")
    assert "secret" not in own.id.id  # a hash, not the password
    assert default_acl(auth) == secure_acl(auth)
    assert default_acl(None) == OPEN_ACL_UNSAFE


def test_make_client_with_and_without_auth() -> None:
    auth = ZkAuth("kcontrol", "secret")
    c = make_client("127.0.0.1:2181/chroot", auth=auth, timeout=3.0)
    try:
        assert c.auth_data == {("digest", "kcontrol:secret")}
        assert c.default_acl == secure_acl(auth)
        assert c.chroot == "/chroot"
    finally:
        c.close()
    plain = make_client("127.0.0.1:2181", timeout=3.0)
    try:
        assert not plain.auth_data and plain.default_acl is None
    finally:
        plain.close()


def test_the_click_option_parses_and_reads_the_environment() -> None:
    assert parse_zookeeper_auth(None, None, None) is None
    assert parse_zookeeper_auth(None, None, "") is None
    assert parse_zookeeper_auth(None, None, "u:p") == ZkAuth("u", "p")
    for args, env in ((["--zookeeper-auth", "no-colon"], {}),
                      ([], {"KCONTROL_ZOOKEEPER_AUTH": "bob:"})):
        for command in (["topics", "list"], ["reassign", "--status"],
                        ["elect-preferred", "--all"], ["audit"], ["controller", "--broker-id", "1"]):
            r = CliRunner().invoke(main, [*command, "--zookeeper", "127.0.0.1:1", *args],
                                   env=env)
            assert r.exit_code == 2 and "--zookeeper-auth" in r.output, (command, r.output)
