"""Import speed (MB/s) on the largest corpus transcript of each supported format (not a test).

Run: ``.venv/bin/python benchmarks/import_speed.py [--runs N] [--clock wall|cpu]`` (default
9 runs, wall-clock time).

Every file (and store folder) under ``../shared/corpus/`` is sniffed; files of formats that
ctxengine does not import yet are skipped, and so are files whose import holds no user and
assistant message (Qwen Code's telemetry sample: the conversation samples are timed). For
the largest remaining file of each imported format it times, ``N`` times each, with
``time.perf_counter`` (``--clock cpu``: ``time.thread_time``, the CPU time of the reading
thread, steadier on a machine shared with other work, and blind to time spent waiting for the
disk):

- **parse**: ``read_transcript(path)`` (sniffing, reading, parsing, building the entries);
- **parse + store**: the same plus ``SQLiteStore.import_session`` into a fresh SQLite file in
  a temporary folder (committed; opening the database is not timed);
- **bare**: what reading the same bytes costs with no importer: the file read and parsed
  by orjson alone (``orjson.loads`` of the whole document, or of each non-blank line of a
  JSON-lines file; of every ``.json`` file of a folder), or, for a text transcript (aider's
  and Gemini CLI's Markdown), read, decoded and split into lines. The cyclic garbage
  collector is paused during these runs as it is during an import
  (``ctxengine._runtime.collector_paused``), so that the two are timed on equal terms.

It prints the median time and the speed in MB (10^6 bytes) of source file (all files of a
folder) per second, the bare speed and ``parse ÷ bare`` (the parse speed as a share of the
bare one: 0.6 is 60 %), and the parse speed relative to the Claude Code importer's on its own
largest file (``× Claude Code``: 0.5 is half its MB/s); the row marked ``*`` is the largest
importable file of the corpus. The parse and bare runs of all files take turns (run 1 of
every file, then run 2 …), and so do the parse + store runs, so that a change in the
machine's load during the benchmark weighs on every format alike and the ratios stay
comparable; the same holds for the second table.

Rows marked ``†`` are agents of which the corpus holds only short format samples
(``format-fixtures/``: a few KB, Kimi's 72 KB): a handful of records, each a few hundred bytes,
where MB/s mostly measures the time per record and per file, not the speed of the importer
on a session. Their ``× Claude Code`` is not the measure of their parse speed; the second
table is.

The second table compares those agent formats with the Claude Code importer on equal terms. For
each format it times its largest sample (Qwen Code: its largest linear conversation sample) as
it is, sniffed: ``sample µs``, and ``fixed µs``, that time less the sample's entries times the
scaled copy's ``µs/entry`` (what reading a file costs besides its records: opening, sniffing and
hashing it, reading its side files). The samples are timed in turns among themselves, as a batch
of small files is imported: the first small file read after a large one takes about 0.3 ms more
(caches and allocator refilled), once. Then it times the sample scaled to about ``--scaled-mb``
MB by repeating its conversation records (header lines once; every id-like field — ``uuid``,
``id``, ``toolCallId``, ``tool_use_id`` … — suffixed with the copy number so that copies stay
distinct records, as in a long session; JSON documents repeat their ``messages``); the Claude
Code sample is scaled the same way. ``MB/s × Claude Code`` is each format's scaled MB/s relative
to Claude Code's; formats whose records are short, such as Cursor's, have more entries per MB,
so ``entries/s × Claude Code`` compares entries per second on the same terms. OpenCode's sample
is a storage folder; its scaled form is an OpenCode database holding the rows of the sample's
largest session repeated with new ids (the same message and part shapes, one session).
"""

from __future__ import annotations

import argparse
import gc
import json
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from _common import largest_per_format, median, require_corpus, size_of, table

from ctxengine.importers import read_transcript
from ctxengine.stores.sqlite import SQLiteStore

#: The clock the runs are timed with (``--clock``).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}
clock = CLOCKS["wall"]


def interleaved(calls: list[Callable[[], object]], runs: int) -> list[float]:
    """Median seconds of each of ``calls``, run ``runs`` times in turns (each call once per
    round)."""
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(runs):
        for call, found in zip(calls, times, strict=True):
            start = clock()
            call()
            found.append(clock() - start)
    return [median(found) for found in times]


