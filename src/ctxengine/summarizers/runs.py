"""What kind of run a shell command is, judged from its text: does it run something whose
output can show a failure, is it a search whose exit code 1 means "no match", which test
runner and which tests it runs, the key under which two runs count as the same command, and
whether one command retries another asking no more of it (:func:`narrows`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

from ctxengine.policy.defaults import LEDGER_WALK_CACHE
from ctxengine.summarizers.failures import detect, own_failures
from ctxengine.summarizers.shell import (
    Command,
    commands,
    looks_like_check,
    patch_headers,
    strip_bodies,
)

#: Programs that only read, list, search or print: their output quotes files and logs, so
#: a traceback or an ``error:`` line in it is not a failure of the command.
READ_ONLY = frozenset(
    {
        "cat", "less", "more", "head", "tail", "nl", "bat", "batcat", "view", "grep", "egrep",
        "fgrep", "rg", "ag", "ack", "find", "fd", "ls", "tree", "wc", "echo", "printf", "pwd",
        "which", "type", "file", "stat", "du", "df", "diff", "cmp", "awk", "sort", "uniq",
        "cut", "tr", "column", "jq", "yq", "xxd", "hexdump", "od", "strings", "true", "false",
        "sleep", "date", "whoami", "env", "printenv", "open", "goto", "scroll_up",
        "scroll_down", "search_dir", "search_file", "find_file", "submit", "sed", "realpath",
        "dirname", "basename", "readlink", "history", "clear", "exit", "export", "source",
        "set", "unset", "alias", "test", "[", "[[", "xargs", "tee", "mkdir", "touch", "rm",
        "cp", "mv", "ln", "chmod", "chown",
    }
)  # fmt: skip
#: git subcommands that only read.
_GIT_READ = frozenset(
    {"log", "show", "diff", "status", "grep", "blame", "branch", "remote", "rev-parse",
     "ls-files", "describe", "reflog", "shortlog", "config", "tag", "stash", "fetch"}
)  # fmt: skip
#: Programs whose exit code 1 means "nothing found" or "different", not a failure.
SEARCHES = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp", "test", "[", "[[", "pgrep"}
)
#: Filters an output is piped through; they do not change which command ran.
_FILTERS = frozenset(
    {"head", "tail", "grep", "egrep", "fgrep", "rg", "tee", "less", "more", "cat", "wc",
     "sort", "uniq", "cut", "sed", "awk", "tr", "column", "xargs"}
)  # fmt: skip
_TRAILING_NOISE = re.compile(r"\s*(?:\d?>&\d|\d?>\s*/dev/null|&>\s*/dev/null)")


def _reads_only(cmd: Command) -> bool:
    if cmd.name == "git":
        sub = next((a for a in cmd.argv[1:] if not a.startswith("-")), "")
        return sub in _GIT_READ
    if cmd.name == "sed":
        return not any(a.startswith("-i") or a == "--in-place" for a in cmd.argv[1:])
    return cmd.name in READ_ONLY


def runs(cmd: Command) -> bool:
    """True when the program of ``cmd`` is not a reader, lister, printer or a plain file
    operation (``cat``, ``grep``, ``ls``, ``git diff``, ``sed -n``, ``cp`` …)."""
    return not _reads_only(cmd)


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def runs_something(command: str) -> bool:
    """True when some program of ``command`` :func:`runs`: a run whose output can show a
    failure. A command that only writes a heredoc to a file is not a run."""
    return any(runs(c) for c in commands(command))


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def ends_in_search(command: str) -> bool:
    """True when the last program of ``command`` (whose exit code the shell reports) is a
    search or comparison (``grep``, ``rg``, ``diff``, ``test`` …)."""
    found = commands(command)
    return bool(found) and found[-1].name in SEARCHES


#: Programs that only look something up (print, list, search, count files): a run of
#: them whose only failure is a path it was given that does not exist found nothing there
#: (:func:`missed_lookup`).
LOOKUPS = frozenset(
    {"cat", "less", "more", "head", "tail", "nl", "bat", "batcat", "grep", "egrep", "fgrep",
     "rg", "ag", "ack", "find", "fd", "ls", "tree", "wc", "stat", "file", "du", "sed"}
)  # fmt: skip
#: Programs that print without touching a file, allowed beside a lookup (``|| echo none``).
_PRINTERS = frozenset({"echo", "printf", "true", "pwd"})
#: ``find`` options that act on what it finds.
_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint"})
#: A lookup program's message that a path does not exist (``grep: PATH: No such file or
#: directory``, ``ls: cannot access 'PATH': …``, rg's ``… (os error 2)``).
_MISSING = re.compile(r"No such file or directory(?: \(os error 2\))?\s*$")


def _looks_up(cmd: Command) -> bool:
    if cmd.writes or cmd.name not in LOOKUPS or not _reads_only(cmd):
        return False
    return not (cmd.name == "find" and _FIND_ACTIONS & set(cmd.argv[1:]))


def _names_operand(line: str, operands: set[str]) -> bool:
    return any(
        re.search(rf"(?:^|[\s'‘\"]){re.escape(op)}(?:['’\"]|:|\s|$)", line) for op in operands
    )


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def missed_lookup(command: str, text: str) -> bool:
    """True when ``command`` only looks something up (:data:`LOOKUPS`, ``sed`` without
    ``-i``, ``find`` without an action, no redirection writing a file; ``echo``/``printf``
    beside them) and the only failures its output ``text`` shows are its programs' own
    messages that a path operand it was given does not exist (``grep: a.ts: No such file or
    directory``): a lookup that found nothing, not an error to resolve. A file operation
    or a build failing on a missing file is none (``cp``, ``make``)."""
    cmds = commands(command)
    if not any(c.name in LOOKUPS for c in cmds):
        return False
    if not all((c.name in _PRINTERS and not c.writes) or _looks_up(c) for c in cmds):
        return False
    own = own_failures(text, command)
    if not own:
        return False
    operands = {a.strip("'\"") for c in cmds for a in c.argv[1:] if a.strip("'\"") and a[0] != "-"}
    if not all(
        f.program in LOOKUPS and _MISSING.search(f.text) and _names_operand(f.text, operands)
        for f in own
    ):
        return False
    mine = {f.index for f in own}
    return all(f.index in mine for f in detect(text, command))


_RUNNERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pytest", re.compile(r"^(?:py\.test|pytest)\b|^python[\d.]* -m pytest\b")),
    ("unittest", re.compile(r"^python[\d.]* -m unittest\b|runtests\.py\b|manage\.py test\b")),
    ("jest", re.compile(r"^(?:jest|vitest|mocha)\b|^(?:npm|pnpm|yarn|bun) (?:run )?test\b")),
    ("go", re.compile(r"^go test\b")),
    ("cargo", re.compile(r"^cargo (?:test|nextest)\b")),
)


def _program(cmd: Command) -> str:
    argv = list(cmd.argv)
    if argv[:1] in (["npx"], ["uv"], ["poetry"], ["pipenv"]) and len(argv) > 1:
        argv = argv[2:] if argv[1] == "run" else argv[1:]
    if argv:
        argv[0] = argv[0].rsplit("/", 1)[-1]
    return " ".join(argv)


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def runner_of(command: str) -> str:
    """``pytest``, ``unittest``, ``jest`` (jest, vitest, mocha, ``npm test``), ``go`` or
    ``cargo`` for the first test run in ``command``; ``""`` when it runs no tests."""
    for cmd in commands(command):
        program = _program(cmd)
        for runner, pattern in _RUNNERS:
            if pattern.search(program):
                return runner
    return ""


_TEST_PATH = re.compile(r"::|\.(?:py|js|jsx|ts|tsx|mjs|cjs)$|(?:^|/)tests?(?:/|$)")


def _runner_args(command: str) -> tuple[str, list[str]] | None:
    """The first test run of ``command``: its runner (a name of :data:`_RUNNERS`) and the
    words after the runner's own; ``None`` when the command runs no tests."""
    for cmd in commands(command):
        program = _program(cmd)
        for runner, pattern in _RUNNERS:
            m = pattern.search(program)
            if m is not None:
                return runner, program[m.end() :].split()
    return None


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def named_tests(command: str) -> tuple[str, ...]:
    """The tests a test run names after its runner (pytest ids and files, test directories,
    jest paths), in order; empty when it names none (a whole-suite run)."""
    found = _runner_args(command)
    if found is None:
        return ()
    out = [a.rstrip("/") for a in found[1] if not a.startswith("-") and _TEST_PATH.search(a)]
    return tuple(dict.fromkeys(out))


