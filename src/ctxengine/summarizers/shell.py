"""What a shell command or a patch does to files, read from its text alone (no execution).

Used by the ledgers: ``cat``/``sed -n``/``head`` read a file; ``sed -i``, ``> file``, ``tee``,
``mv``/``cp``/``rm``/``touch`` change one; Codex ``apply_patch`` patches name their files in
``*** Update File:`` lines; SWE-agent's ``open``/``create``/``edit N:M`` act on files too. Paths
are kept exactly as written (never normalised), so a later literal search for them succeeds.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ctxengine.policy.defaults import LEDGER_WALK_CACHE

Action: TypeAlias = Literal[
    "read", "edited", "created", "wrote", "deleted", "moved", "copied", "formatted"
]

#: Placeholder path: the file currently open in SWE-agent (``edit 3:5`` names no file).
CURRENT_FILE = ""


@dataclass(frozen=True, slots=True)
class FileEffect:
    """One effect of a command on one path.

    Attributes:
        action: ``read`` or a modifying verb (past tense, used verbatim in the done ledger).
        path: the path as written; :data:`CURRENT_FILE` for SWE-agent's open file.
        other: ``moved``: the destination; ``copied``: the destination (``path`` is the source).
    """

    action: Action
    path: str
    other: str | None = None

    @property
    def modified(self) -> tuple[str, ...]:
        """Paths this effect changes (empty for reads)."""
        if self.action == "read":
            return ()
        if self.action == "moved":
            return (self.path, self.other) if self.other else (self.path,)
        if self.action == "copied":
            return (self.other,) if self.other else ()
        return (self.path,)


_PATCH_LINE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$")
_PATCH_VERB: dict[str, Action] = {"Update": "edited", "Add": "created", "Delete": "deleted"}


def patch_headers(patch: str) -> tuple[str, ...]:
    """The file lines of a Codex ``apply_patch`` patch (``*** Update File: PATH``, ``***
    Add File: PATH``, ``*** Delete File: PATH``, ``*** Move to: PATH``), stripped, in order:
    which files it patches."""
    return tuple(ln.strip() for ln in patch.splitlines() if _PATCH_LINE.match(ln.strip()))


def patch_effects(patch: str) -> tuple[FileEffect, ...]:
    """Effects of a Codex ``apply_patch`` patch: ``*** Update File: p`` → edited, ``*** Add
    File:`` → created, ``*** Delete File:`` → deleted, ``*** Move to: q`` → the updated file
    moved to ``q``."""
    out: list[FileEffect] = []
    for line in patch.splitlines():
        m = _PATCH_LINE.match(line)
        if m is None:
            continue
        if m.group(3) is not None:
            if out and out[-1].action == "edited":
                out[-1] = FileEffect("moved", out[-1].path, m.group(3))
            else:
                out.append(FileEffect("created", m.group(3)))
        else:
            out.append(FileEffect(_PATCH_VERB[m.group(1)], m.group(2)))
    return tuple(out)


_HEREDOC = re.compile(r"(?<!<)<<(?!<)(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
_SWE_EDIT = re.compile(r"^\s*(edit\s+\d+:\d+|insert\s+\d+|append)\s*$")
_SEPARATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&", "(", ")", "{", "}"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_OTHER_REDIRECTS = frozenset({"<", "<<", "<<-", "<<<", ">&", "<&", "<>"})
_WRAPPERS = frozenset({"sudo", "time", "env", "nohup", "command", "exec", "nice", "stdbuf"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_READERS = frozenset({"cat", "less", "more", "head", "tail", "nl", "bat", "batcat", "view"})
_HEAD_OPTS = frozenset({"-n", "-c", "--lines", "--bytes"})
_SED_OPTS = frozenset({"-e", "-f", "-l", "--expression", "--file"})
_SED_IN_PLACE = re.compile(r"^(-[nErsuz]*i|--in-place)")
_SHELL_C = re.compile(r"^-[a-z]*c[a-z]*$")


#: What a heredoc's delimiter becomes in :func:`_logical_lines` (``N`` = its body's index).
_HEREDOC_MARK = "__heredoc_{}__"


def _logical_lines(text: str) -> tuple[list[str], bool]:
    """Command lines with heredoc bodies and SWE-agent edit bodies removed, backslash
    continuations joined. The flag tells whether a SWE-agent edit command was seen."""
    lines, _, swe_edit, _ = _lines_and_bodies(text)
    return lines, swe_edit


def _lines_and_bodies(text: str) -> tuple[list[str], list[str], bool, list[str]]:
    """(:func:`_logical_lines`, the same lines with each heredoc operator rewritten to
    ``<<__heredoc_N__``, the SWE-agent edit flag, the heredoc bodies (N indexes them))."""
    raw = text.replace("\\\n", " ").split("\n")
    out: list[str] = []
    marked_lines: list[str] = []
    bodies: list[str] = []
    swe_edit = False
    i = 0
    while i < len(raw):
        line = raw[i]
        i += 1
        if _SWE_EDIT.match(line):
            swe_edit = True
            while i < len(raw) and raw[i].strip() != "end_of_edit":
                i += 1
            i += 1
            continue
        marked = line
        for m in _HEREDOC.finditer(line):
            delim = m.group(3)
            start = i
            while i < len(raw) and raw[i].strip() != delim:
                i += 1
            marked = marked.replace(m.group(0), "<<" + _HEREDOC_MARK.format(len(bodies)), 1)
            bodies.append("\n".join(raw[start:i]))
            i += 1
        out.append(line)
        marked_lines.append(marked)
    return out, marked_lines, swe_edit, bodies


def _separate_lines(text: str) -> str:
    """Newlines outside quotes become ``;`` so each line is its own command; ``#`` comments
    end at their line (left in, one would swallow every later line)."""
    out: list[str] = []
    quote = ""
    escaped = False
    comment = False
    for ch in text:
        if comment:
            if ch != "\n":
                continue
            comment = False
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (not out or out[-1][-1:].isspace() or out[-1] == ";"):
            comment = True
            continue
        elif ch == "\n":
            ch = " ; "
        out.append(ch)
    return "".join(out)


def _tokens(text: str) -> list[str]:
    """Shell tokens; a text with unbalanced quotes gives only its lines that parse."""
    try:
        return _lex(_separate_lines(text))
    except ValueError:
        tokens: list[str] = []
        for line in text.split("\n"):
            try:
                tokens += [*_lex(line), ";"]
            except ValueError:
                continue
        return tokens


def _lex(text: str) -> list[str]:
    lex = shlex.shlex(text, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = ""  # comments are removed line by line by _separate_lines
    return list(lex)


def _is_path(token: str) -> bool:
    """True when ``token`` can be a literal path: not an option, and without the shell's
    globs, variables or substitutions (``tests/$f``, ``tests/$(ls tests)`` leave residue
    such as ``tests/$`` that names no file)."""
    return (
        bool(token) and not token.startswith(("-", "&")) and not any(c in token for c in "*?`{}$")
    )


def _redirects(seg: list[str]) -> tuple[list[str], list[str], str, str]:
    """(arguments without redirections, paths written by ``>``/``>>``/``&>``, the ``<``
    source, the heredoc mark fed by ``<<``)."""
    args: list[str] = []
    written: list[str] = []
    stdin = heredoc = ""
    i = 0
    while i < len(seg):
        tok = seg[i]
        if tok in _WRITE_REDIRECTS or tok in _OTHER_REDIRECTS:
            if args and args[-1].isdigit():
                args.pop()
            target = seg[i + 1] if i + 1 < len(seg) else ""
            if tok in _WRITE_REDIRECTS and _is_path(target) and not target.startswith("/dev/"):
                written.append(target)
            elif tok == "<" and _is_path(target):
                stdin = target
            elif tok in ("<<", "<<-"):
                heredoc = target
            i += 2
            continue
        args.append(tok)
        i += 1
    return args, written, stdin, heredoc


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command of a shell text, as :func:`commands` reads it.

    Attributes:
        argv: its words without redirections, leading ``VAR=value`` assignments and wrappers
            (``sudo``, ``time``, ``env`` …).
        cwd: the directory an earlier ``cd`` in the same text moved to (``""``: the
            directory the text started in).
        writes: paths its ``>``/``>>``/``&>`` redirections write.
        stdin: the path ``<`` feeds it, or ``""``.
        heredoc: the body ``<<`` feeds it, or ``None``.
        piped: its output goes into a pipe.
    """

    argv: tuple[str, ...]
    cwd: str = ""
    writes: tuple[str, ...] = ()
    stdin: str = ""
    heredoc: str | None = None
    piped: bool = False

    @property
    def name(self) -> str:
        """The program's base name (``python3`` for ``/usr/bin/python3``), or ``""``."""
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""


