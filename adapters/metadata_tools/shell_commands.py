"""The metadata shell's commands, pure: a line in, the lines it prints out, over a
:class:`ShellState` (the tree of ``shell_tree``, the working directory, the history). The REPL
(``repl``) only reads lines, prints and completes with what this module answers.

Commands, as Kafka's ``kafka-metadata-shell.sh`` has them: ``ls [PATH...]``, ``cd [PATH]``,
``cat PATH...``, ``tree PATH...``, ``find [PATH...]``, ``pwd``, ``history [N]``, ``help``,
``man COMMAND``, ``exit``. Paths are absolute or relative to the working directory, ``.`` and
``..`` work, repeated and trailing slashes are ignored, and a component may be a glob (``*``,
``?``, ``[..]``, matched against the directory's children: ``ls /image/topics/byName/*``).
Output follows Kafka's: ``ls`` lists a directory's children sorted (in columns when given a
screen width, one a line otherwise), a file by its name, several targets under ``NAME:``
headers; ``tree`` prints a file's text, a directory's children as ``name:`` lines indented two
spaces a level with each file's text under its name; ``find`` prints every path under its arguments; a missing path is
``ls: PATH: no such file or directory.`` (``cat``/``tree``: ``No such file or directory.``).

Lines are split like a POSIX shell's words (``shlex``: quotes for a name with spaces). A bad
line -- an unknown command, a missing argument, an unbalanced quote -- is one line naming
what is wrong, never an exception. :func:`completions` gives tab completion's candidates for
a buffer: command names for the first word, paths after it (a directory with a trailing
``/``), as Kafka's ``CommandUtils.completePath`` does."""

from __future__ import annotations

import fnmatch
import shlex
from dataclasses import dataclass, field

from adapters.metadata_tools.shell_tree import Dir, Leaf, Node

COMMANDS: dict[str, tuple[str, str]] = {
    "cat": ("cat PATH...", "Show the contents of metadata files."),
    "cd": ("cd [PATH]", "Set the current working directory."),
    "exit": ("exit", "Exit the metadata shell."),
    "find": ("find [PATH...]", "Search for nodes in the directory hierarchy."),
    "help": ("help", "Display this help message."),
    "history": ("history [N]", "Print command history (the last N entries)."),
    "ls": ("ls [PATH...]", "List metadata nodes."),
    "man": ("man COMMAND", "Show the help text for a specific command."),
    "pwd": ("pwd", "Print the current working directory."),
    "tree": ("tree PATH...", "Show the contents of metadata nodes in a tree structure."),
}
"""Command -> (usage, description): Kafka's commands and its descriptions."""

MAX_HISTORY = 1000
MAX_OUTPUT_LINES = 1_000_000
"""Bound on one command's output (``find /`` over a huge image): past it, a final line says
the rest was cut."""
_GLOB = frozenset("*?[")


