"""Speed of the heuristic estimator on 1 MB of mixed text (not a test).

Run: ``python benchmarks/estimator_speed.py``. Prints characters per second of
``HeuristicEstimator.text`` on ASCII prose, on a mix of prose, code, JSON, CJK and a base64
``data:`` URL, and of ``message`` on a tool result of that mix (each the best of 7 rounds);
then microseconds per text of ``text`` called on 1,000 short texts one by one (2 KB each, as
messages mostly are: prose, code, JSON and prose in another language, 250 of each), where
the fixed cost of each call weighs more than the speed per character.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable

from ctxengine.model import tool_result
from ctxengine.tokens import HeuristicEstimator

SIZE = 1_000_000
PROSE = (
    "The agent reads the failing test before it edits any file. When the build breaks, it "
    "runs the linter and reports the exact error line. Every change is small and reviewed. "
)
CODE = "def add(a: int, b: int) -> int:\n    return a + b\n\n"
JSON = json.dumps([{"id": i, "path": f"src/m{i}.py", "ok": True} for i in range(40)])
CJK = "我们需要在不改变历史记录的前提下压缩上下文，并且保证每一个工具调用都有对应的结果。"
BLOB = "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 40).decode()
ITALIAN = (
    "L'agente legge il test che fallisce prima di modificare qualsiasi file. Quando la "
    "compilazione si rompe, esegue il linter e riporta la riga esatta dell'errore. Ogni "
    "modifica è piccola, revisionata e descritta con parole semplici. "
)
SHORT = 2_000


def fill(*pieces: str) -> str:
    unit = "\n".join(pieces) + "\n"
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


def rate(fn: Callable[[], int], chars: int, repeat: int = 20, rounds: int = 7) -> tuple[float, int]:
    """Characters per second of ``fn`` (the best of ``rounds`` rounds of ``repeat`` calls:
    on a shared machine the fastest round is the one least disturbed) and its result."""
    tokens = fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return chars / best, tokens


def main() -> None:
    est = HeuristicEstimator()
    prose = fill(PROSE)
    mixed = fill(PROSE * 20, CODE * 20, JSON, CJK * 10, BLOB)
    message = tool_result("c1", mixed)
    for name, fn in (
        ("text, ASCII prose", lambda: est.text(prose)),
        ("text, mixed", lambda: est.text(mixed)),
        ("message, mixed tool result", lambda: est.message(message)),
    ):
        speed, tokens = rate(fn, SIZE)
        print(f"{name:28s} {speed / 1e6:7.1f} M chars/s  ({tokens:,} tokens per 1 MB)")
    # Short texts, each a distinct string (nothing is cached by identity).
    texts = [
        (piece * (SHORT // len(piece) + 1))[i % 7 : SHORT + i % 7]
        for piece in (PROSE, CODE, JSON, ITALIAN)
        for i in range(250)
    ]
    chars = sum(map(len, texts))
    speed, _ = rate(lambda: sum(est.text(t) for t in texts), chars)
    print(
        f"{'text, 1,000 texts of 2 KB':28s} {speed / 1e6:7.1f} M chars/s  "
        f"({chars / speed * 1e6 / len(texts):.2f} µs per text)"
    )


if __name__ == "__main__":
    main()
