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
    out.write_text("an older request that is much longer than nothing " * 1000)
    assert main(["compact", str(EXAMPLE), "--window", "16000", "-o", str(out)]) == 0
    body = json.loads(out.read_text())
    assert body["messages"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["request.json"]


def test_a_failed_compaction_leaves_an_existing_output_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "request.json"
    out.write_text("keep me")
    # the system prompt alone is larger than the window: nothing can make it fit
    src = tmp_path / "chat.json"
    rules = " ".join(f"Rule {k}: never touch file_{k}.py." for k in range(2_000))
    messages = [{"role": "system", "content": rules}] + [
        {"role": "user", "content": f"Step {k}: rename module_{k}."} for k in range(20)
    ]
    src.write_text(json.dumps(messages), encoding="utf-8")
    code = main(["compact", str(src), "--window", "4000", "-o", str(out)])
    assert code == 2
    assert out.read_text() == "keep me"
    err = " ".join(capsys.readouterr().err.split())
    assert err == (
        "cannot compact: no compaction can bring the context under the trigger of 3,200 tokens "
        "with 176 tokens to spare (window 4,000): what every compaction keeps is 26,366 tokens "
        "already (largest parts: system prompt 26,181, continuation state 90, continuation "
        "message 41); shorten these (rules files, tool schemas, system prompt), re-inject less, "
        "or use a model with a larger window; nothing was written"
    )


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
