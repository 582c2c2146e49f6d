"""Skills as values and on disk: a ``SKILL.md`` parsed (one-line description, body, files
listed by path), errors naming the file and the line, discovery from the skills folders with
the nearer one winning a name (and a note), and the catalog in the head: 30 skills cost
exactly their catalog lines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxengine.assembly import ContextAssembler, Skill, parse_skill
from ctxengine.errors import ConfigError, SkillFileError
from ctxengine.model import user
from ctxengine.workspace import discover_skills
from hand_estimator import HandEstimator

EST = HandEstimator()

PDF = """---
name: pdf
description: >
  Fill PDF forms and
  extract their fields.
license: MIT
---

# PDF forms

1. Read the form with scripts/read.py.
2. Fill it.
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def skill_md(name: str, description: str, body: str = "Do it.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


class TestParse:
    def test_front_matter_body_and_files(self) -> None:
        files = (".claude/skills/pdf/references/forms.md", ".claude/skills/pdf/scripts/read.py")
        skill = parse_skill(PDF, ".claude/skills/pdf/SKILL.md", files=files)
        assert skill == Skill(
            name="pdf",
            description="Fill PDF forms and extract their fields.",
            path=".claude/skills/pdf/SKILL.md",
            body="# PDF forms\n\n1. Read the form with scripts/read.py.\n2. Fill it.",
            files=files,
        )
        assert skill.folder == ".claude/skills/pdf"
        assert skill.catalog_line == (
            "- pdf: Fill PDF forms and extract their fields. (.claude/skills/pdf/SKILL.md)"
        )

    def test_quoted_crlf_and_plain_multi_line_descriptions(self) -> None:
        crlf = '---\r\nname: "csv"\r\ndescription: "Clean CSV files."\r\n---\r\nBody.\r\n'
        one = parse_skill(crlf, "s/csv/SKILL.md")
        assert (one.name, one.description, one.body) == ("csv", "Clean CSV files.", "Body.")
        plain = "---\nname: csv\ndescription: Clean CSV\n  files   quickly.\n---\nBody.\n"
        assert parse_skill(plain, "s/csv/SKILL.md").description == "Clean CSV files quickly."

    def test_notes_on_a_folder_name_and_a_long_description(self) -> None:
        long = "x" * 1_025
        skill = parse_skill(skill_md("pdf", long), "skills/pdf-tools/SKILL.md")
        assert skill.notes == (
            "name 'pdf' differs from its folder 'pdf-tools'",
            "description of 1,025 characters (the specification allows 1,024)",
        )

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("# No front matter\n", "s/a/SKILL.md:1: no front matter: a SKILL.md opens with a "
             "'---' block giving name and description"),
            ("---\ndescription: d\n---\nb\n", "s/a/SKILL.md:1: the front matter has no 'name'"),
            ("---\nname: a\n---\nb\n", "s/a/SKILL.md:1: the front matter has no 'description'"),
            ("---\nname: a\n\ndescription:\n---\nb\n", "s/a/SKILL.md:4: 'description' is empty"),
            ("---\nname: ''\ndescription: d\n---\n", "s/a/SKILL.md:2: 'name' is empty"),
            ("---\nname: [a, b]\ndescription: d\n---\n",
             "s/a/SKILL.md:2: 'name' must be a text, not a list or a boolean"),
            ("---\nname: a\ndescription: true\n---\n",
             "s/a/SKILL.md:3: 'description' must be a text, not a list or a boolean"),
            ("---\nname: My Skill\ndescription: d\n---\n",
             "s/a/SKILL.md:2: 'name' must be 1-64 lowercase letters, digits and single "
             "hyphens, neither first nor last: 'My Skill'"),
            ("---\nname: a--b\ndescription: d\n---\n",
             "s/a/SKILL.md:2: 'name' must be 1-64 lowercase letters, digits and single "
             "hyphens, neither first nor last: 'a--b'"),
            ("---\nname: a\ndescription: d\n", "s/a/SKILL.md:1: front matter opened with '---' "
             "is never closed"),
            ("---\nname: a\ndescription: d\nnot a key\n---\n", "s/a/SKILL.md:4: front matter "
             "line is not 'key: value': 'not a key'"),
        ],
    )  # fmt: skip
    def test_errors_name_the_file_and_the_line(self, text: str, message: str) -> None:
        with pytest.raises(SkillFileError) as caught:
            parse_skill(text, "s/a/SKILL.md")
        assert str(caught.value) == message
        assert caught.value.path == "s/a/SKILL.md"

    def test_the_longest_name_allowed(self) -> None:
        name = "a" * 64
        assert parse_skill(skill_md(name, "d"), f"s/{name}/SKILL.md").name == name
        with pytest.raises(SkillFileError, match="must be 1-64"):
            parse_skill(skill_md(name + "a", "d"), "s/x/SKILL.md")