def parse_call(path: Path, fmt: str | None = None) -> Callable[[], object]:
    """``read_transcript(path[, fmt])`` as a call for :func:`interleaved`."""
    return lambda: read_transcript(path, fmt)


def _lines(data: bytes) -> list[Any]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def bare_kind(path: Path) -> str:
    """How :func:`bare_call` reads ``path``: ``"json"`` (one document), ``"jsonl"`` (a
    document per line), ``"text"`` (decoded and split into lines) or ``"folder"`` (every
    ``.json`` file in it)."""
    if path.is_dir():
        return "folder"
    data = path.read_bytes()
    try:
        orjson.loads(data)
        return "json"
    except orjson.JSONDecodeError:
        pass
    try:
        _lines(data)
        return "jsonl"
    except orjson.JSONDecodeError:
        return "text"


def bare_call(path: Path, kind: str) -> Callable[[], object]:
    """Reading ``path`` as :func:`bare_kind` says, the garbage collector paused, as a call
    for :func:`interleaved`."""
    files = sorted(path.rglob("*.json")) if kind == "folder" else []

    def parse() -> object:
        if kind == "folder":
            return [orjson.loads(f.read_bytes()) for f in files]
        data = path.read_bytes()
        if kind == "json":
            return orjson.loads(data)
        if kind == "jsonl":
            return _lines(data)
        return data.decode("utf-8").splitlines()

    def call() -> object:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return parse()
        finally:
            if enabled:
                gc.enable()

    return call


def store_call(path: Path, folder: Path) -> Callable[[], float]:
    """A call that imports ``path`` (``read_transcript`` + ``import_session``) into a new
    SQLite file in ``folder`` and returns the seconds it took (opening the database is not
    timed), for :func:`interleaved_self_timed`."""
    made = iter(range(1 << 30))

    def call() -> float:
        with SQLiteStore(folder / f"{path.name}.{next(made)}.db") as store:
            start = clock()
            result = store.import_session(read_transcript(path))
            seconds = clock() - start
        assert result.skipped == 0, "a fresh database already held entries"
        return seconds

    return call


def interleaved_self_timed(calls: list[Callable[[], float]], runs: int) -> list[float]:
    """:func:`interleaved` for calls that time themselves (they return their seconds)."""
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(runs):
        for call, found in zip(calls, times, strict=True):
            found.append(call())
    return [median(found) for found in times]


#: The corpus folder of short per-agent format samples.
FIXTURES = "format-fixtures"
#: format → (its largest format sample, header lines kept once when scaling). Qwen Code: its
#: largest linear conversation (the larger samples are telemetry and a rewound session).
AGENT_SAMPLES: dict[str, tuple[str, int]] = {
    "claude-code": ("claude/large.jsonl", 0),
    "copilot": ("copilot/large.jsonl", 1),
    "cursor": ("cursor/large.jsonl", 0),
    "droid": ("droid/session_store_large.jsonl", 1),
    "grok": ("grok/chat_history.jsonl", 1),
    "hermes": ("hermes/large.json", 0),
    "kimi": ("kimi/assistant_tools.jsonl", 4),
    "openclaw": ("openclaw/large.jsonl", 1),
    "qwen": ("qwen/019f0000-0000-7000-8000-000000000001.jsonl", 0),
    "gemini-cli": ("gemini/jsonl_v040.jsonl", 1),
    "opencode": ("opencode/storage_v2", 0),
}
#: Fields holding record, message or call ids, made distinct per copy when scaling.
ID_KEYS = frozenset(
    {
        "uuid", "parentUuid", "id", "parentId", "toolCallId", "tool_use_id", "tool_call_id",
        "call_id", "messageId", "stepUuid", "upToEventId", "sourceToolAssistantUUID",
    }
)  # fmt: skip


def _suffix_ids(value: Any, tag: str) -> Any:
    """``value`` with every string under an :data:`ID_KEYS` key suffixed with ``tag``."""
    if isinstance(value, dict):
        return {
            k: v + tag if k in ID_KEYS and isinstance(v, str) else _suffix_ids(v, tag)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_suffix_ids(v, tag) for v in value]
    return value


