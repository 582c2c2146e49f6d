"""``Session.prepare()`` latency (p50/p99) at 1k, 10k and 100k history entries (not a test).

Run: ``.venv/bin/python benchmarks/prepare_latency.py [--window 128000]
[--sizes 1000,10000,100000] [--span 700] [--no-stateless] [--prime-ledgers] [--profile]``.

A seeded generator writes a realistic coding-agent history: a system prompt, user requests
(some with constraints), assistant turns with text and one tool call (three in four) or two to
three parallel calls, and tool results whose sizes follow a log-normal law (median about 900
characters, tail cut at 60,000) made of source code, test logs, listings or prose, with
failures and tracebacks in one result of ten. Messages are appended one at a time to one live
``Session(window)``, as an agent would, and ``prepare()`` is called before each assistant
message; only ``prepare()`` is timed (``time.perf_counter_ns``).

For each size S the table covers the ``prepare()`` calls made while the history held S − span
to S − 1 entries (``--span``, default 700: about 300 calls; entries = messages + the
ladder's prune/compaction records).
"compaction calls" are the calls whose ladder run recorded a compaction (summarize); the
others only project the context (a few of them also record a prune). Context size
(messages, tokens) shows that the epoch the per-call work depends on stays bounded while the
history grows.

After the live session, the same requests are served statelessly (unless
``--no-stateless``), the analyses the live run remembered forgotten first
(:func:`~ctxengine.summarizers.prime.clear_analysis_caches`): at each of its calls,
``PrefixCache.serve(messages so far)`` (the whole call timed: hashing the new messages,
appending them, ``prepare()``), as a framework hook that keeps its message list does; a
second table puts both side by side with the ratios, and counts the stateless contexts equal
to the live one.

``--profile`` runs ``cProfile`` around the timed ``prepare()`` calls of each window, with one
profile for the calls that reach the trigger (the ladder runs) and one for those that only
project, and prints, per size, the ctxengine and built-in functions with the most cumulative
time (ms per call, share of the group's ``prepare()`` time). The profiler slows every call,
and telling the groups apart costs one untimed projection before each call, so the latency
table of a profiled run is not comparable with an unprofiled one.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import random
import resource
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice

from _common import median, percentile, table

from ctxengine.engine import Session
from ctxengine.engine.stateless import PrefixCache
from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart, assistant, system, user
from ctxengine.projection.context import Context
from ctxengine.summarizers.prime import clear_analysis_caches

_VOCABULARY = """
the agent reads failing test before edit file build breaks runs linter reports exact error
line every change small reviewed module import value return config path check cache request
handler session token parser schema migration query index retry timeout
"""
WORDS = _VOCABULARY.split()
CONSTRAINTS = (
    "Never edit files under tests/fixtures.",
    "You must keep the public API unchanged.",
    "Don't add new dependencies.",
    "Always run the full test suite before you finish.",
    "Only touch files in src/.",
)


def _pool(rng: random.Random) -> str:
    """About 600 kB of mixed source code, logs, listings and prose to cut results from."""
    chunks: list[str] = []
    for i in range(6000):
        kind = i % 4
        if kind == 0:
            name = rng.choice(WORDS)
            chunks.append(
                f"def {name}_{i}(value: int, *, retries: int = 3) -> dict[str, int]:\n"
                f'    """{" ".join(rng.choices(WORDS, k=8))}."""\n'
                f"    if value > {rng.randrange(100)}:\n"
                f"        raise ValueError(f'bad {name}: {{value}}')\n"
                f"    return {{'{name}': value * {rng.randrange(9) + 1}}}\n"
            )
        elif kind == 1:
            chunks.append(
                f"tests/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)}_{i} "
                f"{rng.choice(['PASSED', 'PASSED', 'PASSED', 'FAILED'])} [{i % 100:3d}%]\n"
            )
        elif kind == 2:
            chunks.append(
                f"-rw-r--r-- 1 dev dev {rng.randrange(100, 90000):6d} Nov 29 12:{i % 60:02d} "
                f"src/pkg/{rng.choice(WORDS)}_{i % 300}.py\n"
            )
        else:
            chunks.append(" ".join(rng.choices(WORDS, k=rng.randrange(8, 40))) + ".\n")
    return "".join(chunks)


def history(seed: int = 7) -> Iterator[Message]:
    """An endless, deterministic agent history (see the module docstring)."""
    rng = random.Random(seed)
    pool = _pool(rng)
    files = [f"src/pkg/{w}_{i}.py" for i, w in enumerate(rng.choices(WORDS, k=300))]
    yield system("You are a careful coding agent working in a Python repository. " + pool[:8000])
    call_no = 0
    while True:
        ask = f"Fix the failing tests around {rng.choice(files)}. "
        if rng.random() < 0.4:
            ask += rng.choice(CONSTRAINTS) + " "
        yield user(ask + " ".join(rng.choices(WORDS, k=rng.randrange(10, 120))))
        for _ in range(rng.randrange(5, 40)):
            calls = []
            for _ in range(1 if rng.random() < 0.75 else rng.randrange(2, 4)):
                call_no += 1
                calls.append(_call(rng, files, call_no))
            yield assistant(" ".join(rng.choices(WORDS, k=rng.randrange(5, 60))), *calls)
            for call in calls:
                yield _result(rng, pool, call)
        yield assistant("Done. " + " ".join(rng.choices(WORDS, k=40)))


def _call(rng: random.Random, files: list[str], n: int) -> ToolCallPart:
    path = rng.choice(files)
    tool = rng.choice(("bash", "bash", "read_file", "edit_file", "write_file"))
    args: dict[str, str]
    if tool == "bash":
        args = {"command": rng.choice((f"pytest -q {path}", f"grep -rn {rng.choice(WORDS)} src/"))}
    elif tool == "read_file":
        args = {"path": path}
    elif tool == "edit_file":
        args = {"path": path, "old": rng.choice(WORDS), "new": rng.choice(WORDS)}
    else:
        args = {"path": path, "content": " ".join(rng.choices(WORDS, k=rng.randrange(10, 200)))}
    return ToolCallPart(f"call_{n:07d}", tool, json.dumps(args))


def _result(rng: random.Random, pool: str, call: ToolCallPart) -> Message:
    size = min(60_000, max(20, int(rng.lognormvariate(6.8, 1.2))))
    start = rng.randrange(0, len(pool) - size)
    text = pool[start : start + size]
    failed = rng.random() < 0.1
    if failed:
        text += '\nTraceback (most recent call last):\n  File "src/pkg/app.py", line 12\n'
        text += f"ValueError: bad value {rng.randrange(1000)}\n"
    part = ToolResultPart(call.id, (TextPart(text),), is_error=failed, name=call.name)
    return Message("tool", (part,))


@dataclass(slots=True)
class Window:
    """The timed calls before one checkpoint size."""

    size: int
    times_ms: list[float] = field(default_factory=list)
    compaction_ms: list[float] = field(default_factory=list)
    plain_ms: list[float] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    compactions: int = 0
    prunes: int = 0
    gc_ms: float = 0.0
    gc_runs: int = 0
    rss_mb: float = 0.0
    #: the stateless calls: all, those that compacted, and whether each context equals the
    #: live one.
    stateless_ms: list[float] = field(default_factory=list)
    stateless_compaction_ms: list[float] = field(default_factory=list)
    same: list[bool] = field(default_factory=list)
    #: per group (``"ladder"``: the trigger was reached; ``"projection"``: it was not), the
    #: profile and the timings of its calls (``--profile`` only).
    profiles: dict[str, tuple[cProfile.Profile, list[float]]] = field(default_factory=dict)


class GcClock:
    """Time spent in the cyclic garbage collector while :attr:`on` is set (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.on = False
        self.ms = 0.0
        self.runs = 0
        self._start = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._start = time.perf_counter_ns()
        else:
            self.ms += (time.perf_counter_ns() - self._start) / 1e6
            self.runs += 1


Record = tuple[float, bool, int, int]
#: The time recorded on every message.
CREATED = "2026-11-29T12:00:00.000+00:00"


def run(
    window: int,
    sizes: list[int],
    span: int,
    profile: bool,
    stateless: bool = True,
    prime: bool = False,
) -> list[Window]:
    """Grow one session to ``max(sizes)`` entries, timing the ``prepare()`` calls made while
    the history holds ``S - span`` to ``S - 1`` entries, for each size ``S``; with
    ``stateless``, also the ``PrefixCache.serve`` of the same requests; ``prime``: sessions
    analyse each message for the ledgers as it arrives (``prime_ledgers``)."""
    session = Session(window, prime_ledgers=prime)
    calls: list[tuple[int, Context | None]] = []  # per call: its window, its context if timed
    used = 0
    done: list[Window] = []
    pending = sorted(sizes)
    recent: list[Record] = []
    current = Window(pending[0])
    clock = GcClock()
    gc.callbacks.append(clock)
    previous = ""
    for message in history():
        n = len(session.entries)
        if n >= current.size:
            done.append(_close(current, recent, session, clock))
            pending.pop(0)
            if not pending:
                break
            current, recent = Window(pending[0]), []
        if message.role == "assistant" and previous != "assistant":
            timed = n >= current.size - span
            profiler = _profiler(current, session) if profile and timed else None
            events = len(session.events)
            if profiler is not None:
                profiler.enable()
            clock.on = timed
            start = time.perf_counter_ns()
            ctx = session.prepare()
            elapsed = (time.perf_counter_ns() - start) / 1e6
            clock.on = False
            if profiler is not None:
                profiler.disable()
            calls.append((len(done), ctx if timed else None))
            if timed:
                steps = {e.step for e in session.events[events:]}
                recent.append((elapsed, "compaction" in steps, len(ctx.messages), ctx.tokens))
                if profiler is not None:
                    next(v for v in current.profiles.values() if v[0] is profiler)[1].append(
                        elapsed
                    )
        session.append(message, created_at=CREATED)
        used += 1
        previous = message.role
    gc.callbacks.remove(clock)
    if stateless:
        _stateless(window, used, calls, done, prime)
    return done


def _stateless(
    window: int,
    used: int,
    calls: list[tuple[int, Context | None]],
    windows: list[Window],
    prime: bool,
) -> None:
    """Serve the live run's requests statelessly (``PrefixCache.serve`` of the messages so
    far at each of its calls, the whole call timed), the analyses the live run remembered
    forgotten first; the timed calls go to their windows with whether each context equals
    the live one (``calls``: per call, its window and its live context when timed)."""
    clear_analysis_caches()
    gc.collect()
    cache = PrefixCache(prime_ledgers=prime)
    messages: list[Message] = []
    previous = ""
    k = 0
    for message in islice(history(), used):
        if message.role == "assistant" and previous != "assistant":
            index, live = calls[k]
            k += 1
            start = time.perf_counter_ns()
            served = cache.serve(messages, window=window, created_at=CREATED)
            elapsed = (time.perf_counter_ns() - start) / 1e6
            if live is not None:
                w = windows[index]
                w.stateless_ms.append(elapsed)
                if any(e.step == "compaction" for e in served.events):
                    w.stateless_compaction_ms.append(elapsed)
                w.same.append(served.context == live)
        messages.append(message)
        previous = message.role


def _profiler(w: Window, session: Session) -> cProfile.Profile:
    """The profile this call goes to: ``"ladder"`` when the context has reached the trigger
    (projected once more, untimed, to know it), else ``"projection"``."""
    ladder = session.context_tokens(session.project()) >= session.budget.trigger
    group = "ladder" if ladder else "projection"
    if group not in w.profiles:
        w.profiles[group] = (cProfile.Profile(), [])
    return w.profiles[group][0]


def _close(w: Window, recent: list[Record], session: Session, clock: GcClock) -> Window:
    for elapsed, compacted, messages, tokens in recent:
        w.times_ms.append(elapsed)
        (w.compaction_ms if compacted else w.plain_ms).append(elapsed)
        w.messages.append(messages)
        w.tokens.append(tokens)
    w.compactions = sum(1 for e in session.events if e.step == "compaction")
    w.prunes = sum(1 for e in session.events if e.step == "prune")
    w.gc_ms, w.gc_runs = clock.ms, clock.runs
    w.rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    clock.ms, clock.runs = 0.0, 0
    return w


def print_profile(w: Window, group: str, top: int = 80) -> None:
    """The functions (ctxengine's and built-ins) with the most cumulative time in the
    ``group`` calls of ``w``; the benchmark's own frames are left out."""
    profiler, times = w.profiles[group]
    raw = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(times)
    rows = []
    for (filename, line, name), (_, ncalls, tottime, cumtime, _) in sorted(
        raw.items(), key=lambda kv: -kv[1][3]
    ):
        if "ctxengine" in filename:
            module = filename.split("src/")[-1].removesuffix(".py").replace("/", ".") + "."
        elif filename == "~":
            module = ""
        else:
            continue
        rows.append(
            (
                f"{module}{name}" + (f":{line}" if line else ""),
                ncalls,
                f"{cumtime * 1e3 / len(times):.3f}",
                f"{tottime * 1e3 / len(times):.3f}",
                f"{100 * cumtime * 1e3 / total:.1f}",
            )
        )
        if len(rows) == top:
            break
    table(
        ("function", "calls", "cum ms/prepare", "own ms/prepare", "cum % of prepare"),
        rows,
        title=f"cProfile, {len(times)} prepare() calls before {w.size:,} entries that "
        + ("reached the trigger (ladder ran)" if group == "ladder" else "only projected"),
    )


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def print_side_by_side(windows: list[Window], window: int) -> None:
    """Live and stateless calls of each size side by side, with the ratios stateless ÷
    live, and the stateless contexts equal to the live ones."""
    rows = []
    for w in windows:
        live, cold = w.times_ms, w.stateless_ms
        lc, sc = w.compaction_ms, w.stateless_compaction_ms
        rows.append(
            (
                f"{w.size:,}",
                f"{percentile(live, 50):.3f} / {percentile(live, 95):.3f} / {max(live):.1f}",
                f"{percentile(cold, 50):.3f} / {percentile(cold, 95):.3f} / {max(cold):.1f}",
                f"{_ratio(percentile(cold, 50), percentile(live, 50))} / "
                f"{_ratio(percentile(cold, 95), percentile(live, 95))} / "
                f"{_ratio(max(cold), max(live))}",
                f"{percentile(lc, 50):.1f} / {percentile(lc, 95):.1f}" if lc else "-",
                f"{percentile(sc, 50):.1f} / {percentile(sc, 95):.1f}" if sc else "-",
                f"{sum(w.same)}/{len(w.same)}",
            )
        )
    table(
        (
            "entries",
            "live p50 / p95 / max ms",
            "stateless p50 / p95 / max ms",
            "stateless ÷ live",
            "live compacting p50 / p95 ms",
            "stateless compacting p50 / p95 ms",
            "same context as live",
        ),
        rows,
        title=f"Live and stateless (PrefixCache) side by side, window {window:,} tokens",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=128_000, help="model window (tokens)")
    parser.add_argument("--sizes", default="1000,10000,100000", help="history sizes (entries)")
    parser.add_argument("--span", type=int, default=700, help="entries timed before each size")
    parser.add_argument("--profile", action="store_true", help="cProfile the timed calls")
    parser.add_argument("--no-stateless", action="store_true", help="time the live session only")
    parser.add_argument(
        "--prime-ledgers",
        action="store_true",
        help="sessions analyse each message for the ledgers as it arrives",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    start = time.perf_counter()
    windows = run(
        args.window, sizes, args.span, args.profile, not args.no_stateless, args.prime_ledgers
    )
    wall = time.perf_counter() - start
    rows = []
    for w in windows:
        rows.append(
            (
                f"{w.size:,}",
                len(w.times_ms),
                f"{percentile(w.times_ms, 50):.3f}",
                f"{percentile(w.times_ms, 90):.3f}",
                f"{percentile(w.times_ms, 99):.3f}",
                f"{max(w.times_ms):.2f}",
                f"{percentile(w.plain_ms, 50):.3f} / {percentile(w.plain_ms, 99):.3f}",
                f"{len(w.compaction_ms)} / {median(w.compaction_ms):.1f} / "
                f"{percentile(w.compaction_ms, 95):.1f}"
                if w.compaction_ms
                else "0 / - / -",
                f"{median(w.messages):.0f}",
                f"{median(w.tokens):,.0f}",
                f"{w.compactions} / {w.prunes}",
                f"{w.gc_runs} / {w.gc_ms:.0f}",
                f"{w.rss_mb:,.0f}",
            )
        )
    table(
        (
            "entries",
            "calls",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "max ms",
            "no-compaction p50 / p99 ms",
            "compaction calls / p50 / p95 ms",
            "ctx messages (median)",
            "ctx tokens (median)",
            "compactions / prunes so far",
            "GC runs / ms in timed calls",
            "peak RSS MB",
        ),
        rows,
        title=f"Session.prepare() latency, window {args.window:,} tokens "
        f"(one live session, {wall:.0f} s wall{', profiled' if args.profile else ''})",
    )
    first, last = windows[0], windows[-1]
    p50_ratio = percentile(last.times_ms, 50) / percentile(first.times_ms, 50)
    p99_ratio = percentile(last.times_ms, 99) / percentile(first.times_ms, 99)
    print(
        f"\np50({last.size:,}) / p50({first.size:,}) = {p50_ratio:.2f}; "
        f"p99({last.size:,}) / p99({first.size:,}) = {p99_ratio:.2f}"
    )
    if not args.no_stateless:
        print_side_by_side(windows, args.window)
    if args.profile:
        for group in ("projection", "ladder"):
            for w in windows:
                if group in w.profiles:
                    print_profile(w, group)


if __name__ == "__main__":
    main()
