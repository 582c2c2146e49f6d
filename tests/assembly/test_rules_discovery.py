"""Rules files found on disk: every level in order (user, repository root, the folders down
to the working directory), overrides, folders and globs, configurable names, ``@path``
imports with their depth limit and cycle detection."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxengine.errors import ConfigError, RulesFileError
from ctxengine.workspace import discover_rules, find_root


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A home folder and a repository whose working directory is ``repo/pkg/app``."""
    home, repo = tmp_path / "home", tmp_path / "repo"
    write(home / ".codex/AGENTS.override.md", "codex override\n")
    write(home / ".codex/AGENTS.md", "codex global (shadowed)\n")
    write(home / ".claude/CLAUDE.md", "claude user\n")
    write(home / ".gemini/GEMINI.md", "gemini user\n")
    (repo / ".git").mkdir(parents=True)
    write(repo / "AGENTS.md", "root agents\n")
    write(repo / "CLAUDE.md", "root claude\n")
    write(repo / ".claude/rules/api.md", "---\npaths:\n  - src/api/**\n---\napi rule\n")
    write(repo / ".claude/rules/style/py.md", "python style\n")
    write(repo / ".cursor/rules/ts.mdc", "---\nglobs: src/**/*.ts\nalwaysApply: false\n---\nts\n")
    write(repo / ".cursor/rules/migrate.mdc", "---\ndescription: when migrating\n---\nmig\n")
    write(repo / ".clinerules/02-tests.md", "cline tests\n")
    write(repo / ".clinerules/01-style.md", "cline style\n")
    write(repo / ".github/copilot-instructions.md", "copilot\n")
    write(repo / "pkg/AGENTS.override.md", "pkg override\n")
    write(repo / "pkg/AGENTS.md", "pkg agents (shadowed)\n")
    write(repo / "pkg/app/GEMINI.md", "app gemini\n")
    write(repo / "pkg/app/CLAUDE.local.md", "app local\n")
    write(repo / "pkg/app/.github/copilot-instructions.md", "   \n")  # empty: skipped
    return home, repo


def test_a_rules_file_at_each_level_in_load_order(tree: tuple[Path, Path]) -> None:
    home, repo = tree
    found = discover_rules(repo / "pkg/app", home=home)
    assert found.root == repo.as_posix()
    assert found.cwd == (repo / "pkg/app").as_posix()
    assert found.searched == (
        home.as_posix(),
        repo.as_posix(),
        (repo / "pkg").as_posix(),
        (repo / "pkg/app").as_posix(),
    )
    assert [(f.path, f.level, f.kind, f.activation, f.scope) for f in found.files] == [
        ("~/.codex/AGENTS.override.md", "user", "agents", "always", ()),
        ("~/.claude/CLAUDE.md", "user", "claude", "always", ()),
        ("~/.gemini/GEMINI.md", "user", "gemini", "always", ()),
        ("AGENTS.md", "root", "agents", "always", ()),
        ("CLAUDE.md", "root", "claude", "always", ()),
        (".claude/rules/api.md", "root", "claude", "scoped", ("src/api/**",)),
        (".claude/rules/style/py.md", "root", "claude", "always", ()),
        (".cursor/rules/migrate.mdc", "root", "cursor", "manual", ()),
        (".cursor/rules/ts.mdc", "root", "cursor", "scoped", ("src/**/*.ts",)),
        (".clinerules/01-style.md", "root", "cline", "always", ()),
        (".clinerules/02-tests.md", "root", "cline", "always", ()),
        (".github/copilot-instructions.md", "root", "copilot", "always", ()),
        ("pkg/AGENTS.override.md", "directory", "agents", "always", ()),
        ("pkg/app/CLAUDE.local.md", "cwd", "claude", "always", ()),
        ("pkg/app/GEMINI.md", "cwd", "gemini", "always", ()),
    ]
    assert {f.base for f in found.files} == {repo.as_posix()}
    assert found.files[5].text == "api rule\n"


def test_an_empty_override_gives_way_to_agents_md(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path / "AGENTS.override.md", "\n")
    write(tmp_path / "AGENTS.md", "agents\n")
    found = discover_rules(tmp_path, user_names=())
    assert [f.path for f in found.files] == ["AGENTS.md"]
    assert found.home is None


def test_without_a_repository_only_the_working_directory_is_read(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "outer\n")
    write(tmp_path / "inner/AGENTS.md", "inner\n")
    found = discover_rules(tmp_path / "inner", user_names=())
    assert found.root is None
    assert [(f.path, f.level) for f in found.files] == [("AGENTS.md", "cwd")]
    assert find_root(tmp_path / "inner") is None


def test_a_clinerules_file_is_read_as_one_rule(tmp_path: Path) -> None:
    write(tmp_path / ".clinerules", "one file\n")
    found = discover_rules(tmp_path, user_names=())
    assert [(f.path, f.kind, f.text) for f in found.files] == [
        (".clinerules", "cline", "one file\n")
    ]


def test_names_are_configurable(tree: tuple[Path, Path]) -> None:
    home, repo = tree
    write(repo / "pkg/RULES.md", "custom\n")
    found = discover_rules(
        repo / "pkg/app",
        home=home,
        names=("RULES.md", "AGENTS.md"),
        user_names=(".claude/CLAUDE.md",),
    )
    assert [(f.path, f.kind) for f in found.files] == [
        ("~/.claude/CLAUDE.md", "claude"),
        ("AGENTS.md", "agents"),
        ("pkg/RULES.md", "custom"),
        ("pkg/AGENTS.md", "agents"),
    ]


