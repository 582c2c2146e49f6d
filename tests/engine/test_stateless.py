"""Stateless calls (:mod:`ctxengine.engine.stateless`): a conversation sent whole on every
request continues from the checkpoint of its longest served prefix and gets exactly the
context a live session gets."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import ctxengine
from corpus import require_corpus
from ctxengine.engine import Session
from ctxengine.engine.stateless import PrefixCache, Served, message_digest, prepare
from ctxengine.importers import read_transcript
from ctxengine.model import (
    Message,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    assistant,
    user,
)
from ctxengine.model.codec import message_from_dict, message_to_dict
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.policy.defaults import DEFAULT_IMAGE_TOKENS
from ctxengine.projection.context import Context
from ctxengine.replay import source_messages
from ctxengine.stores import SQLiteStore
from ctxengine.tokens import HeuristicEstimator

CREATED = "2026-11-29T12:00:00.000+00:00"
DJANGO = "openai-messages/mini-swe-agent-deepseek-chat-django-13265.traj.json"
#: A window that makes the synthetic conversation below compact several times.
WINDOW = 4_000


def count_hashes(monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    """The messages ``PrefixCache`` hashes from now on, in order (``message_digest``
    wrapped)."""
    hashed: list[Message] = []
    digest = ctxengine.engine.stateless.message_digest

    def counting(m: Message) -> bytes:
        hashed.append(m)
        return digest(m)

    monkeypatch.setattr(ctxengine.engine.stateless, "message_digest", counting)
    return hashed


def corpus_messages(relative: str) -> tuple[Message, ...]:
    path = require_corpus(*relative.split("/"))
    return tuple(source_messages(read_transcript(path).entries))


def requests_of(messages: Sequence[Message]) -> list[int]:
    """One request per assistant message: ``messages[:i]`` where message i is one."""
    return [i for i, m in enumerate(messages) if m.role == "assistant" and i > 0]


def live_contexts(
    messages: Sequence[Message], window: int, ends: Sequence[int]
) -> dict[int, Context]:
    """The context a live session prepares at each request end, messages appended in order."""
    session = Session(window)
    wanted = set(ends)
    out: dict[int, Context] = {}
    for i in range(len(messages) + 1):
        if i in wanted:
            out[i] = session.prepare()
        if i < len(messages):
            session.append(messages[i], created_at=CREATED)
    return out


def conversation(turns: int = 24) -> tuple[Message, ...]:
    """A coding conversation whose tool results fill a 4,000-token window several times."""
    out: list[Message] = [Message("system", (TextPart("You are a careful coding agent."),))]
    out.append(user("Fix the failing test in src/app.py. Never edit tests/fixtures."))
    for n in range(turns):
        call = ToolCallPart(f"call_{n}", "bash", f'{{"command": "cat src/mod_{n}.py"}}')
        out.append(assistant(f"Reading module {n}.", call))
        body = "\n".join(f"def f_{n}_{k}(x):\n    return x * {k}" for k in range(40))
        out.append(Message("tool", (ToolResultPart(f"call_{n}", (TextPart(body),), name="bash"),)))
    out.append(assistant("The fix is in src/app.py."))
    return tuple(out)


def fresh(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Equal messages that are other objects (as a proxy parses each request anew)."""
    return tuple(message_from_dict(message_to_dict(m)) for m in messages)


def serve_all(
    cache: PrefixCache, messages: Sequence[Message], ends: Sequence[int], window: int
) -> dict[int, Served]:
    return {i: cache.serve(messages[:i], window=window, created_at=CREATED) for i in ends}


