"""Rules files as values: front matter, scopes, globs and the files tool calls touched."""

from __future__ import annotations

import json

import pytest

from ctxengine.assembly.rules import (
    glob_matches,
    parse_rule,
    rule_kind,
    scope_of,
    split_front_matter,
    touched_paths,
)
from ctxengine.errors import RulesFileError
from ctxengine.model import Message, ToolCallPart


def calls(*parts: tuple[str, str, dict[str, str]]) -> Message:
    return Message(
        "assistant", tuple(ToolCallPart(cid, name, json.dumps(args)) for cid, name, args in parts)
    )


class TestFrontMatter:
    def test_lists_inline_lists_scalars_and_booleans(self) -> None:
        text = (
            "---\n"
            "description: 'API rules'\n"
            "paths:\n"
            '  - "src/api/**"\n'
            "  - tests/api/*.py\n"
            'globs: [a.py, "b/{c,d}.ts"]\n'
            "alwaysApply: false\n"
            "# a comment\n"
            "---\n"
            "Body line.\n"
        )
        front, body = split_front_matter(text, "api.md")
        assert dict(front.fields) == {
            "description": "API rules",
            "paths": ("src/api/**", "tests/api/*.py"),
            "globs": ("a.py", "b/{c,d}.ts"),
            "alwaysApply": False,
        }
        assert dict(front.lines) == {"description": 2, "paths": 3, "globs": 6, "alwaysApply": 7}
        assert front.body_line == 10
        assert body == "Body line.\n"

    def test_a_file_without_front_matter_is_returned_whole(self) -> None:
        front, body = split_front_matter("# Title\n---\n", "a.md")
        assert (dict(front.fields), body) == ({}, "# Title\n---\n")

    def test_a_malformed_line_names_the_file_and_line(self) -> None:
        with pytest.raises(RulesFileError) as err:
            split_front_matter("---\npaths: x\nnot a field\n---\nbody", ".claude/rules/a.md")
        assert str(err.value) == (
            ".claude/rules/a.md:3: front matter line is not 'key: value': 'not a field'"
        )
        assert (err.value.path, err.value.line) == (".claude/rules/a.md", 3)

    def test_an_unclosed_block_is_an_error(self) -> None:
        message = r"^a\.mdc:1: front matter opened with '---' is never closed$"
        with pytest.raises(RulesFileError, match=message):
            split_front_matter("---\nglobs: x\n  continued\n", "a.mdc")

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (
                '---\npaths: [src/**/*.py, "tests/**"\n---\nx',
                "r.md:2: 'paths': a list opened with '[' is never closed",
            ),
            (
                '---\n\tpaths: "src/**"\n---\nx',
                "r.md:2: 'paths' is indented: front matter keys start the line",
            ),
            (
                "---\ndescription: API rules\n  globs: src/api/**\n---\nx",
                "r.md:3: 'globs' is indented: front matter keys start the line",
            ),
            (
                "---\n  note\n---\nx",
                "r.md:2: an indented line with no key above it",
            ),
        ],
    )
    def test_a_scope_that_would_be_lost_is_an_error(self, text: str, message: str) -> None:
        with pytest.raises(RulesFileError) as err:
            split_front_matter(text, "r.md")
        assert str(err.value) == message

    def test_an_indented_continuation_of_another_value_is_still_ignored(self) -> None:
        front, body = split_front_matter(
            "---\ndescription: API rules\n  that go on\npaths: src/**\n---\nx", "r.md"
        )
        assert front.fields == {"description": "API rules", "paths": "src/**"}
        assert body == "x"


