"""Typed ledger facts: errors, files, identifiers, user rules and decisions, each with a status
(where it has one), the index of the message it came from and its exact text, and how two
ledgers' facts combine.

``source`` is the index of the message the fact was read from: the position in the range given
to the extractor plus the range's ``start`` (0 unless the caller knows where the range begins
in its session). A fact carried from an earlier compaction keeps the index it had then.

Combining (older, newer) never loses a fact; it only changes statuses forward:

- errors: an open error is *fixed* once the newer ledgers ran its command, or its test,
  successfully, or retried its command (``passed``), or ran clean a command that reported
  its line (:func:`lines_fixed_by`, or a newer fact with its line fixed); a newer fact with
  the same command,
  test and text replaces it; the messages kept verbatim after a cut settle the errors before
  it the same way without adding their own (:func:`settle_errors`);
- files: ``modified``/``scratch`` outrank ``read``; a file the session created and a newer
  range deleted becomes ``scratch``;
- identifiers: one per (kind, key), the newest text and context win (stated by the user or
  the agent when any occurrence was), first-seen order kept;
  a port is marked *earlier* once a newer port of another number is stated for the same
  subject, and an identifier a superseded rule names is marked *earlier* when the rule that
  replaced it names another of the same kind instead (``Use port 8000.`` then ``from now on
  use port 9000``);
- rules: an older active rule is *superseded* by a newer one on the same topic (same topic
  words with a different text; a newer rule that says it replaces earlier ones and shares
  more than half of the older rule's topic words, or whose topic words are more than half
  shared with it; or a newer rule that names what it replaces, ``instead of 8000``,
  ``forget the tabs rule``, when the older rule holds those words);
- decisions: one per text, the newer one's source, first-seen order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

ErrorStatus: TypeAlias = Literal["open", "fixed"]
FileStatus: TypeAlias = Literal["modified", "scratch", "read"]
RuleStatus: TypeAlias = Literal["active", "superseded"]
IdentifierKind: TypeAlias = Literal["ticket", "commit", "port", "url", "env", "version", "symbol"]
DecisionOrigin: TypeAlias = Literal["user", "assistant"]
IdentifierStatus: TypeAlias = Literal["current", "earlier"]


@dataclass(frozen=True, slots=True)
class ErrorFact:
    """One failure, as the output stated it.

    Attributes:
        text: the line that says what failed, verbatim (an exception line, a compiler
            ``error:`` line, a ``FAILED tests/x.py::t - …`` line, ``make: *** … Error 2`` …).
        status: ``open``, or ``fixed`` once the same command or the same test passed later.
        source: index of the message holding the failed tool result.
        command: the failed shell command, normalised (``command_key``), or a file tool's
            call (``"Edit(/repo/a.py)"``); a later success with the same key fixes the error.
        test: the failed test's id (``tests/x.py::test_a``, ``TestParse``), or ``""``.
        where: the last traceback frame naming project code, or the compiler's location line,
            verbatim; ``""`` when there is none.
        runner: the test runner of a failed test (``pytest``, ``unittest``, ``jest``,
            ``go``, ``cargo``): a later whole-suite pass of that runner fixes it.
        fixed_by: index of the message whose run fixed it, when known.
    """

    text: str
    status: ErrorStatus
    source: int
    command: str = ""
    test: str = ""
    where: str = ""
    runner: str = ""
    fixed_by: int | None = None

    def fixed_by_any(self, passed: Iterable[str]) -> bool:
        """True when one of the ``passed`` keys fixes this error: ``cmd:COMMAND`` of its
        command, ``test:ID`` of its test or of a file, directory or class containing it, or
        ``suite:RUNNER`` (a whole-suite pass) of its runner, or ``rerun:COMMAND`` (a later
        failing run of its command that did not report it again) or ``retry:COMMAND`` (a
        later run that retried its command asking no more of it and succeeded:
        :func:`~ctxengine.summarizers.runs.narrows`), these two for errors naming no test."""
        for key in passed:
            kind, _, value = key.partition(":")
            if kind == "cmd" and self.command and value == self.command:
                return True
            if kind == "suite" and self.runner and value == self.runner:
                return True
            if (
                kind in ("rerun", "retry")
                and self.command
                and not self.test
                and value == self.command
            ):
                return True
            if (
                kind == "test"
                and self.test
                and value
                and (
                    self.test == value
                    or self.test.startswith((value + "::", value + "/", value + "."))
                )
            ):
                return True
        return False


@dataclass(frozen=True, slots=True)
class FileFact:
    """One file the session touched, under one normalised path.

    Attributes:
        path: absolute when the session's working directory is known (relative paths joined
            to it), else as written.
        status: ``modified``, ``scratch`` (backups, temporary files, helper scripts the
            session wrote and ran, files created then deleted) or ``read``.
        source: index of the message of the latest change (or first read).
        how: the latest change: ``edited``, ``created``, ``wrote``, ``deleted``, ``moved``,
            ``copied``, ``formatted``, ``patched``, ``script NAME`` (written by a script the
            session ran), ``diff`` (seen in ``git diff``/``git status`` output), ``read``.
        created: the session created the file (it did not exist before, as far as seen).
    """

    path: str
    status: FileStatus
    source: int
    how: str = ""
    created: bool = False


@dataclass(frozen=True, slots=True)
class IdentifierFact:
    """An identifier worth keeping exactly: a ticket id, a commit hash, a port, a URL, an
    environment variable name, a version, a recurring function or class name.

    Attributes:
        text: as written (``ABC-123``, ``#42``, ``7f3a9c2``, ``localhost:8080``,
            ``port 5432``, ``https://…``, ``DATABASE_URL``, ``Python 3.11``, ``parse_args``).
        kind: what it is.
        key: what makes two the same (the port number, the versioned thing's name, the
            lower-cased hash …): the newer of two with one key wins.
        source: index of the newest message it appeared in.
        context: the newest line it appeared in, verbatim (capped).
        subject: for a port, what it is the port of: the content words of the clause that
            states it (lower case, sorted, space-separated: ``"database postgresql"`` for
            ``DATABASE_URL=postgresql://app@localhost:5432/app``); ``""`` when unknown.
        status: ``current``, or ``earlier`` once a newer port of another number has a
            subject sharing a word with this one (:func:`mark_earlier`).
        stated: the user or the agent wrote it in their own words (not only a tool's
            output), in any of the messages it appeared in.
    """

    text: str
    kind: IdentifierKind
    key: str
    source: int
    context: str = ""
    subject: str = ""
    status: IdentifierStatus = "current"
    stated: bool = False


@dataclass(frozen=True, slots=True)
class RuleFact:
    """A rule the user stated.

    Attributes:
        text: the sentence, verbatim.
        status: ``active``, or ``superseded`` by a later rule on the same topic.
        source: index of the user message.
        topic: the rule's content words (lower case, sorted, space-separated), without rule
            words, values and numbers: rules with one topic replace each other.
        replaces: the rule says it replaces earlier ones (``from now on``, ``instead``, a
            permission such as ``you can … now``).
        superseded_by: the text of the rule that replaced it.
        revokes: the words of what the rule names as replaced (lower case, space-separated:
            ``"8000"`` for ``use port 9000 instead of 8000``, ``"tabs"`` for ``forget the tabs
            rule``); ``""`` when it names nothing.
        head: the topic of the clause that states the rule, without the reason or the label
            around it (``"python target"`` for ``Two rules: always target Python 3.8, the
            image runs it``); ``""`` when unknown (older ledgers).
    """

    text: str
    status: RuleStatus
    source: int
    topic: str = ""
    replaces: bool = False
    superseded_by: str = ""
    revokes: str = ""
    head: str = ""


@dataclass(frozen=True, slots=True)
class DecisionFact:
    """A choice the user or the agent stated (``we'll use X instead of Y because Z``).

    Attributes:
        text: the sentence, verbatim (capped), followed by the next sentence when that one
            gives the reason.
        source: index of the newest message that stated it.
        origin: who stated it: ``user`` or ``assistant``.
    """

    text: str
    source: int
    origin: DecisionOrigin = "user"


def _by(items: Iterable[Any], key: Any) -> dict[Any, int]:
    return {key(item): i for i, item in enumerate(items)}


def lines_fixed_by(errors: Iterable[ErrorFact], passed: Iterable[str]) -> frozenset[str]:
    """The lines (``text``) of the ``errors`` naming no test whose command one of the
    successes ``passed`` ran again (:meth:`ErrorFact.fixed_by_any`; ``rerun:`` keys, runs
    that failed again, left out), whatever their status: the same line reported by another
    command before these successes is fixed too (``npx tsc`` and ``npm run check`` report
    one TS error, then ``npm run check`` passes)."""
    succeeded = tuple(k for k in passed if not k.startswith("rerun:"))
    if not succeeded:
        return frozenset()
    return frozenset(e.text for e in errors if not e.test and e.fixed_by_any(succeeded))


def _fixed_lines(errors: Iterable[ErrorFact]) -> frozenset[str]:
    return frozenset(e.text for e in errors if e.status == "fixed" and not e.test)


def merge_errors(
    older: Sequence[ErrorFact], newer: Sequence[ErrorFact], passed: Iterable[str]
) -> tuple[ErrorFact, ...]:
    """``older`` with open errors fixed by ``passed`` (:meth:`ErrorFact.fixed_by_any`) or
    naming no test and holding a line that a command ``passed`` ran clean had reported
    (:func:`lines_fixed_by`) or that a fixed fact of ``newer`` holds, then ``newer``; a newer
    fact with the same (command, test, text) as an older one takes its place."""
    done = tuple(passed)
    gone = lines_fixed_by(older, done) | _fixed_lines(newer)
    out = [
        replace(e, status="fixed")
        if e.status == "open" and (e.fixed_by_any(done) or (not e.test and e.text in gone))
        else e
        for e in older
    ]
    index = _by(out, lambda e: (e.command, e.test, e.text))
    for fact in newer:
        at = index.get((fact.command, fact.test, fact.text))
        if at is None:
            index[(fact.command, fact.test, fact.text)] = len(out)
            out.append(fact)
        else:
            out[at] = fact
    return tuple(out)


def settle_errors(
    errors: Sequence[ErrorFact], later: Sequence[ErrorFact], passed: Iterable[str]
) -> tuple[ErrorFact, ...]:
    """``errors`` (the facts of the history before a cut) with their statuses as the
    messages after the cut leave them, the same facts in the same order, none added: an open
    error that ``later`` (the error facts those messages recorded, with their final
    statuses) records again with the same (command, test, text) takes that fact's status
    (failed again and still open, or fixed since); another open one is fixed when one of
    ``passed`` (the keys of those messages' runs) fixes it (:meth:`ErrorFact.fixed_by_any`),
    or when it names no test and its line is one a command ``passed`` ran clean had reported
    (:func:`lines_fixed_by`) or one a fixed fact of ``later`` holds.
    What :func:`merge_errors` does to the older side, without listing the newer facts."""
    done = tuple(passed)
    gone = lines_fixed_by(errors, done) | _fixed_lines(later)
    again = {(e.command, e.test, e.text): e for e in later}
    out: list[ErrorFact] = []
    for e in errors:
        if e.status == "open":
            found = again.get((e.command, e.test, e.text))
            if found is not None:
                if found.status == "fixed":
                    e = replace(e, status="fixed", fixed_by=found.fixed_by)
            elif e.fixed_by_any(done) or (not e.test and e.text in gone):
                e = replace(e, status="fixed")
        out.append(e)
    return tuple(out)


def _merge_file(old: FileFact, new: FileFact) -> FileFact:
    if new.status == "read":
        return old
    if old.status == "read":
        return new
    if new.how == "deleted" and old.created:
        return replace(new, status="scratch", created=True)
    return replace(new, created=old.created or new.created)


def merge_files(older: Sequence[FileFact], newer: Sequence[FileFact]) -> tuple[FileFact, ...]:
    """One fact per path, in first-seen order, combined by ``_merge_file``."""
    out = list(older)
    index = _by(out, lambda f: f.path)
    for fact in newer:
        at = index.get(fact.path)
        if at is None:
            index[fact.path] = len(out)
            out.append(fact)
        else:
            out[at] = _merge_file(out[at], fact)
    return tuple(out)


def mark_earlier(
    facts: Sequence[IdentifierFact], rules: Sequence[RuleFact] = ()
) -> tuple[IdentifierFact, ...]:
    """``facts`` with each identifier marked ``earlier`` when a newer one replaced it,
    ``current`` otherwise: the newest meaning wins.

    - a port, when a newer port (a higher source) of another number has a subject sharing a
      word with its own (``port 5433`` of *the integration database* after
      ``localhost:5432`` of ``DATABASE_URL``);
    - an identifier a superseded rule of ``rules`` names (its text, or a port's number),
      when the rule that replaced it (``superseded_by``) names another of the same kind
      (``Use port 8000.`` superseded by ``from now on use port 9000``: ``port 8000`` is
      earlier; :func:`_replaced_by_rules`)."""
    ports = [(f, set(f.subject.split())) for f in facts if f.kind == "port" and f.subject]
    replaced = _replaced_by_rules(facts, rules)
    out: list[IdentifierFact] = []
    for fact in facts:
        status: IdentifierStatus = "current"
        if (fact.kind, fact.key) in replaced:
            status = "earlier"
        elif fact.kind == "port" and fact.subject:
            words = set(fact.subject.split())
            if any(n.key != fact.key and n.source > fact.source and w & words for n, w in ports):
                status = "earlier"
        out.append(fact if fact.status == status else replace(fact, status=status))
    return tuple(out)


def _names(text: str, fact: IdentifierFact) -> bool:
    """``text`` names ``fact``: holds its text, or for a port its number alone."""
    if fact.text in text:
        return True
    return fact.kind == "port" and re.search(rf"(?<![\d.:]){fact.key}(?!\d)", text) is not None


def _replaced_by_rules(
    facts: Sequence[IdentifierFact], rules: Sequence[RuleFact]
) -> set[tuple[str, str]]:
    """(kind, key) of the identifiers a superseded rule names and the rule that replaced it
    replaces (see :func:`mark_earlier`): when the newer rule names an identifier of a kind
    the older one does not name, those of that kind the older rule names and the newer one
    does not are replaced, or the older rule's only one of that kind."""
    out: set[tuple[str, str]] = set()
    for rule in rules:
        if rule.status != "superseded" or not rule.superseded_by:
            continue
        for kind in {f.kind for f in facts}:
            same = [f for f in facts if f.kind == kind]
            old = {f.key for f in same if _names(rule.text, f)}
            new = {f.key for f in same if _names(rule.superseded_by, f)}
            if not old or not new - old:
                continue
            gone = old - new or (old if len(old) == 1 else set())
            out.update((kind, key) for key in gone)
    return out


def merge_identifiers(
    older: Sequence[IdentifierFact], newer: Sequence[IdentifierFact]
) -> tuple[IdentifierFact, ...]:
    """One fact per (kind, key), first-seen order, the newer one's text and context (stated
    when either was); ports replaced by newer ones marked ``earlier`` (:func:`mark_earlier`)."""
    out = list(older)
    index = _by(out, lambda f: (f.kind, f.key))
    for fact in newer:
        at = index.get((fact.kind, fact.key))
        if at is None:
            index[(fact.kind, fact.key)] = len(out)
            out.append(fact)
        else:
            stated = fact.stated or out[at].stated
            out[at] = fact if fact.stated == stated else replace(fact, stated=stated)
    return mark_earlier(out)


def _words(text: str) -> set[str]:
    """Lower-case words of ``text`` (letters, digits, ``. + # / -`` inside), and the
    character pairs of its CJK runs (CJK text has no spaces between words)."""
    out = {w.strip(".-/") for w in re.findall(r"[^\W_][\w.+#/'-]*", text.casefold())}
    for run in re.findall(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+", text):
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return {w for w in out if w}


def supersedes(newer: RuleFact, older: RuleFact) -> bool:
    """True when ``newer`` replaces ``older`` (a different text):

    - the same non-empty topic;
    - ``newer`` names what it replaces (``revokes``) and every one of those words is in
      ``older`` (when they are only numbers, the two rules share a topic word too:
      ``instead of 8000`` replaces ``Use port 8000.``, not ``Keep responses under 8000 ms``);
    - ``newer`` says it replaces earlier rules and more than half of the topic words of
      either rule are shared, in the whole sentences or in the clauses that state them
      (``head``: ``Switch to Python 3.11 from here on: prod moved to the new image`` replaces
      ``Always target Python 3.8, the prod image still runs it``; ``You can add new
      dependencies now`` replaces ``Don't add new dependencies without asking me first``)."""
    if not newer.topic or not older.topic or newer.text == older.text:
        return False
    if newer.topic == older.topic:
        return True
    old_words = set(older.topic.split())
    shared = len(old_words & set(newer.topic.split()))
    if newer.revokes:
        named = set(newer.revokes.split())
        words_only = any(not w.replace(".", "").isdigit() for w in named)
        if named and named <= _words(older.text) and (words_only or shared):
            return True
    if not newer.replaces:
        return False
    pairs = [(older.topic, newer.topic), (older.head, newer.head)]
    return any(_mostly_shared(set(a.split()), set(b.split())) for a, b in pairs if a and b)


def _mostly_shared(old: set[str], new: set[str]) -> bool:
    """More than half of the words of either set are in both."""
    shared = len(old & new)
    return shared > 0 and (2 * shared > len(old) or 2 * shared > len(new))


def merge_rules(older: Sequence[RuleFact], newer: Sequence[RuleFact]) -> tuple[RuleFact, ...]:
    """``older`` then the new texts of ``newer``; each newer active rule marks the earlier
    active rules it replaces (:func:`supersedes`) as superseded."""
    out = list(older)
    seen = {r.text for r in out}
    for rule in newer:
        if rule.text in seen:
            continue
        if rule.status == "active":
            out = [
                replace(r, status="superseded", superseded_by=rule.text)
                if r.status == "active" and supersedes(rule, r)
                else r
                for r in out
            ]
        seen.add(rule.text)
        out.append(rule)
    return tuple(out)


def merge_decisions(
    older: Sequence[DecisionFact], newer: Sequence[DecisionFact]
) -> tuple[DecisionFact, ...]:
    """One fact per text, first-seen order, the newer one's source and origin."""
    out = list(older)
    index = _by(out, lambda d: d.text)
    for fact in newer:
        at = index.get(fact.text)
        if at is None:
            index[fact.text] = len(out)
            out.append(fact)
        else:
            out[at] = fact
    return tuple(out)


def _rebuild(cls: type[Any], items: Iterable[Mapping[str, Any]]) -> tuple[Any, ...]:
    return tuple(cls(**dict(item)) for item in items)


def facts_from_plain(raw: Mapping[str, Any]) -> dict[str, tuple[Any, ...]]:
    """The typed fact fields of a stored ledger dict, rebuilt (absent fields are left out)."""
    types: dict[str, type[Any]] = {
        "error_facts": ErrorFact,
        "files": FileFact,
        "identifiers": IdentifierFact,
        "rules": RuleFact,
        "decisions": DecisionFact,
    }
    return {name: _rebuild(cls, raw[name]) for name, cls in types.items() if name in raw}
