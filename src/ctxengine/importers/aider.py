"""aider chat history Markdown (``.aider.chat.history.md``).

aider appends every run to one file (``aider/io.py``): ``# aider chat started at <time>``
opens a run; what the user typed is written as ``#### `` lines (one message per run of such
lines, each line ending in a Markdown line break); aider's own output (the command line,
model and repository notes, ``Applied edit to …``, commit notes, lint and test output, token
counts) is a block quote whose first line starts with ``> `` and whose last line ends with two
spaces (a multi-line output continues without the ``> ``); the model's replies are written as
they are, between blank lines. Edits are the SEARCH/REPLACE (or whole-file, diff) blocks in the
reply text: aider has no tool calls, so the log holds user and assistant messages only.

Mapping:

* each ``####`` message → a user message (line breaks and the ``#### `` prefix removed);
  ``/ask``, ``/code``, ``/architect`` and ``/context`` send their text to the model: a user
  message of that text, ``meta["command"]`` naming the command; every other command (``/add``,
  ``/run``, ``/undo``, ``/clear`` …) is not sent to the model: ignored (``command:/name``),
  as is an empty input;
* each reply → an assistant message (replies with only aider output between them are one
  message); ``model`` from the run's ``Model:`` / ``Main model:`` / ``Models:`` line;
  ``Applied edit to <path>`` lines after it → ``meta["applied_edits"]`` and ``Commit <hash>
  <message>`` lines → ``meta["commits"]``;
* aider's output never reaches the model: ignored (``aider output``, one per run of output
  lines); text before the first message of the file is ignored (``preamble``).

The runs are imported one after the other into one log, each entry marked with the time its
run started (``meta["run"]``); ``/clear`` and a new run empty aider's chat, which the log does
not reproduce (``meta["runs"]`` and the ignored ``command:/clear`` count say where). The
session id is a hash of the file. Every line is one of the kinds above, so nothing is
skipped; a line with bytes that are not UTF-8 is repaired (U+FFFD in their place).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import BOM, LogBuilder
from ctxengine.importers._parts import title_of
from ctxengine.importers._text import bytes_digest, decode_text
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message, TextPart
from ctxengine.model.messages import APPLIED_EDITS

NAME = "aider"
_STARTED = b"# aider chat started at "
#: A run header after a newline (the sniffer looks for one at the start of any line).
_STARTED_LINE = b"\n" + _STARTED
_USER = "#### "
#: Commands whose text aider sends to the model as the user's message.
CHAT_COMMANDS = ("/ask", "/code", "/architect", "/context")
_STOP = rb"(?:#### |####\r?$|# aider chat started at )"
#: The segments of the file, in order (every character is in one): a run header, a run of
#: user input lines, a run of outputs (blank lines after it included): one-line outputs (a
#: line that ends in two spaces, or a bare ``>``) and multi-line ones (up to their line that
#: ends in two spaces, or a line of input or a header, which cut them short); reply text.
#: The repetitions are possessive (``++``): what follows them always matches, so they match
#: as the greedy ``+`` would, without keeping a backtracking point per line; a text line that
#: opens with neither ``#`` nor ``>`` is taken without testing the openings of the others.
_SEGMENT = re.compile(
    rb"(?P<run># aider chat started at [^\n]*(?:\n|\Z))"
    rb"|(?P<user>(?:(?:#### [^\n]*|####\r?)(?:\n|\Z))++)"
    rb"|(?P<out>(?:(?:> [^\n]*  |>)\r?(?:\n|\Z)"
    rb"|> [^\n]*(?:\n|\Z)(?:(?!" + _STOP + rb")[^\n]*\n)*?"
    rb"(?:[^\n]*  \r?(?:\n|\Z)|(?=" + _STOP + rb")|\Z))++\n*)"
    rb"|(?P<text>(?:(?:[^#>\n][^\n]*|(?!" + _STOP + rb"|> |>\r?$)[^\n]*)(?:\n|\Z))++)",
    re.M,
)
#: Group numbers of the segment kinds (``Match.lastindex``).
_INPUT, _OUT, _TEXT = (_SEGMENT.groupindex[k] for k in ("user", "out", "text"))
_LEADING_NEWLINES = re.compile(rb"\n*")
#: Output lines read, by the words they open with (at the start of a line, or after its
#: ``> ``): the model (``Model:``, ``Main model:``, ``Models:``; the name is the first word
#: after it), an applied edit (the path: the rest of the line, without the spaces and tabs
#: that end it), a commit (``Commit <7 to 40 hex digits> ``: the hash).
_NOTE_OPENINGS = (b"Model: ", b"Main model: ", b"Models: ", b"Applied edit to ", b"Commit ")
#: The lookahead (every opening starts with M, A or C) lets most lines fail at their first
#: letters.
_OPENING = (
    b"(?=> [MAC]|[MAC])(?:> )?(?:"
    + b"|".join(b"(" + re.escape(o) + b")" for o in _NOTE_OPENINGS)
    + b")([^\n]*)"
)
#: Such a line at the start of an output segment, and after a newline in it: one group per
#: opening (the one found is not empty), then the rest of the line.
_NOTE_FIRST = re.compile(_OPENING)
_NOTE_NEXT = re.compile(b"\n" + _OPENING)
_WORD = re.compile(r"\S+")
_COMMIT_HASH = re.compile(r"([0-9a-f]{7,40}) ")


class AiderImporter:
    """Importer for aider chat histories (see the module docstring)."""

    name = NAME
    label = "an aider chat history"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for a file named ``*.aider.chat.history.md`` or with a ``# aider chat
        started at`` line."""
        return (
            path.name.endswith(".aider.chat.history.md")
            or head.startswith(_STARTED)
            or _STARTED_LINE in head
        )

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is repaired and ignored in ``report``.

        Raises:
            TranscriptError: the file cannot be read; in strict mode the first line that is
                not UTF-8.
        """
        report = start_report(path, report)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
        raw = data.removeprefix(BOM)
        parser = _Parser(report)
        parser.feed(raw)
        parser.flush()
        builder = LogBuilder(bytes_digest(data))
        for msg, line, run in parser.messages:
            builder.add(msg, source_id=f"line-{line}", meta={"run": run} if run else None)
        entries = tuple(builder.entries)
        meta: dict[str, Any] = {"runs": parser.runs}
        if parser.last_model:
            meta["model"] = parser.last_model
        return ImportedSession(
            builder.session_id, NAME, str(path), entries, title_of(entries), meta, report
        )


class _Parser:
    """Reads the file (see the module docstring)."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        #: each message, the line it starts at, and its run.
        self.messages: list[tuple[Message, int, str | None]] = []
        self.runs: list[str] = []
        self.run: str | None = None
        self.model: str | None = None
        self.last_model: str | None = None
        self.user: list[str] = []
        self.user_line = 0
        self.reply: list[str] = []
        self.reply_line = 0
        self.seen_user = False

    def feed(self, raw: bytes) -> None:
        """Read the whole file, cut by one regular expression into segments: a run header,
        a run of user input lines, a run of aider output, or reply text. Read as bytes: only
        input and replies are decoded, and output is searched where it lies in ``raw``. The
        first output is reported where it is met, the others counted with it at the end.
        Lines are counted only up to where a line number is needed (a message's first line,
        the first output, bytes that are not UTF-8)."""
        counted, number = 0, 1  # ``number``: the line of ``raw[counted]``
        outputs = 0
        for m in _SEGMENT.finditer(raw):
            start, end = m.span()
            if start == end:
                continue
            kind = m.lastindex
            if kind == _TEXT:
                if self.user:
                    self._end_user()
                chunk = raw[start:end]
                if not chunk.isspace():
                    if not self.reply:
                        number += raw.count(b"\n", counted, start)
                        counted = start
                        lead = _LEADING_NEWLINES.match(chunk)
                        self.reply_line = number + (lead.end() if lead else 0)
                    try:
                        self.reply.append(chunk.decode("utf-8"))
                    except UnicodeDecodeError:
                        self.reply.append(self._decode(raw, chunk, start))
            elif kind == _OUT:
                if self.user:
                    self._end_user()
                if self.reply:
                    self._end_reply()
                if not outputs:
                    number += raw.count(b"\n", counted, start)
                    counted = start
                    self.report.ignore("aider output", line=number)
                outputs += 1
                self._output(raw, start, end)
            elif kind == _INPUT:
                if self.reply:
                    self._end_reply()
                if not self.user:
                    number += raw.count(b"\n", counted, start)
                    counted = start
                    self.user_line = number
                chunk = raw[start:end]
                try:
                    text = chunk.decode("utf-8")
                except UnicodeDecodeError:
                    text = self._decode(raw, chunk, start)
                lines = text.rstrip("\n").split("\n")
                self.user += [x.removesuffix("\r")[len(_USER) :].removesuffix("  ") for x in lines]
            else:
                self.flush()
                self.run = self._decode(raw, raw[start + len(_STARTED) : end], start).strip()
                self.runs.append(self.run)
                self.model = None
        if outputs > 1:
            self.report.ignore("aider output", count=outputs - 1)

    def _decode(self, raw: bytes, segment: bytes, start: int) -> str:
        """``segment`` (at offset ``start`` of ``raw``) as text; bytes that are not UTF-8
        become U+FFFD, repaired at their line."""
        try:
            return segment.decode("utf-8")
        except UnicodeDecodeError:
            line = raw.count(b"\n", 0, start) + 1
            return decode_text(segment, self.report, first_line=line)

    def _end_user(self) -> None:
        if not self.user:
            return
        text = "\n".join(self.user)
        where = self.user_line
        self.user = []
        self.seen_user = True
        stripped = text.strip()
        if not stripped or stripped == "<blank>":
            self.report.ignore("empty input", line=where)
            return
        meta: dict[str, Any] = {}
        if stripped.startswith("/"):
            command, _, rest = stripped.partition(" ")
            command = command.split("\n", 1)[0]
            if command not in CHAT_COMMANDS or not rest.strip():
                self.report.ignore(f"command:{command}", line=where)
                return
            meta["command"] = command
            text = rest.strip()
        self.messages.append((Message("user", (TextPart(text),), meta=meta), where, self.run))

    def _end_reply(self) -> None:
        if not self.reply:
            return
        text = "".join(self.reply).strip()
        where = self.reply_line
        self.reply = []
        if not text:
            return
        if not self.seen_user:
            self.report.ignore("preamble", line=where)
            return
        last = self.messages[-1][0] if self.messages else None
        if last is not None and last.role == "assistant":
            merged = Message(
                "assistant",
                (TextPart(f"{last.text}\n\n{text}"),),
                model=last.model,
                stop_reason="stop",
                meta=dict(last.meta),
            )
            self.messages[-1] = (merged, self.messages[-1][1], self.messages[-1][2])
            return
        msg = Message("assistant", (TextPart(text),), model=self.model, stop_reason="stop")
        self.messages.append((msg, where, self.run))

    def _output(self, raw: bytes, first: int, last: int) -> None:
        """The model, applied-edit and commit lines of the aider output ``raw[first:last]``.
        They are read as if by opening: the model lines of each opening of
        :data:`_NOTE_OPENINGS` in turn (the last one read sets the model), then the applied
        edits, then the commits, each in file order."""
        if first and raw[first - 1] == 0x0A:  # a segment starts after a newline, bar the first
            hits = _NOTE_NEXT.findall(raw, first - 1, last)
        else:
            hits = _NOTE_NEXT.findall(raw, first, last)
            at_start = _NOTE_FIRST.match(raw, first, last)
            if at_start is not None:
                hits.insert(0, at_start.groups())
        if not hits:
            return
        model: tuple[int, str] | None = None
        applied: list[str] = []
        commits: list[str] = []
        for opened_model, opened_main, _models, opened_applied, opened_commit, rest in hits:
            text = rest.decode("utf-8", errors="replace")
            if opened_applied:
                path = text.removesuffix("\r").rstrip(" \t")
                if path:
                    applied.append(path)
            elif opened_commit:
                commit = _COMMIT_HASH.match(text)
                if commit:
                    commits.append(commit.group(1))
            else:
                word = _WORD.match(text)
                kind = 0 if opened_model else 1 if opened_main else 2
                if word and (model is None or kind >= model[0]):
                    model = (kind, word.group())
        if model is not None:
            self.model = self.last_model = model[1]
        if applied or commits:
            self._keep_notes(applied, commits)

    def _keep_notes(self, applied: list[str], commits: list[str]) -> None:
        """Applied edits and commits, in order, kept on the reply before them."""
        if not self.messages or self.messages[-1][0].role != "assistant":
            return
        msg, created, run = self.messages[-1]
        meta = dict(msg.meta)
        for path in applied:
            meta.setdefault(APPLIED_EDITS, []).append(path)
        for commit in commits:
            meta.setdefault("commits", []).append(commit)
        msg = Message(msg.role, msg.parts, model=msg.model, stop_reason=msg.stop_reason, meta=meta)
        self.messages[-1] = (msg, created, run)

    def flush(self) -> None:
        """Close whatever is open (at a new run and at the end of the file)."""
        self._end_user()
        self._end_reply()


IMPORTER = AiderImporter()
