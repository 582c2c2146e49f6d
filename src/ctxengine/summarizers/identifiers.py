"""Identifiers kept exactly: ticket ids, commit hashes, ports, URLs, environment variable
names, versions and recurring function or class names, from user messages, the agent's own
text and tool results.

Precision over recall. User messages are read in full; the agent's text (its stated findings:
``the bug is in fetch_user_v2``, ``port 5433``, ``commit 9f3c2ab``) like a user message, except
that ``$NAME`` is not read as a variable there and a URL counts only when local; tool results
only where an identifier's kind is reliable there:

- ticket ids (``ABC-123``; ``#123`` after *issue*, *PR*, *fixes* … or as ``(#123)``, at most
  five digits and no leading zero there, so that no colour such as ``(#008899)`` counts) in
  user messages and in the output of git and issue trackers (``gh``, ``glab``, ``jira``,
  ``bd``, ``linear``), where ``(#123)`` (the number of the pull request that merged a
  commit, on every line of a squash-merged history) does not count;
- ports (``localhost:8080``, ``10.0.0.2:5432``, ``https://host:8443``, ``port 5432``,
  ``--port 3000``, ``PORT=8000``; ``puerto``, ``porta``, ``порт``, ``端口``, ``ポート``,
  ``포트`` in the other languages of the state) anywhere, each with its subject (what it serves:
  :func:`port_subject`); the newest meaning wins: a port of another number stated later
  for the same subject marks the older one ``earlier``;
- commit hashes (7–40 hex digits with a digit and a letter) in a user sentence that speaks of
  git (commit, sha, revert, checkout …), or in git's own output: ``[main 1a2b3c4]`` after a
  commit, the newest ``commit …`` of ``git log``/``git show``, ``a..b`` of a push or pull, a
  ``git rev-parse`` line;
- URLs from user messages, and local ones (``localhost``, ``127.0.0.1``, ``0.0.0.0``) or those
  in git output from tool results;
- environment variable names written as ``export NAME=``, ``os.environ[…]``/``os.getenv(…)``,
  ``process.env.NAME``, ``System.getenv("NAME")``, ``env::var("NAME")``, and in user messages
  also ``$NAME``/``${NAME}`` (not the shell's own: ``$HOME`` …);
- versions: ``v1.2.3`` and a known runtime or tool followed by a version (``Python 3.11``,
  ``node 20.1``), from user messages and from ``--version``/``git tag`` output; the newest
  version of one runtime replaces the older (key: the runtime's name);
- names: CamelCase with two or more humps or snake_case with an underscore, that a user
  message writes as code (in backticks, called ``name(``, or as an attribute ``.name``) or a
  tool result defines (``def``/``class``/``function``/``fn``/``func``), and that appear in
  at least :data:`SYMBOL_MIN_MESSAGES` messages; the :data:`SYMBOLS_MAX` in the most
  messages are kept. A name the agent states in a finding (a sentence of its text with a
  finding word: *found*, *bug*, *cause*, *culprit*, *problem* …, :data:`_FINDING`), with
  or without backticks and in lowerCamelCase too (``fetchUserV2``), is kept once stated,
  up to :data:`FINDING_SYMBOLS_MAX` per range (the newest).

Lines that look like encoded data (a 40+ character base64 run, hex dumps, request ids) are
skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from ctxengine.model import IdentifierFact
from ctxengine.model.facts import IdentifierKind, mark_earlier

#: Messages (user messages and tool results) a name must appear in to count as recurring.
SYMBOL_MIN_MESSAGES = 3
#: Most names kept from one range (those in the most messages first).
SYMBOLS_MAX = 20
#: Most names kept from the agent's findings in one range (the newest).
FINDING_SYMBOLS_MAX = 8
#: Longest context line kept, in characters.
CONTEXT_MAX_CHARS = 160
#: Characters of one tool result scanned (identifiers are read from its head).
RESULT_SCAN_CHARS = 50_000


#: Texts whose identifiers :func:`_read` and :func:`_named_in_findings` remember (each
#: compaction reads its range's messages, a replay comparing policies reads the same
#: messages once per policy).
IDENTIFIERS_CACHE = 8192


@dataclass(frozen=True, slots=True)
class Source:
    """One text identifiers are read from.

    Attributes:
        index: the message's index (becomes ``IdentifierFact.source``).
        origin: ``user``, ``assistant`` (the agent's text) or ``result``.
        text: the text.
        command: the shell command whose output it is (``""`` for user text and other
            tools).
    """

    index: int
    origin: str
    text: str
    command: str = ""


_NOISE_RUN = r"[A-Za-z0-9+/=_-]{40,}"
_NOISE_HEX = r"(?:\b[0-9a-f]{8,}\b.*){3}"
_NOISE_REQ = r"\breq(?:uest)?[_-]?id\b|\breq_[A-Za-z0-9]{10}"
_NOISE_INDEX = r"^index [0-9a-f]+\.\.[0-9a-f]+"
_NOISE = re.compile(f"{_NOISE_RUN}|{_NOISE_HEX}|{_NOISE_REQ}|{_NOISE_INDEX}", re.IGNORECASE)
#: The parts of :data:`_NOISE`, each searched only where it can match (:func:`_noisy`).
_NOISE_PARTS = tuple(
    re.compile(part, re.IGNORECASE) for part in (_NOISE_RUN, _NOISE_HEX, _NOISE_REQ, _NOISE_INDEX)
)
_TICKET = re.compile(r"(?<![\w/.#-])([A-Z][A-Z0-9]{1,9}-\d{1,6})(?![\w-])")
_NOT_TICKETS = frozenset(
    {"UTF", "SHA", "ISO", "MD", "AES", "RSA", "TLS", "SSL", "HTTP", "TCP", "UDP", "GPT", "IPV",
     "RFC", "PEP", "ES", "CP", "WIN", "LATIN", "X"}
)  # fmt: skip
_ISSUE = re.compile(
    r"\b(?:issues?|bugs?|tickets?|PRs?|pull requests?|pulls?|fix(?:es|ed)?|close[sd]?|"
    r"resolve[sd]?|see|refs?)\s+(#\d{1,6})\b|\((#[1-9]\d{0,4})\)",
    re.IGNORECASE,
)
_HEX = re.compile(r"(?<![\w/.-])([0-9a-f]{7,40})(?![\w/-])")
_GIT_WORDS = re.compile(
    r"\b(?:commit|commits|sha|hash|revert|cherry-pick|checkout|rebase|HEAD|merge|git|reset|"
    r"bisect|tag)\b",
    re.IGNORECASE,
)
_GIT_COMMIT_OUT = re.compile(r"^\[[^\]\s]+(?: \([\w -]+\))? ([0-9a-f]{7,40})\] ", re.MULTILINE)
_GIT_LOG_OUT = re.compile(r"^commit ([0-9a-f]{40})\b", re.MULTILINE)
_GIT_ONELINE = re.compile(r"\A\s*([0-9a-f]{7,12}) \S")
_GIT_RANGE_OUT = re.compile(r"^\s*(?:Updating )?[0-9a-f]{7,40}\.\.([0-9a-f]{7,40})\b", re.MULTILINE)
_GIT_REV = re.compile(r"\A\s*([0-9a-f]{40})\s*\Z")
_PORT = re.compile(
    r"(?<![\w.])((?:localhost|\d{1,3}(?:\.\d{1,3}){3}|\[::1?\]|(?<=://)[a-z][\w.-]*):(\d{2,5}))"
    r"(?![\d:])|((?:\b[Pp]orts?|\b[Pp]uertos?|\b[Pp]ortas?|(?<!\w)[Пп]орт[а-я]*|端口|ポート|포트)"
    r" ?(\d{2,5}))(?!\d)|(--port[= ](\d{2,5}))\b|\b(PORT=(\d{2,5}))\b"
)
_URL = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_LOCAL_URL = re.compile(r"^https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\])[:/]")
_ENV = re.compile(
    r"\bexport ([A-Z][A-Z0-9_]{2,})=|"
    r"os\.environ(?:\.get\(|\[)\s*['\"]([A-Z][A-Z0-9_]{2,})['\"]|"
    r"os\.getenv\(\s*['\"]([A-Z][A-Z0-9_]{2,})['\"]|process\.env\.([A-Z][A-Z0-9_]{2,})\b|"
    r"System\.getenv\(\s*\"([A-Z][A-Z0-9_]{2,})\"|env::var\(\s*\"([A-Z][A-Z0-9_]{2,})\""
)
#: ``$NAME``: an environment variable when a user writes it; in a script it may be any
#: shell variable, so tool results are not read for it.
_DOLLAR = re.compile(r"\$\{?([A-Z][A-Z0-9_]{2,})\b")
_SHELL_VARS = frozenset(
    {"HOME", "PWD", "OLDPWD", "SHELL", "TERM", "USER", "LANG", "PATH", "PS1", "IFS", "RANDOM",
     "LINENO", "SECONDS", "UID", "EUID", "PPID", "HOSTNAME", "BASH_SOURCE", "BASH_VERSION",
     "COLUMNS", "LINES", "TMPDIR", "EDITOR", "PAGER"}
)  # fmt: skip
_VTAG = re.compile(r"(?<![\w.@/-])(v\d+\.\d+(?:\.\d+){0,2}(?:-[0-9A-Za-z]+(?:\.\w+)*)?)(?!\w|\.\d)")
_RUNTIMES = (
    r"Python|Node(?:\.js)?|npm|Go|Rust|rustc|Java|JDK|Ruby|Django|Flask|FastAPI|React|Vue|"
    r"Angular|TypeScript|Postgres(?:QL)?|MySQL|Redis|Ubuntu|Debian|Alpine|GCC|Clang|LLVM|CMake|"
    r"Elixir|Erlang|OTP|Phoenix|PHP|Kotlin|Swift|pytest|NumPy|pandas|Rails|Kubernetes|Docker|"
    r"macOS|Bun|Deno|Next\.js|Vite|webpack|mypy|ruff|pip|uv|poetry|Electron|Qt|PySide6|PyQt5"
)
_VERSIONED = re.compile(
    rf"\b({_RUNTIMES})[ -]?v?(\d+(?:\.\d+){{1,3}})\b|\b(python)(\d\.\d{{1,2}})\b", re.IGNORECASE
)
_ALIASES = {"node.js": "node", "postgresql": "postgres", "python3": "python"}
_CAMEL = re.compile(r"\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)\b")
_SNAKE = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")
_BACKTICK = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`")
_DEFINED = re.compile(
    r"\b(?:def|class|function|fn|func|defp?|defmodule|interface|struct|enum|type)\s+"
    r"([A-Za-z_][\w]*)"
)
_WORD = re.compile(r"[A-Za-z_][\w]*")
#: What each keyword of :data:`_DEFINED` holds (``function`` holds ``func``).
_DEFINING = ("def", "class", "fn", "func", "interface", "struct", "enum", "type")


def _lines(text: str) -> Iterator[str]:
    for line in text.splitlines():
        if line.strip() and not _noisy(line):
            yield line


def _noisy(line: str) -> bool:
    """``_NOISE.search(line)`` finds something: one part of it at a time, each only where it
    can match (a run of 40 characters, three runs of 8 hex digits with a character between
    them, ``req`` in any case)."""
    run, hexes, req, index = _NOISE_PARTS
    if index.search(line) or (len(line) >= 40 and run.search(line)):
        return True
    if len(line) >= 26 and hexes.search(line):
        return True
    if line.isascii() and "req" not in line.lower():
        return False  # the letters of "req" match no other ASCII letter ignoring case
    return req.search(line) is not None


def _cap(line: str) -> str:
    line = line.strip()
    return line if len(line) <= CONTEXT_MAX_CHARS else line[: CONTEXT_MAX_CHARS - 1] + "…"


def _git(command: str) -> bool:
    return "git" in command and re.search(r"(^|[\s;&|(])git\s", command) is not None


#: The programs :func:`_tracker` looks for.
_TRACKERS = ("git", "gh", "glab", "jira", "bd", "linear")


def _tracker(command: str) -> bool:
    """git, or an issue tracker's command line (``gh``, ``glab``, ``jira``, ``bd``, ``linear``)."""
    if not any(name in command for name in _TRACKERS):
        return False
    return re.search(r"(^|[\s;&|(])(?:git|gh|glab|jira|bd|linear)\s", command) is not None


Found = tuple[int, IdentifierFact]


def _fact(text: str, kind: IdentifierKind, key: str, src: Source, line: str, at: int = 0) -> Found:
    """(position in the line, fact)."""
    fact = IdentifierFact(text, kind, key, src.index, _cap(line), stated=_stated(src))
    return at, fact


def _stated(src: Source) -> bool:
    """The text is a person's or the agent's own words (not a tool's output)."""
    return src.origin in ("user", "assistant")


def _tickets(src: Source, line: str) -> Iterator[Found]:
    if not _stated(src) and not _tracker(src.command):
        return
    for m in _TICKET.finditer(line):
        if m.group(1).split("-")[0] not in _NOT_TICKETS:
            yield _fact(m.group(1), "ticket", m.group(1), src, line, m.start())
    for m in _ISSUE.finditer(line):
        if m.group(1) is None and not _stated(src):
            continue  # "(#412)" closing a commit subject: a merged PR's number, one per line
        ref = m.group(1) or m.group(2)
        yield _fact(ref, "ticket", ref, src, line, m.start())


#: Words that say nothing about what a port serves.
_SUBJECT_STOP = frozenset(
    {"the", "this", "that", "these", "those", "with", "from", "into", "for", "and", "but", "our",
     "your", "its", "their", "now", "new", "old", "still", "also", "just", "then", "here",
     "there", "box", "machine", "host", "hostname", "localhost", "listens", "listen",
     "listening", "runs", "running", "run", "serves", "serving", "bound", "binds", "bind",
     "port", "ports", "url", "uri", "addr", "address", "server", "service", "instance", "dev",
     "local", "http", "https", "tcp", "udp", "app", "was", "were", "are", "use", "uses",
     "using", "set", "default", "changed", "moved", "instead", "not", "see", "should", "will",
     "can", "must", "need", "which", "what", "all", "any", "one", "two", "via", "only"}
)  # fmt: skip
_CLAUSE = re.compile(r"[,;]|\band\b|\.\s|\s-\s")
_SUBJECT_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def port_subject(line: str, text: str) -> str:
    """What the port ``text`` of ``line`` serves: the content words (lower case, sorted,
    space-separated, at least three letters, no numbers, without :data:`_SUBJECT_STOP`) of
    the clause of ``line`` that holds it (clauses split at ``,``, ``;``, ``and``, the end of a
    sentence); ``""`` when there are none. ``REDIS_URL=redis://localhost:6379/0`` gives
    ``"redis"``."""
    at = line.find(text)
    clause = line
    if at >= 0:
        starts = [m.end() for m in _CLAUSE.finditer(line) if m.end() <= at]
        ends = [m.start() for m in _CLAUSE.finditer(line) if m.start() >= at + len(text)]
        clause = line[max(starts, default=0) : min(ends, default=len(line))]
    words = {w.lower() for w in _SUBJECT_WORD.findall(clause)}
    return " ".join(sorted(w for w in words if len(w) >= 3 and w not in _SUBJECT_STOP))


def _ports(src: Source, line: str) -> Iterator[Found]:
    for m in _PORT.finditer(line):
        groups = m.groups()
        text, number = next((groups[i], groups[i + 1]) for i in (0, 2, 4, 6) if groups[i])
        if 1 <= int(number) <= 65535:
            at, fact = _fact(text, "port", number, src, line, m.start())
            yield at, replace(fact, subject=port_subject(line, text))


def _urls(src: Source, line: str) -> Iterator[Found]:
    if "://" not in line:
        return  # every URL holds it
    for m in _URL.finditer(line):
        url = m.group(0).rstrip(".,;:!?")
        if len(url) > 200 or "$" in url:
            continue
        if src.origin == "user" or _LOCAL_URL.match(url) or _git(src.command):
            yield _fact(url, "url", url, src, line, m.start())


def _envs(src: Source, line: str) -> Iterator[Found]:
    names = [(m.start(), next(g for g in m.groups() if g)) for m in _ENV.finditer(line)]
    if src.origin == "user":
        names += [(m.start(), m.group(1)) for m in _DOLLAR.finditer(line)]
    for at, name in names:
        if name not in _SHELL_VARS:
            yield _fact(name, "env", name, src, line, at)


def _versions(src: Source, line: str) -> Iterator[Found]:
    if not _MAY_VERSION.search(line):
        return  # every version holds a digit, a dot and a digit
    named = list(_VERSIONED.finditer(line))
    for m in _VTAG.finditer(line):
        if not any(n.start() <= m.start() < n.end() for n in named):
            yield _fact(m.group(1), "version", m.group(1), src, line, m.start())
    for m in named:
        name = (m.group(1) or m.group(3)).lower()
        yield _fact(m.group(0), "version", _ALIASES.get(name, name), src, line, m.start())


def _commits_in_user_text(src: Source, line: str) -> Iterator[Found]:
    if not _GIT_WORDS.search(line):
        return
    for m in _HEX.finditer(line):
        h = m.group(1)
        if re.search(r"\d", h) and re.search(r"[a-f]", h):
            yield _fact(h, "commit", h[:7], src, line, m.start())


def _commits_in_git_output(src: Source) -> Iterator[Found]:
    text = src.text[:RESULT_SCAN_CHARS]
    hits: list[re.Match[str]] = [*_GIT_COMMIT_OUT.finditer(text), *_GIT_RANGE_OUT.finditer(text)]
    first_log = _GIT_LOG_OUT.search(text)
    if first_log is not None:
        hits.append(first_log)
    if re.search(r"\bgit\s+log\b.*--oneline", src.command):
        oneline = _GIT_ONELINE.match(text)
        if oneline is not None:
            hits.append(oneline)
    if re.search(r"\bgit\s+rev-parse\b", src.command):
        rev = _GIT_REV.match(text)
        if rev is not None:
            hits.append(rev)
    for m in sorted(hits, key=lambda m: m.start()):
        line = text[text.rfind("\n", 0, m.start()) + 1 :].split("\n", 1)[0]
        yield _fact(m.group(1), "commit", m.group(1)[:7], src, line, m.start())


@lru_cache(maxsize=IDENTIFIERS_CACHE)
def symbol_words(origin: str, text: str) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
    """What :func:`identifiers` reads of one source for its symbols: the words of ``text``
    (its first :data:`RESULT_SCAN_CHARS` characters unless ``origin`` is ``"user"``), and
    each name shaped like a symbol that it names (a user's backticked or called names, a
    definition in other text) with the first line holding it, in order."""
    text = text if origin == "user" else text[:RESULT_SCAN_CHARS]
    words = frozenset(_WORD.findall(text))
    if origin == "user":
        named = [m.group(1).rsplit(".", 1)[-1] for m in _BACKTICK.finditer(text)]
        named += [
            m.group(1)
            for pattern in (_CAMEL, _SNAKE)
            for m in pattern.finditer(text)
            if text[m.end() : m.end() + 1] == "(" or text[m.start() - 1 : m.start()] == "."
        ]
    elif any(keyword in text for keyword in _DEFINING):
        named = _DEFINED.findall(text)
    else:
        named = []  # every definition holds one of the keywords
    shaped: dict[str, str] = {}
    for name in named:
        if name in shaped:
            continue
        if _CAMEL.fullmatch(name) or (_SNAKE.fullmatch(name) and "__" not in name):
            shaped[name] = next((ln for ln in text.splitlines() if name in ln), name)
    return words, tuple(shaped.items())


def _symbols(sources: Sequence[Source]) -> list[IdentifierFact]:
    candidates: dict[str, tuple[Source, str]] = {}
    read = [(src, *symbol_words(src.origin, src.text)) for src in sources]
    for src, _, named in read:
        for name, line in named:
            if name not in candidates:
                candidates[name] = (src, line)
    # the sources each candidate appears in (no other word is asked about)
    present: dict[str, set[int]] = {}
    names = set(candidates)
    for src, words, _ in read:
        for word in words & names:
            present.setdefault(word, set()).add(src.index)
    position = {name: i for i, name in enumerate(candidates)}
    ranked = sorted(
        (n for n in candidates if len(present.get(n, ())) >= SYMBOL_MIN_MESSAGES),
        key=lambda n: (-len(present[n]), position[n]),
    )[:SYMBOLS_MAX]
    out = []
    for name in sorted(ranked, key=position.__getitem__):
        newest = max(present[name])
        src = next(s for s in sources if s.index == newest)
        line = next((ln for ln in src.text.splitlines() if name in ln), candidates[name][1])
        out.append(_fact(name, "symbol", name, src, line)[1])
    return out


#: Words of a sentence that states a finding (what is wrong, where, why).
_FINDING = re.compile(
    r"\b(?:found|bug|cause[sd]?|culprit|root cause|problem|issue|fault|regression|"
    r"responsible|turns out|turned out|broken|breaks|the fix|leaks?|crash(?:es|ed)?)\b|"
    r"找到|原因|问题出在|根因",
    re.IGNORECASE,
)
#: The ASCII words one of which, in lower case, every ASCII text that :data:`_FINDING`
#: matches holds (its other words are not ASCII and match no ASCII letter, even ignoring
#: case).
_FINDING_ASCII = (
    "found", "bug", "cause", "culprit", "problem", "issue", "fault", "regression",
    "responsible", "turns out", "turned out", "broken", "breaks", "the fix", "leak", "crash",
)  # fmt: skip
_FINDING_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
#: A name in prose (CamelCase, lowerCamelCase, snake_case): not part of a path or a file name.
_NAME_IN_PROSE = re.compile(
    r"(?<![\w/.-])([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+|"
    r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+)"
    r"(?![\w/-]|\.[A-Za-z])"
)


