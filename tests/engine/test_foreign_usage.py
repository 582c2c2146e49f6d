"""Usage that measured another conversation: a transcript's own replies fed to a session
with a smaller window report more prompt tokens than that window holds, and after the
session's first compaction they anchor nothing (:func:`ctxengine.tokens.size.find_anchor`
with ``window``)."""

from __future__ import annotations

from corpus import require_corpus
from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model import Message, Usage, assistant, user

DJANGO = ("openai-messages", "mini-swe-agent-deepseek-chat-django-13265.traj.json")


def test_replies_reporting_more_than_the_window_do_not_drive_compaction() -> None:
    entries = read_transcript(require_corpus(*DJANGO)).entries
    messages = [e.body for e in entries if isinstance(e.body, Message)]
    reported = [m.usage.prompt_tokens for m in messages if m.usage is not None]
    # DeepSeek measured the agent's own, uncompacted requests: 83 of its 156 replies report
    # more than a 32,000-token window holds
    assert (len(reported), sum(p > 32_000 for p in reported)) == (156, 83)
    session = Session(32_000)
    sizes = []
    for m in messages:
        if m.role == "assistant":
            sizes.append(session.context_tokens(session.prepare()))
        session.append(m)
    # every call prepared (when such a reply anchored the size, each call compacted a
    # context measured at 60,000+ tokens until three compactions in a row found nothing
    # left to cut: CompactionLoopError at the 277th message), none measured over the window
    assert len(sizes) == 156
    assert max(sizes) <= 32_000


def test_after_a_compaction_only_a_reply_within_the_window_anchors() -> None:
    def session(prompt: int, *, compacted: bool) -> tuple[Session, int]:
        s = Session(32_000)
        for n in range(6):
            s.append(user(f"Step {n}: " + "fix the parser and run the tests again. " * 200))
            s.append(assistant(f"Done with step {n}."))
        if compacted:
            s.compact()
        s.append(assistant("Done.", usage=Usage(prompt, 10)))
        s.append(user("Thanks."))
        return s, s.estimator.message(user("Thanks."))

    within, tail = session(32_000, compacted=True)
    assert within.context_tokens(within.project()) == 32_010 + tail
    over, _ = session(32_001, compacted=True)
    ctx = over.project()
    assert over.context_tokens(ctx) == ctx.tokens  # the full estimate: no anchor
    # before any compaction the reply may measure this history under a larger window
    first, tail = session(32_001, compacted=False)
    assert first.context_tokens(first.project()) == 32_011 + tail