class TestDiscovery:
    @pytest.fixture
    def tree(self, tmp_path: Path) -> tuple[Path, Path]:
        """A home folder and a repository whose working directory is ``repo/app``."""
        home, repo = tmp_path / "home", tmp_path / "repo"
        (repo / ".git").mkdir(parents=True)
        write(repo / ".claude/skills/pdf/SKILL.md", skill_md("pdf", "Root pdf."))
        write(repo / ".claude/skills/pdf/references/forms.md", "forms")
        write(repo / ".claude/skills/pdf/scripts/lib/fill.py", "print(1)")
        write(repo / ".claude/skills/pdf/notes.txt", "not listed")
        write(repo / ".agents/skills/csv/SKILL.md", skill_md("csv", "Clean CSV."))
        write(repo / ".agents/skills/no-skill/README.md", "no SKILL.md: not a skill")
        write(repo / "app/.claude/skills/pdf/SKILL.md", skill_md("pdf", "App pdf."))
        write(home / ".claude/skills/csv/SKILL.md", skill_md("csv", "User csv."))
        write(home / ".agents/skills/lint/SKILL.md", skill_md("lint", "Lint it."))
        return home, repo

    def test_every_folder_nearest_first_and_the_nearer_skill_wins(
        self, tree: tuple[Path, Path]
    ) -> None:
        home, repo = tree
        found = discover_skills(repo / "app", home=home)
        assert found.root == repo.as_posix()
        assert found.searched == (
            "app/.claude/skills",
            ".claude/skills",
            ".agents/skills",
            "~/.claude/skills",
            "~/.agents/skills",
        )
        assert [(s.name, s.description, s.path, s.level, s.root) for s in found.skills] == [
            ("csv", "Clean CSV.", ".agents/skills/csv/SKILL.md", "project", ".agents/skills"),
            ("lint", "Lint it.", "~/.agents/skills/lint/SKILL.md", "user", "~/.agents/skills"),
            ("pdf", "App pdf.", "app/.claude/skills/pdf/SKILL.md", "project", "app/.claude/skills"),
        ]  # fmt: skip
        assert [s.path for s in found.shadowed] == [
            ".claude/skills/pdf/SKILL.md",
            "~/.claude/skills/csv/SKILL.md",
        ]
        assert found.shadowed[0].files == (
            ".claude/skills/pdf/references/forms.md",
            ".claude/skills/pdf/scripts/lib/fill.py",
        )
        assert found.notes == (
            ".claude/skills/pdf/SKILL.md: skill 'pdf' is also defined by "
            "app/.claude/skills/pdf/SKILL.md, which is nearer and wins",
            "~/.claude/skills/csv/SKILL.md: skill 'csv' is also defined by "
            ".agents/skills/csv/SKILL.md, which is nearer and wins",
        )

    def test_given_folders_first_configurable_dirs_and_no_user_level(
        self, tree: tuple[Path, Path], tmp_path: Path
    ) -> None:
        home, repo = tree
        write(tmp_path / "extra/pdf/SKILL.md", skill_md("pdf", "Extra pdf."))
        write(tmp_path / "single/SKILL.md", skill_md("single", "One skill folder."))
        found = discover_skills(
            repo,
            home=home,
            dirs=(".agents/skills",),
            user_dirs=(),
            given=(tmp_path / "extra", tmp_path / "single"),
        )
        extra, single = (tmp_path / "extra").as_posix(), (tmp_path / "single").as_posix()
        assert found.searched == (extra, single, ".agents/skills")
        assert [(s.name, s.path, s.level) for s in found.skills] == [
            ("csv", ".agents/skills/csv/SKILL.md", "project"),
            ("pdf", f"{extra}/pdf/SKILL.md", "given"),
            ("single", f"{single}/SKILL.md", "given"),
        ]
        assert found.home is None
        with pytest.raises(ConfigError, match="skills folder not found"):
            discover_skills(repo, home=home, given=("nowhere",))

    def test_a_linked_folder_counts_once(self, tmp_path: Path) -> None:
        repo = tmp_path / "repo"
        (repo / ".git").mkdir(parents=True)
        write(repo / ".agents/skills/pdf/SKILL.md", skill_md("pdf", "Pdf."))
        (repo / ".claude").mkdir()
        os.symlink(repo / ".agents/skills", repo / ".claude/skills")
        found = discover_skills(repo, home=tmp_path / "nohome")
        assert [s.path for s in found.skills] == [".claude/skills/pdf/SKILL.md"]
        assert found.shadowed == () and found.notes == ()

    def test_a_bad_skill_file_stops_discovery_naming_it(self, tmp_path: Path) -> None:
        repo = tmp_path / "repo"
        (repo / ".git").mkdir(parents=True)
        write(repo / ".claude/skills/bad/SKILL.md", "---\nname: bad\n---\nbody\n")
        with pytest.raises(SkillFileError) as caught:
            discover_skills(repo, home=tmp_path)
        assert str(caught.value) == (
            ".claude/skills/bad/SKILL.md:1: the front matter has no 'description'"
        )