class TestScope:
    @pytest.mark.parametrize(
        ("text", "kind", "expected"),
        [
            ("---\npaths:\n  - src/**\n---\nx", "claude", ("scoped", ("src/**",))),
            ("---\npaths: src/**/*.{ts,tsx}\n---\nx", "claude", ("scoped", ("src/**/*.{ts,tsx}",))),
            (
                "---\nglobs: src/**/*.ts,src/**/*.{js,jsx}\nalwaysApply: false\n---\nx",
                "cursor",
                ("scoped", ("src/**/*.ts", "src/**/*.{js,jsx}")),
            ),
            ("---\nglobs: src/**\nalwaysApply: true\n---\nx", "cursor", ("always", ())),
            ("---\ndescription: migrations\n---\nx", "cursor", ("manual", ())),
            ("plain rule", "cursor", ("manual", ())),
            ("plain rule", "cline", ("always", ())),
            ("---\napplyTo: '**/*.py'\n---\nx", "copilot", ("scoped", ("**/*.py",))),
        ],
    )
    def test_activation_and_globs(
        self, text: str, kind: str, expected: tuple[str, tuple[str, ...]]
    ) -> None:
        front, _ = split_front_matter(text, "r")
        assert scope_of(front, kind, "r") == expected

    def test_always_apply_must_be_a_boolean(self) -> None:
        front, _ = split_front_matter("---\ndescription: d\nalwaysApply: yes\n---\nx", "r.mdc")
        with pytest.raises(
            RulesFileError, match=r"^r\.mdc:3: 'alwaysApply' must be true or false$"
        ):
            scope_of(front, "cursor", "r.mdc")

    def test_parse_rule_strips_front_matter_only_for_modular_files(self) -> None:
        text = (
            "---\npaths: [docs/**]\n---\n"
            "Write short docs.\n\n## Compact instructions\nKeep links.\n"
        )
        modular = parse_rule(
            text, "r.md", kind="claude", level="root", base="/r", front_matter=True
        )
        assert (modular.text, modular.activation, modular.scope) == (
            "Write short docs.\n\n## Compact instructions\nKeep links.\n",
            "scoped",
            ("docs/**",),
        )
        assert modular.instructions == "Keep links."
        fixed = parse_rule(
            text, "CLAUDE.md", kind="claude", level="root", base="/r", front_matter=False
        )
        assert (fixed.text, fixed.activation) == (text, "always")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("src/**/*.ts", "src/a/b/c.ts", True),
        ("src/**/*.ts", "src/c.ts", True),
        ("src/**/*.ts", "lib/src/c.ts", False),
        ("src/*.py", "src/x/a.py", False),
        ("src/*.py", "src/a.py", True),
        ("*.py", "pkg/deep/a.py", True),
        ("*.py", "a.pyc", False),
        ("src/**/*.{ts,tsx}", "src/ui/a.tsx", True),
        ("src/**/*.{ts,tsx}", "src/ui/a.js", False),
        ("docs/", "docs/a/b.md", True),
        ("src/api", "src/api/users.py", True),
        ("/src/*.py", "src/a.py", True),
        ("./src/?.py", "src/a.py", True),
        ("src/[ab].py", "src/c.py", False),
        ("src/**", "src", False),
        ("", "src/a.py", False),
    ],
)
def test_glob_matches(pattern: str, path: str, matches: bool) -> None:
    assert glob_matches(pattern, path) is matches


def test_touched_paths_relative_to_the_base_oldest_first_each_once() -> None:
    messages = [
        calls(("c1", "Read", {"file_path": "/repo/src/api/users.py"})),
        calls(
            ("c2", "Edit", {"file_path": "src/web/page.py"}),
            ("c3", "Read", {"file_path": "/elsewhere/notes.md"}),
        ),
        calls(("c4", "Bash", {"command": "cat docs/guide.md"})),
        calls(("c5", "Read", {"file_path": "/repo/src/api/users.py"})),
        calls(("c6", "Grep", {"pattern": "x"})),
    ]
    assert touched_paths(messages, cwd="/repo/pkg", base="/repo") == (
        "src/api/users.py",
        "pkg/src/web/page.py",
        "pkg/docs/guide.md",
    )


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("AGENTS.override.md|AGENTS.md", "agents"),
        (".claude/rules/**/*.md", "claude"),
        ("CLAUDE.local.md", "claude"),
        (".gemini/GEMINI.md", "gemini"),
        (".cursor/rules/**/*.mdc", "cursor"),
        (".clinerules", "cline"),
        (".github/copilot-instructions.md", "copilot"),
        ("RULES.md", "custom"),
    ],
)
def test_rule_kind(name: str, kind: str) -> None:
    assert rule_kind(name) == kind
