"""The simulated prompt cache: exact reads, writes and breaks on hand-made requests."""

from __future__ import annotations

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

    def test_any_earlier_request_is_read_not_only_the_previous_one(self) -> None:
        cache = PrefixCache(OPENAI)
        cache.send(CacheRequest([Block(1, 3000), Block(2, 1000)], at=0))
        cache.send(CacheRequest([Block(5, 2000)], at=1))
        back = cache.send(CacheRequest([Block(1, 3000), Block(2, 1000), Block(6, 10)], at=2))
        assert (back.read, back.changed_block, break_cause(back)) == (3968, 0, None)
