"""The package script a run of npm, pnpm or yarn ran, when its output shows the script's text,
and the commands of that script: ``npm run build`` whose script is ``tsgo -p
tsconfig.build.json && chmod +x dist/cli.js`` runs ``tsgo -p tsconfig.build.json``, which is
what ``npx tsgo -p tsconfig.build.json`` runs too.

The link is made only from what an output shows, never from a ``package.json`` the session
may have read (it may have changed since):

- npm's failure line ``npm error command sh -c SCRIPT`` (``npm ERR! command sh -c SCRIPT``
  before npm 10), the last one of the output: npm prints it when a script failed, a script's
  own nested ``npm run`` failing first (its line comes before the outer one's);
- the lines npm and pnpm echo before running a script, ``> NAME@VERSION SCRIPT-NAME`` (pnpm
  adds the package's directory) and ``> SCRIPT`` right after it, the first such pair for
  the script name the command runs (a ``pre`` script's pair, a nested script's, come with
  other names or after it);
- yarn 1's ``$ SCRIPT`` line right after its ``yarn run vX.Y.Z`` line.

An output piped through a filter that may drop lines is read only where the filter keeps
them: the failure line (the output's last lines) under ``tail``, ``cat`` or ``tee``; the
echo lines (its first lines) under ``head``, ``cat`` or ``tee``; neither under ``grep`` or
another filter. A run of several packages (``--workspaces``, ``-r``, ``--filter``) is read
not at all: its lines are several scripts'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ctxengine.policy.defaults import LEDGER_WALK_CACHE
from ctxengine.summarizers.runs import command_key
from ctxengine.summarizers.shell import Command, commands

#: Package managers whose script runs are read, and the words after the program that run a
#: named script (``npm run build``, ``npm test``, ``pnpm build``, ``yarn build``).
_MANAGERS = frozenset({"npm", "pnpm", "yarn"})
_RUN_WORDS = frozenset({"run", "run-script"})
#: npm's own commands that run the script of their name (``npm test`` runs ``test``).
_NPM_SCRIPT_COMMANDS = frozenset({"test", "start", "stop", "restart"})
#: pnpm's and yarn's own commands, which run no script of their name (``pnpm install``).
_OWN_COMMANDS = frozenset(
    {"install", "i", "add", "remove", "rm", "update", "up", "exec", "dlx", "create", "init",
     "link", "unlink", "publish", "pack", "why", "list", "ls", "outdated", "audit", "config",
     "store", "import", "rebuild", "prune", "dedupe", "patch", "workspace", "workspaces",
     "global", "info", "cache", "set", "version", "bin", "help"}
)  # fmt: skip
#: Options that make a run run the script of several packages.
_SEVERAL = frozenset(
    {"-ws", "--workspaces", "-r", "--recursive", "--filter", "-F", "--parallel", "--stream"}
)
#: Filters that keep an output's last lines, and those that keep its first lines.
_KEEP_END = frozenset({"tail", "cat", "tee"})
_KEEP_START = frozenset({"head", "cat", "tee"})

_NPM_FAILED = re.compile(r"^npm (?:error|ERR!) command sh -c (?P<script>\S.*?)\s*$")
#: ``> @scope/pkg@1.2.3 build`` (npm), ``> pkg@1.2.3 build /repo/pkg`` (pnpm).
_ECHO_HEAD = re.compile(r"^> \S+@\S+ (?P<name>\S+)(?: /.*)?\s*$")
_ECHO_SCRIPT = re.compile(r"^> (?P<script>\S.*?)\s*$")
_YARN_HEAD = re.compile(r"^yarn run v\d+\.\d+\.\d+\s*$")
_YARN_SCRIPT = re.compile(r"^\$ (?P<script>\S.*?)\s*$")

#: A redirection of one output into another (``2>&1``), no command separator.
_DUP = re.compile(r"\d?>&\d")
#: Programs that run a package's local binary: ``npx tsgo`` runs what a script's ``tsgo``
#: runs (a script finds ``node_modules/.bin`` on its ``PATH``).
LOCAL_RUNNERS = ("npx ", "pnpm exec ", "yarn exec ")


@dataclass(frozen=True, slots=True)
class ScriptRun:
    """A shell command that runs one package script (:func:`script_run`).

    Attributes:
        name: the script's name (``build``).
        cwd: the directory an earlier ``cd`` of the command moved to (``""``: the one it
            started in).
        manager: ``npm``, ``pnpm`` or ``yarn``.
        keeps_end: the output's last lines are all there (no filter, or ``tail``/``cat``/
            ``tee`` only).
        keeps_start: the output's first lines are all there (no filter, or ``head``/``cat``/
            ``tee`` only).
    """

    name: str
    cwd: str
    manager: str
    keeps_end: bool
    keeps_start: bool


def _script_name(cmd: Command) -> str:
    """The script ``cmd`` runs by name, ``""`` when it runs none or several packages'."""
    args = cmd.argv[1:]
    if not args or _SEVERAL & set(args):
        return ""
    if args[0] in _RUN_WORDS:
        name = args[1] if len(args) > 1 else ""
    elif cmd.name == "npm":
        name = args[0] if args[0] in _NPM_SCRIPT_COMMANDS else ""
    else:
        name = "" if args[0] in _OWN_COMMANDS else args[0]
    return "" if name.startswith("-") else name


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def script_run(command: str) -> ScriptRun | None:
    """The package script shell ``command`` runs: its one program that is not a filter its
    output is piped through is ``npm``, ``pnpm`` or ``yarn`` running one named script (``npm
    run NAME``, ``npm run-script NAME``, ``npm test``/``start``/``stop``/``restart``,
    ``pnpm [run] NAME``, ``yarn [run] NAME``; the name right after ``run``, options after
    it), for one package; ``None`` otherwise."""
    found = commands(command)
    head = [c for i, c in enumerate(found) if not (i and found[i - 1].piped)]
    if len(head) != 1 or head[0].name not in _MANAGERS:
        return None
    name = _script_name(head[0])
    if not name:
        return None
    filters = {c.name for c in found[1:]}
    return ScriptRun(name, head[0].cwd, head[0].name, filters <= _KEEP_END, filters <= _KEEP_START)


