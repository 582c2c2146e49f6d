"""``ContextAssembler``: section order and tokens, canonical tools, one snapshot of the volatile
sections per epoch, cache breaks with their causes, path-scoped rules, compact instructions.

Sizes come from :class:`~hand_estimator.HandEstimator`: ``len(text) // 4 + 1`` tokens per
text, 4 per message, tools as their sorted JSON.
"""

from __future__ import annotations

import json

import pytest

from ctxengine.assembly import SECTIONS, CacheBreak, ContextAssembler, Environment, RuleFile
from ctxengine.assembly.head import attachment_message
from ctxengine.errors import ConfigError
from ctxengine.model import Message, ToolCallPart
from ctxengine.projection.injection import rules_file, rules_text
from hand_estimator import HandEstimator

EST = HandEstimator()
ENV = Environment("2026-03-01", "/repo", "linux")
READ = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}
GREP = {"parameters": {"type": "object"}, "description": "Search", "name": "grep"}
AGENTS = RuleFile("AGENTS.md", "Never add a co-author trailer.", kind="agents", level="root")
API = RuleFile(
    ".claude/rules/api.md",
    "Validate every request body.",
    kind="claude",
    level="root",
    activation="scoped",
    scope=("src/api/**",),
    base="/repo",
)


def read_call(cid: str, path: str) -> Message:
    return Message("assistant", (ToolCallPart(cid, "Read", json.dumps({"file_path": path})),))


def full() -> ContextAssembler:
    return ContextAssembler(
        base="You are a careful coding agent.",
        tools=[READ, GREP],
        rules=[AGENTS],
        skills={"pdf": "Fill PDF forms", "csv": "Clean CSV files"},
        memory="- prefers pytest",
        environment=ENV,
        git_status="## main\n M src/app.py",
    )


class TestSections:
    def test_every_section_in_its_order_with_its_text_and_tokens(self) -> None:
        head = full().build(None, EST)
        assert (
            [s.name for s in head.sections]
            == list(SECTIONS)
            == [
                "base",
                "tools",
                "rules",
                "skills",
                "memory",
                "environment",
                "git_status",
            ]
        )
        texts = {s.name: s.text for s in head.sections}
        assert texts == {
            "base": "You are a careful coding agent.",
            "tools": "",
            "rules": "# Rules\n\nContents of AGENTS.md:\n\nNever add a co-author trailer.",
            "skills": "# Skills\n\n- csv: Clean CSV files\n- pdf: Fill PDF forms",
            "memory": "# Memory\n\n- prefers pytest",
            "environment": (
                "# Environment\n\nDate: 2026-03-01\nWorking directory: /repo\nPlatform: linux"
            ),
            "git_status": (
                "# Git status\n\nThe git status when this part of the conversation began; it "
                "is not updated as files change.\n\n## main\n M src/app.py"
            ),
        }
        # 31 chars → 8; tools: sorted JSON of grep (75 chars → 19) and read (80 → 21);
        # rules 63 → 16; skills 54 → 14; memory 26 → 7; environment 72 → 19; git 128 → 33.
        assert [(s.name, s.tokens, s.volatile) for s in head.sections] == [
            ("base", 8, False),
            ("tools", 40, False),
            ("rules", 16, False),
            ("skills", 14, False),
            ("memory", 7, False),
            ("environment", 19, True),
            ("git_status", 33, True),
        ]
        assert head.section("tools").sources == ("grep", "read")
        assert head.section("rules").sources == ("AGENTS.md",)
        assert head.text == "\n\n".join(t for t in texts.values() if t)
        # The message: 4 + (31 + 63 + 54 + 26 + 72 + 128 + 5 × 2 separators = 384) // 4 + 1.
        assert len(head.text) == 384
        assert head.tokens == 4 + 97 + 40

    def test_empty_sections_are_reported_with_no_tokens_and_left_out_of_the_text(self) -> None:
        head = ContextAssembler(base="Be brief.").build(None, EST)
        assert [(s.name, s.tokens) for s in head.sections] == [
            ("base", 3),
            ("tools", 0),
            ("rules", 0),
            ("skills", 0),
            ("memory", 0),
            ("environment", 0),
            ("git_status", 0),
        ]
        assert head.text == "Be brief."
        assert head.tokens == 4 + 3
        assert ContextAssembler().build(None, EST).message is None


