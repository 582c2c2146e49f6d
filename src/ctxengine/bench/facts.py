"""Planted facts and the sessions that carry them.

A *fact* is one thing a continuing agent must still know after compaction, planted at a
known message of a session with an exact typed checker (:mod:`ctxengine.bench.checkers`).
The kinds follow the planted-fact table of the evaluation design (``evaluation.md`` §2.3):

==================  ==========================================================================
kind                checked on the request as
==================  ==========================================================================
``rule``            every key co-occurs within :data:`RULE_WINDOW_CHARS` characters
``rule_cjk``        the same, for a rule stated in Chinese
``rule_superseded`` *stale* when shown in the continuation state without a supersession mark
``identifier``      the exact token (ticket, commit, port, symbol), not part of a longer token
``identifier_cjk``  the same, for an identifier stated in a Chinese sentence
``error``           the exact error line, after collapsing whitespace
``decision``        choice and reason co-occur within :data:`DECISION_WINDOW_CHARS` characters
``next_step``       the latest next step's keys co-occur, and the state's next step is not a
                    bare acknowledgement ("continue")
``file_modified``   the path is shown as modified (continuation state) or its modifying
                    action is still shown verbatim
``failed_outcome``  the exact line that says the command failed, and the command is not
                    claimed as done: never ``ran `CMD` (succeeded)``, its target paths never
                    listed as modified or as done (*stale* when claimed)
==================  ==========================================================================

``variant`` refines a kind for the report: who stated it (``user``, ``tool``,
``assistant``), ``adversarial`` (a rule of a session with an injected tool output),
``direct``/``indirect`` (a file changed by a named tool call, or as a side effect of a
script, formatter or patch), ``write``/``push`` (a copy that could not find its source, a
rejected ``git push``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ctxengine.model import Message

FactKind: TypeAlias = Literal[
    "rule",
    "rule_cjk",
    "rule_superseded",
    "identifier",
    "identifier_cjk",
    "error",
    "decision",
    "next_step",
    "file_modified",
    "failed_outcome",
]

#: Report order of the kinds.
FACT_KINDS: tuple[FactKind, ...] = (
    "rule",
    "rule_cjk",
    "rule_superseded",
    "identifier",
    "identifier_cjk",
    "error",
    "decision",
    "next_step",
    "file_modified",
    "failed_outcome",
)

#: Key tokens of a rule must co-occur within this many characters (evaluation.md §2.3).
RULE_WINDOW_CHARS = 200
#: Choice and reason of a decision must co-occur within this many characters (§2.3).
DECISION_WINDOW_CHARS = 300


@dataclass(frozen=True, slots=True)
class Fact:
    """One planted fact.

    Attributes:
        id: unique within its session (``"rule-1"``).
        kind: see the module docstring.
        variant: refinement for the report (``""`` when none).
        message: index, in the session's messages, of the message that plants it.
        surface: the exact text planted (an identifier or error line is checked verbatim).
        keys: the tokens that must co-occur (rules, decisions, next steps); the path of a
            ``file_modified`` fact; for a ``failed_outcome``, the command, then the paths it
            failed to write; the surface itself otherwise.
        distractors: near-miss strings planted elsewhere in the session; one of them shown
            while the fact is not is *corruption*.
        superseded_by: id of the fact that replaces this one (``rule_superseded``, or an
            earlier next step).
        call_id: for ``file_modified``: the tool call whose action changed the file.
    """

    id: str
    kind: FactKind
    message: int
    surface: str
    keys: tuple[str, ...]
    variant: str = ""
    distractors: tuple[str, ...] = ()
    superseded_by: str | None = None
    call_id: str | None = None

    @property
    def label(self) -> str:
        """The report row: the kind, with the variant in parentheses when it has one."""
        return f"{self.kind} ({self.variant})" if self.variant else self.kind


@dataclass(frozen=True, slots=True)
class PlantedSession:
    """A session with planted facts.

    Attributes:
        name: ``"debug-0"``, ``"corpus:codex-….jsonl"`` …
        seed: the generator seed (``-1`` for none).
        template: ``debug``, ``feature``, ``refactor``, ``ci_fix`` or ``corpus``.
        messages: the session, ending with a user message (the request the benchmark checks
            is the one answering it).
        facts: the planted facts, in planting order.
        modified: every file the session modified (ground truth: direct and indirect edits),
            as paths relative to the project root; ``None`` when unknown (corpus sessions:
            only their planted files are known, so precision is not measured).
        not_modified: paths the session wrote or touched that are *not* project changes
            (scratch scripts, backups, logs), or edited without effect (a failed edit).
        roots: absolute project roots stripped from paths before comparing them.
        injection: index of the message holding an adversarial tool output, or ``None``.
        injection_text: the adversarial instruction planted there.
        earlier_next_steps: next steps the user gave before the latest one (done since):
            the state showing one of them as its next step is stale.
        forged_frame: index of the message holding a tool output that forges frame tags
            (:data:`~ctxengine.bench.adversarial.FORGED_FRAME`), or ``None``.
        imported_summary: the text of another system's compaction the session continues
            from (placed after the system prompt when replayed), with an order and a forged
            section in it (:func:`~ctxengine.bench.adversarial.imported_summary`); ``""``
            for none.
        meta: free-form description (world, dialect, source file).
    """

    name: str
    seed: int
    template: str
    messages: tuple[Message, ...]
    facts: tuple[Fact, ...]
    modified: frozenset[str] | None
    not_modified: frozenset[str] = frozenset()
    roots: tuple[str, ...] = ()
    injection: int | None = None
    injection_text: str = ""
    earlier_next_steps: tuple[Fact, ...] = ()
    forged_frame: int | None = None
    imported_summary: str = ""
    meta: dict[str, str] = field(default_factory=dict)

    def fact(self, fact_id: str) -> Fact:
        """The fact with id ``fact_id``.

        Raises:
            KeyError: no such fact.
        """
        for f in self.facts:
            if f.id == fact_id:
                return f
        raise KeyError(fact_id)