def _unwrap(argv: list[str]) -> list[str]:
    while argv and (("=" in argv[0] and not argv[0].startswith("=")) or argv[0] in _WRAPPERS):
        argv = argv[1:]
    return argv


@functools.lru_cache(maxsize=1024)
def commands(text: str) -> tuple[Command, ...]:
    """The simple commands of a shell text in order (``&&``/``||``/``;``/``|``/newline
    separated; heredoc bodies attached to the command they feed; SWE-agent edit bodies
    dropped). ``cd DIR`` is not listed: it sets the ``cwd`` of the commands after it.
    Pure, so results are cached (the ledgers ask several questions of one command)."""
    _, marked, _, bodies = _lines_and_bodies(text)
    out: list[Command] = []
    cwd = ""
    segment: list[str] = []
    for tok in [*_tokens("\n".join(marked)), ";"]:
        if tok not in _SEPARATORS:
            segment.append(tok)
            continue
        if segment:
            args, written, stdin, mark = _redirects(segment)
            argv = _unwrap(args)
            segment = []
            if argv[:1] == ["cd"]:
                cwd = _change_dir(cwd, argv[1:])
                continue
            body = None
            if mark.startswith("__heredoc_") and mark[10:-2].isdigit():
                body = bodies[int(mark[10:-2])] if int(mark[10:-2]) < len(bodies) else None
            out.append(Command(tuple(argv), cwd, tuple(written), stdin, body, tok in ("|", "|&")))
    return tuple(out)


