"""How much of an import's parse time its ids' hashing takes, per format (not a test).

Run: ``.venv/bin/python benchmarks/import_hashing.py [--runs N] [--clock wall|cpu]``
(default 9 runs, CPU time of the reading thread).

Entry ids and session ids must stay what they are (a re-import of a file dedupes against the
sessions stored from it earlier), and most formats' ids are content hashes: blake2b of the
source lines an entry was read from (Codex, OpenHands, Cursor …), of the canonical JSON of the
converted body chained to its parent (chat-completions, SWE-agent, pi version 1 sessions,
Anthropic messages), and of the whole file for a session id where the file names none
(chat-completions, SWE-agent, aider, Gemini CLI chat shares, Kimi, Hermes). That work is
part of every import of those formats whatever the importer does around it, so it bounds the
``parse ÷ bare`` ratio that ``import_speed.py`` prints.

For the largest importable corpus file of each format (as ``import_speed.py`` picks them) it
times ``read_transcript`` and the bare parse (``import_speed.bare_call``) in turns. Then it
imports the file once more, recording what is hashed: every ``hashlib.blake2b`` call's
arguments and updates, and the ``(body, parent id)`` of every body that
:class:`~ctxengine.importers._build.LogBuilder` hashes (``_build.body_hash``: canonical JSON,
then blake2b); and it times that hashing replayed alone (the same calls on the same values, in
turns with the other files' replays), by the same clock. ``hashlib.blake2b`` is replaced
before ctxengine is imported (the importers bind it at import) by a function that records
when asked and otherwise only calls the real one: one Python call more per hash in the timed
parses (about 0.1 µs; a few thousand per file at most). Printed, per format (medians):

- ``parse ms`` / ``bare ms`` / ``parse ÷ bare``: as in ``import_speed.py``;
- ``hashing ms``: the replayed hashing;
- ``bound``: ``bare ÷ (bare + hashing)``, the highest ``parse ÷ bare`` an importer of the
  format can reach with its ids as they are (all its other work at no cost);
- ``rest ms``: ``parse − bare − hashing``, the conversion itself (building the entries, checks,
  pairing calls, the garbage collection after the parse).
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_blake2b = hashlib.blake2b
#: While recording: ``("new", args, kwargs)`` / ``("update", data)`` of each blake2b call, and
#: ``(body, parent id)`` of each hashed body.
_calls: list[tuple[Any, ...]] = []
_bodies: list[tuple[Any, str | None]] = []
_recording = [False]


class _Recorded:
    """A blake2b hash whose creation and updates are recorded in :data:`_calls`."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        _calls.append(("new", args, kwargs))
        self._hash = _blake2b(*args, **kwargs)

    def update(self, data: bytes) -> None:
        _calls.append(("update", data))
        self._hash.update(data)

    def digest(self) -> bytes:
        return self._hash.digest()

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def _blake2b_seen(*args: Any, **kwargs: Any) -> Any:
    """``hashlib.blake2b``, recorded while :data:`_recording`."""
    if _recording[0]:
        return _Recorded(args, kwargs)
    return _blake2b(*args, **kwargs)


hashlib.blake2b = _blake2b_seen  # type: ignore[assignment]

# imported after the replacement: the importers bind ``hashlib.blake2b`` at import
import orjson  # noqa: E402
from _common import largest_per_format, median, require_corpus, size_of, table  # noqa: E402
from import_speed import bare_call, bare_kind  # noqa: E402

import ctxengine.importers._build as build  # noqa: E402
from ctxengine.importers import read_transcript  # noqa: E402
from ctxengine.model.codec import wire  # noqa: E402

_body_hash = build.body_hash


def _body_hash_seen(body: Any, parent_id: str | None = None) -> str:
    """``_build.body_hash``, its body recorded (once: not the blake2b call inside it)."""
    if not _recording[0]:
        return _body_hash(body, parent_id)
    _bodies.append((body, parent_id))
    _recording[0] = False
    try:
        return _body_hash(body, parent_id)
    finally:
        _recording[0] = True


build.body_hash = _body_hash_seen


def recorded_hashing(path: Path) -> Callable[[], object]:
    """The hashing an import of ``path`` does, recorded, as a call that does it again."""
    _calls.clear()
    _bodies.clear()
    _recording[0] = True
    try:
        read_transcript(path)
    finally:
        _recording[0] = False
    calls, bodies = list(_calls), list(_bodies)
    options = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS

    def replay() -> object:
        found: Any = None
        for call in calls:
            if call[0] == "new":
                if found is not None:
                    found.digest()
                found = _blake2b(*call[1], **call[2])
            else:
                found.update(call[1])
        if found is not None:
            found.digest()
        for body, parent in bodies:
            data = orjson.dumps({"parent": parent, "body": body}, default=wire, option=options)
            _blake2b(data, digest_size=16).hexdigest()
        return None

    return replay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs per measurement (median)")
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="cpu", help="time runs by wall clock or CPU"
    )
    args = parser.parse_args()
    clock: Callable[[], float] = time.perf_counter if args.clock == "wall" else time.thread_time
    corpus = require_corpus()
    files = sorted(
        largest_per_format(corpus, conversations=True).items(), key=lambda kv: -size_of(kv[1])
    )
    bares = [bare_call(path, bare_kind(path)) for _, path in files]
    parse_s: list[list[float]] = [[] for _ in files]
    bare_s: list[list[float]] = [[] for _ in files]
    hash_s: list[list[float]] = [[] for _ in files]
    for (_, path), bare in zip(files, bares, strict=True):  # warm up
        read_transcript(path)
        bare()
    for _ in range(args.runs):
        for k, ((_, path), bare) in enumerate(zip(files, bares, strict=True)):
            start = clock()
            read_transcript(path)
            parse_s[k].append(clock() - start)
            start = clock()
            bare()
            bare_s[k].append(clock() - start)
    replays = [recorded_hashing(path) for _, path in files]
    for _ in range(args.runs):
        for k, replay in enumerate(replays):
            start = clock()
            replay()
            hash_s[k].append(clock() - start)
    rows = []
    for k, (fmt, path) in enumerate(files):
        parse, bare_t, hashing = median(parse_s[k]), median(bare_s[k]), median(hash_s[k])
        rows.append(
            (fmt, path.name, f"{size_of(path) / 1e6:.2f}", f"{parse * 1e3:.2f}",
             f"{bare_t * 1e3:.2f}", f"{bare_t / parse:.2f}", f"{hashing * 1e3:.2f}",
             f"{bare_t / (bare_t + hashing):.2f}", f"{(parse - bare_t - hashing) * 1e3:.2f}")
        )  # fmt: skip
    table(
        ("format", "file", "MB", "parse ms", "bare ms", "parse ÷ bare", "hashing ms", "bound",
         "rest ms"),
        rows,
        title=f"Hashing for ids within the parse, median of {args.runs} runs by {args.clock} "
        "clock (bound = bare ÷ (bare + hashing))",
    )  # fmt: skip


if __name__ == "__main__":
    main()
