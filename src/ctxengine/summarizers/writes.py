"""Files changed indirectly: by a script the session wrote and ran, by a patch applied with
``patch``/``git apply``, and files that ``git diff``/``git status`` output shows as changed.
Read from text alone (no execution).

- Script sources are Python (``open(p, "w")``, ``Path(p).write_text``, ``shutil.copy(a, p)``,
  ``os.replace(a, p)``, ``os.remove(p)``, with a path written as a literal or as a name bound
  once to a literal), Node (``fs.writeFileSync(p, …)``) or shell (:func:`shell_effects`).
- A script runs as ``python x.py``, ``python3 -m``-less ``x.py``, ``bash x.sh``, ``node x.js``,
  ``./x.py``; inline code runs as ``python -c CODE``, ``python - <<EOF``, ``node -e CODE``,
  ``bash <<EOF``.
- A patch names its files in ``+++ b/path`` lines (``-pN`` strips N components); GNU patch
  prints ``patching file path``.
- A formatter run through any command (``make fmt``, ``npm run format``) names the files it
  changed: ``reformatted PATH`` (black), ``Fixing PATH`` (isort), ``Formatted PATH`` (dart),
  and prettier's ``PATH 12ms`` lines (without ``(unchanged)``) when the command names prettier
  or the output holds prettier's ``(unchanged)`` lines (:func:`reformatted_in_output`).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

from ctxengine.policy.defaults import LEDGER_WALK_CACHE
from ctxengine.summarizers.runs import runs_something
from ctxengine.summarizers.shell import Command, FileEffect, commands, shell_effects

_PY_OPEN_LITERAL = re.compile(
    r"""\bopen\(\s*[rbfu]?(['"])([^'"\n]+)\1\s*,\s*(?:mode\s*=\s*)?[rbf]?(['"])([rwxab+t]+)\3"""
)
_PY_OPEN_NAME = re.compile(
    r"""\bopen\(\s*([A-Za-z_]\w*)\s*,\s*(?:mode\s*=\s*)?(['"])([rwxab+t]+)\2"""
)
_PY_PATH_WRITE = re.compile(
    r"""\bPath\(\s*[rbfu]?(['"])([^'"\n]+)\1\s*\)\.write_(?:text|bytes)\("""
)
_PY_NAME_WRITE = re.compile(r"\b([A-Za-z_]\w*)\.write_(?:text|bytes)\(")
_PY_COPY = re.compile(
    r"""\b(?:shutil\.(?:copy2?|copyfile|move)|os\.(?:rename|replace))\(\s*[^,()]+,\s*"""
    r"""[rbfu]?(['"])([^'"\n]+)\1"""
)
_PY_REMOVE = re.compile(r"""\bos\.(?:remove|unlink)\(\s*[rbfu]?(['"])([^'"\n]+)\1""")
_PY_ASSIGN = re.compile(
    r"""^\s*([A-Za-z_]\w*)\s*=\s*(?:(?:pathlib\.)?Path\(\s*)?[rbfu]?(['"])([^'"\n]+)\2""",
    re.MULTILINE,
)
_NODE_WRITE = re.compile(
    r"""\bfs(?:\.promises)?\.(?:writeFileSync|writeFile|appendFileSync|appendFile)\(\s*"""
    r"""(['"`])([^'"`\n]+)\1"""
)


def _bindings(source: str) -> dict[str, str]:
    """Names bound to one string literal in ``source`` (a name bound twice is dropped)."""
    seen: dict[str, set[str]] = {}
    for m in _PY_ASSIGN.finditer(source):
        seen.setdefault(m.group(1), set()).add(m.group(3))
    return {name: next(iter(values)) for name, values in seen.items() if len(values) == 1}


def python_writes(source: str) -> tuple[FileEffect, ...]:
    """Files a Python source writes (``wrote``) or removes (``deleted``), in order of
    appearance, each once."""
    names = _bindings(source)
    found: list[tuple[int, FileEffect]] = []
    for m in _PY_OPEN_LITERAL.finditer(source):
        if set(m.group(4)) & set("wax+"):
            found.append((m.start(), FileEffect("wrote", m.group(2))))
    for m in _PY_OPEN_NAME.finditer(source):
        if set(m.group(3)) & set("wax+") and m.group(1) in names:
            found.append((m.start(), FileEffect("wrote", names[m.group(1)])))
    for m in _PY_PATH_WRITE.finditer(source):
        found.append((m.start(), FileEffect("wrote", m.group(2))))
    for m in _PY_NAME_WRITE.finditer(source):
        if m.group(1) in names:
            found.append((m.start(), FileEffect("wrote", names[m.group(1)])))
    for m in _PY_COPY.finditer(source):
        found.append((m.start(), FileEffect("wrote", m.group(2))))
    for m in _PY_REMOVE.finditer(source):
        found.append((m.start(), FileEffect("deleted", m.group(2))))
    return tuple(dict.fromkeys(e for _, e in sorted(found, key=lambda t: t[0])))


_PY_OPEN_ANY = re.compile(
    r"""\bopen\(\s*[rbfu]?(['"])[^'"\n]+\1|\bPath\(\s*[rbfu]?(['"])[^'"\n]+\2"""
)
_NODE_READ = re.compile(r"""\bfs(?:\.promises)?\.\w+\(\s*(['"`])[^'"`\n]+\1""")


def opens_files(source: str, language: str) -> bool:
    """True when a script's source opens a file it names literally (``open("a.py")``,
    ``Path("a.py")``, ``fs.readFileSync("a.js")``, a shell read or write): a tool that works
    on other files, not part of the project."""
    if language == "python":
        return _PY_OPEN_ANY.search(source) is not None
    if language == "node":
        return _NODE_READ.search(source) is not None
    if language == "shell":
        return bool(shell_effects(source))
    return False


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def source_writes(source: str, language: str) -> tuple[FileEffect, ...]:
    """Files a script in ``language`` (``python``, ``node``, ``shell``) writes or removes."""
    if language == "python":
        return python_writes(source)
    if language == "node":
        found = (FileEffect("wrote", m.group(2)) for m in _NODE_WRITE.finditer(source))
        return tuple(dict.fromkeys(found))
    if language == "shell":
        return tuple(e for e in shell_effects(source) if e.action != "read")
    return ()


_LANGUAGES: dict[str, str] = {".py": "python", ".js": "node", ".mjs": "node", ".cjs": "node",
                              ".sh": "shell", ".bash": "shell"}  # fmt: skip


def language_of(path: str) -> str:
    """``python``, ``node`` or ``shell`` from a script's extension, else ``""``."""
    return _LANGUAGES.get(posixpath.splitext(path)[1], "")


def _interpreter(name: str) -> str:
    if re.fullmatch(r"python[\d.]*|pypy3?", name):
        return "python"
    if name in ("node", "bun", "deno"):
        return "node"
    if name in ("bash", "sh", "zsh", "dash"):
        return "shell"
    return ""


@dataclass(frozen=True, slots=True)
class Execution:
    """Code a command runs: a script file (``path``) or inline code (``code``).

    Attributes:
        language: ``python``, ``node`` or ``shell``.
        path: the script as written, or ``""`` for inline code.
        code: the inline code, or ``""`` for a script file.
        cwd: the directory an earlier ``cd`` in the same command moved to (``""``: the
            command's starting directory).
    """

    language: str
    path: str = ""
    code: str = ""
    cwd: str = ""


def _execution(cmd: Command) -> Execution | None:
    argv = list(cmd.argv)
    language = _interpreter(cmd.name)
    if not language:
        if argv and argv[0].startswith("./") and language_of(argv[0]):
            return Execution(language_of(argv[0]), path=argv[0][2:], cwd=cmd.cwd)
        return None
    args = argv[1:]
    if language == "shell" and any(re.fullmatch(r"-[a-z]*c[a-z]*", a) for a in args):
        return None  # ``bash -lc CODE``: its effects are the command's own (shell_effects)
    flag = {"python": "-c", "node": "-e", "shell": "-c"}[language]
    if flag in args and args.index(flag) + 1 < len(args):
        return Execution(language, code=args[args.index(flag) + 1], cwd=cmd.cwd)
    operands = [a for a in args if not a.startswith("-")]
    if "-m" in args:
        return None
    if operands and operands[0] != "-":
        return Execution(language, path=operands[0], cwd=cmd.cwd)
    if cmd.heredoc is not None:
        return Execution(language, code=cmd.heredoc, cwd=cmd.cwd)
    return None


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def executions(command: str) -> tuple[Execution, ...]:
    """The scripts and inline code ``command`` runs, in order."""
    return tuple(e for e in (_execution(c) for c in commands(command)) if e is not None)


@dataclass(frozen=True, slots=True)
class Written:
    """A file a command wrote from text it carries: a heredoc (``cat > p <<EOF``,
    ``tee p <<EOF``) whose body is known."""

    path: str
    text: str
    cwd: str = ""


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def heredoc_files(command: str) -> tuple[Written, ...]:
    """Files ``command`` writes from a heredoc body, with that body."""
    out: list[Written] = []
    for cmd in commands(command):
        if cmd.heredoc is None:
            continue
        if cmd.name == "cat" and cmd.writes:
            out.extend(Written(p, cmd.heredoc, cmd.cwd) for p in cmd.writes)
        elif cmd.name == "tee":
            out.extend(Written(a, cmd.heredoc, cmd.cwd) for a in cmd.argv[1:] if a[:1] != "-")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PatchRun:
    """A ``patch`` or ``git apply`` run: the patch file it reads (``""`` when fed by a
    heredoc, then ``text`` holds the patch), how many leading components it strips, the
    files it names as targets, and its directory."""

    patch: str
    strip: int
    text: str = ""
    targets: tuple[str, ...] = ()
    cwd: str = ""


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def patch_runs(command: str) -> tuple[PatchRun, ...]:
    """``patch [-pN] [file] < p`` / ``patch -i p`` / ``git apply p`` runs in ``command``."""
    out: list[PatchRun] = []
    for cmd in commands(command):
        argv = list(cmd.argv)
        if cmd.name == "patch":
            strip = next((int(a[2:]) for a in argv if re.fullmatch(r"-p\d+", a)), -1)
            given = argv[argv.index("-i") + 1] if "-i" in argv[:-1] else cmd.stdin
            targets = tuple(a for a in argv[1:] if not a.startswith("-") and a != given)
            out.append(PatchRun(given, strip, cmd.heredoc or "", targets, cmd.cwd))
        elif cmd.name == "git" and argv[1:2] == ["apply"] and "--check" not in argv:
            strip = next((int(a[2:]) for a in argv if re.fullmatch(r"-p\d+", a)), 1)
            files = [a for a in argv[2:] if not a.startswith("-")]
            out.extend(PatchRun(f, strip, "", (), cmd.cwd) for f in files)
            if not files and cmd.heredoc is not None:
                out.append(PatchRun("", strip, cmd.heredoc, (), cmd.cwd))
    return tuple(out)


_PLUS = re.compile(r"^\+\+\+ (\S+)")
_MINUS = re.compile(r"^--- (\S+)")


def patch_files(text: str, strip: int) -> tuple[str, ...]:
    """Files a unified diff changes: its ``+++`` paths (its ``---`` path for a deletion),
    with ``strip`` leading components removed (``-1``: GNU patch's default, the base name
    unless a ``git``-style ``a/``/``b/`` prefix makes it 1)."""
    out: list[str] = []
    minus = ""
    for line in text.splitlines():
        if (m := _MINUS.match(line)) is not None:
            minus = m.group(1)
        elif (p := _PLUS.match(line)) is not None:
            path = p.group(1) if p.group(1) != "/dev/null" else minus
            if path == "/dev/null":
                continue
            n = strip
            if n < 0:
                n = 1 if path.startswith(("a/", "b/")) else 0
            parts = path.split("/")
            if len(parts) > n:
                out.append("/".join(parts[n:]))
    return tuple(dict.fromkeys(out))


_PATCHING = re.compile(r"^patching file '?([^'\n]+?)'?\s*$", re.MULTILINE)


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def patched_in_output(output: str) -> tuple[str, ...]:
    """Files GNU ``patch`` reports patching (``patching file p``)."""
    return tuple(dict.fromkeys(m.group(1) for m in _PATCHING.finditer(output)))


_DIFF_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.MULTILINE)
_STATUS_LONG = re.compile(
    r"^\s+(?:modified|new file|deleted|renamed|typechange):\s+(?:.+? -> )?(.+?)\s*$", re.MULTILINE
)
_STATUS_SHORT = re.compile(r"^(?:[ MARD][MD]|[MARD] ) (?:.+? -> )?(.+?)\s*$", re.MULTILINE)
_STAT = re.compile(r"^ (\S+)\s+\|\s+(?:\d+|Bin)", re.MULTILINE)


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def changed_in_output(command: str, output: str) -> tuple[str, ...]:
    """Files that ``git diff``/``git status`` output (or a submitted diff: SWE-agent's
    ``submit``, mini-swe-agent's ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``) shows as changed
    in the working tree, relative to the repository root; empty for other commands."""
    found = commands(command)
    names = [c.argv[:2] for c in found]
    submitted = any(c.name == "submit" for c in found) or "COMPLETE_TASK_AND_SUBMIT" in command
    out: list[str] = []
    if submitted or ("git", "diff") in names:
        out += [m.group(2) for m in _DIFF_GIT.finditer(output)]
        if ("git", "diff") in names and "--stat" in command:
            out += [m.group(1) for m in _STAT.finditer(output)]
    if ("git", "status") in names:
        short = any(a in ("-s", "--short", "--porcelain") for c in found for a in c.argv)
        pattern = _STATUS_SHORT if short else _STATUS_LONG
        out += [m.group(1) for m in pattern.finditer(output)]
    return tuple(dict.fromkeys(out))


_REFORMATTED_LINE = re.compile(r"^(?:reformatted|Fixing|Formatted) (\S+\.\w+)\s*$", re.MULTILINE)
_PRETTIER_LINE = re.compile(r"^(\S+\.\w+) \d+(?:\.\d+)?m?s\s*$", re.MULTILINE)
_PRETTIER_UNCHANGED = re.compile(r"^\S+\.\w+ \d+(?:\.\d+)?m?s \(unchanged\)\s*$", re.MULTILINE)


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def reformatted_in_output(command: str, output: str) -> tuple[str, ...]:
    """Files a formatter's output says it changed (see the module docstring), as written, in
    order, each once; empty when no program of ``command`` runs (``cat``, ``grep`` … of a
    log that quotes such lines)."""
    if not runs_something(command):
        return ()
    out = [m.group(1) for m in _REFORMATTED_LINE.finditer(output)]
    if "prettier" in command or _PRETTIER_UNCHANGED.search(output):
        out += [m.group(1) for m in _PRETTIER_LINE.finditer(output)]
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def diff_redirect(command: str) -> tuple[str, ...]:
    """Files that only receive a diff (``git diff > patch.txt``, ``diff -u a b > x.diff``)."""
    out: list[str] = []
    for cmd in commands(command):
        if cmd.name == "diff" or cmd.argv[:2] in (("git", "diff"), ("git", "format-patch")):
            out.extend(cmd.writes)
    return tuple(out)
