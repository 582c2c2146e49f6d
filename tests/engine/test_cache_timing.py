"""Cache-aware timing: the prompt cache's lifetime from the policy or the model profile,
the idle gap read from entry times, a prune that waits for a cold cache, an idle session
compacted before its next request, the presets' values, and a corpus replay counting the
prefix-changing steps that landed on a cold cache before and after turning it on."""

from __future__ import annotations

import pytest
from engine_helpers import EST, call, filler, result

from corpus import CORPUS, require_corpus
from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.ladder.timing import cache_ttl, reply_gap, seconds_between, tail_limit
from ctxengine.model import CompactionRecord, PruneRecord, assistant, system, user
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.policy.presets import offline, preset
from ctxengine.providers.profiles import ModelProfile
from ctxengine.replay import replay


def profile(provider: str | None) -> ModelProfile:
    return ModelProfile("m", "m", provider, 200_000, 8_192)


def at(minutes: int, seconds: int = 0) -> str:
    """An ISO-8601 time ``minutes:seconds`` after 10:00 on 2026-01-01 (UTC)."""
    total = minutes * 60 + seconds
    return f"2026-01-01T{10 + total // 3600:02d}:{total // 60 % 60:02d}:{total % 60:02d}+00:00"


class TestLifetime:
    def test_each_provider_has_its_own_default_and_extended_lifetime(self) -> None:
        assert [cache_ttl(p) for p in ("anthropic", "openai", "gemini", "mistral", None)] == [
            300.0,
            300.0,
            3_600.0,
            300.0,
            300.0,
        ]
        assert [cache_ttl(p, extended=True) for p in ("anthropic", "openai", "gemini")] == [
            3_600.0,
            86_400.0,
            3_600.0,
        ]

    def test_the_session_takes_the_policy_then_the_profile_then_five_minutes(self) -> None:
        assert Session(10_000).cache_ttl == 300.0
        assert Session(10_000, profile=profile("gemini")).cache_ttl == 3_600.0
        extended = Policy(cache_ttl_extended=True)
        assert Session(10_000, policy=extended, profile=profile("anthropic")).cache_ttl == 3_600.0
        fixed = Policy(cache_ttl_seconds=120.0, cache_ttl_extended=True)
        assert Session(10_000, policy=fixed, profile=profile("anthropic")).cache_ttl == 120.0
        s = Session(10_000, policy=extended)
        assert (s.cache_ttl, s.compactor.cache_ttl) == (300.0, 300.0)
        s.profile = profile("openai")
        assert (s.cache_ttl, s.compactor.cache_ttl) == (86_400.0, 86_400.0)

    def test_tail_limit_is_opencodes(self) -> None:
        # min(max(keep · 2, 30,000), 25 % of the budget)
        assert tail_limit(1_000, 8_000) == 2_000
        assert tail_limit(15_000, 200_000) == 30_000
        assert tail_limit(20_000, 200_000) == 40_000
        assert tail_limit(30_000, 180_000) == 45_000
        assert tail_limit(0, 28_800) == 7_200


class TestIdleGap:
    def test_the_gap_runs_from_the_latest_reply_to_the_newest_message(self) -> None:
        s = Session(10_000, estimator=EST)
        s.append(user("task"), created_at=at(0))
        assert reply_gap(s.log.history.entries) is None  # no reply yet
        s.append(assistant("done"), created_at=at(1))
        assert reply_gap(s.log.history.entries) is None  # nothing after it
        s.append(user("next"), created_at=at(7, 30))
        # A record the ladder writes later does not move the conversation.
        s.append(PruneRecord(("x",), 1, "default"), created_at=at(59))
        assert reply_gap(s.log.history.entries) == 390.0
        assert seconds_between("yesterday", at(1)) is None
        assert seconds_between(at(1), None) is None


