"""The extractive summarizer's continuation state (:class:`~.extractive.ExtractiveSummarizer`
writes it), deterministic, no LLM.

The state is a budgeted set of typed facts (:mod:`ctxengine.summarizers.items`): the goal,
the sections of a carried earlier summary, the user messages, every ledger fact (rules,
done steps, files, errors, identifiers, commands, pins), the current work, the next step, the
turn context and the focus. Items of every type compete for the one token budget by value
(:mod:`ctxengine.summarizers.select`) and are written grouped by type under headings
(:mod:`ctxengine.summarizers.sections`). An item is left out only when the budget is spent,
and then a note says how many and where the full lists are (the history's entry range).

- **Goal**: the first substantive user request, verbatim (a bare slash command or a bare
  acknowledgement such as ``continue`` never is: :func:`~.anchor.choose_goal`); its first
  :data:`KEEP_CHARS` characters are always shown, the rest (a task template's boilerplate)
  is worth less than open errors (``goal.more``).
- **Next step**: the latest user request, open or answered, a bare acknowledgement resolved
  to what it acknowledged, the agent's stated plan and the open errors
  (:mod:`ctxengine.summarizers.next_step`); its first :data:`NEXT_STEP_KEEP_CHARS` characters
  and its closing lines are always shown, a request longer than
  :data:`~ctxengine.policy.defaults.STATE_NEXT_STEP_HEAD_CHARS` (a paste) gives way after its
  head before open errors, and a shortened request ends at a word boundary. Its count of
  open errors is the number of open error lines the state can list; when the budget leaves
  some out, it says how many are listed and where the others are (the history's entry
  range).
- **User messages**: the real user messages other than the goal and the latest request, one
  each (a repeated text once, bare acknowledgements left out), newest first, a long one's
  lines after its first :data:`~ctxengine.policy.defaults.STATE_USER_MESSAGE_HEAD_CHARS`
  characters worth less than open errors; the newest within ``user_messages_budget`` tokens
  (at most :data:`~ctxengine.policy.defaults.STATE_USER_MESSAGES_MAX_SHARE` of the budget)
  rank with the rules, older ones last.
- **Earlier summary**: a carried summary (another system's, a model's narrative, or the one
  our previous state carried: :mod:`ctxengine.summarizers.anchor`) split into its sections
  (:mod:`ctxengine.summarizers.carried`), each ranked by its priority, so current work, next
  steps, pending tasks and errors are kept longest.
- **Focus**: items that match the focus text rank first, with the goal, the next step, the
  current work, the turn context, the open errors and a carried summary's current work and
  next step (:func:`~ctxengine.summarizers.items.with_focus`).
- Modified paths are always shown, grouped by directory when listed one per line they would
  take more than :data:`MODIFIED_GROUP_SHARE` of the budget or alone overflow it.

Language: headings and the fixed sentences (the next step without a later request, the turn
context) follow the dominant language of the real user messages
(:func:`~ctxengine.projection.language.detect_language`; English, Chinese, Japanese, Korean,
Spanish, French, German, Portuguese, Russian; English otherwise), from the tables of
:mod:`ctxengine.projection.wording`, and the next step's sentences and the closing note's
heading from :mod:`ctxengine.summarizers.step_wording` (the item names in the closing note
stay English).

Anchor: the previous compaction's ledgers are merged with this range's (they only grow), so a
path or rule from compaction k is still there after compaction k+1 even when it is not in the
new range. User messages carry over through ``SummaryRequest.prior_user_messages``.

Kept tail: the messages kept verbatim after the state (``SummaryRequest.kept``) are evidence,
never listed: an open error their runs fix is shown fixed, and the next step and its count
of open errors leave it out (:func:`~ctxengine.summarizers.anchor.settled_ledgers`); a rule
their user messages replace is shown superseded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ctxengine.errors import SummaryRejected
from ctxengine.model import Ledgers, Message
from ctxengine.model.roles import is_real_user_message
from ctxengine.policy.defaults import (
    STATE_NEXT_STEP_HEAD_CHARS,
    STATE_USER_MESSAGE_HEAD_CHARS,
    STATE_USER_MESSAGES_MAX_SHARE,
)
from ctxengine.projection.frame import quote_imported
from ctxengine.projection.language import detect_language
from ctxengine.projection.wording import ENGLISH, FactWords, Headings, Wording, wording
from ctxengine.summarizers import next_step as steps
from ctxengine.summarizers.acknowledge import is_acknowledgement
from ctxengine.summarizers.anchor import (
    carried_summary,
    cumulative_ledgers,
    prior_texts,
    user_texts,
)
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.carried import split_sections
from ctxengine.summarizers.constraints import real_user_texts
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.fact_items import done_line, unnamed_call
from ctxengine.summarizers.items import (
    CARRIED_BASE,
    CARRIED_SCALE,
    VALUES,
    Item,
    counts_only,
    ledger_items,
    spread,
    with_focus,
)
from ctxengine.summarizers.ledgers import done_steps
from ctxengine.summarizers.rules import superseded_later
from ctxengine.summarizers.sections import (
    JOINED,
    NOT_SHOWN_HEADING,
    StateLayout,
    group_paths,
    needs_quoting,
    notes,
)
from ctxengine.summarizers.select import Costs, Selection, select
from ctxengine.summarizers.step_wording import not_shown_heading, step_wording
from ctxengine.summarizers.transcript import head_tail
from ctxengine.tokens.base import Estimator

#: Characters of the goal that are always shown (the rest is worth less than open errors).
KEEP_CHARS = 500
#: Characters of the next step that are always shown.
NEXT_STEP_KEEP_CHARS = 300
#: Longest "current work" text always taken whole before the budget's selection, in
#: characters; a longer one is taken whole up to :data:`CURRENT_WORK_MAX_SHARE` of the
#: budget, else as its head and tail (:func:`current_work_text`).
CURRENT_WORK_MAX_CHARS = 1_200
#: Share of the state's budget the agent's last message may take before the selection.
CURRENT_WORK_MAX_SHARE = 0.25
#: Share of the tokens the state replaces (the range) that the agent's last message may take:
#: the state of a short range stays shorter than the range.
CURRENT_WORK_RANGE_SHARE = 0.1
#: Share of the budget the modified paths may take listed one per line; above it they are
#: grouped by directory when that is shorter.
MODIFIED_GROUP_SHARE = 0.15
#: Characters of the current work worth as much as current work (the rest is worth less).
CURRENT_WORK_HEAD_CHARS = 400
#: Selections tried, at most, until the next step's count of the open errors listed holds
#: (then it says only that some are listed).
ERROR_COUNT_ROUNDS = 3
#: Done steps of the split turn listed in the turn-context section, at most.
TURN_CONTEXT_MAX_STEPS = 10


def _last_assistant(messages: tuple[Message, ...]) -> Message | None:
    """The newest assistant message of ``messages`` that says something."""
    for message in reversed(messages):
        if message.role == "assistant" and message.text.strip():
            return message
    return None


def _turn_context(request: SummaryRequest, words: Wording = ENGLISH) -> str:
    prefix = request.turn_prefix
    if not prefix:
        return ""
    lines = [words.turn_continues]
    if any(is_real_user_message(m) for m in prefix):
        lines.append(words.turn_answers.format(next_step=words.headings.next_step))
    done = done_steps(prefix)
    if done:
        shown = [done_line(step, words.facts) for step in done[-TURN_CONTEXT_MAX_STEPS:]]
        lines.append(words.turn_done.format(steps="; ".join(shown)))
    return "\n".join(lines)


def user_message_items(
    texts: tuple[str, ...],
    exclude: tuple[str, ...],
    budget: int,
    estimator: Estimator,
    covered: frozenset[str] = frozenset(),
    entries: Mapping[str, str] | None = None,
) -> list[Item]:
    """The user messages worth listing, newest first: ``texts`` (oldest first) without the
    ones in ``exclude`` (each once: the goal, the latest request), without bare
    acknowledgements and without those ``covered`` lists verbatim elsewhere (a message that
    is one rule, active or superseded, or one decision, or that the next step quotes whole,
    whitespace stripped), a repeated text only at its newest place. The newest within
    ``budget`` tokens are ``user_message`` items, older ones ``user_message.older``; a message
    longer than :data:`~ctxengine.policy.defaults.STATE_USER_MESSAGE_HEAD_CHARS` characters
    is that item for its head (:func:`split_head`, its tokens the ones counted) and a
    ``user_message.more`` item for the rest, worth less than open errors (and never more than
    its head). ``entries``: the history entry holding each text, by text (``Item.entry``)."""
    remaining = list(texts)
    for text in exclude:
        if text in remaining:
            remaining.reverse()
            remaining.remove(text)
            remaining.reverse()
    seen: set[str] = set()
    newest_first: list[str] = []
    for text in reversed(remaining):
        if text in seen or is_acknowledgement(text) or text.strip() in covered:
            continue
        seen.add(text)
        newest_first.append(text)
    recency = spread(len(newest_first))[::-1]
    out: list[Item] = []
    left = budget
    for i, text in enumerate(newest_first):
        head, rest, joined = split_head(text, STATE_USER_MESSAGE_HEAD_CHARS)
        cost = estimator.text(head)
        kind = "user_message" if cost <= left else "user_message.older"
        left = max(0, left - cost) if kind == "user_message" else 0
        entry = entries.get(text, "") if entries else ""
        out.append(
            Item(
                "user_messages",
                kind,
                head,
                order=i,
                recency=recency[i],
                cut_floor=0,
                entry=entry,
            )
        )
        if rest:
            worth = min(VALUES["user_message.more"], VALUES[kind] - 1)  # never above its head
            label = JOINED if joined else ""
            more = Item("user_messages", "user_message.more", rest, order=i + 0.5, label=label)
            out.append(replace(more, recency=recency[i], value=worth, cut_floor=0, entry=entry))
    return out


def split_head(text: str, chars: int) -> tuple[str, str, bool]:
    """``text`` as (head, rest, joined): the head at most ``chars`` characters, ended at its
    last line break in its second half (the rest after it, starting a line of its own:
    ``joined`` False), else at its last space there (the rest from that space on, going on on
    the head's last line: ``joined`` True), else at ``chars`` (joined). ``(text, "", False)``
    when ``text`` is not longer than ``chars``."""
    if len(text) <= chars:
        return text, "", False
    cut = text.rfind("\n", chars // 2, chars + 1)
    if cut > 0:
        return text[:cut], text[cut + 1 :], False
    cut = text.rfind(" ", chars // 2, chars + 1)
    if cut > 0:
        return text[:cut], text[cut:], True
    return text[:chars], text[chars:], True


def goal_items(goal: str, entry: str = "") -> list[Item]:
    """The goal: its head, at most :data:`KEEP_CHARS` characters ended at a line break or a
    space (:func:`split_head`), as a required ``goal`` item, the rest (when longer) as a
    ``goal.more`` item worth less than open errors and modified files but more than scratch
    files, done steps and files read, shortened at a word boundary, written on from where the
    head ends (:data:`~ctxengine.summarizers.sections.JOINED`, or on a line of its own after a
    line break), so that a long task template gives way before the errors but the task's
    statement stays before the lists. ``entry``: the history entry holding the goal
    (``Item.entry``)."""
    head, rest, joined = split_head(goal, KEEP_CHARS)
    quoted = needs_quoting(goal)
    first = Item("goal", "goal", head, recency=1.0, required=True, cut_floor=len(head))
    items = [replace(first, quoted=quoted, entry=entry)]
    if rest:
        more = Item("goal", "goal.more", rest, order=1, cut_floor=0, label=JOINED if joined else "")
        items.append(replace(more, quoted=quoted, word_cut=True, entry=entry))
    return items


def next_step_items(lines: steps.StepLines, entry: str = "") -> list[Item]:
    """The next step's items, each shortened at word boundaries (``Item.word_cut``): the
    request (``lines.request``, its head at least :data:`NEXT_STEP_KEEP_CHARS` characters
    always shown), and when it is longer than
    :data:`~ctxengine.policy.defaults.STATE_NEXT_STEP_HEAD_CHARS` characters (a paste), the
    rest of it as a ``next_step.more`` item worth less than open errors (written indented);
    the agent's stated plan, required but shortened first when the required items alone
    overflow the budget (never within the next step's first :data:`NEXT_STEP_KEEP_CHARS`
    characters); the closing sentences (the open errors, what comes next), required and
    whole. ``entry``: the history entry holding the request the first sentence quotes
    (``Item.entry`` of the request's items)."""
    head, rest, joined = split_head(lines.request, STATE_NEXT_STEP_HEAD_CHARS)
    head = steps.quote_lines(head)
    floor = min(NEXT_STEP_KEEP_CHARS, len(head))
    step = Item("next_step", "next_step", head, required=True, cut_floor=floor, word_cut=True)
    items = [replace(step, entry=entry)]
    if rest:
        more = replace(step, kind="next_step.more", text=rest, order=1, cut_floor=0, entry=entry)
        items.append(replace(more, required=False, label=JOINED if joined else ""))
    if lines.plan:  # the next step's first NEXT_STEP_KEEP_CHARS characters always show
        plan = steps.quote_lines(lines.plan)
        keep = min(len(plan), max(0, NEXT_STEP_KEEP_CHARS - len(head) - 1))
        items.append(replace(step, text=plan, order=2, cut_floor=keep))
    if lines.closing:
        closing = "\n".join(lines.closing)
        items.append(replace(step, text=closing, order=3, cut_floor=None, word_cut=False))
    return items


def current_work(request: SummaryRequest, estimator: Estimator) -> tuple[str, str]:
    """The current work of ``request``'s state and the history entry that holds it whole:
    the newest assistant message that says something, as :func:`current_work_text` shows
    it, with its entry (``""`` when the request names none); ``("", "")`` when the range
    has no such message."""
    last = _last_assistant(request.all_messages)
    if last is None:
        return "", ""
    said = request.entries_by_text().get(last.text, "")
    return current_work_text(last.text.strip(), request, estimator, said), said


def current_work_text(
    text: str, request: SummaryRequest, estimator: Estimator, entry: str = ""
) -> str:
    """The agent's last message ``text`` as the state's current work may show it: whole when
    it has at most :data:`CURRENT_WORK_MAX_CHARS` characters or takes at most its room: the
    smaller of :data:`CURRENT_WORK_MAX_SHARE` of the state's budget and
    :data:`CURRENT_WORK_RANGE_SHARE` of the tokens of the messages ``request`` summarizes;
    else its head and tail around a note of the characters omitted (naming ``entry``, the
    history entry that holds it), as many characters as the room holds at the text's own
    characters per token, at least :data:`CURRENT_WORK_MAX_CHARS`. A long report is thus
    shown whole while the state has room for it; the selection may still shorten it
    (:func:`current_work_items`)."""
    if len(text) <= CURRENT_WORK_MAX_CHARS:
        return text
    summarized = sum(estimator.message(m) for m in request.messages)
    room = min(
        CURRENT_WORK_MAX_SHARE * request.budget_tokens, CURRENT_WORK_RANGE_SHARE * summarized
    )
    tokens = estimator.text(text)
    if tokens <= room:
        return text
    return head_tail(text, max(CURRENT_WORK_MAX_CHARS, int(len(text) * room / tokens)), entry)


def current_work_items(text: str, entry: str = "") -> list[Item]:
    """The agent's last message as current work: its first lines, up to
    :data:`CURRENT_WORK_HEAD_CHARS` characters, as a ``current_work`` item, the rest (when
    there is more) as a ``current_work.more`` item worth less than identifiers and errors, so
    that a long report gives way before them. Split at the last line break within the head
    (else at its last space, else at the head's length); the two render as the whole text.
    ``entry``: the history entry holding the message (``Item.entry``)."""
    quoted = needs_quoting(text)
    if len(text) <= CURRENT_WORK_HEAD_CHARS:
        return [Item("current_work", "current_work", text, cut_floor=0, quoted=quoted, entry=entry)]
    cut = text.rfind("\n", 0, CURRENT_WORK_HEAD_CHARS + 1)
    if cut <= 0:
        cut = text.rfind(" ", 0, CURRENT_WORK_HEAD_CHARS + 1)
    if cut <= 0:
        head, rest = text[:CURRENT_WORK_HEAD_CHARS], text[CURRENT_WORK_HEAD_CHARS:]
    else:
        head, rest = text[:cut], text[cut + 1 :]
    return [
        Item("current_work", "current_work", head, cut_floor=0, quoted=quoted, entry=entry),
        Item(
            "current_work",
            "current_work.more",
            rest,
            order=1,
            cut_floor=0,
            quoted=quoted,
            entry=entry,
        ),
    ]


def carried_items(request: SummaryRequest) -> list[Item]:
    """The sections of the carried earlier summary, each valued by its priority. The summary
    is quoted as data first (:func:`~ctxengine.projection.frame.quote_imported`: tags
    neutralised, instruction-like lines removed) and written indented
    (:func:`~ctxengine.summarizers.sections.indent_all`), so that nothing in another system's
    summary can give orders or forge a section of the state."""
    carried, _cut = carried_summary(request.previous)
    carried = quote_imported(carried)
    return [
        Item(
            "earlier_summary",
            "carried",
            section.text,
            order=k,
            cut_floor=0,
            value=CARRIED_BASE + CARRIED_SCALE * section.priority,
            label=section.title,
        )
        for k, section in enumerate(split_sections(carried))
    ]


def grouped_modified(items: list[Item]) -> list[Item]:
    """``items`` with the modified paths grouped by directory (one required item per
    directory), when that is shorter."""
    paths = tuple(i.text for i in items if i.kind == "file.modified")
    grouped = group_paths(paths)
    if sum(map(len, grouped)) + 2 * len(grouped) >= sum(map(len, paths)) + 2 * len(paths):
        return items
    first = next(n for n, i in enumerate(items) if i.kind == "file.modified")
    new = [
        Item(
            "files_modified",
            "file.modified.grouped",
            text,
            order=k,
            required=True,
            value=VALUES["file.modified"],
        )
        for k, text in enumerate(grouped)
    ]
    rest = [i for i in items if i.kind != "file.modified"]
    return rest[:first] + new + rest[first:]


def compact_modified(items: list[Item], budget: int, estimator: Estimator) -> list[Item]:
    """``items`` with the modified paths grouped by directory (:func:`grouped_modified`)
    when, listed one per line, they would take more than :data:`MODIFIED_GROUP_SHARE` of the
    ``budget`` (tokens): a long list of deep paths then leaves room for the other facts."""
    lines = "\n".join(f"- {i.text}" for i in items if i.kind == "file.modified")
    if not lines or estimator.text(lines) <= MODIFIED_GROUP_SHARE * budget:
        return items
    return grouped_modified(items)


def write_state(
    summarizer: ExtractiveSummarizer, request: SummaryRequest, estimator: Estimator
) -> Summary:
    """Write continuation state for ``request`` within ``request.budget_tokens``.

    Raises:
        SummaryRejected: ``"empty"`` when ``messages`` and ``turn_prefix`` hold nothing;
            ``"over_budget"`` (with the tokens needed) when the required items — the
            goal's first :data:`KEEP_CHARS` characters, the next step's first
            :data:`NEXT_STEP_KEEP_CHARS`, every modified path (grouped by directory) —
            and the notes of what is left out do not fit.
    """
    messages = request.all_messages
    if not any(m.parts for m in messages):
        raise SummaryRejected("empty", "nothing to summarize")
    texts = user_texts(request)
    ledgers = cumulative_ledgers(request, texts)
    if request.later_user_messages:
        rules = superseded_later(ledgers.rules, request.later_user_messages)
        ledgers = replace(ledgers, rules=rules)
    budget = request.budget_tokens
    words = wording(detect_language(texts))
    layout = StateLayout(
        headings=words.headings, entries=request.covered, not_shown=not_shown_heading(words)
    )
    # what every selection below shares: the ledger facts as items and the estimates
    facts = ledger_items(ledgers, words.facts)
    costs = Costs(summarizer.estimates(estimator))
    work = current_work(request, estimator)
    items = compact_modified(
        state_items(summarizer, request, ledgers, estimator, words, facts=facts, work=work),
        budget,
        estimator,
    )
    selection, text, tokens = _fit(items, budget, estimator, layout, costs)
    total = sum(1 for i in items if _is_open_error(i))
    listed = _open_errors_listed(selection)
    # each count of the open errors listed selects once (the first selection is the
    # one without a count)
    fitted: dict[int | None, tuple[Selection, str, int]] = {None: (selection, text, tokens)}

    def fit(shown_errors: int | None) -> tuple[Selection, str, int]:
        if shown_errors in fitted:
            return fitted[shown_errors]
        found = state_items(
            summarizer,
            request,
            ledgers,
            estimator,
            words,
            shown_errors=shown_errors,
            facts=facts,
            work=work,
        )
        fitted[shown_errors] = _fit(
            compact_modified(found, budget, estimator), budget, estimator, layout, costs
        )
        return fitted[shown_errors]

    if listed < total:
        # the next step counts the open errors: it says how many are listed and where the
        # rest are; that longer line may change what fits, so the count is tried again
        # until it holds, and else the line says only that some are listed
        count: int | None = listed
        for _ in range(ERROR_COUNT_ROUNDS):
            selection, text, tokens = fit(count)
            listed = _open_errors_listed(selection)
            held: int | None = None if listed >= total else listed
            if held == count:
                break
            count = held
        else:
            selection, text, tokens = fit(-1)
            if _open_errors_listed(selection) >= total:
                selection, text, tokens = fit(None)
    if tokens > budget:
        raise SummaryRejected(
            "over_budget",
            f"required items need {tokens} tokens, budget {budget}",
            tokens_after=tokens,
        )
    return Summary(text, ledgers, summarizer.name, tokens, notes(selection))


def state_items(
    summarizer: ExtractiveSummarizer,
    request: SummaryRequest,
    ledgers: Ledgers,
    estimator: Estimator,
    words: Wording = ENGLISH,
    shown_errors: int | None = None,
    facts: list[Item] | None = None,
    work: tuple[str, str] | None = None,
) -> list[Item]:
    """Every item the state may show for ``request`` (``ledgers``: the cumulative
    ledgers, goal set; ``words``: the state's language; ``shown_errors``: how many open
    errors the state lists when not all, for the next step's count,
    :func:`~ctxengine.summarizers.next_step.next_step`; ``facts``: the items of
    ``ledgers`` when the caller made them already, :func:`~ctxengine.summarizers.items.
    ledger_items` in ``words``; ``work``: :func:`current_work` of ``request``, likewise),
    focus marks set."""
    goal = ledgers.goal
    messages = request.all_messages
    prior = prior_texts(request)
    latest = steps.latest_request(messages, prior)
    if facts is None:
        facts = ledger_items(ledgers, words.facts)
    open_errors = tuple(i.text for i in facts if _is_open_error(i))
    lines = steps.next_step_lines(
        messages,
        split_turn=bool(request.turn_prefix),
        prior=prior,
        goal=goal,
        open_errors=open_errors,
        words=step_wording(words),
        shown_errors=shown_errors,
        entries=request.covered,
        later=request.kept,
        latest_error=_latest_open_error(ledgers),
    )
    step = "\n".join(lines.sentences)  # unquoted: what a user message or the work may equal
    exclude = (goal, latest.text) if latest is not None and latest.text != goal else (goal,)
    texts = prior + real_user_texts(messages)
    entries = request.entries_by_text()
    items: list[Item] = []
    if goal:
        items += goal_items(goal, entries.get(goal, ""))
    items += carried_items(request)
    covered = frozenset(
        [r.text.strip() for r in ledgers.rules]
        + [d.text.strip() for d in ledgers.decisions if d.origin == "user"]
        + [t.strip() for t in texts if t.strip() and t.strip() in step]
    )
    newest = min(
        summarizer.user_messages_budget, int(request.budget_tokens * STATE_USER_MESSAGES_MAX_SHARE)
    )
    items += user_message_items(texts, exclude, newest, estimator, covered, entries)
    items += facts
    current, said = work if work is not None else current_work(request, estimator)
    if current and current not in step:  # a short last message may be the plan quoted
        items += current_work_items(current, said)
    requests = texts + request.later_user_messages
    items += next_step_items(lines, _quoted_entry(lines.request, requests, entries))
    context = _turn_context(request, words)
    if context:
        items.append(Item("turn_context", "turn_context", context, cut_floor=0))
    if request.focus:
        quoted = needs_quoting(request.focus)
        items.append(Item("focus", "focus", request.focus, cut_floor=0, quoted=quoted))
    return with_focus(items, request.focus)


def _quoted_entry(sentence: str, texts: Sequence[str], entries: Mapping[str, str]) -> str:
    """The history entry of the longest of ``texts`` (user requests, oldest first; the newest
    of equally long ones) that ``sentence`` quotes whole, ``""`` when it quotes none that
    ``entries`` knows. The longest: a request resolved from a short acknowledgement quotes
    both ("Please continue.", to go on with: the request), and only the request is cut."""
    best = ""
    for text in texts:
        if len(text) >= len(best) and text and text in sentence and text in entries:
            best = text
    return entries[best] if best else ""


def _latest_open_error(ledgers: Ledgers) -> str:
    """The line of the newest open error (by source) that says what failed (not one that
    only counts failures, :func:`~ctxengine.summarizers.items.counts_only`), else of the
    newest open error, ``""`` when none is open; followed by its file tool call when the
    line names none of its paths (:func:`~ctxengine.summarizers.fact_items.unnamed_call`)."""
    open_ = sorted((e for e in ledgers.error_facts if e.status == "open"), key=lambda e: e.source)
    said = [e for e in open_ if not counts_only(e.text)]
    latest = said[-1] if said else open_[-1] if open_ else None
    if latest is None:
        return ""
    call = unnamed_call(latest)
    return f"{latest.text} — `{call}`" if call else latest.text


def _is_open_error(item: Item) -> bool:
    """An open error's line (one per distinct line: the next step counts them)."""
    return item.kind in ("error.open", "error.open.count")


def _open_errors_listed(selection: Selection) -> int:
    """Open errors the selection shows."""
    return sum(1 for s in selection.shown if _is_open_error(s.item))


def _fit(
    items: list[Item],
    budget: int,
    estimator: Estimator,
    layout: StateLayout,
    costs: Costs | None = None,
) -> tuple[Selection, str, int]:
    """The selection of ``items`` within ``budget`` tokens, its text and measure; with the
    modified paths grouped by directory when the first selection is over the budget
    (``costs``: estimates shared with other selections of the same layout)."""
    selection = select(items, budget, estimator, layout, costs)
    text = layout.render(selection)
    tokens = estimator.text(text)
    if tokens > budget:
        grouped = grouped_modified(items)
        if grouped is not items:
            selection = select(grouped, budget, estimator, layout, costs)
            text = layout.render(selection)
            tokens = estimator.text(text)
    return selection, text, tokens


def ledger_block(
    ledgers: Ledgers,
    limit: int,
    estimator: Estimator,
    *,
    intro: str,
    headings: Headings = ENGLISH.headings,
    facts: FactWords = ENGLISH.facts,
    not_shown: str = NOT_SHOWN_HEADING,
    covered: tuple[int, int] | None = None,
    focus: str | None = None,
    goal_entry: str = "",
) -> tuple[str, tuple[str, ...]]:
    """The ledgers as a model summarizer appends them to its narrative: ``intro``, the first
    user request (``ledgers.goal``, its first :data:`KEEP_CHARS` characters always shown) and
    every ledger fact, selected by value within ``limit`` tokens like the extractive state
    (modified paths always shown, grouped by directory when they alone overflow), under
    ``headings`` (the first request under ``headings.first_request``; the closing note under
    ``not_shown``), the words around the facts from ``facts``. Returns the
    text (``""`` when there is nothing to list) and the notes of what was left out. The text
    may exceed ``limit`` only with the required items alone. ``goal_entry``: the history
    entry holding the first request, named when it is shown cut (``Item.entry``)."""
    goal = ledgers.goal
    items: list[Item] = []
    if goal:
        items += goal_items(goal, goal_entry)
    items += ledger_items(ledgers, facts)
    if not items:
        return "", ()
    items = compact_modified(with_focus(items, focus), limit, estimator)
    block_headings = replace(headings, goal=headings.first_request)
    layout = StateLayout(headings=block_headings, entries=covered, intro=intro, not_shown=not_shown)
    selection = select(items, limit, estimator, layout)
    if estimator.text(layout.render(selection)) > limit:
        grouped = grouped_modified(items)
        if grouped is not items:
            selection = select(grouped, limit, estimator, layout)
    return layout.render(selection), notes(selection)


#: A next step as long as the part of it that is always shown (:data:`NEXT_STEP_KEEP_CHARS`
#: characters of ordinary words), for :func:`minimum_state_tokens`.
_LONGEST_STEP_HEAD = ("Continue with the request and check the result " * 8)[:NEXT_STEP_KEEP_CHARS]


def minimum_state_tokens(
    goal: str, estimator: Estimator, entries: tuple[int, int] | None = None
) -> int:
    """Tokens of the smallest continuation state the extractive summarizer can write for a
    session whose goal is ``goal`` (``""``: none yet): what its required items need at their
    minimum, as its ``over_budget`` rejection reports them (``tokens_after``) — the goal's
    head (its first :data:`KEEP_CHARS` characters, ended at a line break or a space), a next
    step of :data:`NEXT_STEP_KEEP_CHARS` characters (the most that is always shown of it) and
    the closing note of what is left out (``entries``: the history entries it names, first
    and last, or ``None``). Modified paths, also required, are not counted: a compaction may
    have none. Pure.

    Returns:
        The tokens of that state's text (without the continuation message around it).
    """
    items = goal_items(goal)[:1] if goal else []
    items.append(
        Item(
            "next_step",
            "next_step",
            _LONGEST_STEP_HEAD,
            required=True,
            cut_floor=NEXT_STEP_KEEP_CHARS,
            word_cut=True,
        )
    )
    items.append(Item("files_read", "file.read", "-"))  # left out: the closing note
    layout = StateLayout(entries=entries)
    return estimator.text(layout.render(select(items, 0, estimator, layout)))