def _operands(args: list[str], value_opts: frozenset[str] = frozenset()) -> list[str]:
    """Non-option arguments, skipping the values of options that take one."""
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "--":
            continue
        elif a.startswith("-"):
            skip = a in value_opts
        else:
            out.append(a)
    return out


def _sed(args: list[str]) -> list[FileEffect]:
    # BSD sed (macOS) writes ``-i ''``: the empty backup suffix is its own argument.
    args = [a for k, a in enumerate(args) if a or k == 0 or args[k - 1] != "-i"]
    in_place = any(_SED_IN_PLACE.match(a) for a in args)
    has_script_opt = any(a in _SED_OPTS and a != "-l" for a in args)
    operands = _operands(args, _SED_OPTS)
    files = operands if has_script_opt else operands[1:]
    action: Action = "edited" if in_place else "read"
    return [FileEffect(action, f) for f in files if _is_path(f)]


def _command_effects(argv: list[str]) -> list[FileEffect]:
    argv = _unwrap(argv)
    if not argv:
        return []
    name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
    if name in _SHELLS:
        scripts = [args[i + 1] for i, a in enumerate(args[:-1]) if _SHELL_C.match(a)]
        return [e for s in scripts for e in shell_effects(s)]
    operands = [a for a in _operands(args) if _is_path(a)]
    if name in _READERS:
        files = _operands(args, _HEAD_OPTS if name in ("head", "tail") else frozenset())
        return [FileEffect("read", p) for p in files if _is_path(p) and not p.isdigit()]
    if name == "open":  # SWE-agent: open <path> [line]
        return [FileEffect("read", operands[0])] if operands else []
    if name == "create":  # SWE-agent: create <path>
        return [FileEffect("created", operands[0])] if operands else []
    if name == "sed":
        return _sed(args)
    if name == "perl" and any(a.startswith("-") and "i" in a for a in args):
        return [FileEffect("edited", p) for p in operands[1:]]
    if name == "tee":
        return [FileEffect("wrote", p) for p in operands]
    if name == "touch":
        return [FileEffect("created", p) for p in operands]
    if name == "rm" or (name == "git" and args[:1] == ["rm"]):
        return [FileEffect("deleted", p) for p in (operands[1:] if name == "git" else operands)]
    formatted = formatter_targets(name, args)
    if formatted is not None:
        return [FileEffect("formatted", p) for p in formatted]
    if name in ("mv", "cp") or (name == "git" and args[:1] == ["mv"]):
        ops = operands[1:] if name == "git" else operands
        if len(ops) < 2:
            return []
        verb: Action = "copied" if name == "cp" else "moved"
        return [FileEffect(verb, src, ops[-1]) for src in ops[:-1]]
    return []


