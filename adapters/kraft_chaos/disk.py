"""``SmallDisk``: a small tmpfs mounted at a node's data directory, made full or read-only on
demand -- the faulty disk of the KRaft fault campaign -- and ``mount_problem``, whether this
process may mount one at all (root, or ``CAP_SYS_ADMIN``, and a ``mount`` command; a CI
container often has neither: callers then report disk faults unavailable).

Faults:

- ``fill()``: a filler file written until the filesystem answers ``ENOSPC``; every later
  write that needs a new page fails with ``ENOSPC``;
- ``read_only()``: ``mount -o remount,ro``. Linux refuses that (``EBUSY``) while a file on
  the filesystem is open for writing -- as a running node's log segment is -- so then a
  read-only bind mount is laid over the directory instead: a file opened, created, renamed
  or removed under the path from then on fails with ``EROFS``, while descriptors opened
  before keep writing to the tmpfs below (the node's next segment, snapshot or quorum-state
  file is what fails);
- ``restore()`` undoes either and removes the filler.

A tmpfs keeps its files while mounted, across the death of the node process using it: a node
killed and restarted on it finds its log. ``unmount()`` (idempotent; also run at interpreter
exit) throws the files away.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

FILLER = ".kcontrol-filler"
MOUNT_TIMEOUT_S = 20.0
MAX_SIZE_MIB = 4096
_CHUNKS = (1 << 20, 4096, 1)  # fill with big writes, then the last pages' worth

_probe_lock = threading.Lock()
_probe: list[str | None] = []  # the cached answer of mount_problem, once tried


class DiskUnavailable(RuntimeError):
    """This process cannot mount a small disk here (the message says why)."""


class DiskError(RuntimeError):
    """A mount, remount or unmount failed, or the fault asked does not apply now."""


def _run(args: list[str]) -> None:
    """Run a mount command; ``DiskError`` with its first line of output if it fails."""
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=MOUNT_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise DiskError(f"`{' '.join(args)}`: {exc}") from exc
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise DiskError(f"`{' '.join(args)}` exited {done.returncode}: "
                        f"{said[0] if said else 'no message'}")


def _try_mounting() -> str | None:
    if shutil.which("mount") is None or shutil.which("umount") is None:
        return "no mount/umount command on PATH"
    scratch = Path(tempfile.mkdtemp(prefix="kcontrol-mount-probe-"))
    mounted = False
    try:
        _run(["mount", "-t", "tmpfs", "-o", "size=1m", "kcontrol-probe", str(scratch)])
        mounted = True
        (scratch / "probe").write_bytes(b"x")
        _run(["mount", "-o", "remount,ro", str(scratch)])
        try:
            (scratch / "probe2").write_bytes(b"x")
        except OSError as exc:
            if exc.errno != errno.EROFS:
                return f"a write on a read-only tmpfs failed with {exc}, not EROFS"
        else:
            return "a tmpfs remounted read-only still took a write"
        return None
    except DiskError as exc:
        return str(exc)
    except OSError as exc:
        return f"probing a tmpfs at {scratch}: {exc}"
    finally:
        if mounted:
            with contextlib.suppress(DiskError):
                _run(["umount", "-l", str(scratch)])
        with contextlib.suppress(OSError):
            scratch.rmdir()


def mount_problem() -> str | None:
    """None when this process can mount a small tmpfs and remount it read-only (tried once,
    cached, on a scratch directory); else why not, in one line."""
    with _probe_lock:
        if not _probe:
            _probe.append(_try_mounting())
        return _probe[0]


class SmallDisk:
    """A tmpfs of ``size_mib`` MiB mounted at ``path`` (created if absent; must be empty and
    not a mount point already). ``DiskUnavailable`` if this process cannot mount."""

    def __init__(self, path: Path, size_mib: int = 64) -> None:
        if not 1 <= size_mib <= MAX_SIZE_MIB:
            raise ValueError(f"size {size_mib} MiB: 1 to {MAX_SIZE_MIB}")
        problem = mount_problem()
        if problem is not None:
            raise DiskUnavailable(f"no small disk at {path}: {problem}")
        self.path = Path(path).absolute()
        self.size_mib = size_mib
        self.path.mkdir(parents=True, exist_ok=True)
        if os.path.ismount(self.path):
            raise ValueError(f"{self.path} is a mount point already")
        if any(self.path.iterdir()):
            raise ValueError(f"{self.path} is not empty: a small disk hides what is there")
        _run(["mount", "-t", "tmpfs", "-o", f"size={size_mib}m,mode=0755",
              "kcontrol-smalldisk", str(self.path)])
        self.state = "ok"  # "ok" | "full" | "read-only" | "unmounted"
        self._overlay = False  # read-only by a bind mount over the tmpfs
        self._remounted_ro = False
        atexit.register(self.unmount)

    def __repr__(self) -> str:
        return f"SmallDisk({str(self.path)!r}, {self.size_mib} MiB, {self.state})"

    def _need_mounted(self, what: str) -> None:
        if self.state == "unmounted":
            raise DiskError(f"{what} {self.path}: unmounted")

    def fill(self) -> int:
        """Write a filler file until ``ENOSPC``; the bytes written."""
        self._need_mounted("fill")
        if self.state == "read-only":
            raise DiskError(f"fill {self.path}: read-only (restore first)")
        written = 0
        fd = os.open(self.path / FILLER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for size in _CHUNKS:
                block = bytes(size)
                while True:
                    try:
                        n = os.write(fd, block)
                    except OSError as exc:
                        if exc.errno != errno.ENOSPC:
                            raise DiskError(f"fill {self.path}: {exc}") from exc
                        break
                    written += n
                    if n < size:
                        break
        finally:
            os.close(fd)
        self.state = "full"
        return written

    def free_bytes(self) -> int:
        """What the filesystem says is free (0 once full)."""
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_frsize

    def read_only(self) -> None:
        """``mount -o remount,ro``; with a file open for writing (``EBUSY``), a read-only
        bind mount over the path instead (see the module's notes)."""
        self._need_mounted("read-only")
        if self.state == "read-only":
            return
        try:
            _run(["mount", "-o", "remount,ro", str(self.path)])
            self._remounted_ro = True
        except DiskError:
            _run(["mount", "--bind", str(self.path), str(self.path)])
            self._overlay = True
            _run(["mount", "-o", "remount,ro,bind", str(self.path)])
        self.state = "read-only"

    def restore(self) -> None:
        """Writable again (the remount or the overlay undone) and the filler removed."""
        self._need_mounted("restore")
        if self._overlay:
            self._umount_one()
            self._overlay = False
        if self._remounted_ro:
            _run(["mount", "-o", "remount,rw", str(self.path)])
            self._remounted_ro = False
        with contextlib.suppress(FileNotFoundError):
            (self.path / FILLER).unlink()
        self.state = "ok"

    def _umount_one(self) -> None:
        try:
            _run(["umount", str(self.path)])
        except DiskError:
            _run(["umount", "-l", str(self.path)])  # busy: detach now, free when unused

    def unmount(self) -> None:
        """Unmount (lazily if busy); idempotent. The files are gone."""
        if self.state == "unmounted":
            return
        if self._overlay:
            self._umount_one()
            self._overlay = False
        self._umount_one()
        self.state = "unmounted"
        with contextlib.suppress(ValueError):
            atexit.unregister(self.unmount)
