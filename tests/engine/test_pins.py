"""Pins: ``Session.pin`` and automatic pins are shown verbatim in every projection, as
standing instructions, within their own budget; a stored session keeps them."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import EST, filler, result

from ctxengine import Session
from ctxengine.errors import PinBudgetExceeded
from ctxengine.model import Message, PinRecord, TextPart, ToolCallPart, UnpinRecord
from ctxengine.model.codec import body_from_dict, body_to_dict
from ctxengine.policy import Policy
from ctxengine.projection.pins import SYNTHETIC_PINNED
from ctxengine.stores.sqlite import SQLiteStore

INTRO = (
    "Pinned by the user: standing instructions that hold for the whole session, through "
    "every compaction, until the user changes them."
)
TASK = "Port the parser to Rust. Keep the public API stable."
#: No thrash stop: these sessions compact every few calls on purpose.
POLICY = Policy()


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def assistant(text: str) -> Message:
    return Message("assistant", (TextPart(text),))


def pinned(ctx_messages: tuple[Message, ...]) -> list[tuple[int, str]]:
    """(position, text) of every pinned-items message."""
    return [
        (i, m.text)
        for i, m in enumerate(ctx_messages)
        if m.meta.get("synthetic") == SYNTHETIC_PINNED
    ]


def drive(s: Session, until_epoch: int, *, start: int = 0) -> int:
    """Model calls of 300-token replies and 300-token user messages until ``until_epoch``
    compactions happened; returns the next call number."""
    n = start
    while s.project().epoch < until_epoch:
        s.prepare()
        s.record(assistant(filler(f"a{n}", 300)))
        s.append(user(filler(f"u{n}", 300)))
        n += 1
        assert n < start + 100
    return n


def started(policy: Policy = POLICY, **kw: object) -> tuple[Session, str]:
    s = Session(4_000, policy=policy, estimator=EST, **kw)  # type: ignore[arg-type]
    s.append(Message("system", (TextPart("sys"),)))
    task = s.append(user(TASK))
    return s, task.id


class TestPin:
    def test_pinned_text_and_entry_are_verbatim_after_two_compactions(self) -> None:
        s, task_id = started()
        s.pin("Never add a co-author trailer to commits.", reason="house rule")
        s.pin(task_id, reason="the task")
        drive(s, 2)
        ctx = s.prepare()
        assert ctx.epoch == 2
        # Right after the continuation state, one message with both items, verbatim.
        assert pinned(ctx.messages) == [
            (
                2,
                f"{INTRO}\n\n[1] house rule\nNever add a co-author trailer to commits.\n\n"
                f"[2] the task\n{TASK}",
            )
        ]
        assert ctx.messages[1].text.startswith("The earlier part of this session was compacted")
        assert ctx.sources[2] is None

    def test_a_pin_is_shown_where_it_stands_before_any_compaction(self) -> None:
        s, _ = started()
        entry = s.pin("Use tabs.")
        assert isinstance(entry.body, PinRecord)
        ctx = s.prepare()
        assert ctx.epoch == 0
        assert pinned(ctx.messages) == [(2, f"{INTRO}\n\n[1]\nUse tabs.")]

    def test_a_pinned_entry_adds_nothing_while_it_is_in_the_context(self) -> None:
        s, task_id = started()
        s.pin(task_id)
        ctx = s.prepare()
        assert pinned(ctx.messages) == []
        assert [m.text for m in ctx.messages] == ["sys", TASK]

    def test_a_pin_made_while_a_call_is_open_follows_its_result(self) -> None:
        s, _ = started()
        s.record(
            Message("assistant", (ToolCallPart("c1", "bash", '{"command": "ls"}'),)),
        )
        s.pin("Stay in src/.")
        s.append(result("c1", "a.py"))
        ctx = s.prepare()
        roles = [(m.role, m.meta.get("synthetic")) for m in ctx.messages]
        assert roles == [
            ("system", None),
            ("user", None),
            ("assistant", None),
            ("tool", None),
            ("user", SYNTHETIC_PINNED),
        ]
        assert ctx.messages[-1].text == f"{INTRO}\n\n[1]\nStay in src/."

    def test_pins_alone_over_their_budget_are_refused_and_nothing_is_logged(self) -> None:
        s, _ = started(Policy(pins_max_tokens=20))
        s.pin("x" * 40)  # 11 tokens
        before = len(s.entries)
        with pytest.raises(PinBudgetExceeded) as err:
            s.pin("y" * 60, reason="too much")  # 16 tokens: 27 > 20
        assert str(err.value) == (
            "the pinned items take 27 tokens, over their budget of 20 (largest: "
            f"'{'y' * 49}…': 16 tokens; '{'x' * 40}': 11 tokens); unpin some "
            "(Session.unpin(pin id or text)), pin shorter texts, or raise "
            "policy.pins_max_tokens"
        )
        assert (err.value.tokens, err.value.budget) == (27, 20)
        assert len(s.entries) == before

    def test_the_budget_is_at_most_five_percent_of_the_window(self) -> None:
        assert POLICY.resolve(4_000).pins_max == 200
        assert POLICY.resolve(200_000).pins_max == 4_000

    def test_empty_text_and_a_record_id_are_refused(self) -> None:
        s, _ = started()
        with pytest.raises(ValueError, match="nothing to pin"):
            s.pin("  ")
        pin = s.pin("keep")
        with pytest.raises(ValueError, match=f"entry '{pin.id}' holds no message text"):
            s.pin(pin.id)

    def test_a_stored_session_keeps_its_pins(self, tmp_path: Path) -> None:
        store = SQLiteStore(tmp_path / "s.db")
        s, _ = started(store=store, session_id="s1")
        s.pin("Never force-push.", reason="git")
        drive(s, 2)
        expected = s.prepare()
        reloaded = Session(4_000, policy=POLICY, estimator=EST, store=store, session_id="s1")
        ctx = reloaded.project()
        assert pinned(ctx.messages) == [(2, f"{INTRO}\n\n[1] git\nNever force-push.")]
        assert ctx.messages == expected.messages

    def test_the_wire_form_round_trips(self) -> None:
        record = PinRecord("keep", "e7", "why")
        assert body_to_dict(record) == {
            "kind": "pin",
            "text": "keep",
            "entry_id": "e7",
            "reason": "why",
        }
        assert body_from_dict(body_to_dict(record)) == record
        assert body_to_dict(PinRecord("keep")) == {"kind": "pin", "text": "keep"}


class TestUnpin:
    def test_an_unpinned_text_leaves_the_next_projection(self) -> None:
        s, _ = started()
        pin = s.pin("Use tabs.")
        assert pinned(s.prepare().messages) == [(2, f"{INTRO}\n\n[1]\nUse tabs.")]
        entry = s.unpin(" Use tabs. ", reason="the style changed")
        assert entry.body == UnpinRecord((pin.id,), "the style changed")
        assert entry.seq == pin.seq + 1
        ctx = s.prepare()  # within the epoch: the context changed before its tail
        assert pinned(ctx.messages) == []
        assert [m.text for m in ctx.messages] == ["sys", TASK]
        assert len(s.entries) == 4  # append-only: the pin record stays in the history

    def test_unpin_by_record_id_after_two_compactions_keeps_the_other_pin(self) -> None:
        s, task_id = started()
        rule = s.pin("Never add a co-author trailer to commits.", reason="house rule")
        s.pin(task_id, reason="the task")
        n = drive(s, 2)
        before = s.prepare()
        assert pinned(before.messages)[0][1].startswith(f"{INTRO}\n\n[1] house rule\n")
        s.unpin(rule.id)
        ctx = s.prepare()
        assert ctx.epoch == 2
        assert pinned(ctx.messages) == [(2, f"{INTRO}\n\n[1] the task\n{TASK}")]
        drive(s, 3, start=n)
        assert pinned(s.prepare().messages) == [(2, f"{INTRO}\n\n[1] the task\n{TASK}")]

    def test_unpin_by_the_pinned_entry_id(self) -> None:
        s, task_id = started()
        pin = s.pin(task_id)
        entry = s.unpin(task_id)
        assert entry.body == UnpinRecord((pin.id,))
        assert s.log.history.pins() == ()

    def test_every_pin_of_a_text_is_withdrawn(self) -> None:
        s, _ = started()
        first, second = s.pin("Use tabs."), s.pin("Use tabs.", reason="again")
        assert s.unpin("Use tabs.").body == UnpinRecord((first.id, second.id))

    def test_no_matching_pin_is_refused_and_nothing_is_logged(self) -> None:
        s, _ = started()
        pin = s.pin("Use tabs.")
        s.unpin(pin.id)
        before = len(s.entries)
        with pytest.raises(ValueError) as err:
            s.unpin("Use tabs.")
        assert str(err.value) == (
            "nothing to unpin: no pin in place has the id, the pinned entry id or the text "
            "'Use tabs.' (pins in place: none)"
        )
        kept = s.pin("Never force-push.")
        with pytest.raises(ValueError) as err:
            s.unpin("Never force-push")
        assert str(err.value) == (
            "nothing to unpin: no pin in place has the id, the pinned entry id or the text "
            f"'Never force-push' (pins in place: {kept.id} 'Never force-push.')"
        )
        assert len(s.entries) == before + 1

    def test_an_unpin_makes_room_in_the_budget(self) -> None:
        s, _ = started(Policy(pins_max_tokens=20))
        s.pin("x" * 40)  # 11 tokens
        with pytest.raises(PinBudgetExceeded):
            s.pin("y" * 60)  # 16 tokens: 27 > 20
        s.unpin("x" * 40)
        entry = s.pin("y" * 60)
        assert [r.text for r in s.log.history.pins()] == ["y" * 60]
        assert isinstance(entry.body, PinRecord)

    def test_a_stored_session_keeps_its_unpins(self, tmp_path: Path) -> None:
        store = SQLiteStore(tmp_path / "s.db")
        s, _ = started(store=store, session_id="s1")
        gone = s.pin("Never force-push.", reason="git")
        s.pin("Use tabs.")
        drive(s, 1)
        unpin = s.unpin("Never force-push.")
        expected = s.prepare()
        assert pinned(expected.messages) == [(2, f"{INTRO}\n\n[1]\nUse tabs.")]
        assert [e.body for e in store.entries("s1") if e.id == unpin.id] == [
            UnpinRecord((gone.id,))
        ]
        reloaded = Session(4_000, policy=POLICY, estimator=EST, store=store, session_id="s1")
        ctx = reloaded.project()
        assert ctx.messages == expected.messages
        with pytest.raises(ValueError, match="nothing to unpin"):
            reloaded.unpin(gone.id)

    def test_the_unpin_wire_form_round_trips(self) -> None:
        record = UnpinRecord(("p1", "p2"), "done")
        assert body_to_dict(record) == {"kind": "unpin", "pin_ids": ["p1", "p2"], "reason": "done"}
        assert body_from_dict(body_to_dict(record)) == record
        assert body_to_dict(UnpinRecord(("p1",))) == {"kind": "unpin", "pin_ids": ["p1"]}


class TestAutomaticPins:
    def test_first_request_and_rules_are_pinned_when_the_policy_asks(self) -> None:
        policy = Policy(auto_pins=("first_request", "rules"))
        s, _ = started(policy)
        s.record(assistant("On it."))
        s.append(user("Never add a co-author trailer. Use tabs in Makefiles."))
        drive(s, 2)
        ctx = s.prepare()
        assert pinned(ctx.messages) == [
            (
                2,
                # The rule of the first request is not repeated: its message is pinned whole.
                f"{INTRO}\n\n[1] the user's first request\n{TASK}\n\n"
                "[2] a rule the user stated\nNever add a co-author trailer.\n\n"
                "[3] a rule the user stated\nUse tabs in Makefiles.",
            )
        ]

    def test_off_by_default(self) -> None:
        s, _ = started()
        s.record(assistant("On it."))
        s.append(user("Never add a co-author trailer."))
        drive(s, 1)
        assert pinned(s.prepare().messages) == []

    def test_automatic_items_that_do_not_fit_are_left_to_the_state(self) -> None:
        # 36 tokens of pins: the 14-token task fits beside the 16-token pin, the 17-token rule
        # does not.
        policy = Policy(auto_pins=("first_request", "rules"), pins_max_tokens=36)
        s, _ = started(policy)
        s.pin("z" * 60)
        s.record(assistant("On it."))
        s.append(user("Never add a co-author trailer to any commit in this repository."))
        drive(s, 1)
        texts = pinned(s.prepare().messages)
        assert texts == [(2, f"{INTRO}\n\n[1]\n{'z' * 60}\n\n[2] the user's first request\n{TASK}")]

    def test_the_words_follow_the_conversation_language(self) -> None:
        policy = Policy(auto_pins=("first_request",))
        s = Session(4_000, policy=policy, estimator=EST)
        s.append(Message("system", (TextPart("sys"),)))
        s.append(user("请把解析器移植到 Rust，并保持公共接口稳定。"))
        n = 0
        while s.project().epoch < 1:
            s.prepare()
            s.record(assistant(f"好的，第{n}步。" + "继续处理文件。" * 120))
            s.append(user(f"第{n}步完成了吗？" + "请继续。" * 150))
            n += 1
        ((_, text),) = pinned(s.prepare().messages)
        assert text == (
            "用户固定的内容：在整个会话中始终有效的常设指令，每次压缩后依然有效，直到用户更改为止。"
            "\n\n[1] 用户的第一个请求\n请把解析器移植到 Rust，并保持公共接口稳定。"
        )
