"""The next step of a continuation state: the latest user request (open or answered), a bare
acknowledgement resolved to what it acknowledged, the agent's own stated plan, and the open
errors.

The latest request is the newest real user message of the summarized range and the split
turn (a bare slash command does not count); when the range holds none, the newest of the
user messages before it. It is *open* when the compaction splits its turn (the verbatim
messages after the state continue it) or nothing answered it yet; otherwise the turn it opened
ended inside the summarized range and the messages after the state hold what comes next.

Never "continue" alone: when the latest request is the goal itself and still open, the next
step names the concrete next action (:func:`next_action`): the agent's stated plan that it
has not yet carried out, else the first open item of its todo list, else the latest open
error to resolve, else what to check (the goal against the done steps and the current work).
When the verbatim messages kept after the state hold a later user message, that message is
named instead (an acknowledgement resolved as below).

A bare acknowledgement (:func:`~ctxengine.summarizers.acknowledge.is_acknowledgement`:
``continue``, ``yes``, ``继续``, ``System: Please continue.`` …) is never shown alone: it
resolves to the plan or question the agent stated in its last message before it
(:func:`stated_plan`), else to the latest substantive request before it, else to the goal
and the next action.
An agent's message that only asks the user what to do next (``Please provide the next step
in your execution plan.``, ``What would you like me to do next?``: :func:`asks_for_direction`)
proposes nothing: an acknowledgement of it resolves to the latest substantive request, and it
is not shown as the agent's plan.

The agent's stated plan is read from its last message with text: the last paragraph that
announces what comes next (``Next, I'll …``, ``Remaining: …``, ``接下来 …``) or asks the user
something (ends with ``?``), with the list that follows a heading such as ``Next steps:``.

A sentence that quotes several lines (a pasted request, a plan with its list) has its second
and later lines indented by four spaces (:func:`quote_lines`), so that no quoted line (a
pasted ``## Next step``) reads as a heading of the state.

The sentences are English here; :class:`Wording` holds every one of them, and
:mod:`ctxengine.summarizers.step_wording` has them in the other languages of the state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctxengine.model import Message
from ctxengine.model.roles import is_real_user_message, is_slash_command, user_text
from ctxengine.summarizers.acknowledge import is_acknowledgement
from ctxengine.summarizers.todos import first_open_todo

#: Longest stated plan quoted, in characters (its head is kept, then "…").
PLAN_MAX_CHARS = 600
#: Longest quoted request in an acknowledgement's resolution, in characters.
RESOLVED_MAX_CHARS = 600
#: Paragraphs of the agent's last message searched for a plan, from its end.
PLAN_PARAGRAPHS = 4
#: Longest paragraph read as a heading of the list that follows it (``Next steps:``).
PLAN_HEADING_MAX_CHARS = 80

_PLAN = re.compile(
    r"\bnext(?: step| steps)?\b|\bI(?:'ll| will| am going to|'m going to)\b|\blet me\b|"
    r"(?:^|(?<=[.!?:;]\s))(?:now|then|finally|after that)\b|\blet's\b|\bgoing to\b|"
    r"\b(?:I|we) (?:still )?need to\b|"
    r"\bnow I\b|\bthen I\b|\bremaining\b|\bstill (?:need|to)\b|\bto ?do\b|\bplan\b|"
    r"\bwould you like\b|\bwant me to\b|\bdo you want\b|\bshould I\b|\bshall I\b|"
    r"\blet me know\b|\bif you(?:'d| would) like\b|\bI can (?:also|now|next)\b|"
    r"接下来|下一步|要不要|是否需要|需要我|我将|我会|计划|是否要|还需要|"
    r"次に|次は|しますか|しましょうか|다음|할까요|원하시면|"
    r"\bsiguiente paso\b|¿quieres|\bvoy a\b|\bpróximo\b|"
    r"\bprochaine étape\b|\bvoulez-vous\b|\bveux-tu\b|\bje vais\b|\bensuite\b|"
    r"\bnächste|\bals nächstes\b|\bsoll ich\b|\bmöchtest du\b|\bich werde\b|"
    r"\bpróximo passo\b|\bquer que\b|"
    r"следующ|\bдалее\b|\bхотите\b|\bя буду\b",
    re.IGNORECASE | re.MULTILINE,
)
_HEADING_MARK = re.compile(r"^\s*(?:#{1,6}\s+|\*\*)")
#: A sentence that asks the user what to do next, proposing nothing.
_DIRECTION = re.compile(
    r"\b(?:please\s+)?(?:provide|give|tell|share|send|specify)(?: me)? (?:with )?(?:the |your )?"
    r"next (?:step|task|instruction|item)s?\b|"
    r"\bwhat (?:would you like|do you want|should i|shall i|else would you like)(?: me)? "
    r"(?:to )?(?:do|work on|tackle|focus on|implement)(?: next)?\b|"
    r"\bwhat(?:'s| is| should be) (?:the )?next\b|\bwhat next\b|\bhow (?:would you like to|"
    r"should (?:i|we)|do you want (?:me )?to) proceed\b|\blet me know (?:what|how|which|if "
    r"there(?:'s| is) anything|if you (?:want|need|have) (?:anything|something) else)\b|"
    r"\banything else\b|\b(?:awaiting|waiting for) (?:your |further )?(?:instructions|"
    r"direction|next step)\b|\bready for (?:the |your )?next (?:step|task|instruction)\b|"
    r"下一步(?:做什么|该做什么|是什么)|接下来(?:做什么|要做什么)|还有什么(?:需要|要)|请(?:告诉我|提供)下一步|"
    r"次は何を|何をしましょうか|다음(?:에)? 무엇을|무엇을 할까요|"
    r"\bqué (?:quieres|debo|hago) (?:que haga )?(?:a continuación|ahora|después)\b|"
    r"\bque (?:dois-je|veux-tu que je) faire (?:ensuite|maintenant)\b|"
    r"\bwas (?:soll ich|möchtest du) als nächstes\b|\bo que (?:devo|você quer que eu) fazer\b|"
    r"\bчто (?:делать|мне делать) дальше\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s*")


def asks_for_direction(text: str) -> bool:
    """True when ``text`` (an agent's plan or last paragraph) only asks the user what to do
    next: a sentence of it asks (:data:`_DIRECTION`) and no other sentence states a plan
    (``Next I'll add tests. What would you like next?`` proposes the tests)."""
    sentences = [s for s in _SENTENCES.split(text.strip()) if s.strip()]
    asking = [s for s in sentences if _DIRECTION.search(s)]
    if not asking:
        return False
    rest = [s for s in sentences if s not in asking]
    return not any(_PLAN.search(s) or s.rstrip("*_ )").endswith(("?", "？")) for s in rest)


@dataclass(frozen=True, slots=True)
class Wording:
    """The sentences of the next step in one language (``{request}``, ``{plan}``, ``{ack}``,
    ``{message}``, ``{count}``, ``{action}``, ``{status}``, ``{item}``, ``{error}`` are
    filled in, and ``{current_work}`` / ``{errors}`` / ``{done}`` with the headings of the same
    names); other languages: :mod:`ctxengine.summarizers.step_wording`."""

    open_request: str = "Latest user request (in progress): {request}"
    answered_request: str = (
        "Latest user request (answered before this point, see {current_work}): {request}"
    )
    no_request: str = "No user request in the history so far."
    goal_open: str = "No later request. Next: {action}"
    goal_later: str = (
        "No later request before this point; the user's latest message after it: {request}"
    )
    goal_answered: str = "The goal above was answered before this point (see {current_work})."
    ack_plan: str = '"{ack}", accepting the agent\'s proposal: {plan}'
    ack_message: str = '"{ack}", answering the agent\'s message: {message}'
    ack_request: str = '"{ack}", to go on with: {request}'
    ack_goal: str = '"{ack}", to go on with the goal above. Next: {action}'
    ack_alone: str = '"{ack}", with no earlier request to go on with'
    plan_open: str = "The agent's stated plan: {plan}"
    plan_answered: str = "The agent's last message ended with: {plan}"
    action_plan: str = "the agent's stated plan: {plan}"
    action_todo: str = "the first open todo item ({status}): {item}"
    action_error: str = "resolve the latest open error: {error}"
    action_check: str = (
        "check the goal above against {done} and {current_work}, and do what is not done yet."
    )
    open_errors: str = "Open errors to resolve: {count} (listed under {errors})."
    open_errors_partial: str = (
        "Open errors to resolve: {count} ({shown} listed under {errors}; {rest} more in {where})."
    )
    open_errors_some: str = (
        "Open errors to resolve: {count} (some listed under {errors}; the others in {where})."
    )
    where_entries: str = "history entries {first}–{last}"
    where_note: str = "the earlier history (see {not_shown})"
    go_on: str = "Go on with the messages after this summary."
    current_work: str = "Current work"
    errors: str = "Errors"
    done: str = "Done"
    not_shown: str = "Not shown (no room left)"


ENGLISH = Wording()


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _own_lines(quoted: str) -> str:
    """``quoted`` as it follows a sentence's colon: on the same line when it is one line,
    from the next line when it has several (``Do you want me to:`` and its list), so that
    the sentence's first line never ends on the first line of the quote."""
    return "\n" + quoted if "\n" in quoted else quoted


def stated_plan(text: str) -> str:
    """What the agent said it will do next, or asked the user, in ``text`` (its message):
    the last of its final :data:`PLAN_PARAGRAPHS` paragraphs that holds a plan marker or
    ends with ``?`` (a short heading paragraph such as ``Next steps:`` with the paragraph
    after it), capped at :data:`PLAN_MAX_CHARS` characters; ``""`` when there is none."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    first = max(0, len(paragraphs) - PLAN_PARAGRAPHS)
    for i in range(len(paragraphs) - 1, first - 1, -1):
        para = paragraphs[i]
        if not (_PLAN.search(para) or para.rstrip("*_ )").endswith(("?", "？"))):
            continue
        heading = len(para) <= PLAN_HEADING_MAX_CHARS and (
            para.rstrip("*_ ").endswith((":", "：")) or _HEADING_MARK.match(para) is not None
        )
        if heading and i + 1 < len(paragraphs):
            para = f"{para}\n{paragraphs[i + 1]}"
        return _cap(para, PLAN_MAX_CHARS)
    return ""


@dataclass(frozen=True, slots=True)
class Request:
    """The latest user request of a range.

    Attributes:
        index: its position in the messages (-1 when it comes from before them).
        text: the user's text, verbatim.
    """

    index: int
    text: str


def latest_request(messages: Sequence[Message], prior: Sequence[str] = ()) -> Request | None:
    """The newest real user message of ``messages`` that is not a bare slash command, else
    the newest such text of ``prior`` (index -1), else ``None``."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if is_real_user_message(message) and not is_slash_command(user_text(message)):
            return Request(i, user_text(message))
    for text in reversed(prior):
        if not is_slash_command(text):
            return Request(-1, text)
    return None


def _assistant_text_before(messages: Sequence[Message], end: int) -> str:
    for message in reversed(messages[:end]):
        if message.role == "assistant" and message.text.strip():
            return message.text.strip()
    return ""


def _pending_plan_text(messages: Sequence[Message]) -> str:
    """The text of the agent's newest message with text, ``""`` when there is none or when
    that message or a later one calls a tool: a plan the agent went on to carry out
    (``Let's create the main HTML file:`` with the call that creates it) is no longer what
    comes next."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.role == "assistant" and message.text.strip():
            if any(m.tool_calls for m in messages[i:]):
                return ""
            return message.text.strip()
    return ""


def _answered(messages: Sequence[Message], index: int) -> bool:
    """True when the turn of ``messages[index]`` ended with a reply: the last message after
    it is the agent's, with text and no tool call."""
    last = messages[-1] if len(messages) > index + 1 else None
    return (
        last is not None
        and last.role == "assistant"
        and bool(last.text.strip())
        and not last.tool_calls
    )


def resolve(
    request: Request,
    messages: Sequence[Message],
    prior: Sequence[str],
    goal: str,
    words: Wording = ENGLISH,
    action: str = "",
) -> str:
    """``request``'s text, or for a bare acknowledgement what it acknowledged: the agent's
    stated plan or question in the agent's message just before it, in the turn it answers
    (after the user message before it: :func:`stated_plan`), else
    the last paragraph of that message, else the latest substantive request before it (capped
    at :data:`RESOLVED_MAX_CHARS`), else the goal with the next ``action``
    (:func:`next_action`; ``""``: what to check), else the acknowledgement alone, said to
    have nothing before it. A plan or paragraph that only asks the user what to do next
    (:func:`asks_for_direction`) is passed over."""
    if not is_acknowledgement(request.text):
        return request.text
    ack = " ".join(request.text.split())
    if request.index >= 0:
        opened = max(
            (i for i in range(request.index) if is_real_user_message(messages[i])), default=-1
        )
        # the agent's text of the turn the acknowledgement answers: after the request before it
        before = _assistant_text_before(messages[opened + 1 :], request.index - opened - 1)
        plan = stated_plan(before)
        last = re.split(r"\n\s*\n", before)[-1].strip() if before else ""
        if plan and not asks_for_direction(plan):
            return words.ack_plan.format(ack=ack, plan=_own_lines(plan))
        if last and not plan and not asks_for_direction(last):
            return words.ack_message.format(ack=ack, message=_cap(last, PLAN_MAX_CHARS))
    earlier = [user_text(m) for m in messages[: max(request.index, 0)] if is_real_user_message(m)]
    texts = [*prior, *earlier] if request.index >= 0 else list(prior)
    for text in reversed(texts):
        if text != request.text and not is_slash_command(text) and not is_acknowledgement(text):
            if text == goal:
                break
            return words.ack_request.format(ack=ack, request=_cap(text, RESOLVED_MAX_CHARS))
    if not goal:
        return words.ack_alone.format(ack=ack)
    return words.ack_goal.format(ack=ack, action=action or _check(words))


def _check(words: Wording) -> str:
    return words.action_check.format(done=words.done, current_work=words.current_work)


def next_action(
    messages: Sequence[Message], latest_error: str = "", words: Wording = ENGLISH, start: int = 0
) -> str:
    """The concrete next action ``messages`` (oldest first, the kept tail included) state,
    as a phrase of ``words``: the agent's stated plan in its newest message with text from
    ``messages[start]`` on (the latest request's turn) when no tool call follows it
    (:func:`stated_plan`; one that only asks the user what to do is passed over), else the
    first open item of the newest todo list
    (:func:`~ctxengine.summarizers.todos.first_open_todo`), else resolving ``latest_error``
    (the newest open error's line), else checking the goal against the done steps and the
    current work."""
    plan = stated_plan(_pending_plan_text(messages[start:]))
    if plan and not asks_for_direction(plan):
        return words.action_plan.format(plan=plan)
    todo = first_open_todo(messages)
    if todo is not None:
        return words.action_todo.format(status=todo.status, item=todo.text)
    if latest_error:
        return words.action_error.format(error=latest_error)
    return _check(words)


def _open_errors_line(
    count: int, shown: int | None, entries: tuple[int, int] | None, words: Wording
) -> str:
    """The line counting the open errors: all listed, ``shown`` of them, or some (``-1``),
    with where the others are."""
    errors = words.errors
    if shown is None or shown >= count:
        return words.open_errors.format(count=count, errors=errors)
    if entries is not None:
        where = words.where_entries.format(first=entries[0], last=entries[1])
    else:
        where = words.where_note.format(not_shown=words.not_shown)
    if shown < 0:
        return words.open_errors_some.format(count=count, errors=errors, where=where)
    return words.open_errors_partial.format(
        count=count, shown=shown, rest=count - shown, errors=errors, where=where
    )


def next_step(
    messages: Sequence[Message],
    *,
    split_turn: bool,
    prior: Sequence[str],
    goal: str,
    open_errors: Sequence[str] = (),
    words: Wording = ENGLISH,
    shown_errors: int | None = None,
    entries: tuple[int, int] | None = None,
    later: Sequence[Message] = (),
    latest_error: str = "",
) -> str:
    """The next-step text of a continuation state: :func:`next_step_lines` (same arguments),
    each with the later lines of the text it quotes indented (:func:`quote_lines`), one per
    line."""
    lines = next_step_lines(
        messages,
        split_turn=split_turn,
        prior=prior,
        goal=goal,
        open_errors=open_errors,
        words=words,
        shown_errors=shown_errors,
        entries=entries,
        later=later,
        latest_error=latest_error,
    )
    return "\n".join(quote_lines(line) for line in lines.sentences)


@dataclass(frozen=True, slots=True)
class StepLines:
    """The sentences of a next step, the text they quote as it is (a sentence may hold
    several lines).

    Attributes:
        request: the latest request (open or answered, an acknowledgement resolved) or what
            stands for it (the goal, no request).
        plan: the agent's stated plan after it, or ``""``.
        closing: the number of open errors, and for an answered request that the messages
            after the state say what comes next (zero to two sentences).
    """

    request: str
    plan: str = ""
    closing: tuple[str, ...] = ()

    @property
    def sentences(self) -> list[str]:
        """Every sentence, in order (the plan only when there is one)."""
        return [self.request, *([self.plan] if self.plan else []), *self.closing]


def next_step_lines(
    messages: Sequence[Message],
    *,
    split_turn: bool,
    prior: Sequence[str],
    goal: str,
    open_errors: Sequence[str] = (),
    words: Wording = ENGLISH,
    shown_errors: int | None = None,
    entries: tuple[int, int] | None = None,
    later: Sequence[Message] = (),
    latest_error: str = "",
) -> StepLines:
    """The sentences of the next step (see the module docstring).

    Args:
        messages: everything that leaves the context, oldest first (the summarized range
            and the part of a split turn before the cut).
        split_turn: the compaction splits the newest turn (the messages after the state
            continue it).
        prior: real user texts before ``messages``, oldest first.
        goal: the session's goal (a request equal to it is reported as the goal).
        open_errors: the open error lines, oldest first (one per line the state lists).
        words: the sentences.
        shown_errors: how many of them the state lists under its errors heading (``None``:
            all); when fewer, the line says how many and where the others are (``entries``,
            the history entries the state covers, else its closing note); ``-1`` when the
            number is not known: the line says that some are listed.
        entries: first and last history entry the state covers, or ``None``.
        later: the messages kept verbatim after the state, oldest first: with the goal as
            the latest request and still open, their newest real user message is the next
            step, else the next action (:func:`next_action`) is read from the goal's turn
            and them.
        latest_error: the newest open error's line, for the next action.

    Returns:
        The :class:`StepLines`: one to four sentences, the request (open or answered), the
        agent's stated plan after it, the number of open errors, and for an answered request
        that the messages after the state say what comes next.
    """
    request = latest_request(messages, prior)
    start = request.index + 1 if request is not None and request.index >= 0 else 0
    answered = False
    names = {"current_work": words.current_work, "errors": words.errors}
    if request is None and not goal:
        first = words.no_request
    elif request is None or request.text == goal:
        answered = request is not None and not split_turn and _answered(messages, request.index)
        action = next_action([*messages, *later], latest_error, words, start)
        tail = latest_request(later)
        if answered:
            first = words.goal_answered.format(**names)
        elif tail is not None:
            before = [*prior, *(user_text(m) for m in messages if is_real_user_message(m))]
            text = resolve(tail, later, before, goal, words, action)
            first = words.goal_later.format(request=text)
        else:
            first = words.goal_open.format(action=action)
    else:
        action = next_action(messages, latest_error, words, start)
        text = resolve(request, messages, prior, goal, words, action)
        answered = not split_turn and (request.index < 0 or _answered(messages, request.index))
        template = words.answered_request if answered else words.open_request
        first = template.format(request=text, **names)
    plan = stated_plan(_pending_plan_text(messages[start:]))
    said = ""
    if plan and plan not in first and not asks_for_direction(plan):
        template = words.plan_answered if answered else words.plan_open
        said = template.format(plan=_own_lines(plan))
    closing: list[str] = []
    if open_errors:
        closing.append(_open_errors_line(len(open_errors), shown_errors, entries, words))
    if answered:
        closing.append(words.go_on)
    return StepLines(first, said, tuple(closing))


#: Indent of the second and later lines of the text a next-step sentence quotes (as the
#: state's list items indent theirs): no quoted line reads as a heading of the state.
QUOTE_INDENT = "    "


def quote_lines(sentence: str) -> str:
    """``sentence`` (one of :func:`next_step_lines`: ours, its first line may end with quoted
    text) with its second and later non-blank lines indented by :data:`QUOTE_INDENT` (blank
    lines stay empty), so that a quoted ``## Next step`` never reads as a heading; trailing
    blanks of the first line are dropped when more lines follow."""
    first, *rest = sentence.split("\n")
    if rest:  # a quote on lines of its own leaves the blank before it at the end
        first = first.rstrip()
    return "\n".join([first, *(QUOTE_INDENT + ln if ln.strip() else "" for ln in rest)])


__all__ = [
    "ENGLISH",
    "PLAN_MAX_CHARS",
    "QUOTE_INDENT",
    "Request",
    "StepLines",
    "Wording",
    "asks_for_direction",
    "latest_request",
    "next_action",
    "next_step",
    "next_step_lines",
    "quote_lines",
    "resolve",
    "stated_plan",
]