#: Formatters and fixers that rewrite the files named on their command line: program (or
#: ``program subcommand``) → options that make them only check or print, not write.
_FORMATTERS: dict[str, frozenset[str]] = {
    "black": frozenset({"--check", "--diff"}),
    "isort": frozenset({"--check", "--check-only", "-c", "--diff"}),
    "autopep8": frozenset(),
    "yapf": frozenset({"--diff", "-d"}),
    "ruff format": frozenset({"--check", "--diff"}),
    "ruff check": frozenset(),
    "prettier": frozenset({"--check", "-c", "--list-different", "-l"}),
    "eslint": frozenset(),
    "gofmt": frozenset(),
    "goimports": frozenset(),
    "rustfmt": frozenset({"--check"}),
    "clang-format": frozenset(),
    "mix format": frozenset({"--check-formatted"}),
    "shfmt": frozenset(),
}
#: Options without which a formatter only prints (gofmt, goimports, clang-format, autopep8,
#: yapf, shfmt rewrite files only with ``-w``/``-i``; ``ruff check``/``eslint`` only with
#: ``--fix``).
_WRITE_FLAGS: dict[str, frozenset[str]] = {
    "gofmt": frozenset({"-w"}),
    "goimports": frozenset({"-w"}),
    "clang-format": frozenset({"-i"}),
    "autopep8": frozenset({"-i", "--in-place"}),
    "yapf": frozenset({"-i", "--in-place"}),
    "shfmt": frozenset({"-w", "--write"}),
    "prettier": frozenset({"--write", "-w"}),
    "ruff check": frozenset({"--fix"}),
    "eslint": frozenset({"--fix"}),
}
_FILE_NAME = re.compile(r"[^/]\.[A-Za-z0-9]{1,8}$")


def formatter_targets(name: str, args: list[str]) -> list[str] | None:
    """Files a formatter run rewrites (``black a.py``, ``ruff format a.py``, ``prettier
    --write a.ts``, ``gofmt -w a.go``, ``mix format a.ex`` …): its operands that name a file
    (a directory or glob is skipped); ``None`` when ``name`` is no formatter, ``[]`` when
    this run only checks or prints."""
    key = name
    if name in ("ruff", "mix") and args and f"{name} {args[0]}" in _FORMATTERS:
        key, args = f"{name} {args[0]}", args[1:]
    elif name == "python" and args[:1] == ["-m"] and len(args) > 1 and args[1] in _FORMATTERS:
        key, args = args[1], args[2:]
    if key not in _FORMATTERS:
        return None
    if any(a in _FORMATTERS[key] for a in args):
        return []
    needed = _WRITE_FLAGS.get(key)
    if needed is not None and not any(a in needed for a in args):
        return []
    return [a for a in _operands(args) if _is_path(a) and _FILE_NAME.search(a)]


