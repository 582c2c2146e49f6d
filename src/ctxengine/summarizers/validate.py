"""Checks a summary reply must pass before anything is stored.

Every failed check raises :class:`~ctxengine.errors.SummaryRejected` with one of these
``reason`` values (history is never touched here):

====================  ======================================================================
reason                when
====================  ======================================================================
``length``            the reply was cut by the output limit (finish reason ``length``)
``error``             the reply ended without a finish reason (stream cut, failed reply)
``refused``           the provider filtered the reply (finish reason ``content_filter``)
``tool_calls``        the reply called a tool
``empty``             no text, or only whitespace / wrapper tags
``refusal``           a generic refusal or a request for the conversation instead of a summary
``template_only``     every section is empty, ``(none)`` or the template's own description
``missing_headings``  required headings are absent (the caller nudges once, then rejects)
``inflated``          the summary is at least as large as what it replaces
``over_budget``       the summary is larger than its target size
====================  ======================================================================

Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxengine.errors import SummaryRejected
from ctxengine.providers.base import Completion
from ctxengine.summarizers.prompts import EMPTY_MARK, REQUIRED_HEADINGS, TEMPLATE

_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}\s*(?P<h>.+?)\s*#*|\*\*(?P<b>[^*]+?)\*\*:?)\s*$")
_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.DOTALL | re.IGNORECASE)
_SUMMARY_TAG = re.compile(r"<summary>(.*?)(?:</summary>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```[a-zA-Z]*\n(.*)\n```$", re.DOTALL)
_EMPTY_BODIES = frozenset({"", "none", "(none)", "n/a", "-", "—", "nothing", "(nothing)"})
_REFUSALS = (
    re.compile(
        r"\bplease (?:provide|share|paste|send|supply|include)\b.{0,60}?"
        r"\b(?:conversation|history|transcript|messages|text|content|details)\b",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        r"\bI (?:can(?:no|')t|cannot|am unable to|am not able to|won't|will not)\b.{0,40}?"
        r"\b(?:help|assist|summari[sz]e|comply|do that|provide)\b",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        r"\b(?:no|there (?:is|was) no|I (?:don't|do not) see (?:any|a|the))\s+"
        r"(?:conversation|history|transcript|messages)\b",
        re.IGNORECASE,
    ),
    re.compile(r"^\s*(?:I'm|I am) sorry\b", re.IGNORECASE),
)


def normalize_heading(text: str) -> str:
    """Heading text compared loosely: lower case, ``&`` as ``and``, no markup, single spaces."""
    text = text.strip().strip("*_:").strip().lower().replace("&", "and")
    text = re.sub(r"^\d+[.)]\s*", "", text)
    return " ".join(text.split())


def clean_summary(text: str) -> str:
    """The summary proper: an ``<analysis>`` scratchpad removed, a ``<summary>`` wrapper or a
    surrounding code fence unwrapped, outer whitespace stripped."""
    text = _ANALYSIS.sub("", text)
    tagged = _SUMMARY_TAG.search(text)
    if tagged is not None:
        text = tagged.group(1)
    text = text.strip()
    fenced = _FENCE.match(text)
    return fenced.group(1).strip() if fenced else text


def sections(text: str) -> list[tuple[str, str]]:
    """``(normalized heading, body)`` pairs in order; text before the first heading is
    returned under the heading ``""``."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        m = _HEADING.match(line)
        if m is not None:
            out.append((normalize_heading(m.group("h") or m.group("b") or ""), []))
        else:
            out[-1][1].append(line)
    return [(h, "\n".join(body).strip()) for h, body in out if h or "\n".join(body).strip()]


def missing_headings(text: str, required: Sequence[str] = REQUIRED_HEADINGS) -> tuple[str, ...]:
    """The required headings that ``text`` lacks, in template order."""
    found = {h for h, _ in sections(text)}
    return tuple(h for h in required if normalize_heading(h) not in found)


def _template_bodies() -> frozenset[str]:
    return frozenset(" ".join(body.split()).lower() for _, body in sections(TEMPLATE) if body)


_TEMPLATE_BODIES = _template_bodies()


def _is_empty_body(body: str) -> bool:
    lines = [ln.strip().lstrip("-*• ").strip() for ln in body.splitlines() if ln.strip()]
    flat = " ".join(" ".join(lines).split()).lower()
    if flat in _TEMPLATE_BODIES:
        return True
    return all(ln.lower() in _EMPTY_BODIES or ln.lower() == EMPTY_MARK for ln in lines)


def is_template_only(text: str) -> bool:
    """True when the text has headings and every section is empty, ``(none)`` or the
    template's own description."""
    found = sections(text)
    headed = [(h, b) for h, b in found if h]
    if not headed:
        return False
    return all(_is_empty_body(b) for _, b in headed)


def is_refusal(text: str) -> bool:
    """True for a generic refusal or a request for the material instead of a summary: a
    refusal phrase in the first 600 characters of a reply holding fewer than half of the
    required headings."""
    if len(REQUIRED_HEADINGS) - len(missing_headings(text)) >= len(REQUIRED_HEADINGS) / 2:
        return False
    head = text[:600]
    return any(p.search(head) for p in _REFUSALS)


def check_reply(completion: Completion) -> str:
    """The cleaned summary text of ``completion``, or :class:`SummaryRejected` for a reply
    cut by the output limit, failed, filtered, calling a tool, empty, refusing, or holding
    only the empty template (see the module table). Headings are checked separately
    (:func:`check_headings`) because a missing heading earns one retry."""
    n = len(completion.text)
    if completion.finish_reason == "length":
        raise SummaryRejected("length", f"the output limit cut the summary after {n} characters")
    if completion.finish_reason == "error":
        raise SummaryRejected("error", f"the reply ended without finishing ({n} characters)")
    if completion.finish_reason == "content_filter":
        raise SummaryRejected("refused", "the provider filtered the reply")
    if completion.tool_calls:
        names = ", ".join(sorted({c.name for c in completion.tool_calls}))
        raise SummaryRejected("tool_calls", f"the reply called {names}")
    text = clean_summary(completion.text)
    if not text:
        raise SummaryRejected("empty", "the reply holds no summary text")
    if is_refusal(text):
        raise SummaryRejected("refusal", repr(text[:120]))
    if is_template_only(text):
        raise SummaryRejected("template_only", "every section is empty")
    return text


def check_headings(text: str) -> None:
    """Raise ``SummaryRejected("missing_headings")`` naming the absent headings."""
    missing = missing_headings(text)
    if missing:
        raise SummaryRejected("missing_headings", ", ".join(missing))


def check_size(summary_tokens: int, *, replaced_tokens: int, target_tokens: int) -> None:
    """Reject a summary that is not smaller than what it replaces (``inflated``) or larger
    than its target (``over_budget``). All arguments are tokens."""
    if summary_tokens >= replaced_tokens:
        raise SummaryRejected(
            "inflated",
            f"summary {summary_tokens} tokens, replaced history {replaced_tokens} tokens",
            tokens_before=replaced_tokens,
            tokens_after=summary_tokens,
        )
    if summary_tokens > target_tokens:
        raise SummaryRejected(
            "over_budget",
            f"summary {summary_tokens} tokens, target {target_tokens} tokens",
            tokens_after=summary_tokens,
        )


__all__ = [
    "check_headings",
    "check_reply",
    "check_size",
    "clean_summary",
    "is_refusal",
    "is_template_only",
    "missing_headings",
    "normalize_heading",
    "sections",
]
