"""The simulated prompt cache: exact reads, writes and breaks on hand-made requests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxengine.cost import (
    Block,
    CacheOutcome,
    CacheRequest,
    CacheRules,
    PrefixCache,
    break_cause,
)

ANTHROPIC = CacheRules(
    provider="anthropic",
    mode="breakpoints",
    min_prefix_tokens=1024,
    granularity_tokens=1,
    max_breakpoints=4,
    lookback_blocks=20,
    ttl_s=300,
    long_ttl_s=3600,
)
OPENAI = CacheRules(
    provider="openai",
    mode="automatic",
    min_prefix_tokens=1024,
    granularity_tokens=128,
    max_breakpoints=0,
    lookback_blocks=0,
    ttl_s=300,
    long_ttl_s=3600,
)

HEAD = Block(1, 2000)
A, B, C, S = Block(2, 500), Block(3, 300), Block(4, 100), Block(5, 400)


def fields(o: CacheOutcome) -> tuple[object, ...]:
    """(prompt, read, write, expected, changed block, break cause)."""
    return (o.prompt, o.read, o.write, o.expected, o.changed_block, break_cause(o))


class TestBreakpoints:
    def test_growth_reads_the_previous_request_and_writes_the_new_tail(self) -> None:
        cache = PrefixCache(ANTHROPIC)
        first = cache.send(CacheRequest([HEAD, A], head_blocks=1, at=0))
        second = cache.send(CacheRequest([HEAD, A, B], head_blocks=1, at=10))
        assert fields(first) == (2500, 0, 2500, 0, None, None)
        assert first.uncached == 0
        assert fields(second) == (2800, 2500, 300, 2500, None, None)

    def test_a_pause_longer_than_the_lifetime_expires_every_prefix(self) -> None:
        cache = PrefixCache(ANTHROPIC)
        cache.send(CacheRequest([HEAD, A], head_blocks=1, at=0))
        cache.send(CacheRequest([HEAD, A, B], head_blocks=1, at=10))
        late = cache.send(CacheRequest([HEAD, A, B, C], head_blocks=1, at=311))
        assert fields(late) == (2900, 0, 2900, 2800, None, "expired")
        assert (late.expired, late.lost) == (True, 2800)

    def test_the_long_lifetime_keeps_it(self) -> None:
        cache = PrefixCache(ANTHROPIC, long_ttl=True)
        cache.send(CacheRequest([HEAD, A], head_blocks=1, at=0))
        late = cache.send(CacheRequest([HEAD, A, B], head_blocks=1, at=3000))
        assert fields(late) == (2800, 2500, 300, 2500, None, None)

    def test_a_changed_middle_reads_the_head_breakpoint_only(self) -> None:
        cache = PrefixCache(ANTHROPIC)
        cache.send(CacheRequest([HEAD, A, B], head_blocks=1, at=0))
        compacted = cache.send(CacheRequest([HEAD, S, C], head_blocks=1, at=5))
        assert fields(compacted) == (2500, 2000, 500, 2800, 1, "edit")
        assert (compacted.common, compacted.lost, compacted.head_changed) == (2000, 800, False)

    def test_a_changed_head_reads_nothing(self) -> None:
        cache = PrefixCache(ANTHROPIC)
        cache.send(CacheRequest([HEAD, A], head_blocks=1, at=0))
        other = cache.send(CacheRequest([Block(9, 2000), A], head_blocks=1, at=5))
        assert fields(other) == (2500, 0, 2500, 2500, 0, "head change")

    def test_more_new_blocks_than_the_lookback_miss_the_previous_breakpoint(self) -> None:
        cache = PrefixCache(ANTHROPIC)
        cache.send(CacheRequest([HEAD, A], head_blocks=1, at=0))
        many = [Block(100 + i, 10) for i in range(21)]
        grown = cache.send(CacheRequest([HEAD, A, *many], head_blocks=1, at=5))
        assert fields(grown) == (2710, 2000, 710, 2500, None, "lookback")
        within = [Block(200 + i, 10) for i in range(19)]
        cache.send(CacheRequest([HEAD, A], head_blocks=1, at=6))
        ok = cache.send(CacheRequest([HEAD, A, *within], head_blocks=1, at=7))
        assert fields(ok) == (2690, 2500, 190, 2500, None, None)

    def test_a_prefix_below_the_minimum_is_never_written(self) -> None:
        cache = PrefixCache(ANTHROPIC)
        small = cache.send(CacheRequest([Block(7, 600)], at=0))
        again = cache.send(CacheRequest([Block(7, 600), Block(8, 100)], at=1))
        assert fields(small) == (600, 0, 0, 0, None, None)
        assert fields(again) == (700, 0, 0, 0, None, None)

    def test_a_read_renews_the_lifetime_of_the_prefix_read(self) -> None:
        cache = PrefixCache(ANTHROPIC)
        cache.send(CacheRequest([HEAD, A], head_blocks=1, at=0))
        cache.send(CacheRequest([HEAD, A, B], head_blocks=1, at=200))
        edited = cache.send(CacheRequest([HEAD, A, C], head_blocks=1, at=450))
        assert fields(edited) == (2600, 2500, 100, 2800, 2, "edit")

    def test_without_times_nothing_expires(self) -> None:
        cache = PrefixCache(ANTHROPIC)
        cache.send(CacheRequest([HEAD, A], head_blocks=1))
        assert cache.send(CacheRequest([HEAD, A, B], head_blocks=1)).read == 2500


class TestAutomatic:
    def test_reads_round_down_to_the_granularity_and_writes_are_the_rest(self) -> None:
        cache = PrefixCache(OPENAI)
        first = cache.send(CacheRequest([Block(1, 1000), Block(2, 100)], at=0))
        second = cache.send(CacheRequest([Block(1, 1000), Block(2, 100), Block(3, 300)], at=1))
        assert fields(first) == (1100, 0, 1100, 0, None, None)
        assert fields(second) == (1400, 1024, 376, 1024, None, None)

    def test_a_shared_prefix_under_the_minimum_reads_nothing(self) -> None:
        cache = PrefixCache(OPENAI)
        cache.send(CacheRequest([Block(1, 1000), Block(2, 400)], at=0))
        edited = cache.send(CacheRequest([Block(1, 1000), Block(3, 500)], at=1))
        assert fields(edited) == (1500, 0, 1500, 1280, 1, "edit")

    def test_a_prefix_read_from_an_older_request_is_renewed_with_the_current_one(self) -> None:
        x, y = Block(1, 2000), Block(2, 2000)
        cache = PrefixCache(OPENAI)
        cache.send(CacheRequest([x, y], at=0))
        cache.send(CacheRequest([x], at=100))
        back = cache.send(CacheRequest([x, y], at=250))
        later = cache.send(CacheRequest([x, y, Block(3, 10)], at=500))
        assert (back.read, later.read, later.expired) == (3968, 3968, False)

    def test_any_earlier_request_is_read_not_only_the_previous_one(self) -> None:
        cache = PrefixCache(OPENAI)
        cache.send(CacheRequest([Block(1, 3000), Block(2, 1000)], at=0))
        cache.send(CacheRequest([Block(5, 2000)], at=1))
        back = cache.send(CacheRequest([Block(1, 3000), Block(2, 1000), Block(6, 10)], at=2))
        assert (back.read, back.changed_block, break_cause(back)) == (3968, 0, None)


class _Naive:
    """The cache as the rules state it, one entry per prefix with its own last use (slow:
    every prefix of every request is visited)."""

    def __init__(self, rules: CacheRules) -> None:
        self.rules = rules
        self.store: dict[tuple[int, ...], tuple[int, float | None]] = {}
        self.previous: tuple[int, ...] = ()
        self.written = 0

    def live(self, key: tuple[int, ...], at: float | None) -> bool:
        used = self.store[key][1]
        return at is None or used is None or at - used <= self.rules.ttl_s

    def send(self, blocks: list[Block], head: int, at: float | None) -> tuple[int, ...]:
        keys = tuple(b.key for b in blocks)
        sizes = [sum(b.tokens for b in blocks[:i]) for i in range(len(blocks) + 1)]
        n, r = len(blocks), self.rules
        if r.mode == "automatic":
            cands = list(range(n, 0, -1))
        else:
            marks = sorted({b for b in (head, n) if b > 0}, reverse=True)[: r.max_breakpoints]
            cands = sorted(
                {j for b in marks for j in range(max(1, b - r.lookback_blocks), b + 1)},
                reverse=True,
            )
        stored = [i for i in cands if keys[:i] in self.store]
        live = [i for i in stored if self.live(keys[:i], at)]
        found = live[0] if live else 0
        expired = bool(stored) and (not live or stored[0] != found)
        if r.mode == "automatic":
            g = r.granularity_tokens
            read = 0 if sizes[found] < r.min_prefix_tokens else sizes[found] // g * g
            write = sizes[n] - read if sizes[n] >= r.min_prefix_tokens else 0
            for i in range(1, n + 1):
                self.store[keys[:i]] = (sizes[i], at)
            written = 0 if sizes[n] < r.min_prefix_tokens else sizes[n] // g * g
        else:
            read = sizes[found]
            if found:
                self.store[keys[:found]] = (sizes[found], at)
            written = 0
            for b in marks:
                if sizes[b] >= r.min_prefix_tokens:
                    self.store[keys[:b]] = (sizes[b], at)
                    written = max(written, sizes[b])
            write = max(0, written - read)
        same = 0
        while same < min(len(self.previous), n) and self.previous[same] == keys[same]:
            same += 1
        extends = same == len(self.previous)
        out = (sizes[n], read, write, self.written, None if extends else same, expired)
        self.previous, self.written = keys, written
        return out


@st.composite
def sessions(draw: st.DrawFn) -> list[tuple[list[Block], int, float | None]]:
    """Requests that mostly grow at the tail, sometimes lose or change blocks (a compaction,
    a prune, a head change), with pauses around the lifetime."""
    head = [Block(1, draw(st.integers(0, 1500))), Block(2, draw(st.integers(0, 700)))]
    body: list[Block] = []
    at = 0.0
    out: list[tuple[list[Block], int, float | None]] = []
    timed = draw(st.booleans())
    for _ in range(draw(st.integers(1, 25))):
        move = draw(st.sampled_from(["grow", "grow", "grow", "cut", "edit", "head", "many"]))
        new = draw(st.integers(1, 10_000))
        if move == "grow":
            body.append(Block(new, draw(st.integers(1, 900))))
        elif move == "many":
            body.extend(Block(new + k, draw(st.integers(1, 60))) for k in range(25))
        elif move == "cut" and body:
            body = [Block(new, 300), *body[len(body) // 2 :]]
        elif move == "edit" and body:
            body[draw(st.integers(0, len(body) - 1))] = Block(new, 50)
        elif move == "head":
            head = [Block(new, head[0].tokens), head[1]]
        at += draw(st.sampled_from([1.0, 30.0, 299.0, 301.0, 1000.0, 4000.0]))
        out.append(([*head, *body], 2, at if timed else None))
    return out


@pytest.mark.parametrize("rules", [ANTHROPIC, OPENAI], ids=["breakpoints", "automatic"])
@given(requests=sessions(), hint=st.booleans())
@settings(max_examples=150, deadline=None)
def test_the_cache_agrees_with_the_rules_applied_prefix_by_prefix(
    rules: CacheRules, requests: list[tuple[list[Block], int, float | None]], hint: bool
) -> None:
    cache, naive = PrefixCache(rules), _Naive(rules)
    previous: list[Block] = []
    for blocks, head, at in requests:
        reuse = 0
        if hint:
            while reuse < min(len(previous), len(blocks)) and previous[reuse] is blocks[reuse]:
                reuse += 1
        o = cache.send(CacheRequest(blocks, head_blocks=head, at=at, reuse=reuse))
        got = (o.prompt, o.read, o.write, o.expected, o.changed_block, o.expired)
        assert got == naive.send(blocks, head, at)
        previous = blocks
