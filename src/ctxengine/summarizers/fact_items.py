"""Ledger facts as the continuation state writes them, one line each (the items and their
value are :mod:`ctxengine.summarizers.items`), in the state's language (the words around a
fact come from :class:`~ctxengine.projection.wording.FactWords`; the English ones are shown
here), with the plain lists of ledgers stored before typed facts existed kept as they were:

- a rule verbatim, a superseded one labelled ``(superseded)``;
- an error as ``fixed: LINE`` or ``open: LINE``, with its location (``— at File "a.py",
  line 3, in f``) and, when short, the shell command that failed (a file tool's key,
  ``Edit(/repo/a.py)``, is not shown);
- a file under its one normalised path;
- an identifier as ``kind: text`` (``port: localhost:8080``), ``(earlier)`` after one a
  newer identifier of the same meaning replaced;
- a decision as ``WHO: TEXT`` (``user: …``, ``agent: …``);
- a done step as stored (``edited src/a.py``, ``wrote b.py (script fix.py)``, ``moved a to
  b``, ``ran `pytest -q` (succeeded)``, ``started `npm run dev` in the background (id
  bash_1)``), its words translated (:func:`done_line`).
"""

from __future__ import annotations

import re

from ctxengine.model import DecisionFact, ErrorFact, IdentifierFact, Ledgers, RuleFact
from ctxengine.projection.wording import ENGLISH_FACTS, FactWords

#: Longest failed command shown next to an error, in characters (longer ones are left out).
ERROR_COMMAND_MAX_CHARS = 60
#: Longest file tool call (``Read(/repo/lib/a.ex)``) shown next to an error that names none
#: of its paths, in characters: without it "File does not exist." says not which file.
ERROR_TOOL_CALL_MAX_CHARS = 160
_TOOL_KEY = re.compile(r"^\w+\((.*)\)$")
#: Label before a superseded rule (English).
SUPERSEDED = ENGLISH_FACTS.superseded + " "


def plain_errors(ledgers: Ledgers) -> tuple[str, ...]:
    """Error lines of ``ledgers.errors`` no error fact covers (ledgers stored before typed
    facts existed), in their order."""
    covered = {e.text for e in ledgers.error_facts}
    return tuple(e for e in ledgers.errors if e not in covered)


def rule_line(rule: RuleFact, words: FactWords = ENGLISH_FACTS) -> str:
    """A rule as listed: its text, after the superseded label (:data:`SUPERSEDED` in
    English) when it was superseded."""
    return f"{words.superseded} {rule.text}" if rule.status == "superseded" else rule.text


def error_line(error: ErrorFact, words: FactWords = ENGLISH_FACTS) -> str:
    """An error as listed: ``STATUS: LINE``, then ``— at WHERE`` when it has a location and
    ``— `COMMAND``` when its shell command is at most :data:`ERROR_COMMAND_MAX_CHARS`
    characters, or its file tool call (``Read(/repo/a.ex)``) at most
    :data:`ERROR_TOOL_CALL_MAX_CHARS` when the line names none of the call's paths (neither
    whole nor by file name); ``STATUS`` and ``at`` in the words of ``words``."""
    status = words.open if error.status == "open" else words.fixed
    out = f"{status}: {error.text}"
    if error.where:
        out += f" — {words.at} {error.where}"
    command = error.command
    if command and not _TOOL_KEY.match(command):
        if len(command) <= ERROR_COMMAND_MAX_CHARS:
            out += f" — `{command}`"
        return out
    call = unnamed_call(error)
    return f"{out} — `{call}`" if call else out


def unnamed_call(error: ErrorFact) -> str:
    """The file tool call of ``error`` (its key, ``Read(/repo/a.ex)``) when the error's line
    and location name none of its paths (neither whole nor by file name) and it is at most
    :data:`ERROR_TOOL_CALL_MAX_CHARS` characters, else ``""``: what an error line adds so
    that "File does not exist." says which file."""
    tool = _TOOL_KEY.match(error.command) if error.command else None
    if tool is None or len(error.command) > ERROR_TOOL_CALL_MAX_CHARS:
        return ""
    paths = [p for p in tool.group(1).split(" ") if p]
    said = f"{error.text} {error.where or ''}"
    if not paths or any(p in said or p.rsplit("/", 1)[-1] in said for p in paths):
        return ""
    return error.command


#: Mark after an identifier replaced by a newer one of the same meaning (English).
EARLIER = " " + ENGLISH_FACTS.earlier


def identifier_line(identifier: IdentifierFact, words: FactWords = ENGLISH_FACTS) -> str:
    """``kind: text`` (``port: localhost:8080``), followed by the earlier mark
    (:data:`EARLIER` in English) when a newer identifier replaced it."""
    mark = f" {words.earlier}" if identifier.status == "earlier" else ""
    return f"{identifier.kind}: {identifier.text}{mark}"