def _change_dir(cwd: str, args: list[str]) -> str:
    """The working directory after ``cd args`` ("" = the command's own, unknown, start);
    ``cd`` alone, ``cd -`` or a target with variables leave it unknown again."""
    if len(args) != 1 or args[0] == "-" or not _is_path(args[0]):
        return ""
    return posixpath.normpath(posixpath.join(cwd, args[0])) if cwd else args[0].rstrip("/")


def _in_dir(cwd: str, effect: FileEffect) -> FileEffect:
    """``effect`` with relative paths taken from ``cwd``; a ``mv``/``cp`` destination ending
    in ``/`` names the file inside it."""

    def join(path: str) -> str:
        if not cwd or path.startswith(("/", "~")) or path == CURRENT_FILE:
            return path
        return posixpath.normpath(posixpath.join(cwd, path))

    other = effect.other
    if other is not None and other.endswith("/"):
        other += posixpath.basename(effect.path)
    return FileEffect(effect.action, join(effect.path), join(other) if other is not None else None)


@functools.lru_cache(maxsize=LEDGER_WALK_CACHE)
def command_effects(cmd: Command) -> tuple[FileEffect, ...]:
    """Effects of one simple command (see :func:`shell_effects`), relative paths taken from
    its ``cwd``."""
    found = [*_command_effects(list(cmd.argv)), *(FileEffect("wrote", p) for p in cmd.writes)]
    return tuple(_in_dir(cmd.cwd, e) for e in found)


@functools.lru_cache(maxsize=LEDGER_WALK_CACHE)
def shell_effects(command: str) -> tuple[FileEffect, ...]:
    """Effects of a shell command line (possibly several lines, pipes, ``&&`` chains,
    heredocs, ``bash -lc '…'`` wrappers).

    Reads: ``cat``, ``less``, ``more``, ``head``, ``tail``, ``nl``, ``bat``, ``sed`` without
    ``-i``, SWE-agent ``open``. Changes: ``> f``/``>> f``/``&> f`` (never ``/dev/*``), ``tee``,
    ``sed -i``, ``perl -i``, ``touch``, ``rm``, ``mv``, ``cp``, ``git rm``/``git mv``, SWE-agent
    ``create`` and ``edit N:M``/``insert N``/``append`` (on :data:`CURRENT_FILE`), and any
    ``apply_patch`` patch in the text. Arguments with globs or variables are skipped. A
    ``cd DIR`` earlier in the line makes later relative paths relative to ``DIR``.
    """
    if "*** Begin Patch" in command:
        return patch_effects(command)
    out: list[FileEffect] = []
    for cmd in commands(command):
        out.extend(command_effects(cmd))
    if _logical_lines(command)[1]:
        out.append(FileEffect("edited", CURRENT_FILE))
    return tuple(out)


_CHECK = re.compile(
    r"(^|[\s/;&|(])("
    r"pytest|py\.test|tox|nox|unittest|jest|vitest|mocha|rspec|phpunit|ctest|tsc|tsgo|mypy|"
    r"ruff|eslint|pyright|make|cmake\s+--build|mvn|gradle|gradlew|"
    r"(npm|pnpm|yarn|bun)\s+(run\s+)?(test|build|lint|check|typecheck)|"
    r"cargo\s+(test|build|check|clippy)|go\s+(test|build|vet)|mix\s+(test|compile)|"
    r"dotnet\s+(build|test)|git\s+commit|git\s+push"
    r")\b"
)


@functools.lru_cache(maxsize=LEDGER_WALK_CACHE)
def strip_bodies(command: str) -> str:
    """The command without heredoc bodies and SWE-agent edit bodies (the text the shell runs
    as commands)."""
    return "\n".join(_logical_lines(command)[0]).strip()


@functools.lru_cache(maxsize=LEDGER_WALK_CACHE)
def looks_like_check(command: str) -> bool:
    """True for commands worth recording as done when they succeed: test runners, builds,
    linters and type checkers, ``git commit``/``git push`` (heredoc bodies are ignored)."""
    return _CHECK.search(strip_bodies(command)) is not None
