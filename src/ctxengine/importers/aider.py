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
* aider's output blocks never reach the model: ignored (``aider output``, one per block); text
  before the first message of the file is ignored (``preamble``).

The runs are imported one after the other into one log, each entry marked with the time its
run started (``meta["run"]``); ``/clear`` and a new run empty aider's chat, which the log does
not reproduce (``meta["runs"]`` and the ignored ``command:/clear`` count say where). The
session id is a hash of the file. Nothing in this format is skipped or repaired: every line
is one of the kinds above.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import BOM, LogBuilder, file_digest
from ctxengine.importers._parts import title_of
from ctxengine.importers.base import ImportedSession, start_report
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message, TextPart
from ctxengine.model.messages import APPLIED_EDITS

NAME = "aider"
_STARTED = "# aider chat started at "
_SNIFF = re.compile(rb"^# aider chat started at ", re.M)
_USER = "#### "
#: Commands whose text aider sends to the model as the user's message.
CHAT_COMMANDS = ("/ask", "/code", "/architect", "/context")
_MODEL = re.compile(r"^(?:Model|Main model|Models): (\S+)")
_APPLIED = re.compile(r"^Applied edit to (.+)$")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*)$")


class AiderImporter:
    """Importer for aider chat histories (see the module docstring)."""

    name = NAME
    label = "an aider chat history"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True for a file named ``*.aider.chat.history.md`` or with a ``# aider chat
        started at`` line."""
        return path.name.endswith(".aider.chat.history.md") or _SNIFF.search(head) is not None

    def read(self, path: Path, report: ImportReport | None = None) -> ImportedSession:
        """Parse ``path``, counting what is ignored in ``report``.

        Raises:
            TranscriptError: the file cannot be read.
        """
        report = start_report(path, report)
        try:
            raw = path.read_bytes().removeprefix(BOM)
        except OSError as exc:
            raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
        parser = _Parser(report)
        for number, line in enumerate(raw.decode("utf-8", errors="replace").split("\n"), 1):
            parser.line(number, line.removesuffix("\r"))
        parser.flush()
        builder = LogBuilder(file_digest(path))
        for msg, created, run in parser.messages:
            builder.add(msg, created_at=created, meta={"run": run} if run else None)
        entries = tuple(builder.entries)
        meta: dict[str, Any] = {"runs": parser.runs}
        if parser.last_model:
            meta["model"] = parser.last_model
        return ImportedSession(
            builder.session_id, NAME, str(path), entries, title_of(entries), meta, report
        )


class _Parser:
    """A line state machine over the file (see the module docstring)."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.messages: list[tuple[Message, str | None, str | None]] = []
        self.runs: list[str] = []
        self.run: str | None = None
        self.model: str | None = None
        self.last_model: str | None = None
        self.user: list[str] = []
        self.user_line = 0
        self.reply: list[str] = []
        self.reply_line = 0
        #: the open aider output block, if any (its first line number).
        self.output: int | None = None
        self.output_lines: list[str] = []
        self.seen_user = False

    def line(self, number: int, line: str) -> None:
        """Take one line (1-based ``number``, no line ending)."""
        if self.output is not None:
            if line.startswith((_USER, _STARTED)) or line == "####":
                self._end_output()
            else:
                self.output_lines.append(line)
                if line.endswith("  "):
                    self._end_output()
                return
        if line.startswith(_STARTED):
            self.flush()
            self.run = line[len(_STARTED) :].strip()
            self.runs.append(self.run)
            self.model = None
        elif line.startswith(_USER) or line == "####":
            self._end_reply()
            if not self.user:
                self.user_line = number
            self.user.append(line[len(_USER) :].removesuffix("  "))
        elif line.startswith("> ") or line == ">":
            self._end_user()
            self._end_reply()
            self.output = number
            self.output_lines = [line[2:]]
            if line.endswith("  ") or line == ">":
                self._end_output()
        else:
            self._end_user()
            if not self.reply:
                if not line.strip():
                    return
                self.reply_line = number
            self.reply.append(line)

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
        self.messages.append((Message("user", (TextPart(text),), meta=meta), None, self.run))

    def _end_reply(self) -> None:
        if not self.reply:
            return
        text = "\n".join(self.reply).strip()
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
            self.messages[-1] = (merged, None, self.messages[-1][2])
            return
        msg = Message("assistant", (TextPart(text),), model=self.model, stop_reason="stop")
        self.messages.append((msg, None, self.run))

    def _end_output(self) -> None:
        assert self.output is not None
        self.report.ignore("aider output", line=self.output)
        self.output = None
        for raw in self.output_lines:
            text = raw.strip()
            model = _MODEL.match(text)
            if model:
                self.model = model.group(1)
                self.last_model = self.model
            applied = _APPLIED.match(text)
            commit = _COMMIT.match(text)
            if (applied or commit) and self.messages and self.messages[-1][0].role == "assistant":
                msg, created, run = self.messages[-1]
                meta = dict(msg.meta)
                if applied:
                    meta.setdefault(APPLIED_EDITS, []).append(applied.group(1))
                if commit:
                    meta.setdefault("commits", []).append(commit.group(1))
                msg = Message(
                    msg.role, msg.parts, model=msg.model, stop_reason=msg.stop_reason, meta=meta
                )
                self.messages[-1] = (msg, created, run)
        self.output_lines = []

    def flush(self) -> None:
        """Close whatever is open (at a new run and at the end of the file)."""
        if self.output is not None:
            self._end_output()
        self._end_user()
        self._end_reply()


IMPORTER = AiderImporter()
