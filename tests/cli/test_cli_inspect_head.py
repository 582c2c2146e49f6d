"""``inspect --rules-from DIR``: the head's sections with their tokens and the rules files
found, as text and under ``head`` with ``--json`` (checked against its schema); with a
session, the files it read load the path-scoped rules they match."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

import pytest
from cli_helpers import validate

from ctxengine.cli import main
from ctxengine.tokens.estimate import HeuristicEstimator

EST = HeuristicEstimator()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    home, repo = tmp_path / "home", tmp_path / "repo"
    write(home / ".claude/CLAUDE.md", "Answer in English.\n")
    (repo / ".git").mkdir(parents=True)
    write(
        repo / "AGENTS.md", "Never add a co-author trailer.\n\n## Compact instructions\nKeep ids.\n"
    )
    write(repo / ".claude/rules/api.md", "---\npaths:\n  - src/api/**\n---\nValidate bodies.\n")
    return home, repo


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def rules_text(*blocks: str) -> str:
    return "# Rules\n\n" + "\n\n".join(blocks)


USER = "Contents of ~/.claude/CLAUDE.md:\n\nAnswer in English.\n"
AGENTS = (
    "Contents of AGENTS.md:\n\nNever add a co-author trailer.\n\n"
    "## Compact instructions\nKeep ids.\n"
)
API = (
    "Contents of .claude/rules/api.md (applies to files matching src/api/**):\n\nValidate bodies.\n"
)


def test_the_head_of_a_folder_as_json(
    capsys: pytest.CaptureFixture[str], project: tuple[Path, Path]
) -> None:
    home, repo = project
    code, out, err = run(capsys, "inspect", "--rules-from", repo, "--home", home, "--json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    validate(doc, "inspect")
    head = doc["head"]
    assert list(doc) == ["tokenizer", "head"] and doc["tokenizer"] == "estimate"
    assert (head["cwd"], head["root"], head["home"]) == (
        repo.resolve().as_posix(),
        repo.resolve().as_posix(),
        home.resolve().as_posix(),
    )
    assert head["searched"] == [home.resolve().as_posix(), repo.resolve().as_posix()]
    env = (
        f"# Environment\n\nDate: {date.today().isoformat()}\nWorking directory: "
        f"{repo.resolve().as_posix()}\nPlatform: {sys.platform}"
    )
    env_tokens = EST.text(env)
    assert [(s["name"], s["tokens"], s["volatile"], s["sources"]) for s in head["sections"]] == [
        ("base", 0, False, []),
        ("tools", 0, False, []),
        ("rules", EST.text(rules_text(USER, AGENTS)), False, ["~/.claude/CLAUDE.md", "AGENTS.md"]),
        ("skills", 0, False, []),
        ("memory", 0, False, []),
        ("environment", env_tokens, True, []),
        ("git_status", 0, True, []),
    ]
    assert [
        (r["path"], r["level"], r["kind"], r["activation"], r["scope"], r["loaded"])
        for r in head["rules"]
    ] == [
        ("~/.claude/CLAUDE.md", "user", "claude", "always", [], True),
        ("AGENTS.md", "root", "agents", "always", [], True),
        (".claude/rules/api.md", "root", "claude", "scoped", ["src/api/**"], False),
    ]
    assert [r["compact_instructions"] for r in head["rules"]] == [False, True, False]
    assert [r["tokens"] for r in head["rules"]] == [
        EST.text("Answer in English.\n"),
        EST.text("Never add a co-author trailer.\n\n## Compact instructions\nKeep ids.\n"),
        EST.text("Validate bodies.\n"),
    ]


def transcript(path: Path, file_path: str) -> Path:
    """A Claude Code session that reads ``file_path``."""
    lines = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "check the api"}},
        {
            "type": "assistant",
            "uuid": "a1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Read",
                        "input": {"file_path": file_path},
                    }
                ],
            },
        },
        {
            "type": "user",
            "uuid": "r1",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            },
        },
    ]
    path.write_text(
        "\n".join(json.dumps({"sessionId": "s1", **x}) for x in lines) + "\n", encoding="utf-8"
    )
    return path


def test_a_session_that_read_a_matching_file_loads_the_scoped_rule(
    capsys: pytest.CaptureFixture[str], project: tuple[Path, Path], tmp_path: Path
) -> None:
    home, repo = project
    read = transcript(tmp_path / "read.jsonl", "src/api/users.py")
    code, out, _ = run(capsys, "inspect", read, "--rules-from", repo, "--home", home, "--json")
    assert code == 0
    doc = json.loads(out)
    validate(doc, "inspect")
    assert doc["session_id"] == "s1"
    head = doc["head"]
    assert [r["loaded"] for r in head["rules"]] == [True, True, True]
    rules = next(s for s in head["sections"] if s["name"] == "rules")
    assert rules["tokens"] == EST.text(rules_text(USER, AGENTS, API))
    assert rules["sources"] == ["~/.claude/CLAUDE.md", "AGENTS.md", ".claude/rules/api.md"]
    other = transcript(tmp_path / "other.jsonl", "src/web/page.py")
    code, out, _ = run(capsys, "inspect", other, "--rules-from", repo, "--home", home, "--json")
    assert [r["loaded"] for r in json.loads(out)["head"]["rules"]] == [True, True, False]


def test_the_head_as_text(capsys: pytest.CaptureFixture[str], project: tuple[Path, Path]) -> None:
    home, repo = project
    code, out, _ = run(capsys, "inspect", "--rules-from", repo, "--home", home)
    assert code == 0
    lines = out.splitlines()
    rules_tokens = EST.text(rules_text(USER, AGENTS))
    assert lines[1:5] == [
        "Head",
        "section\ttokens\tvolatile\tfrom",
        "base\t0\t\t",
        "tools\t0\t\t",
    ]
    assert f"rules\t{rules_tokens}\t\t~/.claude/CLAUDE.md, AGENTS.md" in lines
    assert lines[-4:] == [
        "rules file\tlevel\tkind\ttokens\tloads",
        f"~/.claude/CLAUDE.md\tuser\tclaude\t{EST.text('Answer in English.' + chr(10))}\talways",
        f"AGENTS.md\troot\tagents\t{EST.text(AGENTS.split(chr(10) * 2, 1)[1])}\talways",
        f".claude/rules/api.md\troot\tclaude\t{EST.text('Validate bodies.' + chr(10))}\t"
        "when src/api/** is touched (not loaded)",
    ]


def test_an_import_cycle_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write(tmp_path / "CLAUDE.md", "@a.md\n")
    write(tmp_path / "a.md", "@CLAUDE.md\n")
    code, out, err = run(capsys, "inspect", "--rules-from", tmp_path, "--home", tmp_path / "none")
    assert (code, out) == (2, "")
    assert " ".join(err.split()) == "error: a.md:1: import cycle: CLAUDE.md → a.md → CLAUDE.md"


def test_a_missing_import_is_noted_as_text_and_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path / "pkg/GEMINI.md", "@docs/style.md\nUse tabs.\n")
    argv = ["inspect", "--rules-from", tmp_path / "pkg", "--home", tmp_path / "none"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert out.splitlines()[-1] == (
        "pkg/GEMINI.md: @docs/style.md (line 1) not imported: no such file"
    )
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    doc = json.loads(out)
    validate(doc, "inspect")
    assert [(r["path"], r["notes"]) for r in doc["head"]["rules"]] == [
        ("pkg/GEMINI.md", ["@docs/style.md (line 1) not imported: no such file"])
    ]


def skill(name: str, description: str, body: str = "Do it.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


@pytest.fixture
def skilled(project: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path, Path]:
    """The project with a project skill (and its files), a user skill it hides, and a
    skills folder given on the command line."""
    home, repo = project
    write(repo / ".claude/skills/pdf/SKILL.md", skill("pdf", "Fill PDF forms.", "x" * 4_000))
    write(repo / ".claude/skills/pdf/references/forms.md", "forms")
    write(repo / ".claude/skills/pdf/scripts/fill.py", "print()")
    write(home / ".claude/skills/pdf/SKILL.md", skill("pdf", "User pdf."))
    write(home / ".agents/skills/lint/SKILL.md", skill("lint", "Lint Python."))
    write(tmp_path / "extra/csv/SKILL.md", skill("csv", "Clean CSV."))
    return home, repo, tmp_path / "extra"


CATALOG = (
    "# Skills\n\n- csv: Clean CSV. ({extra}/csv/SKILL.md)\n"
    "- lint: Lint Python. (~/.agents/skills/lint/SKILL.md)\n"
    "- pdf: Fill PDF forms. (.claude/skills/pdf/SKILL.md)"
)
NOTE = (
    "~/.claude/skills/pdf/SKILL.md: skill 'pdf' is also defined by "
    ".claude/skills/pdf/SKILL.md, which is nearer and wins"
)


def test_the_skill_catalog_found_as_json(
    capsys: pytest.CaptureFixture[str], skilled: tuple[Path, Path, Path]
) -> None:
    home, repo, extra = skilled
    argv = ["inspect", "--rules-from", repo, "--home", home, "--skills-dir", extra, "--json"]
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    doc = json.loads(out)
    validate(doc, "inspect")
    head = doc["head"]
    catalog = CATALOG.format(extra=extra.resolve().as_posix())
    section = next(s for s in head["sections"] if s["name"] == "skills")
    # The catalog lines only: 4,000 characters of the pdf body are not in the head.
    assert (section["tokens"], section["sources"]) == (EST.text(catalog), ["csv", "lint", "pdf"])
    assert section["tokens"] < EST.text("x" * 4_000)
    assert [(s["name"], s["level"], s["path"], s["files"]) for s in head["skills"]] == [
        ("csv", "given", f"{extra.resolve().as_posix()}/csv/SKILL.md", []),
        ("lint", "user", "~/.agents/skills/lint/SKILL.md", []),
        (
            "pdf",
            "project",
            ".claude/skills/pdf/SKILL.md",
            [".claude/skills/pdf/references/forms.md", ".claude/skills/pdf/scripts/fill.py"],
        ),
    ]
    pdf = head["skills"][2]
    assert (pdf["catalog_tokens"], pdf["body_tokens"]) == (
        EST.text("- pdf: Fill PDF forms. (.claude/skills/pdf/SKILL.md)"),
        EST.text("x" * 4_000),
    )
    assert head["skill_notes"] == [NOTE]


def test_the_skill_catalog_as_text(
    capsys: pytest.CaptureFixture[str], skilled: tuple[Path, Path, Path]
) -> None:
    home, repo, _ = skilled
    code, out, _ = run(capsys, "inspect", "--rules-from", repo, "--home", home)
    assert code == 0
    catalog = (
        "# Skills\n\n- lint: Lint Python. (~/.agents/skills/lint/SKILL.md)\n"
        "- pdf: Fill PDF forms. (.claude/skills/pdf/SKILL.md)"
    )
    tokens = EST.text(catalog)
    lines = out.splitlines()
    assert f"skills\t{tokens}\t\tlint, pdf" in lines
    lint_line = EST.text("- lint: Lint Python. (~/.agents/skills/lint/SKILL.md)")
    pdf_line = EST.text("- pdf: Fill PDF forms. (.claude/skills/pdf/SKILL.md)")
    assert lines[-5:] == [
        f"Skills (catalog {tokens} tokens; bodies load when activated)",
        "skill\tlevel\tcatalog\tbody\tfiles\tpath",
        f"lint\tuser\t{lint_line}\t{EST.text('Do it.')}\t0\t~/.agents/skills/lint/SKILL.md",
        f"pdf\tproject\t{pdf_line}\t{EST.text('x' * 4_000):,}\t2\t.claude/skills/pdf/SKILL.md",
        NOTE,
    ]


def test_a_bad_skill_is_a_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".claude/skills/pdf/SKILL.md", "---\nname: PDF\ndescription: d\n---\n")
    code, out, err = run(capsys, "inspect", "--rules-from", tmp_path, "--home", tmp_path / "none")
    assert (code, out) == (2, "")
    assert " ".join(err.split()) == (
        "error: .claude/skills/pdf/SKILL.md:2: 'name' must be 1-64 lowercase letters, digits "
        "and single hyphens, neither first nor last: 'PDF'"
    )