class TestSameAsLive:
    @pytest.mark.parametrize("window", [8_000, 32_000])
    def test_every_call_on_a_corpus_transcript_gets_the_live_context(self, window: int) -> None:
        messages = corpus_messages(DJANGO)
        ends = requests_of(messages)
        live = live_contexts(messages, window, ends)
        cache = PrefixCache()
        served = serve_all(cache, messages, ends, window)
        assert [i for i in ends if served[i].context != live[i]] == []
        # each call continued from the one before (the first from scratch)
        assert [s.reused for s in served.values()] == [0, *ends[:-1]]
        compactions = sum(s.events[-1].step == "compaction" for s in served.values() if s.events)
        assert compactions == live[ends[-1]].epoch > 0
        assert cache.stats == ctxengine.engine.stateless.CacheStats(memory=len(ends) - 1, none=1)

    def test_fresh_message_objects_are_found_by_content(self) -> None:
        messages = conversation()
        ends = requests_of(messages)
        live = live_contexts(messages, WINDOW, ends)
        cache = PrefixCache()
        served = {
            i: cache.serve(fresh(messages[:i]), window=WINDOW, created_at=CREATED) for i in ends
        }
        assert [i for i in ends if served[i].context != live[i]] == []
        assert [s.reused for s in served.values()] == [0, *ends[:-1]]
        assert live[ends[-1]].epoch >= 2

    def test_fresh_objects_equal_to_the_newest_checkpoint_are_not_hashed_again(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        messages = conversation()
        ends = requests_of(messages)
        cache = PrefixCache()
        hashed = count_hashes(monkeypatch)
        for i in ends:
            cache.serve(fresh(messages[:i]), window=WINDOW, created_at=CREATED)
        # each request hashes only what follows the previous one: every message once
        assert len(hashed) == ends[-1]
        # an edited earlier message is not equal: from there on the request is hashed
        edited = list(fresh(messages))
        edited[3] = user("Fix the failing test in src/other.py.")
        hashed.clear()
        served = cache.serve(edited, window=WINDOW, created_at=CREATED)
        assert len(hashed) == len(edited)
        assert served.reused == max(i for i in ends if i <= 3) == 2

    def test_without_a_cache_each_call_compacts_from_scratch(self) -> None:
        messages = conversation()
        session = Session(WINDOW)
        for m in messages:
            session.append(m, created_at=CREATED)
        expected = session.prepare()
        assert prepare(messages, window=WINDOW, created_at=CREATED) == expected
        assert expected.epoch == 1  # one compaction over everything: not the live chain
        assert live_contexts(messages, WINDOW, [len(messages)])[len(messages)].epoch == 1


class TestKeys:
    def test_an_edited_earlier_message_misses_every_checkpoint_after_it(self) -> None:
        messages = conversation()
        ends = requests_of(messages)
        cache = PrefixCache()
        serve_all(cache, messages, ends, WINDOW)
        edited = list(messages)
        edited[9] = assistant("Reading module 3 again.", *messages[9].tool_calls)
        served = cache.serve(edited, window=WINDOW, created_at=CREATED)
        # the longest served request before message 9 ends at message 8 (an assistant one)
        assert served.reused == 8
        assert served.source == "memory"
        after_edit = live_contexts(edited, WINDOW, [*[i for i in ends if i <= 8], len(edited)])
        assert served.context == after_edit[len(edited)]
        assert cache.stats.rebuilt == 1  # the warm session had moved on past message 8

    def test_a_changed_usage_or_meta_is_another_message(self) -> None:
        m = assistant("done")
        assert message_digest(m) == message_digest(fresh([m])[0])
        assert message_digest(m) != message_digest(replace(m, meta={"applied_edits": ["a.py"]}))
        assert message_digest(m) != message_digest(replace(m, model="gpt-x"))
        assert message_digest(m) != message_digest(user("done"))

    def test_another_window_or_policy_does_not_reuse_a_checkpoint(self) -> None:
        messages = conversation()
        cache = PrefixCache()
        cache.serve(messages[:10], window=WINDOW)
        assert cache.serve(messages[:12], window=WINDOW + 1).reused == 0
        other = DEFAULT_POLICY.model_copy(update={"name": "other"})
        assert cache.serve(messages[:12], window=WINDOW, policy=other).reused == 0
        tools = [{"name": "bash", "description": "run", "parameters": {"type": "object"}}]
        assert cache.serve(messages[:12], window=WINDOW, tools=tools).reused == 0
        assert cache.serve(messages[:12], window=WINDOW).reused == 10

    def test_the_same_request_twice_returns_the_first_context(self) -> None:
        messages = conversation()
        cache = PrefixCache()
        first = cache.serve(messages[:30], window=WINDOW, created_at=CREATED)
        again = cache.serve(fresh(messages[:30]), window=WINDOW)
        assert again.context is first.context
        assert (again.reused, again.source, again.events) == (30, "memory", ())
        assert cache.stats.repeated == 1


def changed_requests(
    cache: PrefixCache, edited: Sequence[Message], ends: Sequence[int], new_objects: bool
) -> Served:
    """Serve every request of ``conversation()`` (as the same objects or as new ones each
    time), then ``edited``."""
    messages = conversation()
    for i in ends:
        request = fresh(messages[:i]) if new_objects else messages[:i]
        cache.serve(request, window=WINDOW, created_at=CREATED)
    request = fresh(edited) if new_objects else tuple(edited)
    return cache.serve(request, window=WINDOW, created_at=CREATED)


def expected_after(edited: Sequence[Message], ends: Sequence[int], kept: int) -> Context:
    """The live context of ``edited``: a session that prepared at each served request end up
    to ``kept`` (the ones ``edited`` still starts with), then at its end."""
    wanted = [*[i for i in ends if i <= kept], len(edited)]
    return live_contexts(edited, WINDOW, wanted)[len(edited)]


@pytest.mark.parametrize("new_objects", [False, True], ids=["same objects", "new objects"])
class TestChangedEarlierMessages:
    """A request whose earlier messages differ from every served request's continues from
    the longest served request it still starts with, never from a later checkpoint."""

    def test_an_edited_message_in_the_middle(self, new_objects: bool) -> None:
        messages = conversation()
        ends = requests_of(messages)
        edited = list(messages)
        edited[41] = Message(
            "tool", (ToolResultPart("call_19", (TextPart("def f(x):\n    return 0"),)),)
        )
        served = changed_requests(PrefixCache(), edited, ends, new_objects)
        assert served.reused == 40  # the request that ended at assistant message 40
        assert served.context == expected_after(edited, ends, 40)
        assert served.context != expected_after(messages, ends, len(messages))

    def test_a_removed_message(self, new_objects: bool) -> None:
        messages = conversation()
        ends = requests_of(messages)
        edited = [*messages[:30], *messages[32:]]  # turn 14's call and result
        served = changed_requests(PrefixCache(), edited, ends, new_objects)
        assert served.reused == 30
        assert served.context == expected_after(edited, ends, 30)
        assert len(served.log) > len(edited)  # the compaction records of the live chain

    def test_a_reordered_pair(self, new_objects: bool) -> None:
        messages = conversation()
        ends = requests_of(messages)
        edited = list(messages)
        edited[20], edited[22] = messages[22], messages[20]  # two assistant turns swapped
        served = changed_requests(PrefixCache(), edited, ends, new_objects)
        assert served.reused == 20
        assert served.context == expected_after(edited, ends, 20)

    def test_a_changed_meta_alone(self, new_objects: bool) -> None:
        """The task flagged as injected (``isMeta``: not what a person wrote) is another
        message, and the continuation state no longer names it as the goal."""
        messages = conversation()
        ends = requests_of(messages)
        edited = list(messages)
        edited[1] = replace(messages[1], meta={"isMeta": True})
        assert edited[1] != messages[1]
        served = changed_requests(PrefixCache(), edited, ends, new_objects)
        assert served.reused == 0  # no request was served that ends before message 1
        assert served.context == expected_after(edited, ends, 0)
        assert "## Goal" not in served.context.messages[1].text
        assert "## Goal" in expected_after(messages, ends, len(messages)).messages[1].text

    def test_a_changed_part_meta_alone(self, new_objects: bool) -> None:
        messages = conversation()
        ends = requests_of(messages)
        edited = list(messages)
        text, call = messages[48].parts
        edited[48] = replace(messages[48], parts=(text, replace(call, meta={"freeform": True})))
        assert edited[48] != messages[48]
        served = changed_requests(PrefixCache(), edited, ends, new_objects)
        assert served.reused == 48
        assert served.context == expected_after(edited, ends, 48)
        calls = [p for m in served.context.messages for p in m.tool_calls if p.id == call.id]
        assert [p.meta for p in calls] == [{"freeform": True}]


def with_metas(messages: Sequence[Message], value: object) -> tuple[Message, ...]:
    """``messages`` with ``value`` in the meta of each message, part and tool result
    content (``{"n": value}``)."""
    meta = {"n": value}

    def part(p: Part) -> Part:
        if isinstance(p, ToolResultPart):
            return replace(p, content=tuple(replace(c, meta=meta) for c in p.content), meta=meta)
        return replace(p, meta=meta)

    return tuple(replace(m, parts=tuple(map(part, m.parts)), meta=meta) for m in messages)


@pytest.mark.parametrize("new_objects", [False, True], ids=["same objects", "new objects"])
class TestLooseMetas:
    """``==`` takes ``1``, ``1.0`` and ``True`` for equal; a meta holding one of them in the
    request and another in the checkpoint makes another message (its JSON, and so its hash,
    differs): the request never continues from that checkpoint."""

    @pytest.mark.parametrize("note_from", [10**9, 1])
    @pytest.mark.parametrize("other", [True, 1.0])
    def test_a_message_meta(
        self, new_objects: bool, other: object, note_from: int, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(ctxengine.engine.stateless, "_NOTE_FROM", note_from)
        messages = conversation()
        ends = requests_of(messages)
        edited = list(messages)
        edited[20] = replace(messages[20], meta={"n": other})
        changed = [replace(m, meta={"n": 1}) if n == 20 else m for n, m in enumerate(messages)]
        cache = PrefixCache()
        for i in ends:
            request = fresh(changed[:i]) if new_objects else tuple(changed[:i])
            cache.serve(request, window=WINDOW, created_at=CREATED)
        assert edited[20] == changed[20]
        request = fresh(edited) if new_objects else tuple(edited)
        served = cache.serve(request, window=WINDOW, created_at=CREATED)
        assert served.reused == 20
        assert served.context == expected_after(edited, ends, 20)

    @pytest.mark.parametrize("other", [True, 1.0])
    def test_a_tool_result_content_meta(self, new_objects: bool, other: object) -> None:
        messages = with_metas(conversation(), 1)
        ends = requests_of(messages)
        cache = PrefixCache()
        for i in ends:
            request = fresh(messages[:i]) if new_objects else messages[:i]
            cache.serve(request, window=WINDOW, created_at=CREATED)
        (result,) = messages[45].parts
        assert isinstance(result, ToolResultPart)
        content = (replace(result.content[0], meta={"n": other}),)
        edited = list(messages)
        edited[45] = replace(messages[45], parts=(replace(result, content=content),))
        assert edited[45] == messages[45]
        request = fresh(edited) if new_objects else tuple(edited)
        served = cache.serve(request, window=WINDOW, created_at=CREATED)
        assert served.reused == 44

    def test_equal_numbers_continue(
        self, new_objects: bool, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Metas that hold numbers, the same in every request: each request continues from
        the one before, hashing only its new messages, and gets the live context."""
        messages = with_metas(conversation(), 1)
        ends = requests_of(messages)
        live = live_contexts(messages, WINDOW, ends)
        hashed = count_hashes(monkeypatch)
        cache = PrefixCache()
        served = {}
        for i in ends:
            request = fresh(messages[:i]) if new_objects else messages[:i]
            served[i] = cache.serve(request, window=WINDOW, created_at=CREATED)
        assert [s.reused for s in served.values()] == [0, *ends[:-1]]
        assert len(hashed) == ends[-1]
        assert [i for i in ends if served[i].context != live[i]] == []

    def test_the_json_of_the_checkpoint_metas_is_written_once(
        self, new_objects: bool, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Requests of new objects compare the JSON of their loose metas with that of the
        checkpoint's, written once per message, not at every request."""
        monkeypatch.setattr(ctxengine.engine.stateless, "_NOTE_FROM", 1)
        messages = with_metas(conversation(), 1)
        ends = requests_of(messages)
        written: list[object] = []
        joined = ctxengine.engine.stateless._joined

        def counting(kept: list[bytes], indices: list[int], stored: Any, read: Any) -> bytes:
            written.extend(indices[len(kept) :])
            return joined(kept, indices, stored, read)

        monkeypatch.setattr(ctxengine.engine.stateless, "_joined", counting)
        cache = PrefixCache()
        for i in ends:
            request = fresh(messages[:i]) if new_objects else messages[:i]
            served = cache.serve(request, window=WINDOW, created_at=CREATED)
        compared = ends[-2] if new_objects else 0  # the same objects: a pass of is decides
        assert (served.reused, len(written)) == (ends[-2], 2 * compared)
        assert sorted(written) == sorted([*range(compared), *range(compared)])


class TestNewObjects:
    @pytest.mark.parametrize("note_from", [10**9, 1])  # a pass of is / loose metas noted
    @pytest.mark.parametrize("meta", [{}, {"source": "cli"}, {"returncode": 0}])
    def test_an_equal_copy_among_the_same_objects(
        self, meta: dict[str, object], note_from: int, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A request of the served objects but one, rebuilt equal (metas of strings, or of
        numbers, which are compared as JSON): it continues from the request before,
        hashing only its new messages."""
        monkeypatch.setattr(ctxengine.engine.stateless, "_NOTE_FROM", note_from)
        messages = tuple(replace(m, meta=meta) for m in conversation())
        ends = requests_of(messages)
        cache = PrefixCache()
        for i in ends[:-1]:
            cache.serve(messages[:i], window=WINDOW, created_at=CREATED)
        hashed = count_hashes(monkeypatch)
        request = list(messages)
        request[7] = fresh([messages[7]])[0]
        assert request[7] is not messages[7]
        served = cache.serve(request[: ends[-1]], window=WINDOW, created_at=CREATED)
        assert served.reused == ends[-2]
        assert len(hashed) == ends[-1] - ends[-2]
        assert served.context == live_contexts(messages, WINDOW, ends)[ends[-1]]

    def test_conversations_served_side_by_side_are_compared_not_hashed(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Two conversations whose requests alternate, each request rebuilt as new objects:
        each continues from its own previous request, hashing only its new messages, and
        gets its live context."""
        one = conversation()
        other = (
            one[0],
            user("Rename the helper in src/util.py."),
            *conversation(12)[2:],
        )
        hashed = count_hashes(monkeypatch)
        cache = PrefixCache()
        served: dict[tuple[int, int], Served] = {}
        pairs = list(zip(requests_of(one), requests_of(other), strict=False))
        for a, b in pairs:
            served[(0, a)] = cache.serve(fresh(one[:a]), window=WINDOW, created_at=CREATED)
            served[(1, b)] = cache.serve(fresh(other[:b]), window=WINDOW, created_at=CREATED)
        assert len(hashed) == pairs[-1][0] + pairs[-1][1]
        for n, messages in enumerate((one, other)):
            ends = [pair[n] for pair in pairs]
            live = live_contexts(messages, WINDOW, ends)
            assert [i for i in ends if served[(n, i)].context != live[i]] == []
            assert [served[(n, i)].reused for i in ends] == [0, *ends[:-1]]


class TestBranches:
    def test_a_branch_from_an_older_request_gets_the_live_context_of_that_branch(self) -> None:
        messages = conversation()
        ends = requests_of(messages)
        cache = PrefixCache()
        serve_all(cache, messages, ends, WINDOW)
        branch = [*messages[:20], user("Stop. Explain what you found so far."), assistant("ok")]
        served = cache.serve(branch, window=WINDOW, created_at=CREATED)
        assert served.reused == 20
        expected = live_contexts(branch, WINDOW, [*[i for i in ends if i <= 20], 22])
        assert served.context == expected[22]
        # and the main line goes on from its warm session
        longer = (*messages, user("Now run the tests."), assistant("Running."))
        again = cache.serve(longer, window=WINDOW, created_at=CREATED)
        assert again.reused == ends[-1]
        assert again.context == live_contexts(longer, WINDOW, [*ends, len(longer)])[len(longer)]
        assert cache.stats.rebuilt == 1


class TestMemoryBound:
    def test_the_least_recently_used_checkpoint_goes_first(self) -> None:
        messages = conversation()
        cache = PrefixCache(2)
        for i in (4, 6, 8):
            cache.serve(messages[:i], window=WINDOW)
        assert len(cache) == 2
        assert cache.serve(messages[:5], window=WINDOW).reused == 0  # 4 was dropped
        cache.clear()
        assert len(cache) == 0

    def test_size_below_one_is_refused(self) -> None:
        with pytest.raises(ValueError, match="at least 1 checkpoint, got size=0"):
            PrefixCache(0)


class TestStore:
    def test_another_process_continues_from_the_stored_checkpoints(self, tmp_path: Path) -> None:
        messages = conversation()
        ends = requests_of(messages)
        live = live_contexts(messages, WINDOW, ends)
        half = ends[: len(ends) // 2]
        with SQLiteStore(tmp_path / "ctx.db") as store:
            serve_all(PrefixCache(store=store), messages, half, WINDOW)
        with SQLiteStore(tmp_path / "ctx.db") as store:
            cache = PrefixCache(store=store)
            repeat = cache.serve(messages[: half[-1]], window=WINDOW)
            assert (repeat.reused, repeat.source) == (half[-1], "store")
            assert repeat.context == live[half[-1]]
            cache.clear()
            rest = serve_all(cache, messages, ends[len(half) :], WINDOW)
        first = rest[ends[len(half)]]
        assert (first.reused, first.source) == (half[-1], "store")
        assert [i for i in ends[len(half) :] if rest[i].context != live[i]] == []
        assert live[half[-1]].epoch >= 1  # the stored chain holds compaction records

    def test_a_stored_chain_with_a_missing_parent_is_not_used(self, tmp_path: Path) -> None:
        messages = conversation()
        with SQLiteStore(tmp_path / "ctx.db") as store:
            cache = PrefixCache(store=store)
            cache.serve(messages[:4], window=WINDOW)
            cache.serve(messages[:6], window=WINDOW)
        conn = sqlite3.connect(tmp_path / "ctx.db")
        assert conn.execute("SELECT COUNT(*) FROM stateless_checkpoints").fetchone() == (2,)
        conn.execute("DELETE FROM stateless_checkpoints WHERE messages = 4")
        conn.commit()
        conn.close()
        with SQLiteStore(tmp_path / "ctx.db") as store:
            served = PrefixCache(store=store).serve(messages[:8], window=WINDOW)
        assert (served.reused, served.source) == (0, "none")


class TestBadInput:
    def test_no_messages(self) -> None:
        with pytest.raises(ValueError, match="at least one message"):
            PrefixCache().serve([], window=WINDOW)
        with pytest.raises(ValueError, match="at least one message"):
            prepare([], window=WINDOW)

    def test_an_item_that_is_not_a_message_is_named_by_index(self) -> None:
        bad: list[object] = [user("a"), {"role": "user", "content": "b"}]
        with pytest.raises(TypeError, match=r"messages\[1\] is a dict, not a ctxengine Message"):
            PrefixCache().serve(bad, window=WINDOW)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"messages\[1\] is a dict, not a ctxengine Message"):
            prepare(bad, window=WINDOW)  # type: ignore[arg-type]


def test_the_package_exports_prepare_and_the_cache() -> None:
    messages = conversation()
    cached = ctxengine.prepare(messages[:6], window=WINDOW, cache=ctxengine.PrefixCache())
    assert cached == ctxengine.prepare(messages[:6], window=WINDOW)
    assert cached.messages == messages[:6]


def test_an_estimator_per_call_gets_checkpoints_of_its_own() -> None:
    """The same conversation served with the estimator calibrated for o200k_base and with the
    cache's default: each call's size is its own estimator's, and neither continues from the
    other's checkpoints (the calibration is part of the keys)."""
    cjk = "代理在修改任何文件之前先阅读失败的测试。"  # 23 tokens by default, 16 for o200k_base
    messages = [user(cjk), assistant(cjk), user(cjk)]
    o200k = HeuristicEstimator(image_tokens=DEFAULT_IMAGE_TOKENS, encoding="o200k_base")
    cache = PrefixCache()
    assert cache.serve(messages[:1], window=WINDOW).tokens == 27
    assert cache.serve(messages[:1], window=WINDOW, estimator=o200k).tokens == 20
    assert cache.serve(messages, window=WINDOW, estimator=o200k).tokens == 3 * 20
    assert cache.serve(messages, window=WINDOW).tokens == 3 * 27
    # each longer request continued from its own estimator's one-message checkpoint
    assert cache.stats == ctxengine.engine.stateless.CacheStats(memory=2, none=2)


class TestServedLog:
    def test_the_log_is_the_calls_own_while_the_session_goes_on(self) -> None:
        """``Served.log`` is the log as the call left it, read after later calls appended
        to the same session."""
        messages = conversation()
        ends = requests_of(messages)
        cache = PrefixCache()
        served = serve_all(cache, messages, ends, WINDOW)
        first, last = served[ends[0]], served[ends[-1]]
        assert [e.message for e in first.log] == list(messages[: ends[0]])
        assert last.log[: len(first.log)] == first.log
        assert len(last.log) > ends[-1]  # and the compaction records
        again = cache.serve(messages[: ends[-1]], window=WINDOW, created_at=CREATED)
        assert (again.log, again.context, again.reused) == (last.log, last.context, ends[-1])
        assert again != last  # reused: every message this time
        same = replace(last)
        assert same is not last
        assert same == last
        assert hash(same) == hash(last)
        assert replace(last, _size=len(last.log) - 1) != last
