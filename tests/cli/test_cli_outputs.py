"""``-o``: refused before any work when it names the store, the input file or a directory
(both files byte for byte as they were); written whole through a temporary file and a
rename; left as it was when the command fails."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cli_helpers import EXAMPLE, EXAMPLE_ID

from ctxengine.cli import main
from ctxengine.cli.output import Grid, column_groups
from ctxengine.cli.overwrite import OutputKind, holds


@pytest.fixture(autouse=True)
def _no_summary_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CTXENGINE_SUMMARY_MODEL", raising=False)


def digest(*paths: Path) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else "" for p in paths]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    assert main(["import", str(EXAMPLE), "--db", str(path)]) == 0
    return path


def test_output_equal_to_the_store_is_refused_and_both_files_stay_as_they_were(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wal = Path(f"{db}-wal")
    before = digest(db, wal)
    capsys.readouterr()
    for command in (["compact", EXAMPLE_ID], ["export", "--session", EXAMPLE_ID]):
        assert main([*command, "--db", str(db), "-o", str(db)]) == 2
        assert capsys.readouterr().err == (
            f"error: refusing to write {db}: it is the session store {db}; nothing was written\n"
        )
        assert digest(db, wal) == before
    # through another name for the same file, and the store's write-ahead log
    link = db.parent / "link.db"
    link.symlink_to(db)
    assert main(["compact", EXAMPLE_ID, "--db", str(db), "-o", str(link)]) == 2
    assert main(["compact", EXAMPLE_ID, "--db", str(db), "-o", str(wal)]) == 2
    assert digest(db, wal) == before


def test_output_equal_to_the_input_is_refused_and_the_transcript_stays_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "x.jsonl"
    src.write_bytes(EXAMPLE.read_bytes())
    before = digest(src)
    for command in ("compact", "export"):
        assert main([command, str(src), "-o", str(src), "--db", str(tmp_path / "s.db")]) == 2
        assert capsys.readouterr().err == (
            f"error: refusing to write {src}: it is the input file {src}; nothing was written\n"
        )
    assert digest(src) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl"]


def test_a_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", str(EXAMPLE), "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: refusing to write {tmp_path}: it is a directory; nothing was written\n"
    )


def test_an_output_is_replaced_whole_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    out = tmp_path / "request.json"
    older = [{"role": "user", "content": "an older request much longer than nothing"}] * 1000
    out.write_text(json.dumps({"model": "m", "messages": older}))
    assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(out)]) == 0
    body = json.loads(out.read_text())
    assert body["messages"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["request.json"]


def test_a_failed_compaction_leaves_an_existing_output_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "request.json"
    keep = '{"messages": [{"role": "user", "content": "keep me"}]}'
    out.write_text(keep)
    # the system prompt alone is larger than the window: nothing can make it fit
    src = tmp_path / "chat.json"
    rules = " ".join(f"Rule {k}: never touch file_{k}.py." for k in range(2_000))
    messages = [{"role": "system", "content": rules}] + [
        {"role": "user", "content": f"Step {k}: rename module_{k}."} for k in range(20)
    ]
    src.write_text(json.dumps(messages), encoding="utf-8")
    code = main(["compact", str(src), "--window", "4000", "-o", str(out)])
    assert code == 2
    assert out.read_text() == keep
    err = " ".join(capsys.readouterr().err.split())
    assert err == (
        "cannot compact: no compaction can bring the context under the trigger of 3,200 tokens "
        "with 176 tokens to spare (window 4,000): what every compaction keeps is 26,366 tokens "
        "already (largest parts: system prompt 26,181, continuation state 90, continuation "
        "message 41); shorten these (rules files, tool schemas, system prompt), re-inject less, "
        "or use a model with a larger window; nothing was written"
    )


def test_a_transcript_or_another_programs_data_is_never_replaced_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "other.jsonl"
    transcript.write_bytes(EXAMPLE.read_bytes())
    data = tmp_path / "data.json"
    data.write_text('{"rows": [1, 2, 3]}')
    before = digest(transcript, data)
    for command in (["compact", "--window", "16000"], ["export"], ["handoff"]):
        assert main([command[0], str(EXAMPLE), *command[1:], "-o", str(transcript)]) == 2
        wanted = "a ctxengine log export" if command[0] == "export" else "a request body"
        assert capsys.readouterr().err == (
            f"error: refusing to write {transcript}: it exists and is not {wanted} (it reads "
            "as a claude-code transcript); pass --force to replace it; nothing was written\n"
        )
    assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(data)]) == 2
    assert capsys.readouterr().err == (
        f"error: refusing to write {data}: it exists and is not a request body; pass --force "
        "to replace it; nothing was written\n"
    )
    assert digest(transcript, data) == before
    assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(data), "--force"]) == 0
    assert json.loads(data.read_text())["messages"]


def test_an_earlier_output_of_the_same_kind_or_an_empty_file_is_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request, log, empty = tmp_path / "request.json", tmp_path / "log.jsonl", tmp_path / "e.json"
    empty.write_text("")
    for _ in range(2):
        assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(request)]) == 0
        assert main(["export", str(EXAMPLE), "-o", str(log)]) == 0
    assert main(["export", str(EXAMPLE), "--format", "anthropic", "-o", str(request)]) == 0
    assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(empty)]) == 0
    capsys.readouterr()
    # a log export is not a request body, nor the other way round
    assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(log)]) == 2
    assert main(["export", str(EXAMPLE), "-o", str(request)]) == 2
    assert capsys.readouterr().err.count("pass --force to replace it") == 2


def test_a_read_only_file_is_refused_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "request.json"
    assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(out)]) == 0
    out.chmod(0o444)
    before = digest(out)
    capsys.readouterr()
    assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: refusing to write {out}: it is read-only; pass --force to replace it; "
        "nothing was written\n"
    )
    assert digest(out) == before
    assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(out), "--force"]) == 0


@pytest.mark.parametrize(
    ("kind", "content", "expected"),
    [
        ("request", b'{"model": "m", "messages": []}', True),
        ("request", b'{"model": "m", "input": [], "instructions": "x"}', True),
        ("request", b'{"messages": [], "info": {"exit_status": "done"}}', False),  # a trajectory
        ("request", b'[{"role": "user", "content": "hi"}]', False),  # a message list
        ("request", b"not json", False),
        ("request", b"", True),
        ("log", b'{"id": "e1", "session_id": "s", "seq": 0, "body": {}}\n{"id"', True),
        ("log", b'{"id": "e1", "session_id": "s", "seq": 0, "body": {}, "x": 1}\n', False),
        ("log", b'{"type": "user", "uuid": "u1"}\n', False),
        ("html", b"\n  <!DOCTYPE html>\n<html>", True),
        ("html", b"<HTML><body>", True),
        ("html", b"<svg>", False),
        ("png", b"\x89PNG\r\n\x1a\n\x00\x00", True),
        ("png", b"GIF89a", False),
    ],
)
def test_what_an_existing_file_holds(
    tmp_path: Path, kind: OutputKind, content: bytes, expected: bool
) -> None:
    path = tmp_path / "out"
    path.write_bytes(content)
    assert holds(path, kind) is expected


def test_a_wide_comparison_splits_into_tables_that_fit_the_terminal() -> None:
    grid = Grid(("", "default", "observation-masking", "pi"), split=True)
    grid.add("model calls", "156", "156", "156")
    grid.add("cache breaks", "compaction 6", "compaction 13, prune 1", "compaction 33")
    # Widths with a space either side and a border: labels 12 + 3, columns 12 + 3,
    # 22 + 3 and 13 + 3. 50 cells leave 34 beside the labels: default (15) and pi (16) would
    # fit together, but the columns keep their order.
    assert column_groups(grid, 50) == [[1], [2], [3]]
    assert column_groups(grid, 60) == [[1, 2], [3]]
    assert column_groups(grid, 80) == [[1, 2, 3]]
    # A column wider than the terminal is still shown, alone.
    assert column_groups(grid, 20) == [[1], [2], [3]]


def test_a_manual_compaction_names_the_re_injected_parts_that_leave_no_room(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a todo list of 1,200 open items is re-injected whole: alone it is over the trigger
    todos = [
        {"content": f"Migrate module m{k:04d}.py to the new logging API", "status": "pending"}
        for k in range(1_200)
    ]
    messages: list[dict[str, object]] = [{"role": "user", "content": "Migrate every module."}]
    for k, (name, args, output) in enumerate(
        [("TodoWrite", {"todos": todos}, "ok")]
        + [("Read", {"file_path": f"/p/m{i}.py"}, "x = 1\n" * 200) for i in range(6)]
    ):
        call = {
            "id": f"c{k}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": output})
    src = tmp_path / "chat.json"
    src.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    code = main(["compact", str(src), "--window", "16000", "-o", str(tmp_path / "out.json")])
    assert code == 2
    assert not (tmp_path / "out.json").exists()
    err = " ".join(capsys.readouterr().err.split())
    assert err == (
        "cannot compact: no compaction can bring the context under the trigger of 12,800 "
        "tokens with 704 tokens to spare (window 16,000): what every compaction keeps is "
        "21,439 tokens already (largest parts: re-injected todo list 20,795, tool schemas 358, "
        "margin 160); shorten these (rules files, tool schemas, system prompt), re-inject "
        "less, or use a model with a larger window; nothing was written"
    )
