"""Did a tool result fail, and which of its lines say why. Deterministic text rules, no LLM.

Failure is read from the result flag first (``is_error``), then from what each agent writes:
Codex ``{"output": …, "metadata": {"exit_code": N}}`` and ``"… exit code: N, stdout: …"``,
pi ``Command exited with code N``, OpenHands ``[Command finished with exit code N]``, Claude
Code ``Exit code N`` and ``<tool_use_error>``, a leading ``error:``/``ERROR:`` line, SWE-agent's
``Your proposed edit has introduced new syntax error(s)``.
"""

from __future__ import annotations

import re

from ctxengine.model import ToolResultPart
from ctxengine.model.json_depth import loads_bounded

#: Longest error line kept in the errors ledger, in characters.
ERROR_LINE_MAX_CHARS = 300
#: Most error lines taken from one failed tool result.
ERROR_LINES_PER_RESULT = 3

_EXIT_CODE = re.compile(
    r"(?:exit(?:ed)? (?:with )?code:?|exit status:?|exit_code[\"']?:)\s*(-?\d+)", re.IGNORECASE
)
_FAILED_START = re.compile(
    r"^\s*(?:<tool_use_error>|error\b|ERROR\b|fatal:|failed in sandbox|"
    r"Your proposed edit has introduced|No replacement was performed)",
)
_BROAD = re.compile(
    r"Traceback \(most recent call last\)|^FAILED\b|^ERROR\b|^E {2,}\S|"
    r"^=+ .*\b\d+ (?:failed|errors?)\b.*=+$",
    re.MULTILINE,
)
#: (score, pattern): higher scores name the failure more precisely.
_LINE_RULES: tuple[tuple[int, re.Pattern[str]], ...] = (
    (3, re.compile(r"\b[A-Z]\w*(?:Error|Exception|Failure)\b(?::|\s*$)")),
    (3, re.compile(r"^\s*(?:error|fatal|panic)(?:\[\w+\])?\b\s*[:\s]", re.IGNORECASE)),
    (3, re.compile(r"\berror\s+[A-Z]+\d+\b")),
    (2, re.compile(r"\bFAILED\b|\bFAIL:|npm ERR!|<tool_use_error>")),
    (2, re.compile(r"\b\d+ (?:failed|errors?)\b")),
    (2, re.compile(r"No such file or directory|command not found|Permission denied")),
    (2, re.compile(r"not found|does not exist|cannot |can't |unable to", re.IGNORECASE)),
    (1, _EXIT_CODE),
    (1, re.compile(r"Traceback \(most recent call last\)")),
)


def result_text(result: ToolResultPart) -> str:
    """The text of a result, unwrapping Codex's JSON envelope (``{"output": "…"}``)."""
    text = result.text
    envelope = _codex_envelope(text)
    if envelope is not None:
        output = envelope.get("output")
        return output if isinstance(output, str) else text
    return text


def _codex_envelope(text: str) -> dict[str, object] | None:
    if not text.startswith('{"output"'):
        return None
    try:
        data = loads_bounded(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _exit_code(text: str) -> int | None:
    envelope = _codex_envelope(text)
    if envelope is not None:
        meta = envelope.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if isinstance(code, int) else None
    head = text[:300]
    tail = text[-200:]
    for chunk in (head, tail):
        for line in chunk.splitlines():
            m = _EXIT_CODE.search(line)
            if m is not None and (
                line.strip().lower().startswith(("exit", "command", "["))
                or "failed in sandbox" in line
            ):
                return int(m.group(1))
    return None


def result_failed(result: ToolResultPart) -> bool:
    """True when the tool reported failure: the ``is_error`` flag, a non-zero exit code in
    the agent's own wording, or a first line that starts with an error marker."""
    if result.is_error:
        return True
    text = result.text
    code = _exit_code(text)
    if code is not None:
        return code != 0
    return _FAILED_START.match(result_text(result)) is not None


def looks_failed(text: str) -> bool:
    """True when output shows a failure even though the tool did not flag one: a Python
    traceback, pytest ``FAILED``/``E   …`` lines or a ``N failed`` summary, ``ERROR`` lines."""
    return _BROAD.search(text) is not None


def _cap(line: str, limit: int = ERROR_LINE_MAX_CHARS) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def error_lines(text: str, limit: int = ERROR_LINES_PER_RESULT) -> tuple[str, ...]:
    """The ``limit`` lines of ``text`` that best name a failure, verbatim (whitespace-trimmed,
    capped at :data:`ERROR_LINE_MAX_CHARS`), in their original order.

    Lines are scored by the rules above (exception and ``error:`` lines first, then ``FAILED``
    and "not found" lines, then exit codes); ties go to the later line (the end of output
    usually sums up). When only an exit code or a traceback header matches, the last non-empty
    line is added. When no line matches, the first non-empty line is returned.
    """
    scored: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    lines = text.splitlines()
    for index, raw in enumerate(lines):
        line = raw.strip()
        if not line or line in seen:
            continue
        score = max((s for s, rule in _LINE_RULES if rule.search(line)), default=0)
        if score:
            seen.add(line)
            scored.append((score, index, line))
    if not scored:
        first = next((ln.strip() for ln in lines if ln.strip()), "")
        return (_cap(first),) if first else ()
    best = sorted(scored, key=lambda t: (-t[0], -t[1]))[:limit]
    if best[0][0] < 2 and len(best) < limit:
        # Only an exit code or a traceback header: the last line usually says what went wrong.
        last_index = max(i for i, ln in enumerate(lines) if ln.strip())
        if all(i != last_index for _, i, _ in best):
            best.append((0, last_index, lines[last_index].strip()))
    return tuple(_cap(line) for _, _, line in sorted(best, key=lambda t: t[1]))
