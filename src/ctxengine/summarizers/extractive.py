"""The extractive summarizer: deterministic continuation state, no LLM.

The text is a fixed sequence of headed sections (empty ones are left out)::

    ## Goal                          the first real user request, verbatim
    ## Earlier summary (carried over) the previous compaction's text, when it is not ours
    ## User messages (newest first)  later user messages, verbatim, within a token budget
    ## Constraints                   user rules, superseded ones labelled (ledger)
    ## Done                          completed steps, past tense (ledger)
    ## Files modified / ## Scratch files / ## Files read
    ## Errors                        open and fixed errors, exact lines (ledger)
    ## Identifiers                   ids, hashes, ports, URLs, variables, versions (ledger)
    ## Commands run                  shell commands (ledger)
    ## Current work                  the last assistant text before the cut
    ## Next step                     the latest user request (not a bare slash command)
    ## Turn context                  what the split turn did before the cut
    ## Pinned                        pinned items (ledger)
    ## Focus                         the focus text given to this compaction

Anchor: the previous compaction's ledgers are merged with this range's (they only grow), so a
path or constraint from compaction k is still listed after compaction k+1 even when it is not
in the new range. User messages carry over through ``SummaryRequest.prior_user_messages``:
the caller passes the real user messages that precede the range, so the newest ones of the
whole session are chosen each time. The previous compaction's text is carried only when it
holds what no ledger does (an imported summary, a model's narrative, or an earlier summary
our text carried itself): see :mod:`ctxengine.summarizers.anchor`. The goal is the first
real user message that is not a bare slash command (``/mode``).

Language: headings and the fixed sentences (next step without a later request, turn context)
follow the dominant language of the real user messages
(:func:`~ctxengine.projection.language.detect_language`; English, Chinese, Japanese, Korean,
Spanish, French, German, Portuguese, Russian; English otherwise), from the table of
:mod:`ctxengine.projection.wording`. The headings listed above are the English ones.

Budget: the user messages are first chosen newest-first within ``user_messages_budget`` tokens
(the first one that does not fit is cut to the tokens left, as Codex does); then sections
shrink in the fixed order of :mod:`ctxengine.summarizers.sections` until the whole text fits
``budget_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctxengine.errors import SummaryRejected
from ctxengine.model import Ledgers, Message
from ctxengine.model.roles import is_real_user_message, is_slash_command
from ctxengine.projection.language import detect_language
from ctxengine.projection.wording import ENGLISH, Headings, Wording, wording
from ctxengine.summarizers.anchor import (
    CARRIED_TAG,
    anchor_ledgers,
    carried_summary,
    choose_goal,
    user_texts,
)
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.fact_items import (
    error_items,
    file_items,
    identifier_items,
    rule_items,
)
from ctxengine.summarizers.ledgers import extract_ledgers
from ctxengine.summarizers.sections import Section, render, shrink
from ctxengine.summarizers.transcript import head_tail
from ctxengine.tokens.base import Estimator

#: Longest "current work" text before any budget cut, in characters (head and tail kept).
CURRENT_WORK_MAX_CHARS = 1_200
#: Done steps of the split turn listed in the turn-context section, at most.
TURN_CONTEXT_MAX_STEPS = 10


def _fit_tokens(text: str, tokens: int, estimator: Estimator) -> str:
    """The longest prefix of ``text`` estimated at most ``tokens`` tokens."""
    if estimator.text(text) <= tokens:
        return text
    lo, hi, best = 0, len(text), 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if estimator.text(text[:mid]) <= tokens:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return text[:best]


def choose_user_messages(
    texts: tuple[str, ...], budget: int, estimator: Estimator
) -> tuple[tuple[str, ...], int]:
    """Newest first, verbatim, within ``budget`` tokens: returns (chosen, number left out).
    The first message that does not fit is cut to the tokens left and ends with a marker."""
    chosen: list[str] = []
    left = budget
    for text in reversed(texts):
        cost = estimator.text(text)
        if cost <= left:
            chosen.append(text)
            left -= cost
            continue
        room = left - estimator.text(_cut_marker(text, ""))
        part = _fit_tokens(text, room, estimator) if room > 0 else ""
        if part and estimator.text(part + _cut_marker(text, part)) <= left:
            chosen.append(part + _cut_marker(text, part))
        break
    return tuple(chosen), len(texts) - len(chosen)


def _cut_marker(full: str, part: str) -> str:
    return f" [… {len(full) - len(part):,} more characters]"


def _last_assistant_text(messages: tuple[Message, ...]) -> str:
    for message in reversed(messages):
        if message.role == "assistant" and message.text.strip():
            return head_tail(message.text.strip(), CURRENT_WORK_MAX_CHARS)
    return ""


def _turn_context(request: SummaryRequest, words: Wording = ENGLISH) -> str:
    prefix = request.turn_prefix
    if not prefix:
        return ""
    lines = [words.turn_continues]
    if any(is_real_user_message(m) for m in prefix):
        lines.append(words.turn_answers.format(next_step=words.headings.next_step))
    done = extract_ledgers(prefix).done
    if done:
        shown = done[-TURN_CONTEXT_MAX_STEPS:]
        lines.append(words.turn_done.format(steps="; ".join(shown)))
    return "\n".join(lines)


def ledger_sections(ledgers: Ledgers, headings: Headings = ENGLISH.headings) -> tuple[Section, ...]:
    """The ledger sections in their fixed order (constraints, done, files modified, scratch
    files, files read, errors, identifiers, commands, pinned), headed in the language of
    ``headings``, items as :mod:`~ctxengine.summarizers.fact_items` writes them; render them with
    :func:`~ctxengine.summarizers.sections.render` and fit them with
    :func:`~ctxengine.summarizers.sections.shrink`. The hybrid summarizer appends these to
    its narrative."""
    h = headings
    return (
        Section("constraints", h.constraints, "list", rule_items(ledgers), "constraints"),
        Section("done", h.done, "list", ledgers.done, "steps"),
        Section(
            "files_modified", h.files_modified, "paths", file_items(ledgers, "modified"), "files"
        ),
        Section("files_scratch", h.files_scratch, "paths", file_items(ledgers, "scratch"), "files"),
        Section("files_read", h.files_read, "paths", file_items(ledgers, "read"), "files"),
        Section("errors", h.errors, "list", error_items(ledgers), "errors"),
        Section("identifiers", h.identifiers, "list", identifier_items(ledgers), "identifiers"),
        Section("commands", h.commands, "list", ledgers.commands, "commands"),
        Section("pinned", h.pinned, "list", ledgers.pinned, "pins"),
    )


def _drop_first(texts: list[str], value: str) -> None:
    if value in texts:
        texts.remove(value)


@dataclass(frozen=True, slots=True)
class ExtractiveSummarizer:
    """Deterministic continuation state from the ledgers and verbatim user text.

    Args:
        user_messages_budget: tokens for the "User messages" section (the caller passes
            ``Policy.user_messages_budget_tokens``).
    """

    user_messages_budget: int

    @property
    def name(self) -> str:
        """``"extractive"``."""
        return "extractive"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        """Write continuation state for ``request`` within ``request.budget_tokens``.

        Raises:
            SummaryRejected: ``"empty"`` when ``messages`` and ``turn_prefix`` hold nothing;
                ``"over_budget"`` when the goal's first 500 characters, the constraints and the
                modified paths cannot fit even after every shrink step.
        """
        messages = request.all_messages
        if not any(m.parts for m in messages):
            raise SummaryRejected("empty", "nothing to summarize")
        anchor = anchor_ledgers(request.previous)
        texts = user_texts(request)
        goal = choose_goal(request, texts)
        new = extract_ledgers(messages, goal, cwd=anchor.cwd)
        ledgers = anchor.merge(new).merge(Ledgers(pinned=request.pinned))
        ledgers = replace(ledgers, goal=goal)
        budget = request.budget_tokens

        def fits(candidate: tuple[Section, ...]) -> bool:
            return estimator.text(render(candidate)) <= budget

        sections, notes = shrink(self._sections(request, ledgers, texts, estimator), fits)
        text = render(sections)
        if goal and goal not in text:
            # The goal had to be cut: try again without listing the constraint sentences the
            # goal already quotes, and keep that only if the goal then survives whole.
            deduped, deduped_notes = shrink(
                self._sections(request, ledgers, texts, estimator, dedupe=True), fits
            )
            if goal in render(deduped):
                sections, notes = deduped, deduped_notes
                text = render(sections)
        tokens = estimator.text(text)
        if tokens > budget:
            raise SummaryRejected(
                "over_budget",
                f"required sections need {tokens} tokens, budget {budget}",
                tokens_after=tokens,
            )
        return Summary(text, ledgers, self.name, tokens, tuple(notes))

    def _sections(
        self,
        request: SummaryRequest,
        ledgers: Ledgers,
        user_texts: tuple[str, ...],
        estimator: Estimator,
        *,
        dedupe: bool = False,
    ) -> tuple[Section, ...]:
        words = wording(detect_language(user_texts))
        h = words.headings
        texts = list(user_texts)
        goal = ledgers.goal
        _drop_first(texts, goal)
        latest = [i for i, t in enumerate(texts) if not is_slash_command(t)]
        next_step = texts.pop(latest[-1]) if latest else ""
        if not next_step and goal:
            next_step = words.no_later_request
        chosen, left_out = choose_user_messages(tuple(texts), self.user_messages_budget, estimator)
        # With ``dedupe``, constraint sentences quoted in the goal are not listed again (the
        # caller keeps this only when the goal is then shown whole).
        shown = ledgers
        if dedupe and goal:
            shown = replace(
                ledgers,
                constraints=tuple(c for c in ledgers.constraints if c not in goal),
                rules=tuple(r for r in ledgers.rules if r.text not in goal),
            )
        ledger = {s.key: s for s in ledger_sections(shown, h)}
        carried, cut = carried_summary(request.previous)
        return (
            Section("goal", h.goal, "text", (goal,)),
            Section(
                "earlier_summary",
                h.earlier_summary,
                "text",
                (carried,),
                omitted=cut if carried else 0,
                tag=CARRIED_TAG,
            ),
            Section(
                "user_messages",
                h.user_messages,
                "list",
                chosen,
                "messages",
                left_out,
                newest_first=True,
            ),
            ledger["constraints"],
            ledger["done"],
            ledger["files_modified"],
            ledger["files_scratch"],
            ledger["files_read"],
            ledger["errors"],
            ledger["identifiers"],
            ledger["commands"],
            Section(
                "current_work",
                h.current_work,
                "text",
                (_last_assistant_text(request.all_messages),),
            ),
            Section("next_step", h.next_step, "text", (next_step,)),
            Section("turn_context", h.turn_context, "text", (_turn_context(request, words),)),
            ledger["pinned"],
            Section("focus", h.focus, "text", (request.focus or "",)),
        )