def _findings(sources: Sequence[Source]) -> list[IdentifierFact]:
    """Names the agent states in a finding (see the module docstring), the newest
    :data:`FINDING_SYMBOLS_MAX`."""
    found: dict[str, IdentifierFact] = {}
    for src in sources:
        for name, sentence in _named_in_findings(src.text):
            found.pop(name, None)
            found[name] = _fact(name, "symbol", name, src, sentence)[1]
    return list(found.values())[-FINDING_SYMBOLS_MAX:]


@lru_cache(maxsize=IDENTIFIERS_CACHE)
def _named_in_findings(text: str) -> tuple[tuple[str, str], ...]:
    """(name, sentence) for each name in each finding sentence of ``text``, in order."""
    out: list[tuple[str, str]] = []
    if not _may_find(text):
        return ()  # each sentence is a part of the text
    for sentence in _FINDING_SENTENCE.split(text):
        if not _may_find(sentence) or not _FINDING.search(sentence) or _noisy(sentence):
            continue
        for m in _NAME_IN_PROSE.finditer(sentence):
            if "__" not in m.group(1):
                out.append((m.group(1), sentence))
    return tuple(out)


def _may_find(text: str) -> bool:
    """False only when :data:`_FINDING` cannot match ``text``: an ASCII text that holds, in
    lower case, none of :data:`_FINDING_ASCII`."""
    return not text.isascii() or _FINDING_ASCII_WORD.search(text.lower()) is not None