def file_items(ledgers: Ledgers, status: str) -> tuple[str, ...]:
    """Paths of one status (``modified``, ``scratch``, ``read``) in first-seen order; for
    ``modified`` and ``read``, plus the plain paths no fact covers (older ledgers, the paths
    an imported summary names as modified). A plain modified path stays modified when a
    fact says it was only read since (the summary's edit came first)."""
    covered = {f.path for f in ledgers.files if f.status != "read"}
    modified = set(ledgers.files_modified)
    facts = [f.path for f in ledgers.files if f.status == status]
    if status == "modified":
        plain = [p for p in ledgers.files_modified if p not in covered]
    elif status == "read":
        covered.update(f.path for f in ledgers.files)
        plain = [p for p in ledgers.files_read if p not in covered and p not in modified]
        facts = [p for p in facts if p not in modified]
    else:
        plain = []
    return tuple(dict.fromkeys([*plain, *facts]))


def decision_line(decision: DecisionFact, words: FactWords = ENGLISH_FACTS) -> str:
    """``WHO: TEXT``: ``user`` or ``agent`` (in the words of ``words``), then the decision
    verbatim."""
    who = words.agent if decision.origin == "assistant" else words.user
    return f"{who}: {decision.text}"


#: A stored done step that ran a command: ``ran `COMMAND` (succeeded)``.
RAN = re.compile(r"^ran `(?P<command>.*)` \(succeeded\)$", re.DOTALL)
#: A stored done step that started a command in the background:
#: ``started `COMMAND` in the background (id ID)``.
STARTED = re.compile(
    r"^started `(?P<command>.*)` in the background \(id (?P<id>[\w-]+)\)$", re.DOTALL
)
#: A stored done step for a tool call the user declined:
#: ``declined by the user: `CALL` (not run)``.
DECLINED = re.compile(r"^declined by the user: `(?P<call>.*)` \(not run\)$", re.DOTALL)
#: A stored done step for a tool call interrupted before it returned:
#: ``interrupted: `CALL` (no result)``.
INTERRUPTED = re.compile(r"^interrupted: `(?P<call>.*)` \(no result\)$", re.DOTALL)
#: A stored done step for a call of a tool that neither runs commands nor touches files:
#: ```CALL` returned: RESULT``.
RETURNED = re.compile(r"^`(?P<call>.*)` returned: (?P<result>.*)$", re.DOTALL)
_STEP = re.compile(
    r"^(?P<verb>created|edited|wrote|deleted|moved|copied|formatted) (?P<rest>.+)$", re.DOTALL
)
_HOW = re.compile(r"^(?P<path>.+) \((?P<how>patched|script .+|inline \w+)\)$", re.DOTALL)


def _how(how: str, words: FactWords) -> str:
    if how == "patched":
        return words.patched
    if how.startswith("script "):
        return words.script.format(name=how.removeprefix("script "))
    return words.inline.format(language=how.removeprefix("inline "))


def done_line(step: str, words: FactWords = ENGLISH_FACTS) -> str:
    """A done step as stored in the ledgers (English, see
    :func:`~ctxengine.summarizers.ledgers.extract_ledgers`) in the words of ``words``: its
    verb, how the file changed, ``ran `COMMAND` (succeeded)``, ``started `COMMAND` in the
    background (id ID)``, ``declined by the user: `CALL` (not run)``, ``interrupted:
    `CALL` (no result)`` and ```CALL` returned: RESULT``; paths, commands, calls and
    results verbatim. A step of another shape is
    returned as it is."""
    ran = RAN.match(step)
    if ran is not None:
        return words.ran.format(command=ran["command"])
    started = STARTED.match(step)
    if started is not None:
        return words.background.format(command=started["command"], id=started["id"])
    declined = DECLINED.match(step)
    if declined is not None:
        return words.declined.format(call=declined["call"])
    interrupted = INTERRUPTED.match(step)
    if interrupted is not None:
        return words.interrupted.format(call=interrupted["call"])
    returned = RETURNED.match(step)
    if returned is not None:
        return words.returned.format(call=returned["call"], result=returned["result"])
    found = _STEP.match(step)
    if found is None:
        return step
    verb, rest = words.verb(found["verb"]), found["rest"]
    if found["verb"] in ("moved", "copied") and " to " in rest:
        path, _, other = rest.rpartition(" to ")
        return words.step_to.format(verb=verb, path=path, other=other)
    how = _HOW.match(rest)
    if how is not None:
        return words.step_how.format(verb=verb, path=how["path"], how=_how(how["how"], words))
    return words.step.format(verb=verb, path=rest)