def test_a_root_below_the_working_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(ConfigError, match=r"must be .* or a folder above it"):
        discover_rules(tmp_path, root=tmp_path / "sub", user_names=())
    with pytest.raises(ConfigError, match="not a folder"):
        discover_rules(tmp_path / "missing", user_names=())


class TestImports:
    def test_imports_follow_their_importer_once_each_outside_code(self, tmp_path: Path) -> None:
        (tmp_path / ".git").mkdir()
        write(
            tmp_path / "CLAUDE.md",
            "See @docs/a.md and @docs/b.md.\n"
            "Not `@docs/span.md`, nor @missing.md, nor an email a@docs/b.md\n"
            "```\n@docs/fenced.md\n```\n",
        )
        write(tmp_path / "docs/a.md", "a imports @./b.md\n")
        write(tmp_path / "docs/b.md", "b\n")
        for name in ("span", "fenced"):
            write(tmp_path / f"docs/{name}.md", name)
        write(tmp_path / "AGENTS.md", "@docs/span.md is not expanded in AGENTS.md\n")
        found = discover_rules(tmp_path, user_names=())
        assert [(f.path, f.level, f.imported_by) for f in found.files] == [
            ("AGENTS.md", "root", None),
            ("CLAUDE.md", "root", None),
            ("docs/a.md", "import", "CLAUDE.md"),
            ("docs/b.md", "import", "docs/a.md"),
        ]
        assert found.files[1].text.startswith("See @docs/a.md")  # the importer is verbatim

    def test_an_import_cycle_is_an_error_naming_the_cycle(self, tmp_path: Path) -> None:
        (tmp_path / ".git").mkdir()
        write(tmp_path / "CLAUDE.md", "root\n@docs/a.md\n")
        write(tmp_path / "docs/a.md", "a\n\n@b.md\n")
        write(tmp_path / "docs/b.md", "@../CLAUDE.md\n")
        with pytest.raises(RulesFileError) as err:
            discover_rules(tmp_path, user_names=())
        assert str(err.value) == (
            "docs/b.md:1: import cycle: CLAUDE.md → docs/a.md → docs/b.md → CLAUDE.md"
        )

    def test_imports_stop_after_five_hops_with_a_note(self, tmp_path: Path) -> None:
        write(tmp_path / "CLAUDE.md", "@f1.md\n")
        for k in range(1, 7):
            write(tmp_path / f"f{k}.md", f"file {k}\n@f{k + 1}.md\n")
        found = discover_rules(tmp_path, user_names=())
        assert [f.path for f in found.files] == [
            "CLAUDE.md",
            "f1.md",
            "f2.md",
            "f3.md",
            "f4.md",
            "f5.md",
        ]
        assert found.files[-1].notes == (
            "@f6.md (line 2) not imported: more than 5 hops from CLAUDE.md",
        )
        assert [f.notes for f in found.files[:-1]] == [()] * 5

    def test_a_missing_import_gets_a_note_and_a_mention_none(self, tmp_path: Path) -> None:
        (tmp_path / ".git").mkdir()
        write(
            tmp_path / "pkg/GEMINI.md",
            "@docs/style.md\nAsk @alice first.\nSee @notes.txt.\n`@code/span.md`\n@here.md\n",
        )
        write(tmp_path / "pkg/here.md", "@~/missing/prefs.md\n")
        found = discover_rules(tmp_path / "pkg", home=tmp_path / "home", user_names=())
        assert [(f.path, f.notes) for f in found.files] == [
            (
                "pkg/GEMINI.md",
                (
                    "@docs/style.md (line 1) not imported: no such file",
                    "@notes.txt (line 3) not imported: no such file",
                ),
            ),
            ("pkg/here.md", ("@~/missing/prefs.md (line 1) not imported: no such file",)),
        ]
        assert found.files[0].text.startswith("@docs/style.md\nAsk @alice")  # left as text

    def test_an_imported_file_loads_with_its_scoped_importer(self, tmp_path: Path) -> None:
        write(
            tmp_path / ".claude/rules/api.md",
            "---\npaths: [src/api/**]\n---\n@../../api-notes.md\n",
        )
        write(tmp_path / "api-notes.md", "notes\n")
        found = discover_rules(tmp_path, user_names=())
        assert [(f.path, f.activation, f.scope) for f in found.files] == [
            (".claude/rules/api.md", "scoped", ("src/api/**",)),
            ("api-notes.md", "scoped", ("src/api/**",)),
        ]


def test_a_bad_front_matter_names_the_file_and_line(tmp_path: Path) -> None:
    write(tmp_path / ".cursor/rules/x.mdc", "---\nglobs: a\nalwaysApply: maybe\n---\nx\n")
    with pytest.raises(RulesFileError, match=r"^\.cursor/rules/x\.mdc:3: 'alwaysApply' must be"):
        discover_rules(tmp_path, user_names=())


def test_compact_instructions_are_read_from_each_file(tmp_path: Path) -> None:
    write(
        tmp_path / "AGENTS.md", "# Rules\nUse tabs.\n\n## Compact instructions\nKeep test names.\n"
    )
    [rule] = discover_rules(tmp_path, user_names=()).files
    assert rule.instructions == "Keep test names."