#: Any of :data:`_FINDING_ASCII` (one search instead of one per word).
_FINDING_ASCII_WORD = re.compile("|".join(re.escape(word) for word in _FINDING_ASCII))


Reader = Callable[[Source, str], Iterator[Found]]


def _readers(src: Source, text: str, user: bool, versions_here: bool) -> list[Reader]:
    """The line readers that can find anything in ``text``, in the order their facts are
    listed. A reader's pattern that matches a line also matches the whole text (a line's
    ends read as a line break there, which every lookaround and ``\\b`` of these patterns
    takes as a non-word character), so a reader whose patterns find nothing in the whole
    text finds nothing in any of its lines and is left out. Cheaper necessary conditions
    (:func:`_port_needs` …, a literal) are tried before each pattern."""
    readers: list[Reader] = []
    if (user or _tracker(src.command)) and (
        (_MAY_TICKET.search(text) and _TICKET.search(text))
        or ("#" in text and _MAY_ISSUE.search(text) and _ISSUE.search(text))
    ):
        readers.append(_tickets)
    if _port_needs(text) and _PORT.search(text):
        readers.append(_ports)
    if "://" in text and _URL.search(text):
        readers.append(_urls)
    if (_may_env(text) and _ENV.search(text)) or (
        src.origin == "user" and "$" in text and _DOLLAR.search(text)
    ):
        readers.append(_envs)
    if versions_here and _MAY_VERSION.search(text) and (_VTAG.search(text) or _versioned(text)):
        readers.append(_versions)
    if user and _may_speak_of_git(text) and _HEX.search(text) and _GIT_WORDS.search(text):
        readers.append(_commits_in_user_text)
    return readers


