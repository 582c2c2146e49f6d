"""Window search for exactly k compactions, exposure, and the replay driver."""

from __future__ import annotations

import pytest

from ctxengine.bench.cells import exposure, request_hash
from ctxengine.bench.drive import cuts_of, entries_of, replay_to_end
from ctxengine.bench.generator import generate
from ctxengine.bench.windows import MIN_BENCH_WINDOW, WindowSearch
from ctxengine.engine import Session
from ctxengine.model import CompactionRecord, Entry, Message, TextPart
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.replay import RENDERERS


def test_finds_the_largest_window_with_exactly_k() -> None:
    def count(window: int) -> int:
        return 0 if window >= 40_000 else 1 if window >= 20_000 else 3

    search = WindowSearch(count, upper=100_000)
    w1 = search.find(1)
    assert w1 is not None and count(w1) == 1
    assert 40_000 - w1 <= int(w1 * 0.02) + 1  # within the bracket of the boundary
    w3 = search.find(3)
    assert w3 is not None and count(w3) == 3 and 20_000 - w3 <= int(w3 * 0.02) + 1
    assert search.find(2) is None  # the count jumps from 1 to 3: no window gives 2


def test_a_jump_at_the_boundary_is_scanned_below() -> None:
    # at least 2 below 30,000, but exactly 2 only below 29,000 (3 between): the scan finds it
    def count(window: int) -> int:
        if window >= 30_000:
            return 1
        return 3 if window >= 29_000 else 2 if window >= 10_000 else 5

    w = WindowSearch(count, upper=100_000).find(2)
    assert w is not None and count(w) == 2 and 28_000 < w < 29_000


def test_a_window_too_small_for_the_ladder_counts_as_many_compactions() -> None:
    def count(window: int) -> int | None:
        return None if window < 8_000 else 0 if window >= 16_000 else 1

    search = WindowSearch(count, upper=64_000)
    w = search.find(1)
    assert w is not None and 15_900 < w < 16_000
    assert search.find(2) is None


def test_counts_are_memoised_and_shared_between_ks() -> None:
    calls: list[int] = []

    def count(window: int) -> int:
        calls.append(window)
        return max(0, 10 - window // 5_000)

    search = WindowSearch(count, upper=100_000)
    for k in (1, 3, 5):
        w = search.find(k)
        assert w is not None and count(w) == k
    assert len(calls) - 3 == len(search.memo)  # three checking calls above; no repeats
    assert min(search.memo) >= MIN_BENCH_WINDOW
    with pytest.raises(ValueError, match="k must be at least 1"):
        search.find(0)


def test_cuts_and_exposure() -> None:
    def msg(i: int) -> Entry:
        return Entry(f"m{i}", "s", i, Message("user", (TextPart(str(i)),)))

    def comp(i: int, kept: str | None) -> Entry:
        return Entry(f"c{i}", "s", i, CompactionRecord("x", kept, 10, 5, "default", "extractive"))

    log = [msg(0), msg(1), msg(2), comp(3, "m2"), msg(4), msg(5), comp(6, "m5"), comp(7, None)]
    # messages in order: m0 m1 m2 m4 m5 → indexes 0..4; cut before m2 = 2, before m5 = 4,
    # no tail = all 5 messages
    assert cuts_of(log) == (2, 4, 5)
    assert [exposure(i, (2, 4, 5)) for i in range(5)] == [3, 3, 2, 2, 1]


def test_replay_to_end_counts_compactions_and_renders_the_final_request() -> None:
    s = generate(2, template="refactor", tokens=30_000)
    replayed = replay_to_end(s.name, s.messages, 12_000, DEFAULT_POLICY)
    assert replayed.compactions == len(replayed.cuts) >= 1
    assert replayed.context.epoch == replayed.compactions
    assert replayed.context.messages[-1].text == s.messages[-1].text
    assert list(replayed.cuts) == sorted(replayed.cuts)


def test_a_session_factory_replays_exactly_as_replay_does() -> None:
    s = generate(1, template="feature", tokens=30_000)

    def make(window: int) -> Session:
        return Session(window, policy=DEFAULT_POLICY)

    # 9,000 tokens: two compactions (at messages 67 and 99 of 109); at 10,000 only one
    plain = replay_to_end(s.name, s.messages, 9_000, DEFAULT_POLICY)
    built = replay_to_end(s.name, s.messages, 9_000, DEFAULT_POLICY, make)
    assert built.compactions == plain.compactions >= 2
    assert built.cuts == plain.cuts
    assert [st.tokens for st in built.steps] == [st.tokens for st in plain.steps]
    for provider, render in RENDERERS.items():
        assert request_hash(render(built.context)) == request_hash(render(plain.context)), provider
    assert len(entries_of("x", s.messages)) == len(s.messages)


def test_a_narrow_band_next_to_the_boundary_is_found() -> None:
    # exactly 5 only in [9_062, 9_085): narrower than the bisection's 0.5 % bracket
    def count(window: int) -> int:
        if window >= 40_000:
            return 0
        return 4 if window >= 9_085 else 5 if window >= 9_062 else 6

    search = WindowSearch(count, upper=100_000)
    assert search.find(1) is None  # 0 above 40,000, 4 below: never 1
    w = search.find(5)
    assert w is not None and 9_062 <= w < 9_085
