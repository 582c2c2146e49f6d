"""``--tokenizer``: how a command counts tokens (the default estimate, the estimate calibrated
for an encoding, ``auto`` from ``--model``'s profile, or tiktoken's exact counts), and what its
``--json`` says it used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli_env, validate

from ctxengine.analysis import breakdown
from ctxengine.cli import main
from ctxengine.cli.options import TOKENIZER_FAMILIES, TOKENIZER_NAMES, TokenizerChoice
from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.policy.defaults import DEFAULT_IMAGE_TOKENS
from ctxengine.providers.profiles import PROFILES_ENV, TOKENIZERS
from ctxengine.replay import replay
from ctxengine.tokens import HeuristicEstimator, TiktokenCounter
from ctxengine.tokens.names import counter_name
from tiktoken_files import encodings_dir, skip_reason

CJK = "代理在修改任何文件之前先阅读失败的测试。"
#: Seventeen messages, user and assistant in turn, each 200 wide characters: 214 tokens by
#: the default estimate, 152 by the one for o200k_base (tests/tokens derive both rates).
MESSAGES = [{"role": "user" if n % 2 == 0 else "assistant", "content": CJK * 10} for n in range(17)]
DEFAULT_TOTAL, O200K_TOTAL = 17 * 214, 17 * 152  # 3,638 and 2,584
#: A window whose trigger (3,200 tokens) the last request (the 15 messages before the last
#: reply: 3,210 tokens by the default estimate, 2,280 for o200k_base) passes by one estimate
#: and not by the other.
WINDOW = 4_000
ALLOWED = "auto, estimate, estimate:o200k_base, estimate:cl100k_base, exact:o200k_base, "
ALLOWED += "exact:cl100k_base"
NO_TIKTOKEN = "error: exact token counts need tiktoken: pip install 'ctxengine[tiktoken]'\n"

needs_encodings = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "cjk.json"
    path.write_text(json.dumps({"messages": MESSAGES}, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def shipped_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROFILES_ENV, raising=False)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main([*argv, "--json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def total(path: Path, estimator: HeuristicEstimator) -> int:
    """The library's breakdown of the transcript, as ``inspect`` prints it."""
    return breakdown(read_transcript(path).entries, estimator).total


def test_the_names_are_the_profiles_families_and_the_estimators_names() -> None:
    assert TOKENIZER_FAMILIES == TOKENIZERS
    assert tuple(ALLOWED.split(", ")) == TOKENIZER_NAMES
    for name in TOKENIZER_NAMES[1:4]:  # the estimates (the exact ones need tiktoken)
        assert counter_name(TokenizerChoice(name).estimator()) == name
        assert counter_name(TokenizerChoice(name).session_estimator()) == name
    assert TokenizerChoice("estimate").session_estimator() is None  # a session's own default