#: Necessary conditions of :data:`_TICKET`, :data:`_PORT`, :data:`_ENV` and the version
#: patterns (:data:`_VTAG`, :data:`_VERSIONED`), each far cheaper to search for.
_MAY_TICKET = re.compile(r"[A-Z0-9]-\d")
#: What every form of :data:`_ENV` holds.
_ENV_WORDS = ("export ", "environ", "getenv", "process.env.", "env::var")
_MAY_VERSION = re.compile(r"\d\.\d")
#: A necessary condition of :data:`_ISSUE`: both its forms end with ``#`` and a digit.
_MAY_ISSUE = re.compile(r"#\d")
#: What each form of :data:`_PORT` holds: a host's ``:`` and two digits, the word (its
#: letters after the first, which the pattern takes in either case) and two digits,
#: ``--port``, ``PORT=``.
_PORT_COLON = re.compile(r":\d\d")
_PORT_WORD = re.compile(r"(?:orts?|ortas?|uertos?|орт[а-я]*|端口|ポート|포트) ?\d\d")
#: Most ``digit.digit`` spots :func:`_versioned` looks around before it searches the whole
#: text instead.
_VERSION_SPOTS_MAX = 256
#: Farthest a :data:`_VERSIONED` match starts before the digits of its version, in
#: characters: the longest runtime name (10) and ``" v"``, with a margin.
_VERSION_LEAD_CHARS = 16