#: Options of a test runner that run only some of the tests it names (or of its whole
#: suite): a pass of such a run passes only the tests its output names (pytest ``-k``/``-m``,
#: unittest ``-k``, jest/vitest ``-t``, mocha ``-g``/``--fgrep``, go ``-run``/``-skip``, runs of
#: the last failures or of changed files only).
_SELECTING_OPTIONS = frozenset(
    {"-k", "-m", "--lf", "--last-failed", "--deselect", "--sw", "--stepwise", "-t",
     "--testNamePattern", "--onlyFailures", "--onlyChanged", "--changedSince", "--grep",
     "-g", "--fgrep", "-run", "-skip"}
)  # fmt: skip


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def selects_tests(command: str) -> bool:
    """True when the test run of ``command`` runs only some of the tests it names, or of
    the whole suite when it names none (:data:`_SELECTING_OPTIONS`, also given as
    ``-kEXPR``/``--opt=VALUE``; ``cargo test FILTER``): its pass is no pass of those files
    or of the suite, only of the tests its output names as passed."""
    found = _runner_args(command)
    if found is None:
        return False
    runner, args = found
    if runner == "cargo":
        before = args[: args.index("--")] if "--" in args else args
        if any(not a.startswith("-") for a in before):
            return True
    return any(
        a.partition("=")[0] in _SELECTING_OPTIONS
        or (len(a) > 2 and a[:2] in ("-k", "-m", "-t", "-g") and a[1] != "-")
        for a in args
    )


