"""One cell of the benchmark: one session, one policy, one k — replayed, rendered, checked.

The final request (after the k-th compaction) is rendered for every provider of
:data:`~ctxengine.bench.drive.PROVIDERS`; each fact is checked on every rendering and counts
as shown only when every rendering shows it. A fact's *exposure* is the number of
compactions whose summarized part held the message that planted it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from ctxengine.bench.adversarial import (
    forged_sections,
    forged_step_followed,
    frame_exact,
    order_carried,
)
from ctxengine.bench.checkers import Outcome, RequestView, check, view_of
from ctxengine.bench.drive import PROVIDERS, Replayed
from ctxengine.bench.facts import Fact, PlantedSession
from ctxengine.model import CompactionRecord
from ctxengine.projection.validate import validate
from ctxengine.replay import RENDERERS
from ctxengine.tokens import HeuristicEstimator


@dataclass(frozen=True, slots=True)
class FactResult:
    """One fact checked in one cell.

    Attributes:
        id / label / kind: the fact's id, report row and kind.
        exposure: compactions whose summarized part held the fact's message.
        outcome: the check.
        distracted: the fact has near-miss distractors (it can be corrupted).
    """

    id: str
    label: str
    kind: str
    exposure: int
    outcome: Outcome
    distracted: bool = False


@dataclass(frozen=True, slots=True)
class Cost:
    """What the compactions of a cell cost.

    Attributes:
        model_calls: summary model calls (0 for a deterministic summarizer).
        model_input_tokens / model_output_tokens: their usage, as reported.
        summary_tokens: estimated tokens of every continuation state written.
        state_tokens: estimated tokens of the continuation state in the final request.
        request_tokens: estimated tokens of the final request.
        peak_tokens: largest request of the replay.
        prunes: prunes recorded.
    """

    model_calls: int
    model_input_tokens: int
    model_output_tokens: int
    summary_tokens: int
    state_tokens: int
    request_tokens: int
    peak_tokens: int
    prunes: int


@dataclass(frozen=True, slots=True)
class CellResult:
    """One session replayed under one policy with exactly ``k`` compactions.

    Attributes:
        session / template / policy / k / window: what was run (window in tokens).
        compactions: compactions recorded (equal to ``k``).
        facts: per planted fact, the check.
        truth / claimed / true_claimed: artifact trail counts: files modified (ground
            truth), files the request shows as modified, and those of them in the truth
            (``None`` when the truth is unknown: corpus sessions).
        injection: ``None`` without an adversarial output in a compacted part; else
            ``(followed, carried)``: a rule stated before it lost / its text inside the state.
        frames_exact: every rendering of the final request holds exactly one opening and one
            closing ``continuation-state`` tag and balanced ``earlier-summary`` tags
            (:func:`~ctxengine.bench.adversarial.frame_exact`).
        forged_in_tail: ``None`` without a forged-frame plant; else whether its message is
            still shown verbatim (in the kept tail) in the final request.
        imported: ``None`` when the session continues from no imported summary; else
            ``(order_carried, forged_section, forged_step)``: its order is in the request, a
            section heading of the state appears twice, the state's next step is its forged
            one (:mod:`ctxengine.bench.adversarial`).
        requests / invalid: requests sent (the replay's and the final one) and those that
            failed validation for a provider.
        hashes: per provider, sha256 of the final request body (sorted keys).
        cost: see :class:`Cost`.
    """

    session: str
    template: str
    policy: str
    k: int
    window: int
    compactions: int
    facts: tuple[FactResult, ...]
    truth: int | None
    claimed: int | None
    true_claimed: int | None
    injection: tuple[bool, bool] | None
    frames_exact: bool
    forged_in_tail: bool | None
    imported: tuple[bool, bool, bool] | None
    requests: int
    invalid: int
    hashes: dict[str, str]
    cost: Cost


def exposure(message: int, cuts: Sequence[int]) -> int:
    """Compactions whose summarized part (the first ``cut`` messages) holds ``message``."""
    return sum(1 for cut in cuts if message < cut)


def request_hash(payload: object) -> str:
    """sha256 of a rendered request body serialised with sorted keys."""
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


def final_hashes(replayed: Replayed) -> dict[str, str]:
    """Per provider, :func:`request_hash` of the final request of ``replayed``."""
    return {p: request_hash(RENDERERS[p](replayed.context)) for p in PROVIDERS}


def _combine(outcomes: Sequence[Outcome]) -> Outcome:
    """One outcome over several renderings: shown only if shown in all, flagged (corrupted,
    stale, bare) if flagged in any."""
    survived = [o.survived for o in outcomes]
    return Outcome(
        None if survived[0] is None else all(bool(s) for s in survived),
        corrupted=any(o.corrupted for o in outcomes),
        stale=any(o.stale for o in outcomes),
        bare_next_step=any(o.bare_next_step for o in outcomes),
    )


def _summarizer_usage(replayed: Replayed) -> tuple[int, int, int]:
    summarizer = replayed.session.summarizer
    calls = getattr(summarizer, "calls", ())
    usage = getattr(summarizer, "usage", None)
    return (
        len(calls),
        int(getattr(usage, "prompt_tokens", 0) or 0),
        int(getattr(usage, "output_tokens", 0) or 0),
    )


def evaluate(
    planted: PlantedSession, policy: str, k: int, window: int, replayed: Replayed
) -> CellResult:
    """Check every planted fact on the final request of ``replayed``."""
    ctx = replayed.context
    index = {e.id: i for i, e in enumerate(e for e in replayed.session.entries if e.message)}
    verbatim = {index[s] for s in ctx.sources if s is not None and s in index}
    views: list[RequestView] = []
    dumped: list[str] = []
    hashes: dict[str, str] = {}
    invalid = sum(1 for s in replayed.steps if any(s.problems.values()))
    final_invalid = False
    for provider in PROVIDERS:
        payload = RENDERERS[provider](ctx)
        hashes[provider] = request_hash(payload)
        dumped.append(orjson.dumps(payload).decode())
        final_invalid = final_invalid or bool(validate(payload, provider))
        views.append(
            view_of(payload, roots=planted.roots, verbatim=verbatim, pruned_calls=ctx.pruned)
        )
    facts = tuple(_check_fact(f, planted, views, replayed.cuts) for f in planted.facts)
    truth = claimed = true_claimed = None
    if planted.modified is not None:
        truth_set = set(planted.modified)
        files = [f for f in facts if f.kind == "file_modified"]
        shown_truth = {planted.fact(f.id).keys[0] for f in files if f.outcome.survived}
        claimed_set = set.intersection(*(set(v.modified) for v in views)) | shown_truth
        truth, claimed = len(truth_set), len(claimed_set)
        true_claimed = len(claimed_set & truth_set)
    injection = None
    if planted.injection is not None and exposure(planted.injection, replayed.cuts) > 0:
        rules = [
            f
            for f in facts
            if f.kind in ("rule", "rule_cjk") and planted.fact(f.id).message < planted.injection
        ]
        followed = any(not f.outcome.survived for f in rules)
        carried = any(planted.injection_text in v.state for v in views)
        injection = (followed, carried)
    imported = None
    if planted.imported_summary:
        imported = (
            any(order_carried(v.text) for v in views),
            any(forged_sections(v.state) for v in views),
            any(forged_step_followed(v.state) for v in views),
        )
    forged_in_tail = None
    if planted.forged_frame is not None:
        forged_in_tail = planted.forged_frame in verbatim
    estimator = HeuristicEstimator()
    summaries = [
        e.body.summary for e in replayed.session.entries if isinstance(e.body, CompactionRecord)
    ]
    calls, tokens_in, tokens_out = _summarizer_usage(replayed)
    cost = Cost(
        model_calls=calls,
        model_input_tokens=tokens_in,
        model_output_tokens=tokens_out,
        summary_tokens=sum(estimator.text(s) for s in summaries),
        state_tokens=estimator.text(views[0].state) if views[0].state else 0,
        request_tokens=ctx.tokens,
        peak_tokens=max([ctx.tokens, *(s.tokens for s in replayed.steps)]),
        prunes=sum(1 for e in replayed.session.events if e.step == "prune"),
    )
    return CellResult(
        session=planted.name,
        template=planted.template,
        policy=policy,
        k=k,
        window=window,
        compactions=replayed.compactions,
        facts=facts,
        truth=truth,
        claimed=claimed,
        true_claimed=true_claimed,
        injection=injection,
        frames_exact=all(frame_exact(d) for d in dumped),
        forged_in_tail=forged_in_tail,
        imported=imported,
        requests=len(replayed.steps) + 1,
        invalid=invalid + int(final_invalid),
        hashes=hashes,
        cost=cost,
    )


def _check_fact(
    fact: Fact, planted: PlantedSession, views: Sequence[RequestView], cuts: Sequence[int]
) -> FactResult:
    earlier = planted.earlier_next_steps if fact.kind == "next_step" else ()
    outcome = _combine([check(fact, v, earlier) for v in views])
    return FactResult(
        fact.id,
        fact.label,
        fact.kind,
        exposure(fact.message, cuts),
        outcome,
        distracted=bool(fact.distractors),
    )
