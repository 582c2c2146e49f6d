"""Cline and Roo Code task folders, built here in the documented shape (there is no public
sample with a license): ``api_conversation_history.json`` (Anthropic messages plus the agents'
fields), ``ui_messages.json`` and ``task_metadata.json``.

Checked: message mapping and exact counts, usage from ``api_req_started``, Cline's deleted
range and Roo's condense summary and truncation marker as compaction records, detection of
each agent, compaction into valid requests, and the drift cases (by JSON path).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxengine.cli.handoff import RequestOptions, hand_off
from ctxengine.engine import Session
from ctxengine.errors import NothingToCompact, TranscriptError
from ctxengine.importers import detect, read_transcript
from ctxengine.importers.base import ImportedSession
from ctxengine.model import CompactionRecord, Message, Usage
from ctxengine.projection.validate import validate
from import_drift import LONE_SURROGATE_ERROR, LONE_SURROGATE_JSON, LONE_SURROGATE_TEXT, tolerated

CLINE = "saoudrizwan.claude-dev"
ROO = "rooveterinaryinc.roo-cline"
ENV = "<environment_details>\n# Current Working Directory (/w)\n</environment_details>"


def messages(session: ImportedSession) -> list[Message]:
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(call_id: str | None = "toolu_1", name: str = "read_file", **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "name": name, "input": {"path": "a.py"}, **extra}
    if call_id is not None:
        block["id"] = call_id
    return block


def result(call_id: str | None = "toolu_1", content: Any = "print(1)") -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "content": content}
    if call_id is not None:
        block["tool_use_id"] = call_id
    return block


def history(*items: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"ts": 1_760_000_000_000 + 1000 * i, **item} for i, item in enumerate(items)]


def task(
    tmp_path: Path,
    extension: str,
    api: list[dict[str, Any]] | str,
    ui: list[dict[str, Any]] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Path:
    folder = tmp_path / extension / "tasks" / "1760000000000"
    folder.mkdir(parents=True)
    path = folder / "api_conversation_history.json"
    path.write_text(api if isinstance(api, str) else json.dumps(api), encoding="utf-8")
    if ui is not None:
        (folder / "ui_messages.json").write_text(json.dumps(ui), encoding="utf-8")
    if metadata is not None:
        (folder / "task_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
    return path


def request(index: int, tokens_in: int, tokens_out: int, **extra: Any) -> dict[str, Any]:
    info = {"request": "…", "tokensIn": tokens_in, "tokensOut": tokens_out,
            "cacheWrites": 5, "cacheReads": 7, "cost": 0.01}  # fmt: skip
    return {"ts": 1, "type": "say", "say": "api_req_started", "text": json.dumps(info),
            "conversationHistoryIndex": index, **extra}  # fmt: skip


def cline_task(tmp_path: Path) -> Path:
    api = history(
        {"role": "user", "content": [text("<task>\nread a.py\n</task>"), text(ENV)]},
        {"role": "assistant", "content": [text("Reading it."), use()]},
        {"role": "user", "content": [result(), text(ENV)]},
        {"role": "assistant", "content": [text("It prints 1.")]},
        {"role": "user", "content": [text("<feedback>\nand b.py?\n</feedback>")]},
        {"role": "assistant", "content": [text("b.py is empty.")]},
    )
    ui = [
        {"ts": 0, "type": "say", "say": "task", "text": "read a.py"},
        request(0, 1000, 50),
        request(2, 1100, 20),
        request(4, 300, 10, conversationHistoryDeletedRange=[1, 2]),
    ]
    metadata = {
        "files_in_context": [
            {"path": "a.py", "record_state": "active", "record_source": "read_tool"},
            {"path": "old.py", "record_state": "stale", "record_source": "read_tool"},
        ],
        "model_usage": [{"ts": 1, "model_id": "claude-sonnet-4-6", "model_provider_id": "x"}],
    }
    return task(tmp_path, CLINE, api, ui, metadata)


class TestCline:
    def test_mapping_usage_and_metadata(self, tmp_path: Path) -> None:
        path = cline_task(tmp_path)
        assert detect(path).name == "cline"
        session = read_transcript(path)
        found = messages(session)
        assert [m.role for m in found] == [
            "user", "assistant", "tool", "user", "assistant", "user", "assistant",
        ]  # fmt: skip
        assert [(c.id, c.name) for c in found[1].tool_calls] == [("toolu_1", "read_file")]
        assert found[2].tool_results[0].text == "print(1)"
        assert found[3].text == ENV
        assert found[1].usage == Usage(1000, 50, 7, 5)
        assert found[4].usage == Usage(1100, 20, 7, 5)
        assert found[6].usage == Usage(300, 10, 7, 5)
        assert session.session_id == "1760000000000"
        assert session.meta == {"model": "claude-sonnet-4-6", "files_in_context": ["a.py"]}
        assert session.title == "read a.py"
        assert session.entries[0].created_at == "2025-10-09T08:53:20+00:00"

    def test_the_task_folder_is_a_target(self, tmp_path: Path) -> None:
        path = cline_task(tmp_path)
        assert detect(path.parent).name == "cline"
        by_folder, by_file = read_transcript(path.parent), read_transcript(path)
        assert by_folder.entries == by_file.entries
        assert (by_folder.session_id, by_folder.format, by_folder.source_path) == (
            "1760000000000",
            "cline",
            str(path),
        )
        assert by_folder.meta == by_file.meta

    def test_a_deleted_range_becomes_a_compaction_record(self, tmp_path: Path) -> None:
        session = read_transcript(cline_task(tmp_path))
        index = next(i for i, e in enumerate(session.entries) if e.kind == "compaction")
        record = session.entries[index].body
        assert isinstance(record, CompactionRecord)
        assert record.policy == "cline"
        kept = next(e for e in session.entries if e.id == record.first_kept_id)
        assert isinstance(kept.body, Message)
        assert kept.body.text == "It prints 1."
        assert index == 6
        assert session.entries[index].meta == {"deleted_range": [1, 2]}


class TestRooCode:
    def roo_task(self, tmp_path: Path, extension: str = ROO) -> Path:
        api = history(
            {"role": "user", "content": [text("<task>fix it</task>")], "condenseParent": "c-1"},
            {"role": "assistant", "content": [use()], "condenseParent": "c-1"},
            {"role": "user", "content": [result()], "condenseParent": "c-1"},
            {"role": "user", "content": [text("## Summary\nRead a.py.")], "isSummary": True,
             "condenseId": "c-1"},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}],
             "encrypted_content": "enc"},
            {"role": "assistant", "content": [text("Continuing.")], "truncationParent": "t-1"},
            {"role": "user", "content": "[Sliding window truncation: 1 messages hidden to "
             "reduce context]", "isTruncationMarker": True, "truncationId": "t-1"},
            {"role": "user", "content": [text("thanks")]},
            {"role": "assistant", "content": [text("Welcome.")]},
        )  # fmt: skip
        ui = [request(0, 10, 1), request(5, 20, 2), request(8, 30, 3)]
        for item in ui:
            del item["conversationHistoryIndex"]
        return task(tmp_path, extension, api, ui)

    def test_condense_and_truncation_become_compaction_records(self, tmp_path: Path) -> None:
        path = self.roo_task(tmp_path)
        assert detect(path).name == "roo-code"
        assert detect(path.parent).name == "roo-code"
        assert read_transcript(path.parent).entries == read_transcript(path).entries
        session = read_transcript(path)
        assert session.format == "roo-code"
        kinds = [e.kind if e.kind != "message" else e.body.role for e in session.entries]  # type: ignore[union-attr]
        assert kinds == [
            "user", "assistant", "tool", "compaction", "assistant", "compaction", "user",
            "assistant",
        ]  # fmt: skip
        summary, marker = (e.body for e in session.entries if e.kind == "compaction")
        assert isinstance(summary, CompactionRecord) and isinstance(marker, CompactionRecord)
        assert (summary.summary, summary.first_kept_id, summary.policy) == (
            "## Summary\nRead a.py.", None, "roo-code",
        )  # fmt: skip
        assert marker.summary == (
            "[Sliding window truncation: 1 messages hidden to reduce context]"
        )
        continuing = messages(session)[3]
        assert (continuing.reasoning[0].text, continuing.reasoning[0].signature) == ("think", "enc")
        usages = [m.usage for m in messages(session) if m.role == "assistant"]
        assert usages == [Usage(10, 1, 7, 5), Usage(20, 2, 7, 5), Usage(30, 3, 7, 5)]
        assert session.report.counts("ignored") == {"reasoning item": 1}

    def test_a_roo_task_without_condensing_is_known_by_its_folder(self, tmp_path: Path) -> None:
        api = history({"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"})
        path = task(tmp_path, "kilocode.kilo-code", api)
        assert detect(path).name == "roo-code"


@pytest.mark.parametrize("maker", ["cline", "roo"])
def test_compacting_gives_valid_requests(tmp_path: Path, maker: str) -> None:
    path = cline_task(tmp_path) if maker == "cline" else TestRooCode().roo_task(tmp_path)
    session = read_transcript(path)
    for window in (8_000, 32_000):
        engine = Session(window, session_id=session.session_id, entries=session.entries)
        try:
            ctx = engine.compact().context
        except NothingToCompact:
            ctx = engine.project()
        for provider in ("openai", "anthropic"):
            sent = hand_off(ctx, engine.estimator, engine.budget.reserve,
                            RequestOptions(provider, next_user="continue"))  # fmt: skip
            assert validate(sent.body, provider) == []


class TestDrift:
    """Each drift is tolerated with an exact report, and refused at its JSON path when
    strict; a cut document is refused."""

    def test_missing_ids(self, tmp_path: Path) -> None:
        api = history({"role": "user", "content": "go"},
                      {"role": "assistant", "content": [use(None)]},
                      {"role": "user", "content": [result(None)]})  # fmt: skip
        session = tolerated(
            task(tmp_path, CLINE, api),
            "cline",
            "repaired 2: tool_use block without id ×1 ($[1].content[0].id), tool_result block "
            "without call id ×1 ($[2].content[0].tool_use_id)",
            " at $[1].content[0].id: expected a string `id` on a tool_use block",
        )
        assert messages(session)[2].tool_results[0].call_id == "call_gen_1"

    def test_structured_output(self, tmp_path: Path) -> None:
        api = history({"role": "user", "content": "go"},
                      {"role": "assistant", "content": [use()]},
                      {"role": "user", "content": [result(content=text("one"))]})  # fmt: skip
        session = tolerated(
            task(tmp_path, CLINE, api),
            "cline",
            "repaired 1: structured content ×1 ($[2].content[0].content)",
            " at $[2].content[0].content: expected `content` to be a string or a list of "
            "blocks, got one block object",
        )
        assert messages(session)[2].tool_results[0].text == "one"

    def test_null_arguments(self, tmp_path: Path) -> None:
        api = history({"role": "user", "content": "go"},
                      {"role": "assistant", "content": [use() | {"input": None}]})  # fmt: skip
        session = tolerated(
            task(tmp_path, CLINE, api),
            "cline",
            "repaired 1: null arguments ×1 ($[1].content[0].input)",
            " at $[1].content[0].input: expected tool-call arguments, got null",
        )
        assert messages(session)[1].tool_calls[0].arguments == "{}"

    def test_unknown_record_kind(self, tmp_path: Path) -> None:
        api = history({"role": "user", "content": "go"}, {"role": "hologram", "content": "x"})
        tolerated(
            task(tmp_path, CLINE, api),
            "cline",
            "skipped 1: message role hologram ×1 ($[1].role)",
            ' at $[1].role: expected "user" or "assistant"',
        )

    def test_a_cut_document_is_refused(self, tmp_path: Path) -> None:
        path = task(tmp_path, CLINE, json.dumps(history({"role": "user", "content": "go"}))[:-5])
        with pytest.raises(TranscriptError) as info:
            read_transcript(path, "cline")
        assert str(info.value).startswith(
            f"{path}: read as a Cline task, but it is not valid JSON (unexpected end of data"
        )

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        raw = json.dumps(history({"role": "user", "content": "SURROGATE"}))
        path = task(tmp_path, CLINE, raw.replace("SURROGATE", LONE_SURROGATE_JSON))
        session = tolerated(
            path, "cline", "repaired 1: lone surrogate ×1 (line 1)", f":1: {LONE_SURROGATE_ERROR}"
        )
        assert messages(session)[0].text == LONE_SURROGATE_TEXT