#: Longest command key kept whole, in characters; a longer one keeps its head and a hash.
KEY_MAX_CHARS = 200


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def command_key(command: str) -> str:
    """The key under which two runs are the same command: the command without heredoc
    bodies (its lines joined by ``;``), without leading ``cd DIR &&``, without
    ``2>&1``/``>/dev/null`` and without the filters its output is piped through (``| head``,
    ``| tail -5``, ``| grep x``), whitespace collapsed; a command that runs a Codex
    ``apply_patch`` patch from a heredoc (``apply_patch <<'PATCH'``) keeps the patch's file
    lines (``*** Update File: PATH``: :func:`~ctxengine.summarizers.shell.patch_headers`)
    after it, joined by ``;``, so that only a patch of the same files is the same command.
    A key over :data:`KEY_MAX_CHARS` keeps its first 180 characters and a hash of the
    whole."""
    text = " ; ".join(ln for ln in strip_bodies(command).splitlines() if ln.strip())
    parts = re.split(r"\s*(&&|\|\||;|\|)\s*", text)
    # parts alternate: command, separator, command …
    chunks = [(parts[i], parts[i - 1] if i else "") for i in range(0, len(parts), 2)]
    while len(chunks) > 1 and re.match(r"^cd\s", chunks[0][0]):
        chunks = chunks[1:]
        chunks[0] = (chunks[0][0], "")
    while (
        len(chunks) > 1
        and chunks[-1][1] == "|"
        and chunks[-1][0].split()[:1]
        and (chunks[-1][0].split()[0] in _FILTERS)
    ):
        chunks = chunks[:-1]
    joined = " ".join(f"{sep} {cmd}" if sep else cmd for cmd, sep in chunks)
    key = " ".join(_TRAILING_NOISE.sub("", joined).split())
    if "*** Begin Patch" in command:
        key = " ; ".join((key, *(" ".join(h.split()) for h in patch_headers(command))))
    if len(key) <= KEY_MAX_CHARS:
        return key
    digest = hashlib.blake2b(key.encode(), digest_size=6).hexdigest()
    return f"{key[:180]} …#{digest}"


#: Options that make a run only show or simulate what it would do: a run that adds one of
#: them is not a retry of the run without it (:func:`narrows`).
NO_OP_OPTIONS = frozenset({"--dry-run", "--help", "-h", "--version"})


