"""Reading a rendered request the way the checkers need it: its text, the continuation state
inside it, the state's sections, and the primitive exact matches (tokens, lines, co-occurring
keys, paths).

Everything here is a pure function of strings (or of a rendered request body).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

import orjson

from ctxengine.model import Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from ctxengine.projection.frame import STATE_TAG
from ctxengine.projection.wording import WORDINGS

#: Keys of a rendered request whose string values are protocol, not content.
STRUCTURAL_KEYS: frozenset[str] = frozenset(
    {"role", "type", "id", "tool_call_id", "tool_use_id", "cache_control", "model"}
)
#: Top-level keys of a rendered request that hold no conversation content.
SKIPPED_TOP_KEYS: frozenset[str] = frozenset({"tools", "tool_choice", "max_tokens"})

_OPEN = f"<{STATE_TAG}>"
_CLOSE = f"</{STATE_TAG}>"


def _leaves(value: Any, key: str | None, depth: int) -> Iterator[str]:
    if isinstance(value, str):
        if key in STRUCTURAL_KEYS:
            return
        if key in ("arguments", "input") and value[:1] == "{":
            # OpenAI function arguments: a JSON string; its values are what the model reads.
            try:
                decoded = orjson.loads(value)
            except orjson.JSONDecodeError:
                yield value
                return
            yield from _leaves(decoded, None, depth + 1)
            return
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            if depth == 0 and k in SKIPPED_TOP_KEYS:
                continue
            yield from _leaves(v, str(k), depth + 1)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(v, key, depth + 1)


def payload_texts(payload: Mapping[str, Any]) -> tuple[str, ...]:
    """The content strings of a rendered request body, in order: message text, tool-call
    argument values (decoded from their JSON string), tool results, the system prompt.
    Protocol strings (roles, types, ids) and the tool declarations are left out."""
    return tuple(_leaves(payload, None, 0))


def state_of(texts: Iterable[str]) -> str:
    """The continuation-state text inside a request's content strings: what the
    continuation-state message holds between its ``<continuation-state>`` tags (one opening
    and one closing tag whatever the state quotes; see :mod:`ctxengine.projection.frame`),
    or ``""`` when the request holds none."""
    for text in texts:
        start = text.find(_OPEN)
        if start < 0:
            continue
        body = text[start + len(_OPEN) :]
        end = body.rfind(_CLOSE)
        body = body[:end] if end >= 0 else body
        return body.removeprefix("\n").removesuffix("\n")
    return ""


def collapse(text: str) -> str:
    """``text`` with every run of whitespace replaced by one space, stripped."""
    return " ".join(text.split())


def has_line(collapsed_text: str, line: str) -> bool:
    """True when ``line`` (whitespace collapsed) is a substring of ``collapsed_text`` (already
    collapsed with :func:`collapse`)."""
    needle = collapse(line)
    return bool(needle) and needle in collapsed_text


#: Characters that continue an identifier (ASCII: a CJK character next to an id is a
#: boundary, as in "端口是5433").
_ID_CHARS = "A-Za-z0-9_"


@lru_cache(maxsize=4096)
def _token_pattern(token: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?<![{_ID_CHARS}])(?<![{_ID_CHARS}][-.]){re.escape(token)}"
        rf"(?![{_ID_CHARS}])(?![-.][{_ID_CHARS}])"
    )


def has_token(text: str, token: str) -> bool:
    """True when ``token`` occurs in ``text`` as a whole token: not preceded or followed by
    an ASCII letter, digit or underscore, nor by ``-``/``.`` joined to one (so ``PAY-4312``
    is not found in ``PAY-43120`` nor ``5433`` in ``5433.1``). Case-sensitive."""
    return bool(token) and _token_pattern(token).search(text) is not None


def cooccur(text: str, keys: Iterable[str], window: int) -> bool:
    """True when every key occurs in ``text`` (case-insensitive, whitespace collapsed on
    both sides) within one span of at most ``window`` characters (from the start of the
    first key occurrence to the end of the last).

    The shortest span covering all keys is found exactly (a sliding window over every
    occurrence of every key)."""
    needles = sorted({collapse(k).lower() for k in keys if k.strip()})
    if not needles:
        return False
    hay = collapse(text).lower()
    occ: list[tuple[int, int, int]] = []  # (start, end, key index)
    for i, needle in enumerate(needles):
        pos = hay.find(needle)
        if pos < 0:
            return False
        while pos >= 0:
            occ.append((pos, pos + len(needle), i))
            pos = hay.find(needle, pos + 1)
    occ.sort()
    counts = [0] * len(needles)
    covered = 0
    left = 0
    # ends of the occurrences inside the window: the span ends at the largest of them
    for right in range(len(occ)):
        k = occ[right][2]
        if counts[k] == 0:
            covered += 1
        counts[k] += 1
        while covered == len(needles):
            span_end = max(e for _, e, _ in occ[left : right + 1])
            if span_end - occ[left][0] <= window:
                return True
            kl = occ[left][2]
            counts[kl] -= 1
            if counts[kl] == 0:
                covered -= 1
            left += 1
    return False


# ---------------------------------------------------------------------------- sections

_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_LABEL = re.compile(r"^\s{0,3}([A-Za-z][\w /()'-]{1,60}):\s*$")
_TAG = re.compile(r"^\s*<([A-Za-z][\w-]{0,40})>\s*$")


def _norm(heading: str) -> str:
    return collapse(heading.replace("_", " ").replace("-", " ")).lower()


def _is_modified_heading(heading: str) -> bool:
    h = _norm(heading)
    if h in _KNOWN_MODIFIED:
        return True
    return bool(_MODIFIED_HEADING.search(h)) and not _NOT_MODIFIED_HEADING.search(h)


def is_done_heading(heading: str) -> bool:
    """True for a section listing what was done: ctxengine's done and turn-context headings
    in any of its languages, or a heading naming "done", "completed" or "progress"."""
    return _norm(heading) in _KNOWN_DONE or bool(_DONE_HEADING.search(heading))


def _is_next_heading(heading: str) -> bool:
    return _norm(heading) in _KNOWN_NEXT or bool(_NEXT_HEADING.search(heading))


def sections(state: str) -> list[tuple[str, str]]:
    """The ``(heading, body)`` sections of a continuation state. A heading is a Markdown
    heading line (``## Files modified``), a label line ending with a colon
    (``Files modified:``) or an opening tag alone on its line (``<files_modified>``); text
    before the first heading has the heading ``""``."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in state.splitlines():
        m = _MD_HEADING.match(line) or _LABEL.match(line) or _TAG.match(line)
        if m is not None:
            out.append((m.group(1).replace("_", " ").replace("-", " ").strip(), []))
        else:
            out[-1][1].append(line)
    return [(h, "\n".join(body)) for h, body in out if h or any(s.strip() for s in body)]


#: The modified-files and next-step headings ctxengine writes, in every language it writes.
_KNOWN_MODIFIED = frozenset(_norm(w.headings.files_modified) for w in WORDINGS.values())
_KNOWN_NEXT = frozenset(_norm(w.headings.next_step) for w in WORDINGS.values())
_KNOWN_HISTORY = frozenset(_norm(w.headings.user_messages) for w in WORDINGS.values())
_KNOWN_DONE = frozenset(
    _norm(h) for w in WORDINGS.values() for h in (w.headings.done, w.headings.turn_context)
)
_DONE_HEADING = re.compile(r"\bdone\b|\bcompleted\b|\bprogress\b", re.IGNORECASE)
#: Headings of a section that quotes the user's messages verbatim (history, not facts).
_HISTORY_HEADING = re.compile(r"user messages|messages from the user", re.IGNORECASE)
#: Headings other writers use (English): a section about changed files, not reads.
_MODIFIED_HEADING = re.compile(r"modif|chang|edit|writ|wrote|creat|touched", re.IGNORECASE)
_NOT_MODIFIED_HEADING = re.compile(
    r"\bread\b|not modified|unchanged|untouched|viewed|inspected", re.IGNORECASE
)
_NEXT_HEADING = re.compile(r"\bnext\b|\bpending\b", re.IGNORECASE)

#: A path-like token: an optional root (``/``, ``./``, ``~/``), directories, and a file name
#: with an extension (``src/app/config.py``, ``/tmp/fix.py``, ``config.py.bak``).
_PATH = re.compile(r"(?<![\w/.~-])(?:~/|\.{1,2}/|/)?(?:[\w.@+-]+/)*[\w@+-][\w.@+-]*\.[A-Za-z0-9]+")
#: ``dir/: a.py, b.py`` — paths grouped by directory.
_GROUPED = re.compile(r"^\s*(?:[-*•]\s+)?`?([^\s:`]+/)`?:\s+(.+)$")


def normalize_path(path: str, roots: Iterable[str] = ()) -> str:
    """``path`` relative to the first of ``roots`` it starts with, without a leading ``./``
    and surrounding backquotes or quotes."""
    p = path.strip().strip("`'\"")
    for root in roots:
        r = root.rstrip("/") + "/"
        if p.startswith(r):
            p = p[len(r) :]
            break
    while p.startswith("./"):
        p = p[2:]
    return p


def paths_in(text: str, roots: Iterable[str] = ()) -> list[str]:
    """Every path-like token of ``text``, normalised with :func:`normalize_path`, in order;
    a line grouped by directory (``src/app/: a.py, b.py``) gives ``src/app/a.py`` and
    ``src/app/b.py``."""
    roots = tuple(roots)
    found: list[str] = []
    for line in text.splitlines():
        g = _GROUPED.match(line)
        if g is not None:
            directory = g.group(1)
            for name in re.split(r",\s*", g.group(2)):
                m = _PATH.search(name)
                if m is not None:
                    found.append(normalize_path(directory + m.group(0), roots))
            continue
        found.extend(normalize_path(m.group(0), roots) for m in _PATH.finditer(line))
    return found


def is_history_heading(heading: str) -> bool:
    """True for the heading of a section quoting the user's messages verbatim (ctxengine's
    "User messages" heading in any of its languages, or one naming user messages)."""
    return _norm(heading) in _KNOWN_HISTORY or bool(_HISTORY_HEADING.search(heading))


def modified_paths(state: str, roots: Iterable[str] = ()) -> frozenset[str]:
    """Paths the continuation state shows as modified: those under the modified-files heading
    ctxengine writes (in any of its languages), or under a heading that speaks of changes
    (modified, changed, edited, written, created) and not of reads."""
    out: set[str] = set()
    for heading, body in sections(state):
        if _is_modified_heading(heading):
            out.update(paths_in(body, roots))
    return frozenset(out)


def next_step_of(state: str) -> str | None:
    """The body of the continuation state's next-step section (ctxengine's next-step heading
    in any of its languages, or a heading naming "next" or "pending"), stripped; ``None``
    when the state has none."""
    for heading, body in sections(state):
        if _is_next_heading(heading):
            return body.strip()
    return None


#: Replies that acknowledge without asking for anything (a bare "continue").
ACKNOWLEDGEMENTS: frozenset[str] = frozenset(
    {
        "continue",
        "go on",
        "go ahead",
        "proceed",
        "ok",
        "okay",
        "yes",
        "y",
        "sure",
        "keep going",
        "carry on",
        "next",
        "继续",
        "好的",
    }
)


def is_acknowledgement(text: str) -> bool:
    """True when ``text`` is only acknowledgements (``"continue"``, ``"Go on."``,
    ``"ok, keep going"``, ``"继续"``), ignoring case, quotes, list bullets and punctuation."""
    pieces = re.split(r"[,;，。！!.]+", collapse(text).lower().strip("-*• \"'`"))
    words = [p.strip(" \"'`") for p in pieces if p.strip(" \"'`")]
    return bool(words) and all(w in ACKNOWLEDGEMENTS for w in words)


def message_texts(message: Message) -> tuple[str, ...]:
    """The content strings of one message as a rendered request would carry them: text,
    reasoning, tool-call argument values (decoded from JSON) and tool-result text."""
    out: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart | ReasoningPart):
            out.append(part.text)
        elif isinstance(part, ToolCallPart):
            out.extend(_leaves({"arguments": part.arguments}, None, 1))
        elif isinstance(part, ToolResultPart):
            out.append(part.text)
    return tuple(out)
