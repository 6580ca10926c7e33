"""Java, ZooKeeper's class path, loopback ports and the processes the launcher starts."""

from __future__ import annotations

import ctypes
import os
import re
import shlex
import shutil
import signal
import socket
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from adapters.ensemble.errors import JarsNotFoundError, JavaNotFoundError

HOST = "127.0.0.1"
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
STATE_FILE = "ensemble.json"
LOG4J_FILE = "log4j.properties"
DEFAULT_JAR_DIR = "/usr/share/java"
JAVA_ENV = "KCONTROL_JAVA"
JARS_ENV = "KCONTROL_ZOOKEEPER_JARS"
JVM_OPTS_ENV = "KCONTROL_ZOOKEEPER_JVM_OPTS"  # replaces JVM_OPTS when set
LOGGING_JARS = ("slf4j-log4j12.jar", "log4j-1.2.jar")  # slf4j 1.7 -> log4j 1.2, both Debian's
JVM_OPTS = (
    "-Xms32m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",  # faster start; a test server needs no C2
    "-Djava.awt.headless=true",
)


# --- java and the class path -------------------------------------------------------------------


def find_java(java: str | None = None) -> str:
    """The java binary: ``java`` argument, else ``$KCONTROL_JAVA``, else ``java`` on PATH."""
    wanted = java or os.environ.get(JAVA_ENV)
    if wanted:
        found = shutil.which(wanted)
        if found is None:
            raise JavaNotFoundError(
                f"java binary {wanted!r} (from {'the caller' if java else JAVA_ENV}) is not an "
                f"executable: point {JAVA_ENV} at a java binary, or unset it to use java on PATH"
            )
        return found
    found = shutil.which("java")
    if found is None:
        raise JavaNotFoundError(
            "java is not on PATH: install a JRE (`apt-get install -y default-jre-headless`, or "
            f"`make setup`), or set {JAVA_ENV} to a java binary"
        )
    return found


def _manifest_class_path(jar: Path) -> list[str]:
    try:
        with zipfile.ZipFile(jar) as archive:
            text = archive.read("META-INF/MANIFEST.MF").decode("utf-8", errors="replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return []
    unfolded = re.sub(r"\r?\n ", "", text)  # manifest continuation lines start with one space
    for line in unfolded.splitlines():
        if line.startswith("Class-Path:"):
            return line.partition(":")[2].split()
    return []


def zookeeper_classpath(jar_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """zookeeper.jar, the jars its manifest names (looked up as given, then by name in the jar
    directory), and the slf4j->log4j binding. The directory is ``jar_dir``, else
    ``$KCONTROL_ZOOKEEPER_JARS``, else /usr/share/java. A directory without zookeeper.jar but with
    ``zookeeper-3*.jar`` (an upstream ``lib/``) is taken whole."""
    directory = Path(jar_dir or os.environ.get(JARS_ENV) or DEFAULT_JAR_DIR)
    main_jar = directory / "zookeeper.jar"
    if not main_jar.is_file():
        if sorted(directory.glob("zookeeper-3*.jar")):
            return sorted(str(jar) for jar in directory.glob("*.jar"))
        raise JarsNotFoundError(
            f"ZooKeeper's jars are not in {directory} (no zookeeper.jar): install them with "
            f"`apt-get install -y zookeeper` (or `make setup`), or set {JARS_ENV} to the "
            "directory that holds them"
        )
    entries = [str(main_jar)]
    for ref in _manifest_class_path(main_jar):
        given = Path(ref) if os.path.isabs(ref) else directory / ref
        for candidate in (given, directory / Path(ref).name):
            if candidate.is_file():
                if str(candidate) not in entries:
                    entries.append(str(candidate))
                break
    entries += [str(directory / name) for name in LOGGING_JARS if (directory / name).is_file()]
    return entries


# --- ports and processes -----------------------------------------------------------------------


def free_ports(count: int, host: str = HOST) -> list[int]:
    """``count`` distinct ports the kernel says are free now (bound to port 0, then released)."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def port_is_free(port: int, host: str = HOST) -> bool:
    """Whether a listener could bind ``host:port`` now (with SO_REUSEADDR, as the JVM binds)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def process_alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (Linux /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] not in ("Z", "X")


def process_args(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [arg.decode("utf-8", errors="replace") for arg in raw.split(b"\0") if arg]


def is_server_process(pid: int, config_path: str | os.PathLike[str]) -> bool:
    """Whether ``pid`` is a live java running QuorumPeerMain on exactly this ``zoo.cfg``."""
    args = process_args(pid)
    return (
        bool(args)
        and os.path.basename(args[0]).startswith("java")
        and MAIN_CLASS in args
        and str(config_path) in args
        and process_alive(pid)
    )


def jvm_opts() -> list[str]:
    """JVM options for each server: ``$KCONTROL_ZOOKEEPER_JVM_OPTS`` (split like a shell), else
    JVM_OPTS (small heap, serial GC, C1 only: about 0.5 s faster to a quorum here)."""
    override = os.environ.get(JVM_OPTS_ENV)
    return shlex.split(override) if override is not None else list(JVM_OPTS)


def _parent_death_hook() -> Callable[[], None] | None:
    """A preexec_fn that makes the child get SIGTERM when the thread that started it dies; only
    offered on the main thread, whose end is the process's end."""
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def hook() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM))

    return hook


def wait_for(condition: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def _tail(path: Path, lines: int) -> list[str] | None:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 256 * lines))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    return text.splitlines()[-lines:]