class TestTools:
    def test_tools_are_sorted_by_name_with_sorted_keys_whatever_the_order_given(self) -> None:
        a = ContextAssembler(tools=[READ, GREP]).build(None, EST)
        b = ContextAssembler(tools=[dict(reversed(GREP.items())), READ]).build(None, EST)
        assert [list(t) for t in a.tools] == [
            ["description", "name", "parameters"],
            ["description", "name", "parameters"],
        ]
        assert [t["name"] for t in a.tools] == ["grep", "read"]
        assert a.bytes == b.bytes
        assert a.bytes.endswith(json.dumps(list(a.tools), separators=(",", ":")).encode())

    def test_openai_shaped_tools_sort_by_their_function_name(self) -> None:
        z = {"type": "function", "function": {"name": "zip"}}
        head = ContextAssembler(tools=[z, READ]).build(None, EST)
        assert head.section("tools").sources == ("read", "zip")

    def test_two_tools_with_one_name_are_refused(self) -> None:
        with pytest.raises(ConfigError, match="tool 'read' is defined twice"):
            ContextAssembler(tools=[READ, {**READ, "description": "again"}])
        with pytest.raises(ConfigError, match="tool definition 1 is not an object: str"):
            ContextAssembler(tools=[READ, "grep"])  # type: ignore[list-item]


class TestSnapshots:
    def test_volatile_sections_are_read_once_per_epoch(self) -> None:
        days = iter(["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04"])
        reads: list[str] = []

        def env() -> Environment:
            reads.append("env")
            return Environment(next(days), "/repo", "linux")

        def git() -> str:
            reads.append("git")
            return f"## main ({len(reads)})"

        a = ContextAssembler(base="b", environment=env, git_status=git)
        first = a.build(None, EST)
        again = a.build(None, EST)
        assert reads == ["env", "git"]
        assert again.bytes == first.bytes
        assert "Date: 2026-03-01" in first.text and "## main (2)" in first.text
        # Measuring a tentative compaction reuses the snapshot and keeps nothing.
        measured = a.build("c1", EST, provisional=True)
        assert reads == ["env", "git"]
        assert measured.text == first.text and measured.epoch == "c1"
        second = a.build("c1", EST)
        assert reads == ["env", "git", "env", "git"]
        assert "Date: 2026-03-02" in second.text and "## main (4)" in second.text
        assert a.build("c1", EST).bytes == second.bytes
        assert a.breaks == []

    def test_a_missing_git_status_leaves_the_section_empty(self) -> None:
        head = ContextAssembler(environment=ENV, git_status=lambda: None).build(None, EST)
        assert head.section("git_status").tokens == 0
        assert "# Git status" not in head.text


class TestCacheBreaks:
    def test_a_tool_change_within_an_epoch_is_a_cache_break_naming_the_tools(self) -> None:
        a = ContextAssembler(base="b", tools=[READ])
        before = a.build(None, EST)
        a.set_tools([GREP, {**READ, "description": "Read a text file"}])
        after = a.build(None, EST)
        # read: 80 chars of JSON → 21 tokens; grep 19 + read 22 (85 chars) = 41; base 1 + 4.
        assert (before.tokens, after.tokens) == (4 + 1 + 21, 4 + 1 + 41)
        assert a.breaks == [
            CacheBreak(
                None,
                "tools",
                "tool definitions changed mid-epoch: added 'grep'; changed 'read'",
                26,
                46,
            )
        ]

    def test_the_same_tools_given_again_are_no_break(self) -> None:
        a = ContextAssembler(tools=[READ, GREP])
        a.build(None, EST)
        a.set_tools([GREP, READ])
        a.build(None, EST)
        assert a.breaks == []

    def test_a_change_between_epochs_is_no_break(self) -> None:
        a = ContextAssembler(tools=[READ])
        a.build(None, EST)
        a.set_tools([GREP])
        a.build("c1", EST)
        assert a.breaks == []

    def test_a_rules_change_within_an_epoch_names_the_files(self) -> None:
        a = ContextAssembler(rules=[AGENTS])
        a.build(None, EST)
        claude = RuleFile("CLAUDE.md", "Use tabs.", kind="claude", level="root")
        a.set_rules([claude])
        a.build(None, EST)
        a.set_rules([RuleFile("CLAUDE.md", "Use spaces.", kind="claude", level="root")])
        a.build(None, EST)
        assert [(b.section, b.cause) for b in a.breaks] == [
            ("rules", "rules changed mid-epoch: added 'CLAUDE.md'; removed 'AGENTS.md'"),
            ("rules", "rules changed mid-epoch: changed 'CLAUDE.md'"),
        ]

    def test_a_provisional_head_reports_nothing(self) -> None:
        a = ContextAssembler(tools=[READ])
        a.build(None, EST)
        a.set_tools([GREP])
        a.build(None, EST, provisional=True)
        assert a.breaks == []