@dataclass(slots=True)
class ShellState:
    root: Dir
    cwd: str = "/"
    history: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a line did: the lines to print, whether it asked to exit, whether it failed (a
    missing path, a bad argument: a one-shot command then exits with status 1)."""

    lines: tuple[str, ...] = ()
    exit: bool = False
    failed: bool = False


# -- paths -------------------------------------------------------------------------------------
def split_path(path: str) -> list[str]:
    return [c for c in path.split("/") if c]


def normalize(components: list[str]) -> list[str]:
    out: list[str] = []
    for c in components:
        if c == "..":
            if out:
                out.pop()
        elif c != ".":
            out.append(c)
    return out


def absolute(cwd: str, path: str) -> list[str]:
    """The components of ``path`` made absolute against ``cwd``, ``.`` and ``..`` applied."""
    full = path if path.startswith("/") else f"{cwd}/{path}"
    return normalize(split_path(full))


def join(components: list[str]) -> str:
    return "/" + "/".join(components)


def lookup(root: Dir, components: list[str]) -> Node | None:
    node: Node = root
    for c in components:
        if not isinstance(node, Dir):
            return None
        child = node.children.get(c)
        if child is None:
            return None
        node = child
    return node


def expand(root: Dir, cwd: str, pattern: str) -> list[tuple[list[str], Node]]:
    """Every node ``pattern`` names (globs in its components expanded), as (absolute
    components, node), in sorted order; empty if none."""
    full = pattern if pattern.startswith("/") else f"{cwd}/{pattern}"
    found: list[tuple[list[str], Node]] = [([], root)]
    for c in split_path(full):
        nxt: list[tuple[list[str], Node]] = []
        for comps, node in found:
            if c == ".":
                nxt.append((comps, node))
            elif c == "..":
                parent = comps[:-1]
                nxt.append((parent, lookup(root, parent) or root))
            elif isinstance(node, Dir):
                if _GLOB & set(c):
                    nxt += [(comps + [n], node.children[n])
                            for n in node.names() if fnmatch.fnmatchcase(n, c)]
                elif c in node.children:
                    nxt.append((comps + [c], node.children[c]))
        found = nxt
    seen: set[tuple[str, ...]] = set()
    out = []
    for comps, node in found:
        if tuple(comps) not in seen:
            seen.add(tuple(comps))
            out.append((comps, node))
    return out


# -- output helpers ----------------------------------------------------------------------------
def columns(entries: list[str], width: int | None) -> list[str]:
    """``entries`` in as many columns as fit ``width`` (filled down, then across, two spaces
    at least between them); one a line when ``width`` is None."""
    if not entries:
        return []
    if width is None or width < 8:
        return list(entries)
    best = [list(entries)]
    for ncols in range(2, min(len(entries), width // 4) + 1):
        per = -(-len(entries) // ncols)
        cols = [entries[i * per:(i + 1) * per] for i in range(ncols)]
        if not cols[-1]:
            continue
        widths = [max(len(e) for e in col) + 2 for col in cols]
        if sum(widths) > width:
            break
        lines = []
        for row in range(per):
            cells = [col[row] for col in cols if row < len(col)]
            padded = "".join(cell.ljust(widths[i]) for i, cell in enumerate(cells[:-1]))
            lines.append(padded + cells[-1])
        best = [lines]
    return best[0]


def tree_lines(node: Node, depth: int = 0) -> list[str]:
    """Kafka's ``tree``: a file's text; a directory's children, each as a ``name:`` line with
    what it holds under it, two spaces deeper."""
    pad = "  " * depth
    if isinstance(node, Leaf):
        return [f"{pad}{node.text}"]
    out = []
    for child in node.names():
        out.append(f"{pad}{child}:")
        out += tree_lines(node.children[child], depth + 1)
    return out


def find_lines(path: str, node: Node) -> list[str]:
    out = [path]
    if isinstance(node, Dir):
        for child in node.names():
            out += find_lines(path.rstrip("/") + "/" + child if path != "/" else "/" + child,
                              node.children[child])
    return out


# -- the commands ------------------------------------------------------------------------------
def _ls(state: ShellState, args: list[str], width: int | None) -> Outcome:
    files: list[str] = []
    dirs: list[tuple[str, list[str]]] = []
    lines: list[str] = []
    failed = False
    for target in args or ["."]:
        found = expand(state.root, state.cwd, target)
        if not found:
            lines.append(f"ls: {target}: no such file or directory.")
            failed = True
        for comps, node in found:
            name = comps[-1] if comps else "/"
            if isinstance(node, Dir):
                dirs.append((name, node.names()))
            else:
                files.append(name)
    lines += columns(files, width)
    intro = bool(files) or len(dirs) > 1
    first = not files
    for name, children in dirs:  # Kafka's quirk kept: an empty directory prints nothing
        header = []
        if intro:
            header = ([] if first else [""]) + [f"{name}:"]
            first = False
        if children:
            lines += header + columns(children, width)
    return Outcome(tuple(lines), failed=failed)


def _cd(state: ShellState, args: list[str]) -> Outcome:
    if len(args) > 1:
        return Outcome(("cd: too many arguments (cd [PATH])",), failed=True)
    target = args[0] if args else "/"
    found = expand(state.root, state.cwd, target)
    if len(found) > 1:
        return Outcome((f"cd: {target}: names {len(found)} nodes",), failed=True)
    if not found:
        return Outcome((f"cd: {target}: no such directory.",), failed=True)
    comps, node = found[0]
    if not isinstance(node, Dir):
        return Outcome((f"cd: {target}: not a directory.",), failed=True)
    state.cwd = join(comps)
    return Outcome()


def _cat_or_tree(state: ShellState, command: str, args: list[str]) -> Outcome:
    if not args:
        return Outcome((f"{command}: at least one PATH is needed ({COMMANDS[command][0]})",),
                       failed=True)
    lines: list[str] = []
    failed = False
    for target in args:
        found = expand(state.root, state.cwd, target)
        if not found:
            lines.append(f"{command}: {target}: No such file or directory.")
            failed = True
        for _, node in found:
            if command == "tree":
                lines += tree_lines(node)
            elif isinstance(node, Dir):
                lines.append(f"cat: {target}: Is a directory")
                failed = True
            else:
                lines.append(node.text)
    return Outcome(tuple(lines), failed=failed)


def _find(state: ShellState, args: list[str]) -> Outcome:
    lines: list[str] = []
    failed = False
    for target in args or ["."]:
        found = expand(state.root, state.cwd, target)
        if not found:
            lines.append(f"find: {target}: no such file or directory.")
            failed = True
        for comps, node in found:
            shown = target if not _GLOB & set(target) else join(comps)
            lines += find_lines(shown, node)
    return Outcome(tuple(lines), failed=failed)


def _history(state: ShellState, args: list[str]) -> Outcome:
    entries = state.history
    if args:
        if len(args) > 1 or not args[0].isdigit():
            return Outcome(("history: want history [N], N a number of entries",), failed=True)
        entries = entries[-int(args[0]):] if int(args[0]) else []
    start = len(state.history) - len(entries) + 1
    return Outcome(tuple(f"{i:5d}  {e}" for i, e in enumerate(entries, start)))


def help_lines() -> tuple[str, ...]:
    width = max(len(u) for u, _ in COMMANDS.values())
    return ("Welcome to the kcontrol metadata shell (Kafka's kafka-metadata-shell.sh).", "",
            *(f"  {usage.ljust(width)}  {text}" for usage, text in COMMANDS.values()))


def _man(args: list[str]) -> Outcome:
    if len(args) != 1 or args[0] not in COMMANDS:
        return Outcome((f"man: want man COMMAND, one of {', '.join(COMMANDS)}",), failed=True)
    usage, text = COMMANDS[args[0]]
    return Outcome((f"usage: {usage}", "", text))


def run_line(state: ShellState, line: str, *, width: int | None = None) -> Outcome:
    """Run one line (recorded in the history unless blank); what it prints."""
    if not line.strip():
        return Outcome()
    state.history.append(line.strip())
    del state.history[:-MAX_HISTORY]
    try:
        words = shlex.split(line)
    except ValueError as exc:
        return Outcome((f"error: {exc}",), failed=True)
    return run_words(state, words, width=width)


def run_words(state: ShellState, words: list[str], *, width: int | None = None) -> Outcome:
    """Run one command given as words (a one-shot command line's trailing arguments)."""
    if not words:
        return Outcome()
    command, args = words[0], words[1:]
    if command not in COMMANDS:
        return Outcome((f"{command}: unknown command; commands: {', '.join(COMMANDS)}",),
                       failed=True)
    if command in ("pwd", "exit", "help") and args:
        return Outcome((f"{command}: takes no arguments",), failed=True)
    if command == "ls":
        out = _ls(state, args, width)
    elif command == "cd":
        out = _cd(state, args)
    elif command in ("cat", "tree"):
        out = _cat_or_tree(state, command, args)
    elif command == "find":
        out = _find(state, args)
    elif command == "pwd":
        out = Outcome((state.cwd,))
    elif command == "history":
        out = _history(state, args)
    elif command == "man":
        out = _man(args)
    elif command == "help":
        out = Outcome(help_lines())
    else:
        out = Outcome(exit=True)
    if len(out.lines) > MAX_OUTPUT_LINES:
        cut = len(out.lines) - MAX_OUTPUT_LINES
        out = Outcome(out.lines[:MAX_OUTPUT_LINES] + (f"... {cut} more lines cut",),
                      out.exit, out.failed)
    return out


# -- completion --------------------------------------------------------------------------------
def completions(state: ShellState, buffer: str) -> list[str]:
    """Tab completion's candidates for the word being typed at the end of ``buffer`` (the
    line up to the cursor): command names for the first word, paths after it -- each the
    whole word, a directory with a trailing ``/``."""
    words = buffer.split(" ")
    word = words[-1]
    if len([w for w in words[:-1] if w]) == 0:
        return [c for c in sorted(COMMANDS) if c.startswith(word)]
    comps = absolute(state.cwd, word)
    if word.endswith("/") or not word:
        directory, prefix = comps, ""
    else:
        directory, prefix = comps[:-1], split_path(word)[-1] if split_path(word) else ""
        if word.endswith(("/.", "/..")) or word in (".", ".."):
            return [word + "/"]
    node = lookup(state.root, directory)
    if not isinstance(node, Dir):
        return []
    head = word[:word.rfind("/") + 1]
    out = []
    for name in node.names():
        if name.startswith(prefix):
            child = node.children[name]
            out.append(head + name + ("/" if isinstance(child, Dir) else ""))
    return out
