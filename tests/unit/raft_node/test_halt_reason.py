"""The line a node halts with: a metadata log I/O error names the directory and the errno."""

from __future__ import annotations

import errno
from pathlib import Path

from adapters.raft_node.halt_reason import halt_reason


def test_a_full_disk_names_the_directory_and_the_errno() -> None:
    got = halt_reason(OSError(errno.ENOSPC, "No space left on device"), Path("/d/meta-0"))
    assert got == ("metadata log I/O error in /d/meta-0: errno 28 ENOSPC "
                   "(No space left on device)")


def test_a_read_only_file_is_named_too() -> None:
    exc = OSError(errno.EROFS, "Read-only file system", "/d/meta-0/quorum-state.tmp")
    got = halt_reason(exc, "/d/meta-0")
    assert got.startswith("metadata log I/O error in /d/meta-0: errno 30 EROFS")
    assert got.endswith(" on /d/meta-0/quorum-state.tmp")


def test_other_failures_keep_their_type_and_message() -> None:
    assert halt_reason(ValueError("bad batch"), "/d") == "ValueError: bad batch"
    assert halt_reason(OSError("no errno"), None) == "OSError: no errno"
    assert halt_reason(OSError(errno.EIO, "Input/output error"), None) == (
        "metadata log I/O error: errno 5 EIO (Input/output error)")