def test_inspect_counts_with_the_estimate_asked_for(
    transcript: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    default = run_json(capsys, "inspect", str(transcript))
    o200k = run_json(capsys, "inspect", str(transcript), "--tokenizer", "estimate:o200k_base")
    cl100k = run_json(capsys, "inspect", str(transcript), "--tokenizer", "estimate:cl100k_base")
    assert (default["tokenizer"], default["tokens"]) == ("estimate", DEFAULT_TOTAL)
    assert (o200k["tokenizer"], o200k["tokens"]) == ("estimate:o200k_base", O200K_TOTAL)
    assert cl100k["tokenizer"] == "estimate:cl100k_base"
    # the library's totals with the same estimators
    assert default["tokens"] == total(transcript, HeuristicEstimator())
    assert o200k["tokens"] == total(transcript, HeuristicEstimator(encoding="o200k_base"))
    assert cl100k["tokens"] == total(transcript, HeuristicEstimator(encoding="cl100k_base"))
    assert [r["tokens"] for r in o200k["by_role"]] == [9 * 152, 8 * 152]
    for doc in (default, o200k, cl100k):
        validate(doc, "inspect")


def test_inspect_prints_how_it_counted(
    transcript: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(transcript), "--tokenizer", "estimate:o200k_base"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    counted = "2,584 tokens (estimated for o200k_base)"
    assert first == f"{transcript}: {counted} in 17 messages, 0 tool calls, 0 tool results"


@pytest.mark.parametrize(
    ("model", "name", "tokens"),
    [
        ("gpt-4o", "estimate:o200k_base", O200K_TOTAL),
        ("gpt-4-0613", "estimate:cl100k_base", DEFAULT_TOTAL),  # CJK: cl100k_base's rates
        ("claude-sonnet-4-5", "estimate", DEFAULT_TOTAL),
        ("no-such-model", "estimate", DEFAULT_TOTAL),
    ],
)
def test_auto_takes_the_tokenizer_of_the_model_s_profile(
    transcript: Path, capsys: pytest.CaptureFixture[str], model: str, name: str, tokens: int
) -> None:
    doc = run_json(capsys, "inspect", str(transcript), "--model", model)
    assert (doc["tokenizer"], doc["tokens"]) == (name, tokens)


def recorded(tmp_path: Path, model: str) -> Path:
    """The CJK transcript with every assistant message naming ``model``."""
    messages = [m if m["role"] == "user" else {**m, "model": model} for m in MESSAGES]
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps({"messages": messages}, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("model", "asked", "name", "tokens"),
    [
        ("gpt-4o", (), "estimate:o200k_base", O200K_TOTAL),
        ("claude-sonnet-4-5", (), "estimate", DEFAULT_TOTAL),
        ("gpt-4o", ("--model", "claude-sonnet-4-5"), "estimate", DEFAULT_TOTAL),  # asked wins
        ("gpt-4o", ("--tokenizer", "estimate"), "estimate", DEFAULT_TOTAL),
    ],
)
def test_auto_takes_the_model_the_transcript_records_when_none_is_given(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    model: str,
    asked: tuple[str, ...],
    name: str,
    tokens: int,
) -> None:
    doc = run_json(capsys, "inspect", str(recorded(tmp_path, model)), *asked)
    assert (doc["tokenizer"], doc["tokens"]) == (name, tokens)


def test_recall_counts_for_the_model_the_transcript_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recorded(tmp_path, "gpt-4o")
    entry = read_transcript(path).entries[1].id
    doc = run_json(capsys, "recall", str(path), "--entry", entry)
    assert doc["tokenizer"] == "estimate:o200k_base"
    (hit,) = doc["hits"]
    assert hit["tokens"] == HeuristicEstimator(encoding="o200k_base").text(hit["excerpt"])


def test_compact_and_replay_size_and_decide_by_the_counter(
    transcript: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    entries = read_transcript(transcript).entries
    window = ["--window", str(WINDOW)]
    for name, encoding, before in (
        ("estimate", None, DEFAULT_TOTAL),
        ("estimate:o200k_base", "o200k_base", O200K_TOTAL),
    ):
        estimator = HeuristicEstimator(image_tokens=DEFAULT_IMAGE_TOKENS, encoding=encoding)
        plan = run_json(capsys, "compact", str(transcript), *window, "--plan", "--tokenizer", name)
        assert (plan["tokenizer"], plan["plan"]["tokens_before"]) == (name, before)
        report = run_json(
            capsys,
            "compact",
            str(transcript),
            *window,
            "--tokenizer",
            name,
            "-o",
            str(tmp_path / "b.json"),
        )
        live = Session(WINDOW, entries=entries, estimator=estimator)
        assert (report["tokenizer"], report["tokens_before"]) == (name, before)
        assert report["tokens_before"] == live.project().tokens
        validate(plan, "compact")
        validate(report, "compact")
    # The last request is 3,210 tokens by the default estimate, over the 3,200-token trigger,
    # and 2,280 for o200k_base, under it: one compaction against none.
    replays = {
        name: run_json(capsys, "replay", str(transcript), *window, "--tokenizer", name)
        for name in ("estimate", "estimate:o200k_base")
    }
    assert [(d["tokenizer"], d["compactions"]) for d in replays.values()] == [
        ("estimate", 1),
        ("estimate:o200k_base", 0),
    ]
    o200k = HeuristicEstimator(image_tokens=DEFAULT_IMAGE_TOKENS, encoding="o200k_base")
    library = replay(entries, window=WINDOW, estimator=o200k)
    assert [s["tokens"] for s in replays["estimate:o200k_base"]["steps"]] == [
        s.tokens for s in library.steps
    ]
    assert replays["estimate:o200k_base"]["steps"][-1]["tokens"] == 15 * 152
    for doc in replays.values():
        validate(doc, "replay")


def test_a_comparison_names_and_notes_its_counter(
    transcript: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", str(transcript), "--window", str(WINDOW), "--policy", "default"]
    default = run_json(capsys, *argv, "--jobs", "1")
    o200k = run_json(capsys, *argv, "--jobs", "1", "--tokenizer", "estimate:o200k_base")
    assert (default["tokenizer"], o200k["tokenizer"]) == ("estimate", "estimate:o200k_base")
    assert [p["compactions"] for p in (default["policies"][0], o200k["policies"][0])] == [1, 0]
    assert "tokens are estimated for o200k_base (estimate:o200k_base)" in o200k["notes"]
    assert not any("estimated for" in n for n in default["notes"])
    validate(o200k, "replay")
    # in worker processes (the estimator travels to them) the same numbers
    two = ["replay", str(transcript), "--window", str(WINDOW), "--policy", "default,pi"]
    pooled = run_json(capsys, *two, "--jobs", "2", "--tokenizer", "estimate:o200k_base")
    assert pooled["tokenizer"] == "estimate:o200k_base"
    assert pooled["policies"][0]["context"] == o200k["policies"][0]["context"]
    assert (pooled["policies"][0]["context"]["peak"], pooled["policies"][0]["compactions"]) == (
        15 * 152,
        0,
    )


def test_sessions_export_recall_and_revert_say_their_counter(
    transcript: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "s.db")
    assert main(["import", str(transcript), "--db", db]) == 0
    capsys.readouterr()
    listed = run_json(capsys, "sessions", "--db", db, "--tokenizer", "estimate:o200k_base")
    assert listed["tokenizer"] == "estimate:o200k_base"
    assert [s["tokens"] for s in listed["sessions"]] == [O200K_TOTAL]
    validate(listed, "sessions")
    plain = run_json(capsys, "sessions", "--db", db)
    assert (plain["tokenizer"], [s["tokens"] for s in plain["sessions"]]) == (
        "estimate",
        [DEFAULT_TOTAL],
    )
    exported = run_json(
        capsys,
        "export",
        str(transcript),
        "--format",
        "openai",
        "--model",
        "gpt-4o",
        "-o",
        str(tmp_path / "x.json"),
    )
    assert (exported["tokenizer"], exported["tokens"]) == ("estimate:o200k_base", O200K_TOTAL)
    validate(exported, "export")
    log = run_json(capsys, "export", str(transcript), "-o", str(tmp_path / "log.jsonl"))
    assert (log["tokenizer"], log["tokens"]) == (None, None)
    validate(log, "export")
    found = run_json(
        capsys, "recall", str(transcript), "修改", "--tokenizer", "estimate:cl100k_base"
    )
    assert found["tokenizer"] == "estimate:cl100k_base"
    validate(found, "recall")


@needs_encodings
def test_exact_counts_through_tiktoken(
    transcript: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(encodings_dir()))
    doc = run_json(capsys, "inspect", str(transcript), "--tokenizer", "exact:o200k_base")
    exact = TiktokenCounter("o200k_base")
    assert doc["tokenizer"] == "exact:o200k_base"
    assert doc["tokens"] == total(transcript, exact)
    assert doc["tokens"] == 17 * (4 + exact.text(CJK * 10))  # 4 tokens of framing each
    assert doc["tokens"] not in (DEFAULT_TOTAL, O200K_TOTAL)
    validate(doc, "inspect")


#: Runs the command line with ``import tiktoken`` failing, as where it is not installed.
WITHOUT_TIKTOKEN = (
    "import sys; sys.modules['tiktoken'] = None; from ctxengine.cli import run; run()"
)


@pytest.mark.parametrize("command", ["inspect", "compact", "replay"])
def test_exact_without_tiktoken_exits_2_naming_the_extra(transcript: Path, command: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_TIKTOKEN,
            command,
            str(transcript),
            "--tokenizer",
            "exact:o200k_base",
        ],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stderr, done.stdout) == (2, NO_TIKTOKEN, "")


def test_an_unknown_counter_exits_2_listing_the_values(
    transcript: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(transcript), "--tokenizer", "o200k"]) == 2
    err = capsys.readouterr().err
    assert (
        f"Invalid value for --tokenizer: 'o200k' is not a token counter; expected one of {ALLOWED}"
        in " ".join(err.split())
    )
