"""aider chat histories (``.aider.chat.history.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compact_check import counts, problems_after_compact
from corpus import require_corpus
from ctxengine.importers import detect, read_transcript
from ctxengine.model import Message
from ctxengine.summarizers.ledgers import extract_ledgers
from import_drift import tolerated

AIDER = "aider"
FIRST = "aider-dev-chat-history-first-sessions.aider.chat.history.md"
FULL = "aider-dev-chat-history-full.aider.chat.history.md"


def messages(session: Any) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def input_blocks(path: Path) -> int:
    """Runs of ``#### `` lines: what the user typed, counted from the raw text."""
    blocks, inside = 0, False
    for line in path.read_text(encoding="utf-8").split("\n"):
        typed = line.startswith("#### ") or line == "####"
        blocks += typed and not inside
        inside = typed
    return blocks


class TestCorpus:
    def test_first_sessions(self) -> None:
        path = require_corpus("aider", FIRST)
        session = read_transcript(path)
        assert detect(path).name == AIDER
        assert counts(session) == ({"assistant": 2, "user": 4}, 0, 0, 0)
        assert session.report.summary() == ""
        assert session.report.counts("ignored") == {
            "aider output": 13,
            "command:/diff": 1,
            "command:/ex": 1,
            "command:/help": 1,
            "preamble": 1,
        }
        found = messages(session)
        assert found[0].text.startswith("# Fix any errors below, if possible.\n\n## Running: ")
        assert found[1].text == "Use the Spinner instead of the inlined custom spinner"
        reply = found[2]
        assert reply.text.startswith("Certainly! I'll modify the `run_install` function")
        assert reply.text.endswith("consistent spinner behavior across the application.")
        assert ">>>>>>> REPLACE\n```" in reply.text
        assert reply.model == "claude-3-5-sonnet-20240620"
        assert reply.meta == {"applied_edits": ["aider/utils.py"], "commits": ["fd43cd4"]}
        assert session.entries[1].meta == {"run": "2024-08-05 19:33:32"}
        assert len(session.meta["runs"]) == 11
        assert problems_after_compact(session) == []

    def test_full_history_counts_match_the_raw_text(self) -> None:
        path = require_corpus("aider", FULL)
        session = read_transcript(path)
        assert counts(session) == ({"assistant": 749, "user": 987}, 0, 0, 0)
        assert session.report.summary() == ""
        ignored = session.report.counts("ignored")
        commands = sum(n for k, n in ignored.items() if k.startswith("command:"))
        assert (commands, ignored.get("empty input", 0)) == (778, 11)
        assert len(messages(session)) - 749 + commands + 11 == input_blocks(path) == 1776
        text = path.read_text(encoding="utf-8")
        applied = [p for m in messages(session) for p in m.meta.get("applied_edits", ())]
        assert len(applied) == text.count("\n> Applied edit to ") == 413
        assert len(set(applied)) == 48
        assert len(session.meta["runs"]) == text.count("\n# aider chat started at ") + (
            text.startswith("# aider chat started at ")
        )

    def test_applied_edits_reach_the_ledgers(self) -> None:
        session = read_transcript(require_corpus("aider", FIRST))
        ledgers = extract_ledgers(messages(session))
        assert ledgers.files_modified == ("aider/utils.py",)
        assert "edited aider/utils.py" in ledgers.done


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / ".aider.chat.history.md"
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


HEADER = (
    "\n# aider chat started at 2024-08-05 19:33:02\n\n"
    "> aider  \n> Model: gpt-4o with diff edit format  \n\n"
)


class TestMapping:
    def test_commands_multi_line_input_and_multi_line_output(self, tmp_path: Path) -> None:
        text = (
            HEADER
            + "#### /add a.py  \n\n> Added a.py to the chat  \n\n"
            + "#### first line  \n#### second line  \n\n"
            + "Here is the change.\n\n"
            + "> Tokens: 1.2k sent, 30 received.  \n> Applied edit to a.py  \n\n"
            + "#### /run pytest  \n> ===== test session starts =====\nlast output line  \n\n"
            + "#### /ask why?  \n\nBecause.\n\n"
        )
        session = read_transcript(write(tmp_path, text))
        found = messages(session)
        assert [(m.role, m.text, m.meta) for m in found] == [
            ("user", "first line\nsecond line", {}),
            ("assistant", "Here is the change.", {"applied_edits": ["a.py"]}),
            ("user", "why?", {"command": "/ask"}),
            ("assistant", "Because.", {}),
        ]
        assert found[1].model == "gpt-4o"
        assert session.report.counts("ignored") == {
            "aider output": 4,
            "command:/add": 1,
            "command:/run": 1,
        }

    def test_replies_separated_only_by_output_are_one_message(self, tmp_path: Path) -> None:
        text = HEADER + "#### go  \n\nPart one.\n\n> Applied edit to a.py  \n\nPart two.\n\n"
        found = messages(read_transcript(write(tmp_path, text)))
        assert [m.text for m in found] == ["go", "Part one.\n\nPart two."]
        assert found[1].meta == {"applied_edits": ["a.py"]}

    def test_notes_of_one_output_are_read_by_their_opening(self, tmp_path: Path) -> None:
        """The model lines of an output are read opening by opening (``Model:``, then ``Main
        model:``, then ``Models:``: the last one read names the model, wherever it stands),
        then its applied edits, then its commits."""
        text = (
            HEADER
            + "#### go  \n\nDone.\n\n"
            + "> Commit 1234567 fix it  \n> Applied edit to b.py  \n> Commit abcdef0 more  \n"
            + "> Applied edit to c.py  \n> Models: later-model  \n> Main model: main-model  \n"
            + "> Model: plain-model  \n\n#### again  \n\nOk.\n\n"
        )
        session = read_transcript(write(tmp_path, text))
        found = messages(session)
        assert [(m.text, m.model) for m in found if m.role == "assistant"] == [
            ("Done.", "gpt-4o"),
            ("Ok.", "later-model"),
        ]
        assert list(found[1].meta.items()) == [
            ("applied_edits", ["b.py", "c.py"]),
            ("commits", ["1234567", "abcdef0"]),
        ]
        assert session.meta["model"] == "later-model"


class TestDrift:
    """Of the drift cases only two apply to a Markdown history without ids, JSON or
    records: a file cut at its end (read as far as it goes, nothing to skip) and bytes that
    are not UTF-8 (repaired like a lone surrogate elsewhere)."""

    def test_a_file_cut_inside_a_reply_keeps_what_was_written(self, tmp_path: Path) -> None:
        session = read_transcript(write(tmp_path, HEADER + "#### go  \n\nHalf a rep"))
        assert [m.text for m in messages(session)] == ["go", "Half a rep"]
        assert session.report.summary() == ""

    def test_bytes_that_are_not_utf8(self, tmp_path: Path) -> None:
        raw = (HEADER + "#### go  \n\nbad \xff byte\n").encode("latin-1")
        path = write(tmp_path, raw)
        session = tolerated(
            path,
            AIDER,
            "repaired 1: invalid UTF-8 ×1 (line 9)",
            ":9: expected UTF-8 text (bytes that are not UTF-8 found)",
        )
        assert messages(session)[1].text == "bad \ufffd byte"
