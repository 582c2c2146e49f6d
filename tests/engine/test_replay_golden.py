"""Golden record of every corpus replay: the exact request of each model call, hashed.

Every corpus transcript whose format imports (the files ``test_corpus_replay`` replays) is
replayed with ``ctxengine.replay.replay(entries, window=W)`` at each of :data:`WINDOWS`. For
each model call of the replay, the request body rendered for OpenAI and for Anthropic (the
bodies the replay validates, taken from :data:`ctxengine.replay.RENDERERS` as it calls them)
is hashed: the first 16 hex digits of the SHA-256 of ``orjson.dumps(body,
option=OPT_SORT_KEYS)``. The bodies hold no clock time and no random id (the entries' ids
and ``created_at`` never reach them), so the raw body is hashed, not a normalised copy.

``golden/replay_hashes.json`` holds, per ``"<folder>/<file>@<window>"`` key: ``compactions``
(compactions during the replay) and ``steps`` (per model call, in order, ``{"anthropic":
hash, "openai": hash}``), or ``error`` (``"ConfigError: <message>"``) when the replay at
that window raises :class:`~ctxengine.errors.ConfigError`. The test replays each file again
and compares; on a difference it names the first call whose request differs and the number
of compactions and calls recorded and measured.

Regenerate the record after a deliberate change of behaviour (and review the diff)::

    PYTHONPATH=src .venv/bin/python tests/engine/test_replay_golden.py --update

or, equivalently, run this module under pytest with ``CTXENGINE_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

import orjson
import pytest

# Run as a script (``--update``), this file needs tests/ importable as pytest makes it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ctxengine.replay as replay_module
from corpus import CORPUS, replayable_names, require_corpus
from ctxengine.errors import ConfigError, UnsupportedFormatError
from ctxengine.importers import read_transcript
from ctxengine.model import Entry
from ctxengine.projection.context import Context
from ctxengine.replay import ReplayStep

#: Model windows replayed, in tokens.
WINDOWS: tuple[int, ...] = (8_000, 32_000)
#: The record this module checks.
GOLDEN: Path = Path(__file__).resolve().parent / "golden" / "replay_hashes.json"
#: Setting this environment variable to ``1`` rewrites :data:`GOLDEN` instead of checking it.
UPDATE_ENV = "CTXENGINE_UPDATE_GOLDEN"
#: Hex digits kept of each SHA-256.
HASH_DIGITS = 16

Record = dict[str, Any]


def body_hash(body: Mapping[str, object]) -> str:
    """First :data:`HASH_DIGITS` hex digits of the SHA-256 of ``body`` as sorted-key JSON."""
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()[:HASH_DIGITS]


@contextmanager
def _recording_renderers(rendered: list[tuple[str, str]]) -> Iterator[None]:
    """While active, every body a replay renders is hashed into ``rendered`` as
    ``(provider, hash)``; the body itself is passed on unchanged."""
    originals = dict(replay_module.RENDERERS)

    def wrap(
        provider: str, render: Callable[[Context], dict[str, object]]
    ) -> Callable[[Context], dict[str, object]]:
        def recording(ctx: Context) -> dict[str, object]:
            body = render(ctx)
            rendered.append((provider, body_hash(body)))
            return body

        return recording

    with patch.dict(replay_module.RENDERERS, {p: wrap(p, r) for p, r in originals.items()}):
        yield


def replay_record(entries: Sequence[Entry], window: int) -> Record:
    """The golden record of one replay: ``{"compactions": int, "steps": [{provider:
    hash}]}``, or ``{"error": "ConfigError: ..."}`` when the replay raises ``ConfigError``.

    Raises:
        AssertionError: a model call did not render exactly one body per provider (the
            replay no longer renders through ``RENDERERS``).
    """
    rendered: list[tuple[str, str]] = []
    steps: list[dict[str, str]] = []

    def on_step(step: ReplayStep) -> None:
        providers = [p for p, _ in rendered]
        assert sorted(providers) == sorted(replay_module.RENDERERS), (step.call, providers)
        steps.append(dict(sorted(rendered)))
        rendered.clear()

    try:
        with _recording_renderers(rendered):
            result = replay_module.replay(entries, window=window, on_step=on_step, sample=1)
    except ConfigError as e:
        return {"error": f"ConfigError: {e}"}
    assert len(steps) == len(result.steps)
    return {"compactions": result.compactions, "steps": steps}


def file_records(name: str) -> dict[str, Record] | None:
    """``{"<name>@<window>": record}`` for every window, or ``None`` when the file's format
    has no importer (``UnsupportedFormatError``)."""
    try:
        entries = read_transcript(CORPUS / name).entries
    except UnsupportedFormatError:
        return None
    return {f"{name}@{w}": replay_record(entries, w) for w in WINDOWS}


def dumps(records: Mapping[str, Record]) -> str:
    """The record as JSON text: keys sorted, one line per model call (a change shows as the
    changed lines in a diff)."""
    out = ["{"]
    for n, key in enumerate(sorted(records)):
        rec = records[key]
        out.append(f"  {_json(key)}: {{")
        if "error" in rec:
            out.append(f'    "error": {_json(rec["error"])}')
        else:
            out.append(f'    "compactions": {rec["compactions"]},')
            steps = ["      {" + _pairs(s) + "}" for s in rec["steps"]]
            out.append('    "steps": [' + ("\n" + ",\n".join(steps) + "\n    ]" if steps else "]"))
        out.append("  }" + ("," if n + 1 < len(records) else ""))
    out.append("}")
    return "\n".join(out) + "\n"


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


def _pairs(step: Mapping[str, str]) -> str:
    return ", ".join(f"{_json(k)}: {_json(v)}" for k, v in sorted(step.items()))


def difference(key: str, expected: Record, actual: Record) -> str | None:
    """``None`` when equal, else one line naming the first model call (0-based index)
    whose request differs and the compactions and calls recorded -> measured."""
    if expected == actual:
        return None
    if "error" in expected or "error" in actual:
        was, now = expected.get("error", "a replay"), actual.get("error", "a replay")
        return f"{key}: recorded {was}, got {now}"
    old, new = expected["steps"], actual["steps"]
    first = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)),
    )
    providers = (
        sorted(p for p in old[first] if old[first][p] != new[first].get(p))
        if first < min(len(old), len(new))
        else ["(call count)"]
    )
    return (
        f"{key}: first differing call index {first} ({', '.join(providers)}); "
        f"compactions {expected['compactions']} -> {actual['compactions']}; "
        f"calls {len(old)} -> {len(new)}"
    )


def _update(names: Sequence[str]) -> dict[str, Record]:
    records: dict[str, Record] = {}
    for name in names:
        records.update(file_records(name) or {})
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(dumps(records), encoding="utf-8")
    return records


@pytest.fixture(scope="module")
def golden() -> dict[str, Record]:
    """The recorded hashes (rewritten first when :data:`UPDATE_ENV` is ``1``)."""
    require_corpus()
    if os.environ.get(UPDATE_ENV) == "1":
        return _update(replayable_names())
    return dict(orjson.loads(GOLDEN.read_bytes()))


@pytest.mark.parametrize("name", replayable_names())
def test_replay_sends_the_recorded_requests(name: str, golden: dict[str, Record]) -> None:
    require_corpus(name)
    records = file_records(name)
    recorded = {k: v for k, v in golden.items() if k.rsplit("@", 1)[0] == name}
    if records is None:
        assert recorded == {}, f"{name} no longer imports but has a golden record"
        return
    assert sorted(recorded) == sorted(records), f"{name}: no golden record (run --update)"
    problems = [d for k in sorted(records) if (d := difference(k, recorded[k], records[k]))]
    assert problems == [], "\n".join(problems)


def test_the_record_holds_only_files_of_the_corpus(golden: dict[str, Record]) -> None:
    stale = sorted({k.rsplit("@", 1)[0] for k in golden} - set(replayable_names()))
    assert stale == []
    assert {int(k.rsplit("@", 1)[1]) for k in golden} == set(WINDOWS)


def test_a_window_too_small_is_recorded_as_its_config_error() -> None:
    entries = read_transcript(require_corpus("claude-code", "spotter-short.jsonl")).entries
    assert replay_record(entries, 500) == {
        "error": "ConfigError: a context window of 500 tokens is too small: "
        "ctxengine needs at least 1000"
    }


def test_the_record_is_written_one_call_per_line_and_reads_back() -> None:
    records: dict[str, Record] = {
        "b/y.jsonl@8000": {"error": "ConfigError: too small"},
        "a/x.jsonl@8000": {
            "compactions": 1,
            "steps": [
                {"anthropic": "00ff", "openai": "11ee"},
                {"anthropic": "22dd", "openai": "33cc"},
            ],
        },
        "a/x.jsonl@32000": {"compactions": 0, "steps": []},
    }
    text = dumps(records)
    assert text == (
        "{\n"
        '  "a/x.jsonl@32000": {\n'
        '    "compactions": 0,\n'
        '    "steps": []\n'
        "  },\n"
        '  "a/x.jsonl@8000": {\n'
        '    "compactions": 1,\n'
        '    "steps": [\n'
        '      {"anthropic": "00ff", "openai": "11ee"},\n'
        '      {"anthropic": "22dd", "openai": "33cc"}\n'
        "    ]\n"
        "  },\n"
        '  "b/y.jsonl@8000": {\n'
        '    "error": "ConfigError: too small"\n'
        "  }\n"
        "}\n"
    )
    assert orjson.loads(text) == records


def test_a_difference_names_the_first_differing_call_and_both_counts() -> None:
    old: Record = {
        "compactions": 2,
        "steps": [{"anthropic": "a0", "openai": "o0"}, {"anthropic": "a1", "openai": "o1"}],
    }
    new: Record = {
        "compactions": 3,
        "steps": [{"anthropic": "a0", "openai": "o0"}, {"anthropic": "a1", "openai": "XX"}],
    }
    assert difference("f@8000", old, old) is None
    assert difference("f@8000", old, new) == (
        "f@8000: first differing call index 1 (openai); compactions 2 -> 3; calls 2 -> 2"
    )
    shorter: Record = {"compactions": 2, "steps": old["steps"][:1]}
    assert difference("f@8000", old, shorter) == (
        "f@8000: first differing call index 1 ((call count)); compactions 2 -> 2; calls 2 -> 1"
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit(f"usage: {sys.argv[0]} --update")
    os.environ[UPDATE_ENV] = "1"
    raise SystemExit(pytest.main(["-q", "-p", "no:cacheprovider", __file__]))
