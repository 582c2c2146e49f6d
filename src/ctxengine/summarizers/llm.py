"""The LLM summarizer: a model writes the continuation state from a labelled transcript.

One compaction, step by step:

1. Cache-reuse mode (opt-in, ``cache_reuse=True``): when the engine passes the live request
   (:class:`~ctxengine.summarizers.base.LiveRequest`) and it fits the window, the instruction
   is appended to it and sent with the cache on. Any failure falls back to step 2.
2. Transcript mode: the input budget is computed first (window − max output − prompt −
   margin), the transcript is degraded or chunked to fit (:mod:`ctxengine.summarizers.fit`),
   and each request goes out without prefix-cache writes (``cache=False``). A context-length
   error shrinks the next try to 85/70/50/35 % of the rejected size.
3. Every reply is validated (:mod:`ctxengine.summarizers.validate`); a reply missing required
   headings gets one nudge retry; the optional verification pass asks for a corrected version.
4. The summary's frame tags are neutralised; a summary that gives an order outside quotation
   marks, or repeats an instruction-like line of the tool output, is rejected
   (``injected_instruction``), and so is one that writes a section heading of the state
   twice (``forged_heading``); a summary more than
   ``budget_tolerance`` over its target is rejected (``over_budget_model``), never retried
   with a larger target.

Every prompt asks for the summary in the language the user writes in
(:func:`~ctxengine.projection.language.detect_language` over the real user messages), the
template's headings unchanged.

Summary calls are accounted on the summarizer (:attr:`LLMSummarizer.calls`,
:attr:`LLMSummarizer.usage`), never in the session's history or usage anchor.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Literal

from ctxengine.errors import Cancelled, ConfigError, ContextOverflow, ProviderError, SummaryRejected
from ctxengine.projection.language import Language, detect_language
from ctxengine.providers.base import CompletionRequest, Provider
from ctxengine.summarizers import prompts, validate
from ctxengine.summarizers.anchor import choose_goal, settled_ledgers, user_texts
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.cache_reuse import NotReusable, append_to_body
from ctxengine.summarizers.calls import (
    FRAMING_TOKENS,
    ModelCaller,
    ModelSummarizer,
    Purpose,
    SummaryCall,
    cumulative_ledgers,
    last_message_text,
    replaced_tokens,
)
from ctxengine.summarizers.constraints import real_user_texts
from ctxengine.summarizers.fit import (
    MIN_INPUT_TOKENS,
    InputPlan,
    Piece,
    input_budget,
    plan_input,
    shrink_ratio,
)
from ctxengine.summarizers.notes import (
    CACHE_REUSE_APPENDED,
    cache_reuse_fallback,
    call_notes,
    plan_notes,
    shrink_note,
)
from ctxengine.summarizers.templates import DEFAULT_TEMPLATE, SummaryTemplate
from ctxengine.summarizers.transcript import TOOL_RESULT_MAX_CHARS, TRANSCRIPT_MODES
from ctxengine.tokens.base import Estimator

#: Output budget of a summary call when none is given (tokens): room for the default
#: 8,000-token continuation state plus overshoot before validation (pi: 0.8 × 16,384).
DEFAULT_SUMMARY_OUTPUT_TOKENS = 12_000
#: Share of the summary model's window kept free for estimate error (tokens = window × ratio),
#: at least :data:`MIN_MARGIN_TOKENS`.
MARGIN_RATIO = 0.05
MIN_MARGIN_TOKENS = 512


class _PieceOverflow(Exception):
    def __init__(self, piece: Piece, error: ContextOverflow) -> None:
        super().__init__(str(error))
        self.piece = piece
        self.error = error


@dataclass(slots=True)
class LLMSummarizer(ModelCaller):
    """Continuation state written by a model (see the module docstring).

    Args:
        provider: the summary model's provider.
        max_output_tokens: output budget of each summary call, in tokens.
        window: the summary model's context window in tokens (requests never exceed it).
        verify: run a second verification pass (Gemini CLI always does; off by default).
        cache_reuse: append to the live request when one is given (see module docstring).
        instructions: project compact instructions (AGENTS.md / CLAUDE.md section), given
            priority in every prompt.
        margin_tokens: tokens kept free for estimate error; default 5 % of ``window``.
        tool_result_max_chars: per tool result cap in the full transcript, in characters.
        max_chunks: preferred largest number of chunks for an oversized history.
        temperature: sampling temperature, or ``None`` for the provider default.
        budget_tolerance: share a summary may run over its target before it is rejected
            (``over_budget_model``); the policy default is
            ``policy.defaults.MODEL_SUMMARY_BUDGET_TOLERANCE``.
        template: the template the summary follows and whose headings are validated
            (:mod:`ctxengine.summarizers.templates`).
        overflow: when a summary request overflows the model, ``"shrink"`` plans the next
            one at 85/70/50/35 % of the rejected transcript size (degrading it step by
            step); ``"drop_oldest"`` keeps the transcript whole and drops its oldest
            messages to that size (Codex; Claude Code ``truncateHeadForPTLRetry``).

    Raises:
        ConfigError: ``max_output_tokens`` leaves no room in ``window``.
    """

    provider: Provider
    max_output_tokens: int
    window: int
    verify: bool = False
    cache_reuse: bool = False
    instructions: str | None = None
    margin_tokens: int | None = None
    tool_result_max_chars: int = TOOL_RESULT_MAX_CHARS
    max_chunks: int = 8
    temperature: float | None = None
    budget_tolerance: float = validate.MODEL_BUDGET_TOLERANCE
    template: SummaryTemplate = DEFAULT_TEMPLATE
    overflow: Literal["shrink", "drop_oldest"] = "shrink"
    calls: list[SummaryCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.margin_tokens is None:
            self.margin_tokens = max(MIN_MARGIN_TOKENS, int(self.window * MARGIN_RATIO))
        if (
            self.max_output_tokens <= 0
            or self.max_output_tokens + self.margin_tokens >= self.window
        ):
            raise ConfigError(
                f"summary output of {self.max_output_tokens} tokens plus a margin of "
                f"{self.margin_tokens} leaves no room in a {self.window}-token window"
            )

    @property
    def name(self) -> str:
        """``"llm"``."""
        return "llm"

    def summarize(
        self,
        request: SummaryRequest,
        estimator: Estimator,
        *,
        cancel: threading.Event | None = None,
    ) -> Summary:
        """Write continuation state for ``request`` within ``request.budget_tokens``.

        Raises:
            SummaryRejected: nothing to summarize (``empty``), no transcript left to send
                (``empty_input``), a window too small for the prompt and the output
                (``no_room``), still too large after every shrink (``overflow``), or a failed
                validation (see :mod:`ctxengine.summarizers.validate`). Nothing is sent in the
                first three cases.
            ProviderError: the provider failed after its retries (``Cancelled`` on cancel).
        """
        pinned = ""
        if request.pinned:
            pinned = "## Pinned\n" + "\n".join(f"- {p}" for p in request.pinned)
        target = request.budget_tokens - (estimator.text(pinned) if pinned else 0)
        if target <= 0:
            raise SummaryRejected("over_budget", "pinned items fill the whole budget")
        first = len(self.calls)
        ledgers, fixed = settled_ledgers(request)
        text, notes = self.narrative(
            request,
            estimator,
            target_tokens=target,
            cancel=cancel,
            fixed_later=tuple(e.text for e in fixed),
        )
        if pinned:
            validate.check_headings_once(text, pinned)
            text = f"{text}\n\n{validate.check_frame(pinned)}"
        tokens = estimator.text(text)
        validate.check_size(
            tokens,
            replaced_tokens=replaced_tokens(request, estimator),
            target_tokens=request.budget_tokens,
            tolerance=self.budget_tolerance,
        )
        notes.extend(call_notes(self.calls[first:]))
        return Summary(text, ledgers, self.name, tokens, tuple(notes))

    async def asummarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        """:meth:`summarize` for asyncio; cancelling the awaiting task cancels the call."""
        import asyncio  # loaded by the caller's event loop already; not at import time

        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self.summarize, request, estimator, cancel=cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise

    def narrative(
        self,
        request: SummaryRequest,
        estimator: Estimator,
        *,
        target_tokens: int,
        cancel: threading.Event | None = None,
        fixed_later: tuple[str, ...] = (),
    ) -> tuple[str, list[str]]:
        """The model-written summary text (validated, frame tags neutralised, at most
        ``target_tokens`` plus the tolerance) and notes on what was done to get it
        (cache-reuse fallback, shrink retries, degradation, chunking: see
        :mod:`ctxengine.summarizers.notes`). ``fixed_later``: the lines of the errors of the
        summarized messages that the messages kept after the cut show fixed
        (:func:`~ctxengine.summarizers.anchor.settled_ledgers`), which the prompt asks to
        report as fixed (:func:`~ctxengine.summarizers.prompts.fixed_later_block`). Raises
        as :meth:`summarize`."""
        if not any(m.parts for m in request.all_messages):
            raise SummaryRejected("empty", "nothing to summarize")
        notes: list[str] = []
        replaced = replaced_tokens(request, estimator)
        injected = validate.injected_lines(request.all_messages)
        language = detect_language(user_texts(request))
        if self.cache_reuse:
            try:
                text = self._append_mode(
                    request, estimator, target_tokens, notes, cancel, language, fixed_later
                )
                if text is not None:
                    text = validate.check_frame(text, injected)
                    self._check_size(estimator.text(text), replaced, target_tokens)
                    return text, [*notes, CACHE_REUSE_APPENDED]
            except Cancelled:
                raise
            except (SummaryRejected, ProviderError, NotReusable) as exc:
                notes.append(cache_reuse_fallback(exc))
        text = self._transcript_mode(
            request, estimator, target_tokens, notes, cancel, language, fixed_later
        )
        text = validate.check_frame(text, injected)
        self._check_size(estimator.text(text), replaced, target_tokens)
        return text, notes

    def _check_size(self, tokens: int, replaced: int, target: int) -> None:
        validate.check_size(
            tokens, replaced_tokens=replaced, target_tokens=target, tolerance=self.budget_tolerance
        )

    # ------------------------------------------------------------------ cache reuse

    def _append_mode(
        self,
        request: SummaryRequest,
        estimator: Estimator,
        target: int,
        notes: list[str],
        cancel: threading.Event | None,
        language: Language = "en",
        fixed_later: tuple[str, ...] = (),
    ) -> str | None:
        live = request.live_request
        if live is None or live.provider != self.provider.name:
            reason = "no_live_request" if live is None else "other_provider"
            notes.append(cache_reuse_fallback(reason))
            return None
        last = request.all_messages[-1]
        instruction = prompts.append_instruction(
            last.text or last_message_text(last),
            target_tokens=target,
            previous=request.previous.summary if request.previous else None,
            focus=request.focus,
            instructions=self.instructions_for(request),
            language=language,
            template=self.template.text,
            fixed_later=fixed_later,
        )
        tokens = live.tokens + estimator.text(instruction) + FRAMING_TOKENS
        if tokens + self.max_output_tokens + (self.margin_tokens or 0) > self.window:
            notes.append(cache_reuse_fallback("too_large"))
            return None
        body = append_to_body(live.body, live.provider, instruction)
        call = CompletionRequest(
            body=body, max_output_tokens=self.max_output_tokens, cache=True, stream=False
        )
        completion = self._call(call, "cache_reuse", "append", tokens, len(instruction), cancel)
        text = validate.check_reply(completion, self.template.headings)
        validate.check_headings(text, self.template.headings)
        return text

    # ------------------------------------------------------------------ transcript mode

    def _skeleton(
        self,
        request: SummaryRequest,
        target: int,
        previous: str | None,
        language: Language,
        fixed_later: tuple[str, ...] = (),
    ) -> str:
        return prompts.summary_prompt(
            "",
            target_tokens=target,
            previous=previous,
            goal=self._goal_outside(request),
            focus=request.focus,
            instructions=self.instructions_for(request),
            continues_turn=bool(request.turn_prefix),
            part=(1, 2),
            language=language,
            template=self.template.text,
            fixed_later=fixed_later,
        )

    def instructions_for(self, request: SummaryRequest) -> str | None:
        """The project compact instructions of a request: the summarizer's own, then those
        the request carries (:attr:`SummaryRequest.instructions`), joined by a blank line;
        ``None`` when neither has any."""
        found = [t.strip() for t in (self.instructions, request.instructions) if t and t.strip()]
        return "\n\n".join(dict.fromkeys(found)) or None

    @staticmethod
    def _goal_outside(request: SummaryRequest) -> str | None:
        goal = choose_goal(request).strip()
        if not goal or any(goal in t for t in real_user_texts(request.all_messages)):
            return None
        return goal

    def _budget(self, estimator: Estimator, skeleton: str) -> int:
        fixed = estimator.text(prompts.SYSTEM_PROMPT) + estimator.text(skeleton)
        fixed += estimator.text(prompts.nudge_prompt(self.template.headings)) + 3 * FRAMING_TOKENS
        margin = self.margin_tokens or 0
        return input_budget(self.window, self.max_output_tokens, fixed, margin)

    def _transcript_mode(
        self,
        request: SummaryRequest,
        estimator: Estimator,
        target: int,
        notes: list[str],
        cancel: threading.Event | None,
        language: Language = "en",
        fixed_later: tuple[str, ...] = (),
    ) -> str:
        previous = prompts.narrative_of(request.previous.summary) if request.previous else None
        skeleton = self._skeleton(request, target, previous, language, fixed_later)
        budget = self._budget(estimator, skeleton)
        if budget < MIN_INPUT_TOKENS:
            raise SummaryRejected(
                "no_room",
                f"the summary model's {self.window}-token window leaves {budget} tokens for "
                f"history after {self.max_output_tokens} output tokens and the prompt",
            )
        plan, running = self._plan(request, estimator, budget, target, previous)
        for step in range(5):
            if plan is None:
                raise SummaryRejected(
                    "empty_input", "the summary input was trimmed to nothing; nothing was sent"
                )
            try:
                text = self._run(
                    plan,
                    request,
                    estimator,
                    (running, target),
                    previous,
                    cancel,
                    language,
                    fixed_later,
                )
            except _PieceOverflow as over:
                err = over.error
                reported = getattr(err, "reported", False)
                ratio = shrink_ratio(
                    step,
                    reported_tokens=err.tokens if reported else None,
                    reported_limit=err.limit if reported else None,
                )
                if ratio is None:
                    raise SummaryRejected("overflow", str(err)) from err
                notes.append(shrink_note(ratio))
                smaller = max(1, int(over.piece.tokens * ratio))
                if self.overflow == "drop_oldest":
                    trimmed = _without_oldest(request, estimator, smaller)
                    if trimmed is None:
                        raise SummaryRejected("overflow", str(err)) from err
                    request, dropped = trimmed
                    notes.append(f"dropped_oldest:{dropped}")
                    smaller = budget
                plan, running = self._plan(request, estimator, smaller, target, previous)
                if plan is None:
                    raise SummaryRejected("overflow", str(err)) from err
                continue
            notes.extend(plan_notes(plan, TRANSCRIPT_MODES))
            return text
        raise AssertionError("unreachable: shrink steps are bounded")  # pragma: no cover

    def _plan(
        self,
        request: SummaryRequest,
        estimator: Estimator,
        budget: int,
        target: int,
        previous: str | None,
    ) -> tuple[InputPlan | None, int]:
        """The plan for ``budget`` transcript tokens and the target of the running summary
        between chunks (``target`` when not chunked). Chunks after the first carry the
        running summary as their anchor, so a chunked plan leaves room for it: at most half
        the budget beyond the previous summary's own size."""
        cap = self.tool_result_max_chars
        messages = request.all_messages
        plan = plan_input(messages, estimator, budget, cap=cap, max_chunks=self.max_chunks)
        if plan is None or not plan.chunked:
            return plan, target
        prev = estimator.text(previous) if previous else 0
        running = max(prev, min(target, budget // 2))
        room = running - prev
        if room > 0:
            if budget - room < MIN_INPUT_TOKENS:
                raise SummaryRejected(
                    "no_room", f"{budget} transcript tokens leave no room for chunking"
                )
            plan = plan_input(
                messages, estimator, budget - room, cap=cap, max_chunks=self.max_chunks
            )
        return plan, running

    def _run(
        self,
        plan: InputPlan,
        request: SummaryRequest,
        estimator: Estimator,
        targets: tuple[int, int],
        previous: str | None,
        cancel: threading.Event | None,
        language: Language = "en",
        fixed_later: tuple[str, ...] = (),
    ) -> str:
        """Send the plan's pieces in order, each summary the anchor of the next; ``targets``
        is (running summary target, final target) in tokens; the last piece's prompt names
        the errors ``fixed_later``."""
        anchor = previous
        n = len(plan.pieces)
        for k, piece in enumerate(plan.pieces, start=1):
            prompt = prompts.summary_prompt(
                piece.text,
                target_tokens=targets[1] if k == n else targets[0],
                previous=anchor,
                goal=self._goal_outside(request),
                focus=request.focus,
                instructions=self.instructions_for(request),
                continues_turn=bool(request.turn_prefix) and k == n,
                part=(k, n) if n > 1 else None,
                language=language,
                template=self.template.text,
                fixed_later=fixed_later if k == n else (),
            )
            purpose: Purpose = "chunk" if n > 1 else "summary"
            try:
                anchor = self._ask(prompt, piece, estimator, purpose, cancel, final=k == n)
            except ContextOverflow as exc:
                raise _PieceOverflow(piece, exc) from exc
        assert anchor is not None
        return anchor


def _without_oldest(
    request: SummaryRequest, estimator: Estimator, tokens: int
) -> tuple[SummaryRequest, int] | None:
    """``request`` with its oldest messages dropped until the rest is estimated at most
    ``tokens`` (at least one message is dropped, the newest is always kept), and how many were
    dropped; ``None`` when only one message is left to summarize."""
    messages = request.messages
    if len(messages) <= 1:
        return None
    sizes = [estimator.message(m) for m in messages]
    total = sum(sizes) + sum(estimator.message(m) for m in request.turn_prefix)
    start = 0
    while start < len(messages) - 1 and (start == 0 or total > tokens):
        total -= sizes[start]
        start += 1
    kept = replace(request, messages=messages[start:], range_start=request.range_start + start)
    return kept, start


__all__ = [
    "DEFAULT_SUMMARY_OUTPUT_TOKENS",
    "LLMSummarizer",
    "ModelSummarizer",
    "SummaryCall",
    "cumulative_ledgers",
    "replaced_tokens",
]
