"""Files changed indirectly: scripts, formatters, patches, git diff/status output."""

from __future__ import annotations

import pytest

from ctxengine.summarizers.shell import FileEffect, commands, shell_effects
from ctxengine.summarizers.writes import (
    Execution,
    PatchRun,
    Written,
    changed_in_output,
    diff_redirect,
    executions,
    heredoc_files,
    opens_files,
    patch_files,
    patch_runs,
    patched_in_output,
    python_writes,
    reformatted_in_output,
    source_writes,
)

FIX_SCRIPT = """import re
TARGET = 'pkg/dataset.py'
with open('pkg/dataset.py', 'r') as f:
    content = f.read()
with open(TARGET, "w") as f:
    f.write(content.replace('a', 'b'))
Path("notes/out.txt").write_text("x")
shutil.copy2('pkg/dataset.py', 'pkg/dataset.py.bak')
os.remove("old.tmp")
"""


def test_python_writes_literal_and_once_bound_paths() -> None:
    assert python_writes(FIX_SCRIPT) == (
        FileEffect("wrote", "pkg/dataset.py"),
        FileEffect("wrote", "notes/out.txt"),
        FileEffect("wrote", "pkg/dataset.py.bak"),
        FileEffect("deleted", "old.tmp"),
    )


def test_a_name_bound_to_two_paths_is_not_guessed() -> None:
    source = "p = 'a.py'\np = 'b.py'\nopen(p, 'w').write('x')\n"
    assert python_writes(source) == ()


def test_node_and_shell_sources() -> None:
    assert source_writes("fs.writeFileSync('dist/a.js', s)", "node") == (
        FileEffect("wrote", "dist/a.js"),
    )
    assert source_writes("cat a.txt\nsed -i 's/a/b/' b.txt\n", "shell") == (
        FileEffect("edited", "b.txt"),
    )
    assert opens_files("open('x.py').read()", "python") is True
    assert opens_files("import django\nprint(1)", "python") is False


def test_heredocs_feed_files_and_interpreters() -> None:
    command = (
        "cd /testbed && cat > fix.py << 'EOF'\nopen('a.py', 'w').write('x')\nEOF\n"
        "python fix.py && python3 - <<PY\nprint(2)\nPY\nnode -e \"fs.writeFileSync('b.js', '')\""
    )
    assert heredoc_files(command) == (
        Written("fix.py", "open('a.py', 'w').write('x')", "/testbed"),
    )
    assert executions(command) == (
        Execution("python", path="fix.py", cwd="/testbed"),
        Execution("python", code="print(2)", cwd="/testbed"),
        Execution("node", code="fs.writeFileSync('b.js', '')", cwd="/testbed"),
    )
    assert executions("python -m pytest -q && bash -lc 'ls'") == ()
    assert executions("./tools/gen.py --all") == (Execution("python", path="tools/gen.py"),)


def test_patch_runs_and_their_files() -> None:
    assert patch_runs("cd /t && patch -p1 < fix.patch") == (PatchRun("fix.patch", 1, cwd="/t"),)
    assert patch_runs("patch src/a.py < fix.patch") == (
        PatchRun("fix.patch", -1, "", ("src/a.py",)),
    )
    assert patch_runs("git apply --check x.diff") == ()
    assert patch_runs("git apply x.diff") == (PatchRun("x.diff", 1),)
    diff = (
        "--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x\n+y\n"
        "--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n"
    )
    assert patch_files(diff, 1) == ("src/a.py", "old.py")
    assert patch_files(diff, -1) == ("src/a.py", "old.py")
    assert patch_files("--- x.py\n+++ x.py\n", 0) == ("x.py",)
    assert patched_in_output("patching file django/db/a.py\nHunk #1 succeeded") == (
        "django/db/a.py",
    )


def test_git_diff_status_and_submissions_show_changed_files() -> None:
    diff = "diff --git a/src/a.py b/src/a.py\nindex 1..2 100644\n"
    assert changed_in_output("git diff", diff) == ("src/a.py",)
    assert changed_in_output("submit", diff) == ("src/a.py",)
    assert changed_in_output("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat p.txt", diff) == (
        "src/a.py",
    )
    assert changed_in_output("cat saved.diff", diff) == ()
    assert changed_in_output("git show HEAD", diff) == ()
    long_status = (
        "On branch main\nChanges not staged for commit:\n"
        "\tmodified:   src/a.py\n\tdeleted:    src/b.py\n\nUntracked files:\n\tnew.py\n"
    )
    assert changed_in_output("git status", long_status) == ("src/a.py", "src/b.py")
    short = " M src/a.py\nA  src/c.py\n?? scratch.py\n"
    assert changed_in_output("git status --short", short) == ("src/a.py", "src/c.py")
    stat = " src/a.py | 4 ++--\n 1 file changed\n"
    assert changed_in_output("git diff --stat", stat) == ("src/a.py",)
    assert diff_redirect("cd /t && git diff -- src/a.py > patch.txt") == ("patch.txt",)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("black src/app.py tests/", [("formatted", "src/app.py")]),
        ("black --check src/app.py", []),
        ("ruff format src/app.py", [("formatted", "src/app.py")]),
        ("ruff check --fix src/app.py", [("formatted", "src/app.py")]),
        ("ruff check src/app.py", []),
        ("python -m black a.py", [("formatted", "a.py")]),
        ("prettier --write web/app.ts", [("formatted", "web/app.ts")]),
        ("prettier web/app.ts", []),
        ("gofmt -w main.go", [("formatted", "main.go")]),
        ("mix format lib/a.ex", [("formatted", "lib/a.ex")]),
        ("cargo fmt", []),
    ],
)
def test_formatters_rewrite_the_files_they_name(
    command: str, expected: list[tuple[str, str]]
) -> None:
    assert [(e.action, e.path) for e in shell_effects(command)] == expected


def test_commands_carry_cwd_redirections_stdin_heredoc_and_pipes() -> None:
    (first, second) = commands("cd /r && patch -p1 < x.patch | tee log <<EOF\nbody\nEOF")
    assert (first.argv, first.cwd, first.stdin, first.piped) == (
        ("patch", "-p1"),
        "/r",
        "x.patch",
        True,
    )
    assert (second.argv, second.writes, second.heredoc, second.piped) == (
        ("tee", "log"),
        (),
        "body",
        False,
    )


def test_formatter_output_names_the_files_it_changed() -> None:
    assert reformatted_in_output("make fmt", "reformatted src/a.py\nFixing /r/b.py\n") == (
        "src/a.py",
        "/r/b.py",
    )
    prettier = "src/a.ts 4ms (unchanged)\nsrc/b.ts 31ms\n"
    assert reformatted_in_output("npm run format", prettier) == ("src/b.ts",)
    assert reformatted_in_output("npx prettier --write src", "src/b.ts 31ms\n") == ("src/b.ts",)
    # without prettier named or its "(unchanged)" lines, "NAME 31ms" is no formatter's report
    assert reformatted_in_output("node bench.js", "src/b.ts 31ms\n") == ()
    # a log read back is no run
    assert reformatted_in_output("cat fmt.log", "reformatted src/a.py\n") == ()
