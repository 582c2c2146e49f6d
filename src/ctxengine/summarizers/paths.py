"""One path per file: the session's working directory, found in the messages, and paths
normalised against it; and which files are scratch (backups, temporary files, helper scripts)
rather than the session's real changes.

The working directory is read, first found wins, from: Codex's ``<cwd>…</cwd>``
environment context; SWE-agent's ``(Current directory: …)`` observation footer; a task
prompt naming it ("… in /testbed (this is the working directory …)", mini-swe-agent); OpenHands'
``[Current working directory: …]``; the absolute directory most shell commands start with
``cd`` into (at least twice); and last, an absolute path that ends with a relative path
also used (``/repo/src/a.py`` and ``src/a.py`` give ``/repo``), the most frequent such prefix.

Normalised form: absolute (relative paths joined to the working directory, ``..`` and ``.``
resolved), so that both the absolute and the relative spelling an agent used still occur in
it literally; unchanged (apart from ``./`` and ``..``) when the working directory is unknown.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ctxengine.model import Ledgers, Message, TextPart, ToolResultPart
from ctxengine.model.facts import merge_files

_CWD_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"<cwd>\s*(/[^<\n]*?)\s*</cwd>"),
    re.compile(r"^\(Current directory: (/[^)\n]*)\)\s*$", re.MULTILINE),
    re.compile(r"\b(?:in|at) (/[\w./-]+) \(this is the working directory"),
    re.compile(r"\[Current working directory: (/[^\]\n]+)\]"),
)
#: A literal every match of the pattern of :data:`_CWD_PATTERNS` at the same place holds.
_CWD_LITERALS = (
    "<cwd>", "(Current directory: /", " (this is the working directory",
    "[Current working directory: /",
)  # fmt: skip
_LEADING_CD = re.compile(r"^\s*cd\s+(/[\w./@+-]+)\s*(?:&&|;|\n)")


def _texts(message: Message, results: bool) -> Iterable[str]:
    if message.meta.get("synthetic") == "is_demo":
        return
    wanted = ToolResultPart if results else TextPart
    for part in message.parts:
        if isinstance(part, wanted):
            yield part.text


def stated_cwd(messages: Sequence[Message]) -> str:
    """The working directory the messages state outright (the first four sources of the
    module docstring; tool-result footers are read from tool results only, and a
    demonstration's messages are skipped), or ``""``."""
    for k, (pattern, literal) in enumerate(zip(_CWD_PATTERNS, _CWD_LITERALS, strict=True)):
        for message in messages:
            for text in _texts(message, results=k in (1, 3)):
                m = pattern.search(text) if literal in text else None
                if m is not None:
                    return posixpath.normpath(m.group(1).strip())
    return ""


def guessed_cwd(commands: Sequence[str], paths: Sequence[str]) -> str:
    """The working directory guessed from shell ``commands`` (an absolute ``cd`` target
    that starts at least two of them) or, failing that, from ``paths`` (an absolute path's
    prefix before a relative path it ends with); ``""`` when neither gives one."""
    cds = Counter(m.group(1).rstrip("/") for c in commands if (m := _LEADING_CD.match(c)))
    if cds:
        target, count = cds.most_common(1)[0]
        if count >= 2:
            return posixpath.normpath(target)
    absolute = [p for p in set(paths) if p.startswith("/")]
    relative = {p.removeprefix("./") for p in paths if not p.startswith(("/", "~")) and "/" in p}
    prefixes: Counter[str] = Counter()
    for a in absolute:
        for r in relative:
            if a.endswith("/" + r):
                prefixes[a[: -len(r) - 1] or "/"] += 1
    return prefixes.most_common(1)[0][0] if prefixes else ""


def normalize(path: str, cwd: str) -> str:
    """``path`` in its one normal form (see the module docstring)."""
    if not path or path.startswith("~"):
        return path
    if path.startswith("/"):
        return posixpath.normpath(path)
    if cwd:
        return posixpath.normpath(posixpath.join(cwd, path))
    return posixpath.normpath(path)


def rebased(ledgers: Ledgers, cwd: str) -> Ledgers:
    """``ledgers`` read while the working directory was unknown, with their relative paths
    joined to ``cwd`` (:func:`normalize`) and ``cwd`` set, so that a later range that finds
    the directory does not list one file under two spellings; two facts that now name one
    file combine as :func:`~ctxengine.model.facts.merge_files` combines them. ``ledgers``
    unchanged when they already have a working directory or ``cwd`` is ``""``."""
    if ledgers.cwd or not cwd:
        return ledgers

    def fix(path: str) -> str:
        return normalize(path, cwd) if path and not path.startswith(("/", "~")) else path

    files = merge_files((), tuple(replace(f, path=fix(f.path)) for f in ledgers.files))
    modified = tuple(dict.fromkeys(fix(p) for p in ledgers.files_modified))
    read = tuple(p for p in dict.fromkeys(fix(p) for p in ledgers.files_read) if p not in modified)
    return replace(ledgers, files=files, files_modified=modified, files_read=read, cwd=cwd)


#: Directories whose files are temporary.
TEMP_DIRS: tuple[str, ...] = ("/tmp/", "/var/tmp/", "/private/tmp/", "/var/folders/", "/dev/shm/")
_TEMP_PART = frozenset({"tmp", "temp", ".tmp"})
#: Suffixes of backup copies (``a.py.bak``, ``a.py.orig``, ``a.py.backup2``, ``a.py~``).
_BACKUP = re.compile(r"(?:\.(?:backup|bak|orig|original|old|rej|swp|save)\d*|~)$", re.IGNORECASE)
_DIFF_FILE = re.compile(r"\.(?:patch|diff)$")
_SCRIPT = re.compile(r"\.(?:py|sh|bash|js|mjs|cjs|ts|rb|pl)$")
#: Names of throwaway scripts agents write at the top of a repository.
_SCRATCH_NAME = re.compile(r"^(?:reproduce|repro|debug|scratch|tmp|temp|try|test)[_\-.]|^reproduce")


#: The temporary directories themselves: a working directory or project root equal to one of
#: them is no project (its files stay temporary).
_TEMP_ROOTS = frozenset(d.rstrip("/") for d in TEMP_DIRS)
#: Directories found at the top of a project: the folder above one is the project's root
#: (``/tmp/ci/repo/src/a.py`` gives ``/tmp/ci/repo``).
PROJECT_LAYOUT = frozenset(
    {".git", "src", "lib", "tests", "test", "app", "pkg", "cmd", "internal", "include",
     "packages", "docs", "scripts"}
)  # fmt: skip
#: Files found at a project's root.
PROJECT_MARKERS = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "package.json", "Cargo.toml", "go.mod",
     "Makefile", "CMakeLists.txt", "pom.xml", "build.gradle", "Gemfile", "composer.json",
     "AGENTS.md", "CLAUDE.md", "GEMINI.md", ".gitignore"}
)  # fmt: skip


