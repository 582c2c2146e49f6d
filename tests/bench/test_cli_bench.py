"""``ctxengine bench`` through the CLI entry point: JSON and the plain-text tables."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ctxengine.cli import main
from ctxengine.cli.schemas import schema


def test_bench_json_for_one_session_and_one_k(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--sessions", "1", "--k", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["profile"] == "smoke" and report["ks"] == [1]
    assert [s["name"] for s in report["sessions"]] == ["debug-0"]
    policy = report["policies"]["default"]
    assert policy["cells"] == 1
    assert policy["determinism"] == {"cells": 1, "identical": 1}
    assert policy["cells_detail"][0]["compactions"] == 1
    assert set(policy["cells_detail"][0]["hashes"]) == {"openai", "anthropic"}
    assert isinstance(report["targets"]["default"], list)


def test_bench_prints_tables_as_plain_text_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--sessions", "1", "--k", "1", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ctxengine bench — profile smoke, seed 1, 1 sessions")
    assert "default: survival of exposed facts" in out
    assert "file_modified (indirect)" in out
    assert "modified-file recall" in out
    assert "determinism 1/1 identical request hashes" in out
    assert "─" not in out and "│" not in out  # no box drawing when not a terminal
    # k=1 alone measures none of the k=5 / k=10 targets: said so, not listed as missed
    assert "default: issue targets all measured ones met\n" in out
    assert (
        "default: not measured in this profile (its k is not run; --k or --profile full): "
        "identifiers and errors at k=5; identifiers and errors at k=10; artifact trail at k=10"
    ) in out
    assert ": not run" not in out


def test_bench_rejects_an_unknown_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--profile", "huge"]) == 2
    assert "expected one of smoke, full" in capsys.readouterr().err


def _corpus_folder(tmp_path: Path) -> Path:
    """A folder with one file over the size limit, one chat log too small and a note."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "big.jsonl").write_bytes(b"x" * 1_500_001)
    chat = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    (folder / "chat.json").write_text(json.dumps(chat), encoding="utf-8")
    (folder / "notes.txt").write_text("not a transcript", encoding="utf-8")
    return folder


def test_smoke_honours_corpus_and_names_the_files_it_skips(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = _corpus_folder(tmp_path)
    assert main(["bench", "--sessions", "1", "--k", "1", "--corpus", str(folder)]) == 0
    captured = capsys.readouterr()
    assert (
        "note: the smoke profile plants no corpus transcripts of its own; --corpus adds 1 "
        f"from {folder}\n"
    ) in captured.err
    assert (
        f"corpus {folder}: 0 transcripts used\n"
        "corpus: skipped big.jsonl: 1,500,001 bytes, over the 1,500,000-byte limit\n"
        "corpus: also skipped 1 under 20,000 estimated tokens, 1 not transcripts ctxengine "
        "reads (see --json for each file)\n"
    ) in captured.out


def test_the_json_report_lists_every_skipped_corpus_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = _corpus_folder(tmp_path)
    argv = ["bench", "--sessions", "1", "--k", "1", "--corpus", str(folder), "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    found = schema("bench")
    jsonschema.Draft202012Validator.check_schema(found)
    jsonschema.Draft202012Validator(found).validate(report)
    assert report["corpus"] == {
        "dir": str(folder),
        "used": [],
        "skipped": [
            {
                "file": "big.jsonl",
                "kind": "too_large",
                "reason": "1,500,001 bytes, over the 1,500,000-byte limit",
            },
            {
                "file": "chat.json",
                "kind": "too_small",
                "reason": "10 estimated tokens, under 20,000",
            },
            {
                "file": "notes.txt",
                "kind": "unreadable",
                "reason": "not a transcript ctxengine reads (TranscriptError)",
            },
        ],
    }