#: The words of :data:`_GIT_WORDS` in lower case, as one pattern.
_GIT_WORDS_LOWER = re.compile(
    "commit|sha|hash|revert|cherry-pick|checkout|rebase|head|merge|git|reset|bisect|tag"
)


def _may_speak_of_git(text: str) -> bool:
    """False only when :data:`_GIT_WORDS` cannot match ``text``: an ASCII text that holds
    none of its words in lower case (its letters match no other ASCII letter ignoring
    case)."""
    return not text.isascii() or _GIT_WORDS_LOWER.search(text.lower()) is not None


def _may_env(text: str) -> bool:
    """``text`` holds one of :data:`_ENV_WORDS`."""
    return any(word in text for word in _ENV_WORDS)


def _port_needs(text: str) -> bool:
    """False only when :data:`_PORT` cannot match ``text`` (see :data:`_PORT_WORD`)."""
    return bool(
        _PORT_COLON.search(text) or "PORT=" in text or "--port" in text or _PORT_WORD.search(text)
    )


def _versioned(text: str) -> bool:
    """``_VERSIONED.search(text)`` found something, read only around each ``digit.digit``
    of ``text``: a match's version starts with a run of digits followed by a dot and a digit
    (the first such spot inside the match, since what comes before the run is a name and a
    separator), and the match starts at most :data:`_VERSION_LEAD_CHARS` before the run.
    Looking there (up to the spot's end, where a cut match still matches) finds every match;
    it may find one the whole text does not hold (a cut name or a cut number): the reader
    it adds then finds nothing in the text's lines. Past :data:`_VERSION_SPOTS_MAX` spots
    the whole text is searched."""
    for count, spot in enumerate(_MAY_VERSION.finditer(text)):
        if count == _VERSION_SPOTS_MAX:
            return _VERSIONED.search(text) is not None
        end = spot.start()
        run = end
        while run and text[run - 1].isdecimal():
            run -= 1
        if _VERSIONED.search(text, max(0, run - _VERSION_LEAD_CHARS), end + 3):
            return True
    return False