def build(policy: Policy, last: str, **kwargs: object) -> Session:
    """A task, two 200-token tool results (calls c1, c2), a final reply at 10:00:30 and the
    next request at ``last``."""
    s = Session(100_000, policy=policy, estimator=EST, **kwargs)  # type: ignore[arg-type]
    s.append(user("task"), created_at=at(0))
    for k, second in ((1, 10), (2, 20)):
        s.append(assistant("", call(f"c{k}")), created_at=at(0, second))
        s.append(result(f"c{k}", filler("out", 200)), created_at=at(0, second))
    s.append(assistant("done"), created_at=at(0, 30))
    s.append(user("next"), created_at=last)
    return s


class TestColdPrune:
    POLICY = Policy(
        prune_when="always",
        prune_cache_cold_only=True,
        prune_protect_tokens=0,
        prune_minimum_tokens=0,
        prune_protect_turns=0,
        prune_protect_results=1,
        cache_ttl_extended=True,
    )

    def test_the_profiles_one_hour_lifetime_holds_the_prune_back(self) -> None:
        anthropic = profile("anthropic")
        warm = build(self.POLICY, at(60, 29), profile=anthropic)
        assert warm.prepare().pruned == ()
        assert warm.events == []
        cold = build(self.POLICY, at(60, 30), profile=anthropic)
        assert cold.prepare().pruned == ("c1",)
        assert [(e.step, e.detail) for e in cold.events] == [
            ("prune", "1 tool results; cache cold (3,600 s since the latest reply ≥ 3,600 s)")
        ]
        assert [type(e.body).__name__ for e in cold.entries[-1:]] == ["PruneRecord"]

    def test_without_a_profile_five_minutes_make_it_cold(self) -> None:
        assert build(self.POLICY, at(5, 29)).prepare().pruned == ()
        assert build(self.POLICY, at(5, 30)).prepare().pruned == ("c1",)


class TestIdleCompaction:
    #: Trigger 8,000; an idle session compacts from 6,000 (75 %).
    POLICY = Policy(
        trigger_ratio=0.8,
        reserve_tokens=0,
        keep_recent_tokens=1_000,
        prune_enabled=False,
        idle_compact_seconds=600.0,
        idle_compact_ratio=0.75,
    )

    def session(self, turns: int, gap_s: int) -> Session:
        """``turns`` 308-token turns a minute apart, then a request ``gap_s`` seconds after
        the last reply: 11 + 308 · turns + 204 tokens."""
        s = Session(10_000, policy=self.POLICY, estimator=EST)
        s.append(system("You are a careful agent."), created_at=at(0))
        for k in range(turns):
            s.append(user(filler(f"u{k}", 200)), created_at=at(k))
            s.append(assistant(filler(f"a{k}", 100)), created_at=at(k, 30))
        s.append(user(filler("next", 200)), created_at=at(turns - 1, 30 + gap_s))
        return s

    def test_an_idle_session_compacts_before_its_request(self) -> None:
        busy = self.session(20, 599)
        assert busy.context_tokens(busy.project()) == 6_375
        assert busy.prepare().epoch == 0 and busy.events == []

        idle = self.session(20, 600)
        n = len(idle.entries)
        ctx = idle.prepare()
        assert [e.step for e in idle.events] == ["idle", "compaction"]
        assert idle.events[0].detail == (
            "idle 600 s ≥ 600 s (cache cold: TTL 300 s); context 6,375 ≥ 6,000 (75% of the "
            "trigger): compacting before this request"
        )
        assert idle.events[1].tokens_before == 6_375
        assert ctx.epoch == 1 and ctx.tokens < 6_375
        assert len(idle.entries) == n + 1
        record = idle.entries[-1].body
        assert isinstance(record, CompactionRecord) and record.reason == "threshold"
        # Nothing new since: the next call does not compact again.
        idle.prepare()
        assert [e.step for e in idle.events] == ["idle", "compaction"]

    def test_a_small_idle_context_is_left_alone(self) -> None:
        small = self.session(18, 3_600)  # 11 + 5,544 + 204 = 5,759 < 6,000
        assert small.prepare().epoch == 0 and small.events == []

    def test_the_default_policy_never_compacts_an_idle_session(self) -> None:
        s = Session(10_000, policy=self.POLICY.model_copy(update={"idle_compact_seconds": None}))
        s.append(user(filler("u", 7_000)), created_at=at(0))
        s.append(assistant("ok"), created_at=at(0, 30))
        s.append(user("again"), created_at=at(300))
        assert s.prepare().epoch == 0 and s.events == []
        assert DEFAULT_POLICY.idle_compact_seconds is None
        assert DEFAULT_POLICY.precompute_ratio is None
        assert DEFAULT_POLICY.prune_cache_cold_only is False