def shown_script(run: ScriptRun, text: str) -> str:
    """The text of the script ``run`` ran as its output ``text`` shows it (see the module
    docstring: npm's failure line when the output's end is all there, else the echo lines
    when its start is), ``""`` when it shows none."""
    lines = text.splitlines()
    if run.manager == "npm" and run.keeps_end:
        for line in reversed(lines):
            found = _NPM_FAILED.match(line.strip())
            if found is not None:
                return found["script"]
    if not run.keeps_start:
        return ""
    for i, line in enumerate(lines[:-1]):
        line = line.strip()
        if run.manager == "yarn":
            after = _YARN_SCRIPT.match(lines[i + 1].strip()) if _YARN_HEAD.match(line) else None
            if after is not None:
                return after["script"]
            continue
        head = _ECHO_HEAD.match(line)
        if head is not None and head["name"] == run.name:
            after = _ECHO_SCRIPT.match(lines[i + 1].strip())
            return after["script"] if after is not None else ""
    return ""


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def script_parts(script: str) -> tuple[str, ...]:
    """The command keys (:func:`~ctxengine.summarizers.runs.command_key`) of the commands
    ``script`` runs one after the other, each only when the one before it succeeded (``A &&
    B && C``; ``2>&1`` allowed), in order; empty when it does anything else (``||``, ``;``,
    a pipe, a background ``&``, a ``cd``, a line break, a command substitution, ``&&`` inside
    quotes): a success of the whole script is then no success of each of its parts."""
    if any(mark in script for mark in ("\n", "$(", "`")):
        return ()
    parts = script.split(" && ")
    if any(re.search(r"[|;&]", _DUP.sub("", part)) for part in parts):
        return ()
    if len(commands(script)) != len(parts) or any(len(commands(p)) != 1 for p in parts):
        return ()
    return tuple(command_key(p) for p in parts)


def local_binary(key: str) -> str:
    """``key`` without a leading :data:`LOCAL_RUNNERS` (``npx tsgo -p x`` gives ``tsgo -p
    x``); a runner with an option first (``npx -y tsgo``) is left as it is."""
    for runner in LOCAL_RUNNERS:
        if key.startswith(runner) and not key[len(runner) :].startswith("-"):
            return key[len(runner) :]
    return key


def binary_forms(key: str) -> tuple[str, ...]:
    """The command keys that run what command key ``key`` runs from a package's directory:
    the local binary itself (:func:`local_binary`) and through each of
    :data:`LOCAL_RUNNERS` (``tsgo -p x``, ``npx tsgo -p x``, ``pnpm exec tsgo -p x``,
    ``yarn exec tsgo -p x``); a package manager's own run (``npm run x``) only as it is."""
    bare = local_binary(key)
    if bare.split(" ", 1)[0] in _MANAGERS:
        return (bare,)
    return (bare, *(runner + bare for runner in LOCAL_RUNNERS))
