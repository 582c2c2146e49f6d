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
times ``read_transcript`` and the bare parse (``import_speed.bare_call``) in turns, and, within
each import, the time spent in ``hashlib.blake2b`` (creating, updating, finishing) and in the
canonical JSON serialisation of the bodies that :class:`~ctxengine.importers._build.LogBuilder`
hashes (``_build.body_hash``). ``hashlib.blake2b`` is replaced by a timing wrapper before
ctxengine is imported (the importers bind it at import), so every blake2b call of an import is
counted; the wrapper's own cost (two ``perf_counter`` calls per call, about 0.1 µs) is counted
with it. Printed, per format (median of the runs):

- ``parse ms`` / ``bare ms`` / ``parse ÷ bare``: as in ``import_speed.py``;
- ``hashing ms``: the hashing above, within the parse;
- ``bound``: ``bare ÷ (bare + hashing)``, the highest ``parse ÷ bare`` an importer of the format
  can reach with its ids as they are (all other work at zero cost);
- ``rest ms``: ``parse − bare − hashing``, the conversion itself (building entries, checks,
  pairing calls, the garbage collection after the parse).
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Callable
from typing import Any

_blake2b = hashlib.blake2b
_perf = time.perf_counter
#: Seconds spent hashing during the current import; counting is off while ``_paused[0]``.
_spent = [0.0]
_paused = [False]


class _TimedBlake2b:
    """``hashlib.blake2b`` that adds the time its calls take to :data:`_spent`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        start = _perf()
        self._hash = _blake2b(*args, **kwargs)
        _spent[0] += _perf() - start

    def update(self, data: bytes) -> None:
        start = _perf()
        self._hash.update(data)
        _spent[0] += _perf() - start

    def digest(self) -> bytes:
        start = _perf()
        found = self._hash.digest()
        _spent[0] += _perf() - start
        return found

    def hexdigest(self) -> str:
        start = _perf()
        found = self._hash.hexdigest()
        _spent[0] += _perf() - start
        return found


hashlib.blake2b = _TimedBlake2b  # type: ignore[assignment,misc]

# imported after the wrapper is in place: the importers bind ``hashlib.blake2b`` at import
from _common import largest_per_format, median, require_corpus, size_of, table  # noqa: E402
from import_speed import bare_call, bare_kind  # noqa: E402

import ctxengine.importers._build as build  # noqa: E402
from ctxengine.importers import read_transcript  # noqa: E402

_body_hash = build.body_hash


def _timed_body_hash(body: Any, parent_id: str | None = None) -> str:
    """``_build.body_hash``, its whole time (canonical JSON and blake2b) counted once."""
    start = _perf()
    try:
        return _body_hash(body, parent_id)
    finally:
        _spent[0] += _perf() - start


build.body_hash = _timed_body_hash


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
            _spent[0] = 0.0
            start = clock()
            read_transcript(path)
            parse_s[k].append(clock() - start)
            hash_s[k].append(_spent[0])
            start = clock()
            bare()
            bare_s[k].append(clock() - start)
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