class TestPresets:
    def test_codex_and_opencode_precompute_at_their_documented_shares(self) -> None:
        codex, opencode = preset("codex"), preset("opencode")
        # Codex: 65 % of the full window.
        assert codex.precompute_tokens(codex.resolve(200_000)) == 130_000
        # OpenCode: 85 % of its limit (200,000 − min(20,000, 4,096) = 195,904), at least 64K.
        assert opencode.precompute_tokens(opencode.resolve(200_000)) == 166_518
        assert opencode.precompute_tokens(opencode.resolve(40_000)) == 64_000
        others = ("default", "pi", "gemini-cli", "claude-code", "roo-code", "openhands")
        assert [preset(n).precompute_ratio for n in others] == [None] * len(others)

    def test_claude_code_clears_tool_results_on_a_cold_cache_and_compacts_when_idle(
        self,
    ) -> None:
        cc = offline(preset("claude-code"))
        assert (
            cc.prune_enabled,
            cc.prune_when,
            cc.prune_cache_cold_only,
            cc.prune_protect_results,
            cc.prune_minimum_tokens,
            cc.cache_ttl_seconds,
            cc.idle_compact_seconds,
        ) == (True, "always", True, 5, 20_000, 3_600.0, 3_600.0)
        # Claude Code runs on Anthropic models: an hour with or without a profile.
        assert Session(200_000, policy=cc, profile=profile("anthropic")).cache_ttl == 3_600.0
        assert Session(200_000, policy=cc).cache_ttl == 3_600.0


#: A corpus session with real times: 104 model calls, two of them after the agent sat idle
#: for more than 5 minutes (679 s before call 24, 4,144 s before call 57).
PONYC = "openhands/openhands-multi-swe-bench-ponyc-3runs.jsonl"


@pytest.mark.parametrize(
    ("aware", "changed", "idle"),
    [
        (False, [10, 36, 48, 62, 73, 100], []),
        (True, [10, 24, 42, 57, 65, 89], [24, 57]),
    ],
)
def test_cache_aware_timing_moves_compactions_onto_a_cold_cache(
    aware: bool, changed: list[int], idle: list[int]
) -> None:
    require_corpus()
    entries = read_transcript(CORPUS / PONYC).entries
    policy = DEFAULT_POLICY
    if aware:
        policy = policy.model_copy(
            update={
                "prune_when": "always",
                "prune_cache_cold_only": True,
                "idle_compact_seconds": 300.0,
            }
        )
    # 15,800 tokens: the context at call 24 (10,204 tokens) is over the idle floor (10,112,
    # 80 % of the trigger); at 16,000 it is only 6 tokens over its floor (10,246 ≥ 10,240).
    run = replay(entries, window=15_800, policy=policy)
    assert run.invalid == 0
    assert [s.call for s in run.steps if s.changes_prefix] == changed
    assert [s.call for s in run.steps if any(e.step == "idle" for e in s.events)] == idle
    assert [round(s.idle_s or 0) for s in run.steps if s.call in (24, 57)] == [679, 4_144]
    # (prefix-changing calls, those on a cache cold after its 5-minute lifetime)
    assert run.prefix_changes(300.0) == (6, len(idle))