def _project(base: str) -> str:
    """``base`` without its trailing ``/``, or ``""`` when it is empty or a temporary
    directory itself (``/tmp``)."""
    base = base.rstrip("/")
    return "" if not base or base in _TEMP_ROOTS else base


def in_temp_dir(path: str, cwd: str = "", root: str = "") -> bool:
    """True for a path under a temporary directory (``/tmp``, ``/var/tmp``, ``$TMPDIR`` on
    macOS, or a ``tmp``/``temp`` directory of the project). A path inside the session's
    working directory ``cwd`` or the project ``root`` (:func:`project_root`) is judged by its
    part below that directory alone: a checkout under ``/tmp`` (a CI job, a sandbox) holds no
    temporary files for being there, only its own ``tmp``/``temp`` directories do. A ``cwd``
    or ``root`` that is itself a temporary directory (``/tmp``) counts as none."""
    for base in (_project(cwd), _project(root)):
        if base and path.startswith(base + "/"):
            rel = path[len(base) + 1 :]
            return any(part in _TEMP_PART for part in rel.split("/")[:-1])
    if path.startswith(TEMP_DIRS):
        return True
    return any(part in _TEMP_PART for part in path.split("/")[:-1])


def project_root(paths: Iterable[str]) -> str:
    """The project root the absolute ``paths`` (the files a session read and changed)
    suggest when its working directory is unknown: for each path, the directory of a
    :data:`PROJECT_MARKERS` file it names, else the directory above its first
    :data:`PROJECT_LAYOUT` directory (``/tmp/ci/repo/src/a.py`` gives ``/tmp/ci/repo``); the
    most frequent of those (the first seen on a tie), ``""`` when no path suggests one."""
    found: Counter[str] = Counter()
    for path in paths:
        if not path.startswith("/"):
            continue
        parts = path.split("/")
        if parts[-1] in PROJECT_MARKERS and len(parts) > 2:
            found["/".join(parts[:-1])] += 1
            continue
        layout = next((i for i, p in enumerate(parts[:-1]) if i > 1 and p in PROJECT_LAYOUT), 0)
        if layout:
            found["/".join(parts[:layout])] += 1
    return found.most_common(1)[0][0] if found else ""


def is_backup(path: str, known: Iterable[str] = ()) -> bool:
    """True for a backup copy: a backup suffix (``.bak``, ``.orig``, ``.backup`` …), or
    another known file's path plus a suffix (``a.py.fixed`` next to ``a.py``)."""
    if _BACKUP.search(path):
        return True
    stem, dot, suffix = path.rpartition(".")
    return bool(dot) and stem in set(known) and suffix.isidentifier()


def scratch_reason(
    path: str,
    *,
    cwd: str,
    root: str = "",
    created: bool,
    deleted: bool,
    executed: bool,
    diff_output: bool,
    known: Iterable[str],
) -> str:
    """Why ``path`` is a scratch file rather than a real change, or ``""`` when it is not:

    - ``"temporary"``: under a temporary directory (:func:`in_temp_dir`: never for being
      under ``/tmp`` when it lies in the working directory ``cwd`` or the project ``root``);
    - ``"backup"``: a backup copy (:func:`is_backup`);
    - ``"created then deleted"``: the session created it and later removed it;
    - ``"patch"``: a ``.patch``/``.diff`` file the session created, or a file that only
      received ``git diff`` output;
    - ``"helper script"``: a script the session created at the top of the working directory
      (or of an unknown one) and ran, or whose source opens other files by name
      (``executed`` is true for both), or named as throwaway scripts are (``reproduce…``,
      ``repro_…``, ``debug_…``, ``test_…``, ``tmp_…`` …).
    """
    if in_temp_dir(path, cwd, root):
        return "temporary"
    if is_backup(path, known):
        return "backup"
    if created and deleted:
        return "created then deleted"
    if diff_output or (created and _DIFF_FILE.search(path)):
        return "patch"
    top = posixpath.dirname(path) == cwd if cwd else "/" not in path.lstrip("./")
    named = _SCRATCH_NAME.match(posixpath.basename(path)) is not None
    if created and (executed or named) and top and _SCRIPT.search(path):
        return "helper script"
    return ""
