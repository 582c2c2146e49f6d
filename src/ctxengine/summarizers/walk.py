"""One pass over a range of tool calls and their results: what each call did to files, whether
it failed (from the agent's flag, the exit code, or the output itself), which lines say why,
which errors later runs fixed, and which files are scratch.

A call's outcome:

- *failed* when the tool flagged it (``is_error``, a non-zero exit code in the agent's
  wording, a leading error marker: :func:`~ctxengine.summarizers.signals.result_failed`);
  when a shell command that runs something printed a line that alone shows a failure
  (:func:`~ctxengine.summarizers.failures.shows_failure`: a traceback, a failed test, a
  compiler or linker error, ``make: ***``), whatever its exit code; when a program of the
  command that changes files or a repository (:data:`WRITERS`, or a redirection, ``sed -i``)
  said it failed itself (``cp: cannot stat …``, ``bash: out.txt: Permission denied``,
  ``Hunk #1 FAILED``, ``! [rejected]``), whatever its exit code;
- in a range whose results state no outcome at all (chat-completions logs: no exit code,
  no error flag), also when a command that runs something ended its output with a line
  that sounds like a failure (:func:`~ctxengine.summarizers.failures.ends_in_failure`);
- not failed when only a search (``grep``, ``diff``, ``test`` …) ended it with exit code 1
  ("no match") and nothing else shows a failure, nor when a lookup (``grep``, ``cat``,
  ``ls``, ``sed -n`` …) only said a path it was given does not exist
  (:func:`~ctxengine.summarizers.runs.missed_lookup`: it found nothing there);
- neither failed nor succeeded when the user declined it (done as *declined by the user*)
  or it was interrupted or aborted before it returned (done as *interrupted*, no result:
  :func:`~ctxengine.summarizers.signals.interrupted`).

A program that only reads and says it failed (``ls: cannot access x``, ``sed: can't read
x``) does not fail the call: what it would have read is not a read. A failed call's file
effects do not count, except those of a shell command's programs that ran before its last
program that runs something (``sed -i x a.py && pytest``: the edit happened, the tests
failed) and did not say they failed themselves. Its errors are the lines that say what
failed (:func:`~ctxengine.summarizers.failures.choose`, one line per failure), never an
exit-status line: a failed write is an open error, not a modification, and not done.

A shell command that went to the background (:func:`~.background.launched_id`: "Command
running in background with ID: bash_2", Codex "Process running with session ID 4242") has
no outcome yet: it is done as *started in the background* (with its id), nothing more.
Once a poll of that id (``BashOutput``, ``TaskOutput``, ``write_stdin``) or a
``<task-notification>`` says it ended with an exit code, the command's outcome is read as a
foreground run's would be, from that exit code and every output its polls showed: its
"started" step is replaced by what a foreground run gives (``ran `pytest -x` (succeeded)``,
or its error lines as open errors). A task stopped (``KillShell``) or said to end without
an exit code loses its "started" step and gets no outcome. A poll of a task this range did
not see start (nor an earlier range's "started" step, :meth:`Walk.seed`) that shows a
failure records its error lines under the poll's key (``BashOutput(bash_2)``).

An open error is fixed when a later call with the same key (:func:`command_key`, or
``Tool path`` for a file tool; an ``apply_patch`` heredoc's key names the files it patches)
succeeds, or a later success of another command that reported the same line (fixed already
or not) comes after it (``npx tsc`` and ``npm run check`` both report a TS error, then
``npm run check`` passes; a line reported again after that success stays open), or a
package script whose text an output showed runs it, or is it, and succeeds in the same
directory, both run in the range walked (``npx tsgo -p tsconfig.build.json`` fails, then
``npm run build``, whose failure
line showed the script ``tsgo -p tsconfig.build.json && chmod +x dist/cli.js``, passes:
:meth:`Walk._script_keys`, :mod:`~ctxengine.summarizers.scripts`), or a later
run passes its test (the test named, or
reported passed, or the whole suite of its runner passing), or when a later run of the same
command fails without reporting it again (a linter or build that now stops elsewhere; errors
that name a test wait for their test), or when the failed shell command is retried: the next
run of the same programs and subcommands in the same turn (no real user message between
them) succeeds asking no more of them (:func:`~ctxengine.summarizers.runs.narrows`: options
changed, operands left out; ``git add a.ex b.css && git commit …`` refused for an ignored
``b.css``, then ``git add a.ex && git commit …`` committed). The command differs, so no key
of the retry names the failure; the agent got past it with the retry, and the error line no
longer says what stands in its way. Only the next run of those programs and subcommands
counts (one that fails again, or runs them on something else, ends the chance), a check
(a build, a linter) leaves no operand out, a test run never retries (its failures wait for
their tests), and errors that name a test are never fixed so.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import orjson

from ctxengine.model import ErrorFact, FileFact, ToolCallPart, ToolResultPart
from ctxengine.model.facts import FileStatus, lines_fixed_by
from ctxengine.policy.defaults import BACKGROUND_FAILED_STATUSES
from ctxengine.projection.wording import ENGLISH_FACTS
from ctxengine.summarizers.background import (
    launched_id,
    notifications,
    output_of,
    polled_id,
    read_poll,
    stopped_id,
)
from ctxengine.summarizers.fact_items import STARTED
from ctxengine.summarizers.failures import (
    STRONG,
    Failure,
    choose,
    detect,
    ends_in_failure,
    failed_programs,
    first_line,
    own_failures,
    passed_tests,
    summary_line,
)
from ctxengine.summarizers.identifiers import Source
from ctxengine.summarizers.paths import normalize, project_root, scratch_reason
from ctxengine.summarizers.runs import (
    command_key,
    counted_failures,
    ends_in_search,
    invocations,
    missed_lookup,
    named_tests,
    narrows,
    runner_of,
    runs,
    runs_something,
    selects_tests,
)
from ctxengine.summarizers.scripts import (
    binary_forms,
    local_binary,
    script_parts,
    script_run,
    shown_script,
)
from ctxengine.summarizers.shell import (
    CURRENT_FILE,
    Command,
    FileEffect,
    command_effects,
    commands,
    looks_like_check,
    strip_bodies,
)
from ctxengine.summarizers.signals import (
    declined_by_user,
    exit_code,
    interrupted,
    result_failed,
    result_text,
)
from ctxengine.summarizers.tools import (
    EDITOR_TOOLS,
    FILE_TOOLS,
    arguments,
    call_effects,
    cap_command,
    patch_text,
    shell_command,
)
from ctxengine.summarizers.writes import (
    changed_in_output,
    diff_redirect,
    executions,
    heredoc_files,
    language_of,
    opens_files,
    patch_files,
    patch_runs,
    patched_in_output,
    reformatted_in_output,
    source_writes,
)

_SWE_FILE_HEADER = re.compile(r"^\[File: (.+?) \(\d+ lines total\)\]", re.MULTILINE)
_SWE_EDIT = re.compile(r"^\s*(?:edit\s+\d+:\d+|insert\s+\d+|append)\s*$")
#: How OpenHands answers ``view`` on a directory (a listing, not a file read).
_DIRECTORY_LISTING = "Here's the files and directories"
_UNCHANGED = re.compile(r"\bleft unchanged\b|\b0 files? (?:re)?formatted\b|already formatted")
_REFORMATTED = re.compile(r"\b[1-9]\d* files? reformatted\b|\breformatted \S")


#: Programs that change files or a repository: their own failure (``cp: cannot stat …``,
#: ``mkdir: cannot create directory …``, ``! [rejected]``) fails the command, whatever
#: exit code it stated. Any other program's own failure (``ls: cannot access x``, ``sed: can't
#: read x``) only cancels what that program did (the read).
WRITERS = frozenset(
    {"cp", "mv", "rm", "rmdir", "mkdir", "touch", "tee", "ln", "install", "chmod", "chown",
     "chgrp", "truncate", "patch", "git", "unzip", "tar", "rsync", "dd"}
)  # fmt: skip


def _writes(cmd: Command) -> bool:
    """True when ``cmd`` is a program of :data:`WRITERS` or changes a file (a redirection,
    ``sed -i``, ``perl -i``)."""
    return cmd.name in WRITERS or any(e.action != "read" for e in command_effects(cmd))


def broken_parts(command: str, failures: tuple[Failure, ...]) -> tuple[Command, ...]:
    """The simple commands of ``command`` whose own messages among ``failures`` say they
    failed (``cp: cannot stat …``; ``redirect``: one of their redirections was refused)."""
    own = failed_programs(failures)
    if not own:
        return ()
    return tuple(
        c
        for c in commands(command)
        if c.name in own or ("redirect" in own and (c.writes or c.stdin))
    )


@dataclass
class _File:
    """What the walk knows about one path."""

    path: str
    first: int
    source: int = 0
    how: str = ""
    read: bool = False
    changed: bool = False
    created: bool = False
    deleted: bool = False
    executed: bool = False
    diff_output: bool = False


#: A done step for a tool call the user declined (:func:`~ctxengine.summarizers.signals.
#: declined_by_user`): the call as :meth:`Walk._step_call` shows it (a shell command's
#: first line, capped; another call as its errors would name it); nothing ran.
DECLINED_STEP = ENGLISH_FACTS.declined
#: A done step for a tool call interrupted or aborted before it returned
#: (:func:`~ctxengine.summarizers.signals.interrupted`): the call shown as for
#: :data:`DECLINED_STEP`; its outcome is unknown.
INTERRUPTED_STEP = ENGLISH_FACTS.interrupted
#: A done step for a call of a tool that neither runs commands nor touches files (a query,
#: a web fetch, a subagent's report): the call and the first line of its result
#: (:func:`returned_step`).
RETURNED_STEP = ENGLISH_FACTS.returned
#: Tools whose results list or search (what they find is read or run elsewhere), hold the
#: agent's own notes and plans, manage its background shells (``KillShell``,
#: ``BashOutput``) or end its task (``submit``): their calls make no returned step; nor do
#: the file and editor tools' (a directory viewed).
_NO_RETURNED_STEP = re.compile(
    r"grep|glob|search|find|^ls$|list|todo|plan|think|memory|shell|bash|kill|stop|output|"
    r"submit|finish|complet|^exit",
    re.IGNORECASE,
)
#: Longest argument shown in a returned step's call, and longest result line, in characters.
RETURNED_ARGUMENT_CHARS = 80
RETURNED_RESULT_CHARS = 200


def returned_step(call: ToolCallPart, text: str) -> str:
    """The done step of ``call``, a tool that neither runs commands nor touches files, whose
    result is ``text``: ```NAME(ARGUMENT)` returned: LINE``, ARGUMENT its first string
    argument's first line (at most :data:`RETURNED_ARGUMENT_CHARS` characters), LINE the
    result's first line (:func:`~ctxengine.summarizers.failures.first_line`, at most
    :data:`RETURNED_RESULT_CHARS`): what a query, a fetch or a subagent found stays in the
    state while it has room. ``""`` for a search or listing tool, a to-do or plan tool
    (:data:`_NO_RETURNED_STEP`) or an empty result."""
    if call.name in EDITOR_TOOLS or call.name in FILE_TOOLS or _NO_RETURNED_STEP.search(call.name):
        return ""
    line = first_line(text)
    if not line:
        return ""
    args = arguments(call) or {}
    given = next((v for v in args.values() if isinstance(v, str) and v.strip()), "")
    shown = cap_command(given.strip().split("\n", 1)[0], RETURNED_ARGUMENT_CHARS)
    named = f"{call.name}({shown})" if shown else call.name
    return RETURNED_STEP.format(call=named, result=cap_command(line, RETURNED_RESULT_CHARS))


#: A done step for a command started in the background, as the ledgers store it (English;
#: :func:`~ctxengine.summarizers.fact_items.done_line` translates it).
STARTED_STEP = ENGLISH_FACTS.background
#: The key recorded in ``Walk.passed`` when a background task this walk knows ends (its
#: "started" step is then superseded, also one an earlier compaction carried:
#: :func:`~ctxengine.summarizers.anchor.carry`).
ENDED_KEY = "background:"


@dataclass
class _Launch:
    """A background command not seen to end yet."""

    call: ToolCallPart
    command: str
    step: str
    output: list[str]


def _shown(command: str) -> str:
    """How a done step shows ``command``: its first line (heredoc bodies left out), `` …``
    after it when there are more, capped."""
    lines = strip_bodies(command).splitlines() or [""]
    return cap_command(lines[0] + (" …" if len(lines) > 1 else ""))


@dataclass
class Walk:
    """Accumulator for one pass over a range of messages (see the module docstring).

    Args:
        cwd: the session's working directory (``""`` when unknown): paths are normalised
            against it (:func:`~ctxengine.summarizers.paths.normalize`).
        start: added to each message index to give a fact's ``source``.
        statuses: the results of this range state their outcome (some result is flagged as
            an error or states an exit code), so a result that states none succeeded by its
            agent's account; ``False`` (chat-completions logs) lets a command whose output
            ends in a failure line count as failed
            (:func:`~ctxengine.summarizers.failures.ends_in_failure`).
    """

    cwd: str = ""
    start: int = 0
    statuses: bool = True
    done: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    errors: list[ErrorFact] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    files: dict[str, _File] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    current_file: str | None = None
    launches: dict[str, _Launch] = field(default_factory=dict)
    #: per shape (programs and subcommands) of a shell command that failed in this turn and
    #: was not run again since: its key and its command (a retry may fix it)
    retries: dict[tuple[tuple[str, str], ...], tuple[str, str]] = field(default_factory=dict)
    #: per (directory, key) of a package script run (:func:`~.scripts.script_run`): the
    #: script text its output showed last (:func:`~.scripts.shown_script`)
    scripts: dict[tuple[str, str], str] = field(default_factory=dict)
    #: per key of a shell command run in this range: the directories it ran in
    #: (:meth:`_ran_in`)
    dirs: dict[str, set[str]] = field(default_factory=dict)

    def turn(self) -> None:
        """A real user message opened a new turn: no failed command of the turns before is
        retried by a later run (:func:`~ctxengine.summarizers.runs.narrows`)."""
        self.retries.clear()

    def seed(self, done: Sequence[str]) -> None:
        """Know the background commands an earlier range started and did not see end: its
        done steps ``started `COMMAND` in the background (id ID)`` (the command as the step
        shows it)."""
        for step in done:
            found = STARTED.match(step)
            if found is not None:
                command = found["command"]
                call = ToolCallPart("", "Bash", orjson.dumps({"command": command}).decode())
                self.launches[found["id"]] = _Launch(call, command, step, [])

    # ------------------------------------------------------------------ paths and effects

    def _path(self, path: str, cwd: str = "") -> str:
        if cwd and not path.startswith(("/", "~")):
            path = posixpath.join(cwd, path)
        return normalize(path, self.cwd)

    def _file(self, path: str, index: int) -> _File:
        if path not in self.files:
            self.files[path] = _File(path, index, index)
        return self.files[path]

    def _change(self, path: str, index: int, how: str, *, created: bool = False) -> None:
        f = self._file(path, index)
        if created or (how in ("wrote", "copied") and not f.read and not f.changed):
            f.created = True
        if how == "deleted":
            f.deleted = True
        elif f.deleted:
            f.deleted = False
        f.changed, f.how, f.source = True, how, index

    def effect(self, effect: FileEffect, index: int, how: str = "") -> None:
        """Apply one file effect (paths as written; joined to the working directory)."""
        path = effect.path
        if path == CURRENT_FILE:
            if self.current_file is None:
                return
            path = self.current_file
        else:
            path = self._path(path)
        other = self._path(effect.other) if effect.other is not None else None
        action = effect.action
        if action == "read":
            f = self._file(path, index)
            f.read = True
        elif action == "moved" and other is not None:
            was_created = self._file(path, index).created
            self._change(path, index, "deleted")
            self.files[path].how = "renamed"
            self._change(other, index, how or "moved", created=was_created)
        elif action == "copied" and other is not None:
            self._change(other, index, how or "copied")
        else:
            self._change(path, index, how or action, created=action == "created")
        if action == "read":
            pass
        elif other is None:
            self.done.append(f"{action} {path}" if not how else f"{action} {path} ({how})")
        else:
            self.done.append(f"{action} {path} to {other}")
        if action in ("read", "created", "edited", "wrote"):
            self.current_file = path

    # ------------------------------------------------------------------ one call

    def call(self, call: ToolCallPart, result: ToolResultPart | None, index: int) -> None:
        """Record one tool call and its result (``None``: unanswered, nothing happened)."""
        command = shell_command(call)
        patch = patch_text(call)
        if result is not None and declined_by_user(result):
            # the user's decision, not a failure: nothing ran and nothing was written
            self.done.append(DECLINED_STEP.format(call=self._step_call(call, command)))
            return
        if result is not None and interrupted(result):
            # stopped before it returned (the user, the harness): not a failure to resolve,
            # and what it did is unknown
            self.done.append(INTERRUPTED_STEP.format(call=self._step_call(call, command)))
            return
        if result is not None and self.done:
            # the same call made again and answered: its interrupted attempt is history
            step = INTERRUPTED_STEP.format(call=self._step_call(call, command))
            if step in self.done:
                self.done = [d for d in self.done if d != step]
        if command is not None and patch is None and "*** Begin Patch" not in command:
            self.commands.append(cap_command(command))
        if result is None:
            return
        text = result_text(result)
        self.sources.append(Source(self.start + index, "result", text, command or ""))
        if self.current_file is None and _SWE_FILE_HEADER.search(text):
            header = _SWE_FILE_HEADER.search(text)
            self.current_file = self._path(header.group(1)) if header else None
        if command is not None and patch is None:
            launched = None if result.is_error else launched_id(call, result.text)
            if launched is not None:
                self._launch(launched, call, command, text)
                return
            code, flagged = exit_code(result.text), result_failed(result)
            self._shell(call, command, text, index, code, flagged, result.is_error)
            return
        polled = None if result.is_error else polled_id(call)
        if polled is not None:
            self._poll(polled, call, text, index)
            return
        stopped = None if result.is_error else stopped_id(call)
        if stopped is not None:
            self.ended(stopped, None, "", index)
        self._tool(call, result, text, index)

    # ------------------------------------------------------------------ background

    def _launch(self, tid: str, call: ToolCallPart, command: str, text: str) -> None:
        step = STARTED_STEP.format(command=_shown(command), id=tid)
        self.done.append(step)
        self.launches[tid] = _Launch(call, command, step, [output_of(text)])

    def _poll(self, tid: str, call: ToolCallPart, text: str, index: int) -> None:
        """One poll of background task ``tid``: its output kept, and when it ended with an
        exit code, the command's outcome (see the module docstring)."""
        poll = read_poll(text)
        launch = self.launches.get(tid)
        if launch is not None:
            launch.output.append(poll.output)
        if poll.finished:
            key = f"{call.name}({tid})"
            self.ended(tid, poll.exit_code, poll.status, index, poll_key=key, output=poll.output)

    def notification(self, text: str, index: int) -> None:
        """The ``<task-notification>`` blocks of a user message's ``text``: a task that
        ended with an exit code gets its outcome (the notification's summary as its output
        when its polls showed none)."""
        for note in notifications(text):
            launch = self.launches.get(note.id)
            if note.finished and launch is not None:
                if not any(o.strip() for o in launch.output):
                    launch.output.append(note.summary)
                self.ended(note.id, note.exit_code, note.status, index)

    def ended(
        self,
        tid: str,
        code: int | None,
        status: str,
        index: int,
        *,
        poll_key: str = "",
        output: str = "",
    ) -> None:
        """Background task ``tid`` ended (was stopped, or a poll or notification said so)
        with exit ``code`` (``None``: not stated) and ``status``: a known command's "started"
        step is dropped and its outcome read from every output its polls showed (none when
        neither a code nor a failed status is stated); an unknown one's failure is recorded
        from ``output`` (the poll's) under ``poll_key`` (``""``: not at all)."""
        failed = (code is not None and code != 0) or status.lower() in BACKGROUND_FAILED_STATUSES
        launch = self.launches.pop(tid, None)
        if launch is None:
            if failed and poll_key:
                self._fail(poll_key, output, index, "", None)
            return
        self.done = [d for d in self.done if d != launch.step]
        self.passed.append(f"{ENDED_KEY}{tid}")
        if code is None and not failed:
            return  # stopped, or ended without telling how
        output = "\n".join(o for o in launch.output if o.strip())
        self._shell(launch.call, launch.command, output, index, code, failed, False)

    def _step_call(self, call: ToolCallPart, command: str | None) -> str:
        """How the done step of a call that did not run to its end (declined by the user,
        interrupted) shows it: shell ``command`` as a done step shows a command
        (:func:`_shown`: its first line, `` …`` after it when there are more, capped),
        another call as its errors would name it (``Tool path``), or by its tool's name
        alone when it names no path."""
        if command is not None:
            return _shown(command)
        key = self._key(call, None)
        return call.name if key.endswith("()") else key

    def _key(self, call: ToolCallPart, command: str | None) -> str:
        if command is not None:
            first = command.lstrip().split("\n", 1)[0]
            if _SWE_EDIT.match(first) and self.current_file:
                return f"edit {self.current_file}"
            return command_key(command)
        paths = [
            self.current_file or "" if e.path == CURRENT_FILE else self._path(e.path)
            for e in call_effects(call)
        ]
        return f"{call.name}({' '.join(dict.fromkeys(p for p in paths if p))})"

    def _fail(
        self, key: str, text: str, index: int, command: str, detected: tuple[Failure, ...] | None
    ) -> None:
        """Record the errors of a failed call (``detected``: :func:`detect` of its output
        when already known)."""
        found = choose(detected if detected is not None else detect(text, command))
        if command:
            self._rerun(key, {f.text for f in found}, index)
        if not found:
            line = summary_line(text) if command else first_line(text)
            if line:
                self._error(ErrorFact(line, "open", self.start + index, key))
            return
        for f in found:
            self._error(
                ErrorFact(f.text, "open", self.start + index, key, f.test, f.where, f.runner)
            )

    def _rerun(self, key: str, still: set[str], index: int) -> None:
        """A command failed again: its earlier open errors that name no test and that this
        run no longer reports (``still``: the lines it reports) are fixed."""
        self.passed.append(f"rerun:{key}")
        self.errors = [
            replace(e, status="fixed", fixed_by=self.start + index)
            if e.status == "open" and e.command == key and not e.test and e.text not in still
            else e
            for e in self.errors
        ]

    def _error(self, fact: ErrorFact) -> None:
        same = (fact.command, fact.test, fact.text)
        self.errors = [e for e in self.errors if (e.command, e.test, e.text) != same]
        self.errors.append(fact)

    def _pass(self, keys: list[str], index: int) -> None:
        """Runs that succeeded (``keys``: what they passed, see
        :meth:`~ctxengine.model.ErrorFact.fixed_by_any`): the open errors they fix are fixed,
        and so is every open error naming no test whose line one of the errors of these runs'
        commands reported (fixed already or not: :func:`~ctxengine.model.facts.
        lines_fixed_by`); an error recorded after this success is left as it is (a
        regression)."""
        self.passed.extend(keys)
        gone = lines_fixed_by(self.errors, keys)
        self.errors = [
            replace(e, status="fixed", fixed_by=self.start + index)
            if e.status == "open" and (e.fixed_by_any(keys) or (not e.test and e.text in gone))
            else e
            for e in self.errors
        ]

    def _tool(self, call: ToolCallPart, result: ToolResultPart, text: str, index: int) -> None:
        effects = call_effects(call)
        key = self._key(call, None)
        if result_failed(result):
            self._fail(key, text, index, "", None)
            return
        if text.startswith(_DIRECTORY_LISTING):
            effects = tuple(e for e in effects if e.action != "read")
        if call.name == "Write" and text.startswith("File created successfully"):
            effects = tuple(FileEffect("created", e.path) for e in effects)
        for effect in effects:
            self.effect(effect, index)
        args = arguments(call) or {}
        content = args.get("content", args.get("file_text"))
        if isinstance(content, str):
            for effect in effects:
                if effect.action != "read":
                    self.texts[self._path(effect.path)] = content
        if any(e.action != "read" for e in effects):
            self._pass([f"cmd:{key}"], index)
        elif not effects:
            step = returned_step(call, text)
            if step:
                self.done.append(step)

    def _shell(
        self,
        call: ToolCallPart,
        command: str,
        text: str,
        index: int,
        code: int | None,
        flagged: bool,
        is_error: bool,
    ) -> None:
        """The outcome of shell ``command`` whose output is ``text``: ``code`` the exit code
        its result states (``None``: none), ``flagged`` the tool reported failure
        (:func:`~ctxengine.summarizers.signals.result_failed`), ``is_error`` its error
        flag."""
        key = self._key(call, command)
        where = self._ran_in(key, command)
        script = script_run(command)
        shown = shown_script(script, text) if script is not None else ""
        if shown:
            self.scripts[(where, key)] = shown
        ran = runs_something(command)
        # an output of readers only (cat, grep …) quotes files: only the programs' own
        # messages count, and reading them alone is cheap
        found = detect(text, command) if ran else None
        broken = broken_parts(command, found if found is not None else own_failures(text, command))
        strong = any(_writes(c) for c in broken) or (
            found is not None and any(f.score >= STRONG and not f.program for f in found)
        )
        if flagged and code == 1 and ends_in_search(command) and not strong:
            return  # a search that found nothing
        if flagged and not strong and missed_lookup(command, text):
            return  # a lookup of a path that does not exist: it found nothing there
        unstated = not self.statuses and code is None and not is_error
        failed = flagged or strong or (unstated and ran and ends_in_failure(text))
        if not failed and counted_failures(command, text):
            # it printed how many failure lines it found: neither a success that fixes
            # anything nor an error line of its own
            self._retried(key, command, index, failed=True)
            return
        parts = commands(command)
        for run in executions(command):
            if run.path:
                self._file(self._path(run.path, run.cwd), index).executed = True
        self._retried(key, command, index, failed=failed)
        if failed:
            self._fail(key, text, index, command, found)
            last_run = max((i for i, c in enumerate(parts) if runs(c)), default=-1)
            for c in parts[: max(last_run, 0)]:
                if c not in broken:
                    for effect in command_effects(c):
                        self.effect(effect, index)
            return
        for written in heredoc_files(command):
            self.texts[self._path(written.path, written.cwd)] = written.text
        effects = call_effects(call)
        if text.startswith(_DIRECTORY_LISTING):
            effects = tuple(e for e in effects if e.action != "read")
        cancelled = {e for c in broken for e in command_effects(c)}
        for effect in effects:
            if effect in cancelled:
                continue
            if (
                effect.action == "formatted"
                and _UNCHANGED.search(text)
                and not (_REFORMATTED.search(text))
            ):
                continue
            self.effect(effect, index)
        self._indirect(command, text, index)
        keys = [f"cmd:{key}", *(f"test:{t}" for t in passed_tests(text))]
        runner = runner_of(command)
        if runner and not selects_tests(command):
            targets = named_tests(command)
            keys += [f"test:{t}" for t in targets] or [f"suite:{runner}"]
        self._pass([*keys, *self._script_keys(key, where)], index)
        if looks_like_check(command):
            self.done.append(f"ran `{_shown(command)}` (succeeded)")

    def _ran_in(self, key: str, command: str) -> str:
        """The directory shell ``command`` ran its programs in (the ``cd`` before them
        joined to the session's directory: :meth:`_path`; ``"?"`` when they ran in several),
        also recorded in :attr:`dirs` under ``key``."""
        found = commands(command)
        head = {c.cwd for i, c in enumerate(found) if not (i and found[i - 1].piped)}
        where = self._path(head.pop() or ".") if len(head) == 1 else "?"
        self.dirs.setdefault(key, set()).add(where)
        return where

    def _only_in(self, key: str, where: str) -> bool:
        """True when this range saw ``key`` run, every time in directory ``where`` (a run
        of an earlier range, whose directory is not known, is none: in a monorepo ``npx
        tsgo`` in one package and ``npm run check`` at the root are not the same run)."""
        return self.dirs.get(key) == {where}

    def _script_keys(self, key: str, where: str) -> list[str]:
        """The keys (``cmd:KEY``) a success of shell command ``key`` run in directory
        ``where`` passes besides its own, from the package scripts this range's outputs
        showed (:mod:`~ctxengine.summarizers.scripts`), for commands this range saw run,
        all in ``where`` (:meth:`_only_in`; an error of an earlier range is not fixed so):

        - when ``key`` runs a package script whose text an output of the same run in the
          same directory showed (:attr:`scripts`), and that script runs its commands one
          after another with ``&&`` only (:func:`~.scripts.script_parts`): each of its
          commands, bare and through ``npx``/``pnpm exec``/``yarn exec``
          (:func:`~.scripts.binary_forms`): ``npm run build`` whose script is ``tsgo -p
          tsconfig.build.json && chmod +x dist/cli.js`` passes ``npx tsgo -p
          tsconfig.build.json``;
        - each script run in ``where`` whose whole script is the one command ``key`` runs
          (:func:`~.scripts.local_binary`): ``npx tsgo -p tsconfig.build.json`` passes
          ``npm run build`` whose script is ``tsgo -p tsconfig.build.json``, not one whose
          script runs more.
        """
        out: list[str] = []
        script = self.scripts.get((where, key))
        if script is not None:
            for part in script_parts(script):
                out += [
                    f"cmd:{k}" for k in binary_forms(part) if k != key and self._only_in(k, where)
                ]
        bare = local_binary(key)
        for (there, run_key), text in self.scripts.items():
            if there != where or run_key == key or not self._only_in(run_key, where):
                continue
            parts = script_parts(text)
            if len(parts) == 1 and local_binary(parts[0]) == bare:
                out.append(f"cmd:{run_key}")
        return out

    def _retried(self, key: str, command: str, index: int, *, failed: bool) -> None:
        """Shell ``command`` ran (``failed``: it failed): when it is the next run of the
        same programs and subcommands as a command that failed in this turn and it succeeded
        asking no more (:func:`~ctxengine.summarizers.runs.narrows`), that command's open
        errors that name no test are fixed (``retry:KEY``, the failed command's key); a
        failed run waits for its own retry (unless it runs tests)."""
        form = tuple((i.program, i.subcommand) for i in invocations(command))
        if not form:
            return
        earlier = self.retries.pop(form, None)
        if failed:
            if not runner_of(command):
                self.retries[form] = (key, command)
        elif earlier is not None and earlier[0] != key and narrows(command, earlier[1]):
            self._pass([f"retry:{earlier[0]}"], index)

    def _indirect(self, command: str, text: str, index: int) -> None:
        """Writes by scripts the command ran, patches it applied, files a formatter it ran
        says it reformatted, and changes its ``git diff``/``git status`` output shows."""
        for run in executions(command):
            source = run.code
            how = f"inline {run.language}"
            if run.path:
                script = self._path(run.path, run.cwd)
                source = self.texts.get(script, "")
                how = f"script {posixpath.basename(script)}"
            for effect in source_writes(source, run.language):
                self.effect(FileEffect(effect.action, self._path(effect.path, run.cwd)), index, how)
        for p in patch_runs(command):
            listed = patched_in_output(text)
            body = p.text or (self.texts.get(self._path(p.patch, p.cwd), "") if p.patch else "")
            names = listed or p.targets or patch_files(body, p.strip)
            for name in names:
                self.effect(FileEffect("edited", self._path(name, p.cwd)), index, "patched")
        found = commands(command)
        where = found[-1].cwd if found else ""
        for name in changed_in_output(command, text):
            path = self._path(name, where)
            f = self._file(path, index)
            if not f.changed:
                f.changed, f.how, f.source = True, "diff", index
        for name in reformatted_in_output(command, text):
            self.effect(FileEffect("formatted", self._path(name, where)), index)
        for target in diff_redirect(command):
            self._file(self._path(target, where), index).diff_output = True

    # ------------------------------------------------------------------ results

    def file_facts(self) -> tuple[FileFact, ...]:
        """One fact per path, in first-seen order: modified, scratch or read (a file is judged
        temporary against the working directory, else against the project root the paths
        suggest: :func:`~ctxengine.summarizers.paths.project_root`). The source of a
        move that succeeded (``mv a b``, ``git mv a b``) and was not written again gets none:
        what it held is listed under its new path, and the move itself under Done."""
        known = set(self.files)
        root = "" if self.cwd else project_root(self.files)
        out: list[FileFact] = []
        for f in sorted(self.files.values(), key=lambda f: f.first):
            if f.changed and f.how == "renamed":
                continue  # moved away: its contents are listed under the new path
            if f.changed:
                language = language_of(f.path)
                tool = bool(language) and opens_files(self.texts.get(f.path, ""), language)
                reason = scratch_reason(
                    f.path,
                    cwd=self.cwd,
                    root=root,
                    created=f.created,
                    deleted=f.deleted,
                    executed=f.executed or tool,
                    diff_output=f.diff_output,
                    known=known - {f.path},
                )
                status: FileStatus = "scratch" if reason else "modified"
                out.append(FileFact(f.path, status, self.start + f.source, f.how, f.created))
            elif f.read:
                out.append(FileFact(f.path, "read", self.start + f.first, "read"))
        return tuple(out)