_VERSION_COMMAND = re.compile(r"--version\b|\s-V\b|\bversion\b|\bgit\s+(?:tag|describe)\b")


def _prints_versions(command: str) -> bool:
    """``command`` asks for a version (``--version``, ``-V``, ``git tag`` …): its output is
    read for versions."""
    if "version" not in command and "-V" not in command and "git" not in command:
        return False  # what every form of the pattern holds
    return _VERSION_COMMAND.search(command) is not None


@lru_cache(maxsize=IDENTIFIERS_CACHE)
def identifier_facts(origin: str, text: str, command: str) -> tuple[IdentifierFact, ...]:
    """The identifier facts one source's lines hold, in order (their ``source`` 0)."""
    src = Source(0, origin, text, command)
    found: list[IdentifierFact] = []
    user = _stated(src)
    text = src.text if user else src.text[:RESULT_SCAN_CHARS]
    versions_here = user or _prints_versions(src.command)
    readers = _readers(src, text, user, bool(versions_here))
    for line in _lines(text) if readers else ():
        here: list[Found] = [found for read in readers for found in read(src, line)]
        found += [fact for _, fact in sorted(here, key=lambda t: t[0])]
    if not user and _git(src.command):
        found += [fact for _, fact in _commits_in_git_output(src)]
    return tuple(found)


def identifiers(sources: Sequence[Source]) -> tuple[IdentifierFact, ...]:
    """Identifier facts found in ``sources`` (oldest first): one per (kind, key), in
    first-seen order, each with its newest text, source index and context line, stated when
    a user message or the agent's text holds it; a port
    replaced by a newer one of the same subject is marked ``earlier``
    (:func:`~ctxengine.model.facts.mark_earlier`)."""
    found: list[IdentifierFact] = []
    for src in sources:
        facts = identifier_facts(src.origin, src.text, src.command)
        found += [replace(f, source=src.index) for f in facts] if src.index else facts
    found += _symbols([s for s in sources if s.origin != "assistant"])
    found += _findings([s for s in sources if s.origin == "assistant"])
    best: dict[tuple[str, str], IdentifierFact] = {}
    order: dict[tuple[str, str], int] = {}
    stated: set[tuple[str, str]] = set()
    for fact in found:
        key = (fact.kind, fact.key)
        order.setdefault(key, len(order))
        if fact.stated:
            stated.add(key)
        if key not in best or fact.source >= best[key].source:
            best[key] = fact
    for said in stated:
        best[said] = replace(best[said], stated=True)
    return mark_earlier([best[k] for k in sorted(best, key=order.__getitem__)])
