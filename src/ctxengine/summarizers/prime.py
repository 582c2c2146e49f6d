"""Ledger analyses made as messages arrive, ahead of the compaction that summarizes them.

The ledgers of a compaction (:func:`~ctxengine.summarizers.ledgers.extract_ledgers`) are a
fold over its range: a walk of the tool calls with their results
(:class:`~ctxengine.summarizers.walk.Walk`), identifiers, decisions. The costly part of it
is the analysis of each call and text on its own — the programs a command runs, its file
effects, the failure lines of its output, the tests it passed, the identifiers and
decisions of a text — and those analyses are pure functions of the message, remembered by
their modules (``functools.lru_cache``, :data:`~ctxengine.policy.defaults.
LEDGER_WALK_CACHE` and the caches of :mod:`~ctxengine.summarizers.identifiers` and
:mod:`~ctxengine.summarizers.decisions`). :class:`LedgerPrimer` asks them of each message
once, when the session sees it: the compaction that summarizes the message then finds them
remembered and only folds, and the work is spread over the calls that brought the messages
instead of landing on the compacting call. What the ledgers hold does not change: the walk
asks the same functions the same questions and gets the same answers.

A session primes when asked to (``Session(prime_ledgers=True)``): the analyses then cost
every call that brings a message instead of the compacting call (on the peers' transcripts
the median call pays for its new tool output's analysis).
"""

from __future__ import annotations

from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.model.roles import is_real_user_message, user_text
from ctxengine.projection.language import text_language
from ctxengine.projection.wording import state_language
from ctxengine.summarizers.acknowledge import is_acknowledgement
from ctxengine.summarizers.decisions import decisions_in
from ctxengine.summarizers.failures import detect, ends_in_failure, own_failures, passed_tests
from ctxengine.summarizers.identifiers import identifier_facts, symbol_words
from ctxengine.summarizers.rules import BOILERPLATE_MIN_CHARS, rule_sentences, sentence_keys
from ctxengine.summarizers.runs import (
    command_key,
    ends_in_search,
    invocations,
    named_tests,
    runner_of,
    runs_something,
    selects_tests,
)
from ctxengine.summarizers.shell import (
    command_effects,
    commands,
    looks_like_check,
    shell_effects,
    strip_bodies,
)
from ctxengine.summarizers.signals import result_failed, result_text
from ctxengine.summarizers.tools import call_effects, patch_text, shell_command
from ctxengine.summarizers.writes import (
    changed_in_output,
    diff_redirect,
    executions,
    heredoc_files,
    patch_runs,
    patched_in_output,
    reformatted_in_output,
    source_writes,
)


class LedgerPrimer:
    """Analyses each message it is shown once (see the module docstring). A tool result is
    analysed with its call, kept from the assistant message that made it until the result
    comes."""

    def __init__(self) -> None:
        self._calls: dict[str, ToolCallPart] = {}

    def observe(self, message: Message) -> None:
        """Ask the ledgers' analyses of ``message`` (its calls, results and texts)."""
        if is_real_user_message(message):
            text = user_text(message)
            decisions_in(text)
            text_language(text)
            is_acknowledgement(text)
            identifier_facts("user", text, "")
            symbol_words("user", text)
        elif message.role == "assistant":
            if message.text.strip():
                identifier_facts("assistant", message.text, "")
            decisions_in("\n".join(p.text for p in message.parts if isinstance(p, TextPart)))
        if message.role in ("system", "developer", "user"):
            text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
            if len(text) > BOILERPLATE_MIN_CHARS:
                sentence_keys(text)
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                self._calls[part.id] = part
            elif isinstance(part, ToolResultPart):
                call = self._calls.pop(part.call_id, None)
                if call is not None:
                    _result(call, part)

    def forget(self) -> None:
        """Drop the calls still waiting for their results."""
        self._calls.clear()


def _result(call: ToolCallPart, result: ToolResultPart) -> None:
    """What the walk asks of a call and its result (:meth:`Walk.call
    <ctxengine.summarizers.walk.Walk.call>`): each branch it may take, since which one it
    takes depends on the rest of the range; but not whether an output without an exit
    code ends in a failure (asked only in a range whose results state no outcome at all)."""
    command = shell_command(call)
    patch = patch_text(call)
    text = result_text(result)
    identifier_facts("result", text, command or "")
    symbol_words("result", text)
    call_effects(call)
    if command is None or patch is not None:
        if result_failed(result):
            detect(text, "")
        return
    command_key(command)
    ran = runs_something(command)
    if ran:
        detect(text, command)
    else:
        own_failures(text, command)
    ends_in_search(command)
    for cmd in commands(command):
        command_effects(cmd)
    executions(command)
    heredoc_files(command)
    if patch_runs(command):
        patched_in_output(text)
    changed_in_output(command, text)
    reformatted_in_output(command, text)
    diff_redirect(command)
    passed_tests(text)
    runner_of(command)
    named_tests(command)
    selects_tests(command)
    looks_like_check(command)
    invocations(command)


#: Every remembered analysis :class:`LedgerPrimer` asks (and the walk finds remembered).
PRIMED = (
    is_acknowledgement,
    text_language,
    decisions_in,
    identifier_facts,
    symbol_words,
    detect,
    own_failures,
    passed_tests,
    command_key,
    ends_in_search,
    named_tests,
    selects_tests,
    runner_of,
    runs_something,
    invocations,
    command_effects,
    commands,
    looks_like_check,
    call_effects,
    patch_text,
    shell_command,
    changed_in_output,
    diff_redirect,
    executions,
    heredoc_files,
    patch_runs,
    patched_in_output,
    reformatted_in_output,
    sentence_keys,
)


#: :data:`PRIMED` and the other remembered analyses of a compaction: those that depend on
#: the range (a user's rules, read in the range's language without its boilerplate) or on
#: the state written (its language), and the walk's own.
ANALYSES = (
    *PRIMED,
    rule_sentences,
    state_language,
    ends_in_failure,
    shell_effects,
    strip_bodies,
    source_writes,
)


def clear_analysis_caches() -> None:
    """Forget every remembered analysis of :data:`ANALYSES` (the memory they hold; a
    benchmark that compares runs starts each one cold)."""
    for analysis in ANALYSES:
        analysis.cache_clear()