@dataclass(frozen=True, slots=True)
class Invocation:
    """One simple command of a shell text as a retry is compared with the run it retries
    (:func:`invocations`).

    Attributes:
        program: the program's base name (``git``, ``mix``, ``python3``).
        subcommand: its first argument that is not an option (``add``, ``build``, a
            script's path), ``""`` when it has none.
        operands: its later arguments that are not options (paths, targets, an option's
            value: ``-m MSG`` gives ``MSG``).
        options: its arguments that start with ``-``.
        check: it checks rather than does something (a build, a linter, a type checker, a
            test run: :func:`~ctxengine.summarizers.shell.looks_like_check`, ``git commit``
            and ``git push`` excepted).
    """

    program: str
    subcommand: str
    operands: frozenset[str]
    options: frozenset[str]
    check: bool = False


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def invocations(command: str) -> tuple[Invocation, ...]:
    """The simple commands of ``command`` in order (:func:`~ctxengine.summarizers.shell.
    commands`: ``cd DIR`` and redirections left out), without the filters its outputs are
    piped through (``| tail -5``, ``| grep x``): what a retry must run again."""
    out: list[Invocation] = []
    piped = False
    for cmd in commands(command):
        if cmd.argv and not (piped and cmd.name in _FILTERS):
            args = cmd.argv[1:]
            words = [a for a in args if not a.startswith("-")]
            options = frozenset(a for a in args if a.startswith("-"))
            sub = words[0] if words else ""
            check = cmd.name != "git" and looks_like_check(" ".join((cmd.name, *args)))
            out.append(Invocation(cmd.name, sub, frozenset(words[1:]), options, check))
        piped = cmd.piped
    return tuple(out)


def narrows(retry: str, failed: str) -> bool:
    """True when shell command ``retry`` runs ``failed`` again asking no more of it: the
    same programs with the same subcommands in the same order (:func:`invocations`), each
    with its options changed at will (``npm install`` then ``npm install
    --legacy-peer-deps``) except an option that only shows or simulates
    (:data:`NO_OP_OPTIONS`) the failed run lacked, and with only operands the failed run
    gave it: it may leave some out (``git add a.py b.css`` then ``git add a.py``), unless it
    checks (``mypy a.py b.py`` then ``mypy b.py`` checks less, it fixes nothing). Never a
    heredoc patch of other files than the failed one's (their file lines differ:
    :func:`~ctxengine.summarizers.shell.patch_headers`), never a test run
    (:func:`runner_of`: a test's failure waits for that test), never the same command."""
    if retry == failed or runner_of(retry) or runner_of(failed):
        return False
    patching = "*** Begin Patch" in retry or "*** Begin Patch" in failed
    if patching and patch_headers(retry) != patch_headers(failed):
        return False  # a heredoc patch of other files (``apply_patch <<'PATCH'``)
    new, old = invocations(retry), invocations(failed)
    if not new or len(new) != len(old):
        return False
    return all(
        n.program == o.program
        and n.subcommand == o.subcommand
        and (n.operands == o.operands if o.check else n.operands <= o.operands)
        and not ((n.options - o.options) & NO_OP_OPTIONS)
        for n, o in zip(new, old, strict=True)
    )


#: Words of a search pattern that select failure lines (``grep "error TS"``, ``rg -i fail``).
_FAILURE_PATTERN = re.compile(r"error|fail|exception|traceback|panic|fatal", re.IGNORECASE)
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg"})


def _search_pattern(cmd: Command) -> str | None:
    """The pattern of search ``cmd`` (its first argument that is not an option, or the value
    of ``-e``/``--regexp``), ``None`` when it is not a search or names none."""
    if cmd.name not in _SEARCHERS:
        return None
    args = cmd.argv[1:]
    for i, arg in enumerate(args):
        if arg in ("-e", "--regexp") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--regexp="):
            return arg.partition("=")[2]
    return next((a for a in args if not a.startswith("-")), None)


def counted_failures(command: str, output: str) -> int | None:
    """The number shell ``command`` printed when it ends by counting the lines a search for
    failures selected (``npm run check 2>&1 | grep "error TS" | wc -l``, ``pytest | grep -c
    FAILED``) and ``output`` is that one number; ``None`` for any other command or output.
    Such a pipeline exits 0 whatever it counted, so its exit code says nothing of the run:
    a count above 0 is that many failure lines."""
    number = output.strip()
    if not number.isdigit():
        return None
    parts = commands(command)
    if len(parts) < 2 or not parts[-2].piped:
        return None
    last = parts[-1]
    args = last.argv[1:]
    if last.name == "wc" and args and all(a.startswith("-") for a in args) and "-l" in args:
        pattern = next(
            (p for c in reversed(parts[:-1]) if c.piped and (p := _search_pattern(c))), None
        )
    elif last.name in _SEARCHERS and ("-c" in args or "--count" in args):
        pattern = _search_pattern(last)
    else:
        return None
    if pattern is None or not _FAILURE_PATTERN.search(pattern):
        return None
    return int(number)