class TestCatalog:
    def catalog(self, n: int = 30) -> list[Skill]:
        """``n`` skills, each with a 2,000-character body the head must not show."""
        return [
            Skill(
                f"skill-{i:02d}",
                f"Does task {i:02d}.",
                f".claude/skills/skill-{i:02d}/SKILL.md",
                f"BODY {i:02d} " + "b" * 1_992,
            )
            for i in range(n)
        ]

    def test_thirty_skills_cost_exactly_their_catalog_lines(self) -> None:
        skills = self.catalog()
        head = ContextAssembler(skills=list(reversed(skills))).build(None, EST)
        lines = [s.catalog_line for s in skills]
        assert lines[0] == "- skill-00: Does task 00. (.claude/skills/skill-00/SKILL.md)"
        assert {len(line) for line in lines} == {60}
        section = head.section("skills")
        assert section.text == "# Skills\n\n" + "\n".join(lines)
        # "# Skills\n\n" (10) + 30 lines × 60 + 29 newlines = 1,839 characters → 460 tokens.
        assert len(section.text) == 1_839
        assert section.tokens == 460
        assert section.sources == tuple(f"skill-{i:02d}" for i in range(30))
        assert head.text == section.text
        assert head.tokens == 4 + 460  # the system message: nothing but the catalog
        assert "BODY" not in head.text

    def test_the_catalog_is_what_a_session_sends_until_a_skill_is_activated(self) -> None:
        from ctxengine.engine import Session

        base = Session(8_000, estimator=EST, head=ContextAssembler(base="Be brief."))
        full = Session(
            8_000, estimator=EST, head=ContextAssembler(base="Be brief.", skills=self.catalog())
        )
        for s in (base, full):
            s.append(user("hello"))
        plain, with_skills = base.prepare(), full.prepare()
        # "Be brief." (9) + "\n\n" + the 1,839-character section = 1,850 → 463 + 4.
        assert [full.estimator.message(m) for m in with_skills.messages] == [467, 6]
        assert [base.estimator.message(m) for m in plain.messages] == [7, 6]
        assert all("BODY" not in m.text for m in with_skills.messages)

    def test_a_name_given_twice_is_refused(self) -> None:
        one = Skill("pdf", "A.", "a/pdf/SKILL.md", "a")
        two = Skill("pdf", "B.", "b/pdf/SKILL.md", "b")
        with pytest.raises(ConfigError) as caught:
            ContextAssembler(skills=[one, two])
        assert str(caught.value) == "skill 'pdf' is given twice: a/pdf/SKILL.md and b/pdf/SKILL.md"

    def test_a_changed_catalog_mid_epoch_is_a_cache_break_naming_the_skill(self) -> None:
        skills = self.catalog(2)
        head = ContextAssembler(skills=skills)
        head.build(None, EST)
        head.set_skills([*skills, Skill("lint", "Lint.", "s/lint/SKILL.md", "x")])
        head.build(None, EST)
        assert [(b.section, b.cause) for b in head.breaks] == [
            ("skills", "skill catalog changed mid-epoch: added 'lint'")
        ]
        assert head.skill("lint") is not None and head.skill("nope") is None
        assert head.skills == {
            "lint": "Lint.",
            "skill-00": "Does task 00.",
            "skill-01": "Does task 01.",
        }