class TestPathScopedRules:
    def test_in_the_head_a_scoped_rule_loads_only_once_a_matching_file_is_read(self) -> None:
        a = ContextAssembler(rules=[AGENTS, API], cwd="/repo", scoped_rules="head")
        assert a.scoped and not a.attaches
        before = a.build(None, EST, messages=[read_call("c1", "src/web/page.py")])
        assert [r.path for r in before.rules] == ["AGENTS.md"]
        assert "Validate every request body." not in before.text
        after = a.build(
            None,
            EST,
            messages=[
                read_call("c1", "src/web/page.py"),
                read_call("c2", "/repo/src/api/users.py"),
            ],
        )
        assert [r.path for r in after.rules] == ["AGENTS.md", ".claude/rules/api.md"]
        assert after.section("rules").text == (
            "# Rules\n\nContents of AGENTS.md:\n\nNever add a co-author trailer.\n\n"
            "Contents of .claude/rules/api.md (applies to files matching src/api/**):\n\n"
            "Validate every request body."
        )
        assert [b.cause for b in a.breaks] == [
            "rules changed mid-epoch: added '.claude/rules/api.md' (path-scoped to src/api/**; "
            "'src/api/users.py' was touched)"
        ]

    def test_after_a_compaction_the_rule_waits_for_a_new_read(self) -> None:
        a = ContextAssembler(rules=[API], cwd="/repo", scoped_rules="head")
        assert a.build(None, EST, messages=[read_call("c1", "src/api/a.py")]).rules == (API,)
        assert a.build("c1", EST, messages=[]).rules == ()
        assert a.breaks == []

    def test_attached_a_scoped_rule_never_enters_the_head(self) -> None:
        a = ContextAssembler(rules=[AGENTS, API], cwd="/repo")
        assert a.attaches and not a.scoped
        messages = [read_call("c1", "src/web/page.py"), read_call("c2", "src/api/users.py")]
        assert [r.path for r in a.build(None, EST, messages=messages).rules] == ["AGENTS.md"]
        assert a.breaks == []

    def test_attachments_name_the_touched_file_once_with_the_files_they_import(self) -> None:
        child = RuleFile(
            "docs/api-style.md",
            "Use snake_case.",
            kind="import",
            imported_by=".claude/rules/api.md",
        )
        a = ContextAssembler(rules=[AGENTS, API, child], cwd="/repo")
        web = ToolCallPart("c1", "Read", json.dumps({"file_path": "src/web/page.py"}))
        api = ToolCallPart("c2", "Edit", json.dumps({"file_path": "/repo/src/api/users.py"}))
        assert a.attachments([web], attached=()) == ()
        found = a.attachments([web, api], attached=())
        assert [(r.path, hit) for r, hit in found] == [
            (".claude/rules/api.md", "src/api/users.py"),
            ("docs/api-style.md", "src/api/users.py"),
        ]
        assert a.attachments([api], attached={".claude/rules/api.md"}) == ()
        message = attachment_message(*found[0])
        assert message.text == (
            "<system-reminder>\nContents of .claude/rules/api.md (path-scoped rules for files "
            "matching src/api/**; loaded because src/api/users.py was touched):\n\n"
            "Validate every request body.\n</system-reminder>"
        )
        assert message.meta == {"synthetic": "scoped_rule", "rules_file": ".claude/rules/api.md"}
        assert rules_file(message.text) == ".claude/rules/api.md"
        assert rules_text(message) == message.text
        assert "those of .claude/rules/api.md" in attachment_message(*found[1]).text
        assert ContextAssembler(rules=[API], scoped_rules="head").attachments([api], ()) == ()

    def test_a_manual_rule_never_loads_by_itself(self) -> None:
        manual = RuleFile(".cursor/rules/x.mdc", "x", kind="cursor", activation="manual")
        assert ContextAssembler(rules=[manual]).build(None, EST).rules == ()


def test_compact_instructions_of_the_loaded_rules_are_joined() -> None:
    a = RuleFile("AGENTS.md", "x", instructions="Keep test names.")
    b = RuleFile("CLAUDE.md", "y", instructions="Keep error lines.")
    c = RuleFile("x.md", "z", activation="scoped", scope=("nope/**",), instructions="never")
    head = ContextAssembler(rules=[a, b, c]).build(None, EST)
    assert head.instructions == "Keep test names.\n\nKeep error lines."
    assert ContextAssembler(rules=[AGENTS]).build(None, EST).instructions is None