def scaled_copy(source: Path, header: int, target_bytes: int, out: Path) -> Path:
    """``source`` scaled to about ``target_bytes`` (see the module docstring), written to
    ``out``."""
    data = source.read_bytes()
    copies = max(1, target_bytes // len(data))
    if source.suffix == ".json":
        doc = orjson.loads(data)
        doc["messages"] = [_suffix_ids(m, f"~{k}") for k in range(copies) for m in doc["messages"]]
        out.write_bytes(orjson.dumps(doc))
        return out
    lines = [orjson.loads(x) for x in data.splitlines() if x.strip()]
    head, body = lines[:header], lines[header:]
    with out.open("wb") as fh:
        for obj in head:
            fh.write(orjson.dumps(obj) + b"\n")
        for k in range(copies):
            for obj in body:
                fh.write(orjson.dumps(_suffix_ids(obj, f"~{k}")) + b"\n")
    return out


_OPENCODE_TABLES = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT,
  directory TEXT, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
  time_updated INTEGER, data TEXT);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,
  time_created INTEGER, time_updated INTEGER, data TEXT);
"""


def _without(record: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in keys}


def opencode_database(storage: Path, target_bytes: int, out: Path) -> Path:
    """An OpenCode database (``session``, ``message``, ``part`` with JSON ``data``) at
    ``out`` holding one session: the messages and parts of the largest session of the storage
    folder ``storage``, repeated with new ids until the file holds about ``target_bytes``."""
    largest = max((storage / "message").iterdir(), key=size_of)
    rows = []
    for msg_file in sorted(largest.glob("*.json")):
        msg = json.loads(msg_file.read_text(encoding="utf-8"))
        parts = [
            (p.stem, json.loads(p.read_text(encoding="utf-8")))
            for p in sorted((storage / "part" / str(msg["id"])).glob("*.json"))
        ]
        rows.append((msg, parts))
    con = sqlite3.connect(out)
    con.executescript(_OPENCODE_TABLES)
    con.execute("INSERT INTO session VALUES ('ses_b', 'p', NULL, 'b', '/w', 'b', '1', 0, 0)")
    copy = 0
    while out.stat().st_size < target_bytes:
        for k, (msg, parts) in enumerate(rows):
            msg_id, t = f"msg_{copy:06d}_{k}", copy * 100 + k
            data = json.dumps(_without(msg, "id", "sessionID"))
            con.execute("INSERT INTO message VALUES (?, 'ses_b', ?, ?, ?)", (msg_id, t, t, data))
            con.executemany(
                "INSERT INTO part VALUES (?, ?, 'ses_b', ?, ?, ?)",
                [
                    (f"{msg_id}-{stem}", msg_id, t, t,
                     json.dumps(_without(p, "id", "sessionID", "messageID")))
                    for stem, p in parts
                ],
            )  # fmt: skip
        copy += 1
        if copy % 50 == 0:
            con.commit()
    con.commit()
    con.close()
    return out


def agent_samples(corpus: Path, runs: int, scaled_mb: float) -> None:
    """The second table (see the module docstring)."""
    rows: list[tuple[str, ...]] = []
    speeds: dict[str, float] = {}
    per_entry: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        pairs: dict[str, tuple[Path, Path]] = {}
        for fmt, (rel, header) in AGENT_SAMPLES.items():
            sample = corpus / FIXTURES / rel
            target, out = int(scaled_mb * 1e6), Path(tmp) / f"{fmt}.x"
            if sample.is_dir():
                scaled = opencode_database(sample, target, out.with_suffix(".db"))
            else:
                scaled = scaled_copy(sample, header, target, out)
            pairs[fmt] = (sample, scaled)
        # the samples as a user imports them (sniffed), in turns among themselves; then the
        # scaled copies, read as their format
        sample_times = interleaved([parse_call(s) for s, _ in pairs.values()], runs)
        scaled_times = interleaved([parse_call(x, f) for f, (_, x) in pairs.items()], runs)
        for (fmt, (sample, scaled)), sample_s, scaled_s in zip(
            pairs.items(), sample_times, scaled_times, strict=True
        ):
            rel = AGENT_SAMPLES[fmt][0]
            kb, mb = size_of(sample) / 1e3, size_of(scaled) / 1e6
            speeds[fmt] = mb / scaled_s
            entries = len(read_transcript(scaled, fmt).entries)
            per_entry[fmt] = entries / scaled_s
            in_sample = len(read_transcript(sample).entries)
            fixed_s = sample_s - in_sample * scaled_s / entries
            rows.append(
                (fmt, rel, f"{kb:.1f}", f"{in_sample}", f"{sample_s * 1e6:.0f}",
                 f"{fixed_s * 1e6:.0f}", f"{mb:.2f}", f"{entries:,}", f"{mb / scaled_s:.1f}",
                 f"{scaled_s / entries * 1e6:.1f}")
            )  # fmt: skip
    table(
        ("format", "sample", "KB", "sample entries", "sample µs", "fixed µs", "scaled MB",
         "entries", "scaled MB/s", "µs/entry", "MB/s × Claude Code", "entries/s × Claude Code"),
        [
            (*r, f"{speeds[r[0]] / speeds['claude-code']:.2f}",
             f"{per_entry[r[0]] / per_entry['claude-code']:.2f}")
            for r in rows
        ],
        title=f"Agent format samples, as they are and scaled, median of {runs} runs by "
        f"{'wall' if clock is time.perf_counter else 'cpu'} clock",
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs per measurement (median)")
    parser.add_argument(
        "--scaled-mb", type=float, default=2.0, help="size the agent samples are scaled to"
    )
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="wall", help="time runs by wall clock or CPU"
    )
    args = parser.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    corpus = require_corpus()
    files = largest_per_format(corpus, conversations=True)
    largest = max(files.values(), key=size_of)
    order = sorted(files.items(), key=lambda kv: -size_of(kv[1]))
    kinds = [bare_kind(path) for _, path in order]
    timed = interleaved(
        [parse_call(path) for _, path in order]
        + [bare_call(path, kind) for (_, path), kind in zip(order, kinds, strict=True)],
        args.runs,
    )
    parse_times, bare_times = timed[: len(order)], timed[len(order) :]
    with tempfile.TemporaryDirectory() as tmp:
        store_times = interleaved_self_timed(
            [store_call(path, Path(tmp)) for _, path in order], args.runs
        )
    rows = []
    parse_speed: dict[str, float] = {}
    for (fmt, path), parse_s, bare_s, kind, store_s in zip(
        order, parse_times, bare_times, kinds, store_times, strict=True
    ):
        mb = size_of(path) / 1e6
        entries = len(read_transcript(path).entries)
        parse_speed[fmt] = mb / parse_s
        mark = " *" if path == largest else ""
        if FIXTURES in path.relative_to(corpus).parts:
            mark += " †"
        rows.append(
            (
                fmt + mark,
                path.name,
                f"{mb:.2f}",
                f"{entries:,}",
                f"{parse_s * 1e3:.1f}",
                f"{mb / parse_s:.1f}",
                f"{mb / bare_s:.1f} ({kind})",
                f"{bare_s / parse_s:.2f}",
                fmt,
                f"{store_s * 1e3:.1f}",
                f"{mb / store_s:.1f}",
                f"{entries / store_s:,.0f}",
            )
        )
    claude = parse_speed.get("claude-code")
    rows = [(*r[:8], f"{parse_speed[r[8]] / claude:.2f}" if claude else "-", *r[9:]) for r in rows]
    table(
        (
            "format",
            "file",
            "MB",
            "entries",
            "parse ms",
            "parse MB/s",
            "bare MB/s",
            "parse ÷ bare",
            "× Claude Code",
            "parse+store ms",
            "parse+store MB/s",
            "entries/s (parse+store)",
        ),
        rows,
        title=f"Import speed, median of {args.runs} runs by {args.clock} clock "
        "(* = largest importable corpus file)",
    )
    print(
        "\n† only short format samples of this agent are in the corpus: its parse speed is "
        "compared in the next table (samples scaled up), its fixed cost per file there too."
    )
    agent_samples(corpus, args.runs, args.scaled_mb)


if __name__ == "__main__":
    main()
