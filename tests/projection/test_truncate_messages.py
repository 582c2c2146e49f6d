"""Over-cap assistant text and tool-call arguments are truncated in the projection only;
user text never is."""

from __future__ import annotations

import json

from ctxengine.model import Entry, Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.projection import ProjectionSettings, project
from ctxengine.projection.transform import TruncateCap, truncate_arguments
from ctxengine.tokens.estimate import HeuristicEstimator

EST = HeuristicEstimator()
SETTINGS = ProjectionSettings(truncate_tokens=100, truncate_max_chars=400, truncate_head_ratio=0.5)


def _entries(*bodies: Message) -> list[Entry]:
    return [Entry(f"e{i}", "s", i, b) for i, b in enumerate(bodies)]


def test_long_write_arguments_stay_valid_json_with_a_marker() -> None:
    body = "x = 1\n" * 500
    args = json.dumps({"path": "src/app.py", "content": body})
    cut = truncate_arguments(args, TruncateCap(100, 400, 0.5), EST, "e1")
    assert cut is not None
    new_args, omitted_chars, omitted_tokens = cut
    value = json.loads(new_args)
    assert value["path"] == "src/app.py"
    assert value["content"].startswith("x = 1\n")
    assert "truncated: " in value["content"]
    assert "full output kept in history as entry e1" in value["content"]
    assert len(value["content"]) - len(body) + omitted_chars > 0
    assert omitted_chars == len(body) - len(value["content"].split("\n[…")[0]) - len(
        value["content"].split("…]\n")[-1]
    )
    assert omitted_tokens == EST.text(
        body[
            len(value["content"].split("\n[…")[0]) : len(body)
            - len(value["content"].split("…]\n")[-1])
        ]
    )


def test_short_arguments_are_left_alone() -> None:
    assert truncate_arguments('{"path": "a.py"}', TruncateCap(100, 400, 0.5), EST, "e1") is None


def test_projection_shows_a_pasted_user_log_whole_and_truncates_a_huge_write() -> None:
    paste = "ERROR line\n" * 800
    call = ToolCallPart("c1", "write", json.dumps({"path": "a.py", "content": "y\n" * 3000}))
    log = _entries(
        Message("user", (TextPart(paste),)),
        Message("assistant", (call,)),
        Message("tool", (ToolResultPart("c1", (TextPart("ok"),)),)),
    )
    ctx = project(log, SETTINGS, EST)
    kinds = [(t.part, t.call_id, t.entry_id) for t in ctx.truncations]
    assert kinds == [("tool_call", "c1", "e1")]
    # What a person wrote is never cut in place (800 lines, over the 400-character cap).
    assert ctx.messages[0] is log[0].body
    assert json.loads(ctx.messages[1].tool_calls[0].arguments)["path"] == "a.py"
    assert log[1].body.tool_calls[0] is call  # type: ignore[union-attr]


def test_an_over_cap_assistant_text_is_truncated_and_a_user_text_is_not() -> None:
    long = "step output line\n" * 300
    log = _entries(
        Message("user", (TextPart(long),)),
        Message("assistant", (TextPart(long),)),
        Message("user", (TextPart(long),)),
    )
    ctx = project(log, SETTINGS, EST)
    assert [(t.part, t.call_id, t.entry_id) for t in ctx.truncations] == [("assistant", "", "e1")]
    assert ctx.messages[0].text == long and ctx.messages[2].text == long
    assert "full output kept in history as entry e1" in ctx.messages[1].text
    assert len(ctx.messages[1].text) < len(long)


def test_a_patch_nested_in_a_shell_command_list_is_truncated_and_stays_a_list() -> None:
    patch = "*** Begin Patch\n" + "+line\n" * 600 + "*** End Patch"
    args = json.dumps({"command": ["bash", "-lc", f"apply_patch <<'EOF'\n{patch}\nEOF"]})
    cut = truncate_arguments(args, TruncateCap(100, 400, 0.5), EST, "e7")
    assert cut is not None
    value = json.loads(cut[0])
    assert value["command"][:2] == ["bash", "-lc"]
    assert value["command"][2].startswith("apply_patch <<'EOF'\n*** Begin Patch")
    assert value["command"][2].endswith("*** End Patch\nEOF")
    assert "as entry e7" in value["command"][2]


def test_user_role_text_a_harness_injected_is_capped_like_a_tool_result() -> None:
    output = "Ran `find .`\n" + "./src/module.py\n" * 400  # pi's bash execution, user role
    injected = Message("user", (TextPart(output),), meta={"synthetic": "bashExecution"})
    log = _entries(Message("user", (TextPart("List the files."),)), injected)
    ctx = project(log, SETTINGS, EST)
    assert [(t.part, t.call_id, t.entry_id) for t in ctx.truncations] == [("user", "", "e1")]
    assert ctx.messages[0] is log[0].body
    assert ctx.messages[1].text.startswith("Ran `find .`\n./src/module.py")
    assert "full output kept in history as entry e1" in ctx.messages[1].text
