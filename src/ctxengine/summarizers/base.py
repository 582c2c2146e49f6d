"""The summarizer seam: what a summarizer is given (:class:`SummaryRequest`), what it returns
(:class:`Summary`), and the :class:`Summarizer` protocol every implementation follows.

A summarizer turns the old prefix of a session (plus the previous continuation state, its
anchor) into new continuation state that fits a token budget. It never touches history: it
returns a value or raises :class:`~ctxengine.errors.SummaryRejected`, and the caller decides
what to store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ctxengine.model import CompactionRecord, Ledgers, Message
from ctxengine.tokens.base import Estimator


@dataclass(frozen=True, slots=True)
class LiveRequest:
    """The latest request body sent to the agent's model, for a summarizer that appends its
    instruction to it so the provider's prefix cache is reused (cache-reuse mode).

    Attributes:
        provider: the provider it was rendered for (``"openai"``, ``"openai-responses"``,
            ``"anthropic"``).
        body: the request body exactly as sent (without the output budget field, which the
            provider adds).
        tokens: its estimated size in tokens.
    """

    provider: str
    body: Mapping[str, Any]
    tokens: int


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """Everything a summarizer needs for one compaction. All token counts are tokens.

    Attributes:
        messages: the old prefix to summarize, oldest first: from the previous compaction's
            first kept entry (or the start of the session) up to the cut, or up to the start
            of the split turn when ``turn_prefix`` is given.
        previous: the previous compaction (its summary and ledgers are the anchor), or ``None``.
        goal: the session's first real user request, verbatim, found by the caller in the whole
            log (it may lie before ``messages``).
        budget_tokens: the most tokens the continuation-state text may take (> 0).
        focus: optional text from the user on what to keep (``compact --focus``).
        turn_prefix: when the cut splits a turn, the part of that turn before the cut (it is
            not in ``messages``); summarized into a "turn context" section.
        prior_user_messages: texts of the real user messages that come before ``messages``
            (oldest first, verbatim), collected by the caller from the log, so that recent user
            messages carry over from one compaction to the next; may be empty.
        pinned: texts of pin entries up to the cut (they are carried in ``Ledgers.pinned``).
        live_request: the latest request sent to the agent's model when it covers every
            message to summarize (cache-reuse mode), else ``None``.
        range_start: the history index (entry ``seq``) of ``messages[0]``: added to the
            source index of every fact read from the range, so that facts of successive
            compactions compare by age. 0 when unknown.
        covered: the first and last history entries (``seq``) the continuation state covers
            (the first entry after the head, the last summarized entry), named where the state
            leaves items out; ``None`` when unknown.
        later_user_messages: texts of the real user messages kept verbatim after the cut (the
            tail the state is sent with), oldest first: a rule among them that replaces one
            of the state's rules marks it superseded, so the state never shows as active a
            rule the messages right after it replace.
        instructions: project compact instructions found by the caller (the "Compact
            instructions" sections of the rules files in the session's head); a model
            summarizer gives them priority beside its own.
        kept: the messages kept verbatim after the cut (the tail the state is sent with,
            full texts), oldest first: when the goal is still the latest request of the
            summarized range, the next step names the newest user message among them, or
            the next action they and the range state; and their runs are evidence: an open
            error they fix is fixed in the state and in its ledgers
            (:func:`~ctxengine.summarizers.anchor.settled_ledgers`), though none of their
            own facts is listed.
        cwd: the session's working directory when the caller knows it (the one its
            transcript records), ``""`` when not: the ledgers normalise paths against it
            (before the previous compaction's and the one the messages state or suggest),
            and a file inside it is never scratch for lying under ``/tmp``.
        text_entries: ``(text, entry id)`` of the history entries that hold whole the texts
            the state may quote (the real user requests of the log, the assistant messages
            summarized): a text the state shows cut names the entry that holds it
            (:meth:`entries_by_text`); empty when the caller does not know them.
    """

    messages: tuple[Message, ...]
    previous: CompactionRecord | None
    goal: str
    budget_tokens: int
    focus: str | None = None
    turn_prefix: tuple[Message, ...] = ()
    prior_user_messages: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()
    live_request: LiveRequest | None = None
    range_start: int = 0
    covered: tuple[int, int] | None = None
    later_user_messages: tuple[str, ...] = ()
    instructions: str | None = None
    cwd: str = ""
    kept: tuple[Message, ...] = ()
    text_entries: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.budget_tokens <= 0:
            raise ValueError(f"budget_tokens must be positive, got {self.budget_tokens}")

    def entries_by_text(self) -> dict[str, str]:
        """:attr:`text_entries` as a mapping from a text to the newest entry holding it."""
        return dict(self.text_entries)

    @property
    def all_messages(self) -> tuple[Message, ...]:
        """``messages`` followed by ``turn_prefix``: everything that leaves the context."""
        return self.messages + self.turn_prefix


@dataclass(frozen=True, slots=True)
class Summary:
    """New continuation state.

    Attributes:
        text: the continuation-state text (ledgers already rendered in).
        ledgers: cumulative ledgers: the previous ones merged with this range's (only grow).
        summarizer: name of the summarizer that wrote it (``"extractive"``, ``"llm"`` …).
        tokens: estimated tokens of ``text`` (by the estimator passed to ``summarize``).
        notes: what was shortened to meet the budget and what was done to the summary input,
            one short line each (for reports and engine events); the model summarizers write
            the ``key:value`` strings listed in :mod:`ctxengine.summarizers.notes`.
    """

    text: str
    ledgers: Ledgers
    summarizer: str
    tokens: int
    notes: tuple[str, ...] = ()


@runtime_checkable
class Summarizer(Protocol):
    """Writes continuation state.

    ``summarize`` is synchronous; the LLM summarizer may add an ``async`` variant next to it
    (``asummarize``) as an optional ability, so callers that only need the extractive one stay
    synchronous.
    """

    @property
    def name(self) -> str:
        """Recorded on the compaction entry: ``"extractive"``, ``"llm"``, ``"hybrid"``."""
        ...

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        """Summarize ``request`` within ``request.budget_tokens`` (measured by ``estimator``).

        Raises:
            SummaryRejected: nothing to summarize (``reason="empty"``), a result that cannot
                fit the budget (``"over_budget"``), or any other validation failure.
        """
        ...
