"""Did a tool result fail by its agent's own account (flag, exit code, leading error marker),
and the text of a result without its agent's envelope. Deterministic text rules, no LLM. Which
lines of an output say what failed, and failures an output shows under exit code 0, are
:mod:`ctxengine.summarizers.failures`.

Failure is read from the result flag first (``is_error``), then from what each agent writes:
Codex ``{"output": …, "metadata": {"exit_code": N}}`` and ``"… exit code: N, stdout: …"``,
pi ``Command exited with code N``, Codex unified exec ``Process exited with code N`` (after
its ``Chunk ID``/``Wall time`` lines), OpenHands ``[Command finished with exit code N]``, Claude
Code ``Exit code N`` and ``<tool_use_error>``, mini-swe-agent ``<returncode>N</returncode>``
followed by ``<output>…</output>``, a leading ``error:``/``ERROR:`` line, SWE-agent's
``Your proposed edit has introduced new syntax error(s)``.
"""

from __future__ import annotations

import re

from ctxengine.model import ToolResultPart
from ctxengine.model.json_depth import loads_bounded

_EXIT_CODE = re.compile(
    r"(?:exit(?:ed)? (?:with )?code:?|exit status:?|exit_code[\"']?:)\s*(-?\d+)", re.IGNORECASE
)
_FAILED_START = re.compile(
    r"^\s*(?:<tool_use_error>|error\b|ERROR\b|fatal:|failed in sandbox|"
    r"Your proposed edit has introduced|No replacement was performed)",
)
_RETURNCODE = re.compile(r"\A\s*<returncode>\s*(-?\d+)\s*</returncode>\s*")
_OUTPUT_TAGS = re.compile(r"\A<output>\n?|\n?</output>\s*\Z")


def result_text(result: ToolResultPart) -> str:
    """The text of a result, unwrapping Codex's JSON envelope (``{"output": "…"}``) and
    mini-swe-agent's ``<returncode>N</returncode><output>…</output>`` envelope."""
    return unwrap(result.text)


def unwrap(text: str) -> str:
    """``text`` without the envelope of :func:`result_text`."""
    envelope = _codex_envelope(text)
    if envelope is not None:
        output = envelope.get("output")
        return output if isinstance(output, str) else text
    code = _RETURNCODE.match(text)
    if code is not None:
        return _OUTPUT_TAGS.sub("", text[code.end() :])
    return text


def _codex_envelope(text: str) -> dict[str, object] | None:
    if not text.startswith('{"output"'):
        return None
    try:
        data = loads_bounded(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def exit_code(text: str) -> int | None:
    """The exit code a result's text states in its agent's wording (see the module
    docstring), or ``None`` when it states none."""
    envelope = _codex_envelope(text)
    if envelope is not None:
        meta = envelope.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if isinstance(code, int) else None
    returncode = _RETURNCODE.match(text)
    if returncode is not None:
        return int(returncode.group(1))
    head = text[:300]
    tail = text[-200:]
    for chunk in (head, tail):
        for line in chunk.splitlines():
            m = _EXIT_CODE.search(line)
            if m is not None and (
                line.strip().lower().startswith(("exit", "command", "[", "process exited"))
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
    code = exit_code(text)
    if code is not None:
        return code != 0
    return _FAILED_START.match(result_text(result)) is not None


#: How an agent tells its model that the user declined a tool call, so that nothing ran
#: (Claude Code: "The user doesn't want to proceed with this tool use. The tool use was
#: rejected …", with ``is_error`` set; in plan mode "The user doesn't want to take this
#: action right now").
_DECLINED = re.compile(
    r"\s*The user doesn't want to (?:proceed with this tool use|take this action right now)\b"
)


def declined_by_user(result: ToolResultPart) -> bool:
    """True when ``result`` says the user declined the call (:data:`_DECLINED`): a decision
    of the user's, not a failure of the tool, and nothing the call asked for happened."""
    return _DECLINED.match(result_text(result)) is not None


#: How a result says its call was interrupted or aborted before it returned, so that its
#: outcome is unknown: the placeholder a call left without a result gets (``[no result
#: recorded: the tool call was interrupted before it returned]``, ``[no result recorded: the
#: session ended before this tool call returned]``), pi's ``Command aborted``, the last line
#: of a bash result whose run the user aborted (after what it printed until then), and Gemini
#: CLI's ``[Operation Cancelled] Reason: User cancelled the operation.`` and Claude Code's
#: ``<tool_use_error>Sibling tool call errored</tool_use_error>`` (a parallel call cancelled
#: because another call of the same reply failed: that call's error is the one recorded)
#: (the placeholders and these lines as a result's whole text).
_INTERRUPTED = re.compile(
    r"\[no result recorded: [^\]\n]*\]|"
    r"\[Operation Cancelled\] Reason: User cancelled the operation\.?|"
    r"(?:<tool_use_error>)?Sibling tool call errored(?:</tool_use_error>)?"
)
_ABORTED = "Command aborted"


def interrupted(result: ToolResultPart) -> bool:
    """True when ``result`` says its call was interrupted or aborted before it returned
    (:data:`_INTERRUPTED` as its whole text, or :data:`_ABORTED` as its last line): the
    user's or the harness's doing, not a failure of the tool, and nothing is known of what
    the call did. Only the text's ends are read, not all of a long output."""
    text = result_text(result)
    end = len(text)
    while end and text[end - 1].isspace():
        end -= 1
    start = end - len(_ABORTED)
    if start >= 0 and text.startswith(_ABORTED, start):
        return (start > 0 and text[start - 1] == "\n") or not text[:start].strip()
    begin = 0
    while begin < end and text[begin].isspace():
        begin += 1
    return text.startswith(("[", "<", "S"), begin) and (
        _INTERRUPTED.fullmatch(text, begin, end) is not None
    )
