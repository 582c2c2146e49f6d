"""File effects read from shell command text and apply_patch patches."""

from __future__ import annotations

import pytest

from ctxengine.summarizers.shell import (
    CURRENT_FILE,
    FileEffect,
    looks_like_check,
    patch_effects,
    shell_effects,
)

R, E, W, C, D = "read", "edited", "wrote", "created", "deleted"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sed -n '1,200p' README.md", [(R, "README.md")]),
        ("cat -n a.py b.py | head -20", [(R, "a.py"), (R, "b.py")]),
        ("head -n 20 x.txt && tail -5 y.log", [(R, "x.txt"), (R, "y.log")]),
        ("nl -ba src/app.py | sed -n '10,40p'", [(R, "src/app.py")]),
        ("sed -i 's/a/b/' src/x.py", [(E, "src/x.py")]),
        ("sed -i.bak -e 's/a/b/' one.txt two.txt", [(E, "one.txt"), (E, "two.txt")]),
        ("perl -pi -e 's/a/b/' conf.ini", [(E, "conf.ini")]),
        ("echo hi > out.txt 2>&1", [(W, "out.txt")]),
        ("make 2>/dev/null >> build.log", [(W, "build.log")]),
        ("cmd 2>&1 | tee -a log.txt", [(W, "log.txt")]),
        ("touch new.md; rm -f old.md", [(C, "new.md"), (D, "old.md")]),
        ("FOO=1 sudo cat /etc/hosts", [(R, "/etc/hosts")]),
        ("ls -la src && rg --files src | sed -n '1,200p'", []),
        ("cat src/*.py $HOME/x", []),
        ('bash -lc "cat a.txt && git rm b.txt"', [(R, "a.txt"), (D, "b.txt")]),
        ("cat > f.py <<'EOF'\nimport os\nprint(1) > z\nEOF\npython f.py", [(W, "f.py")]),
        ('open "setup.py"', [(R, "setup.py")]),
        ("open pkg/mod.py 293\n", [(R, "pkg/mod.py")]),
        ("create reproduce.py\n", [(C, "reproduce.py")]),
        ("edit 1:3\nfoo > bar\nend_of_edit", [(E, CURRENT_FILE)]),
        ("pytest -q", []),
        ("echo 'unbalanced > x", []),
    ],
)
def test_shell_effects(command: str, expected: list[tuple[str, str]]) -> None:
    assert [(e.action, e.path) for e in shell_effects(command)] == expected


def test_moves_and_copies_name_both_paths() -> None:
    assert shell_effects("mv a.py b.py; cp -r tpl/ out/; git mv c d") == (
        FileEffect("moved", "a.py", "b.py"),
        FileEffect("copied", "tpl/", "out/"),
        FileEffect("moved", "c", "d"),
    )
    assert FileEffect("moved", "a.py", "b.py").modified == ("a.py", "b.py")
    assert FileEffect("copied", "tpl/", "out/").modified == ("out/",)
    assert FileEffect("read", "x").modified == ()


def test_patch_effects_cover_update_add_delete_and_move() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n"
        "*** Add File: tests/test_a.py\n+def test(): pass\n"
        "*** Delete File: old.txt\n"
        "*** Update File: src/b.py\n*** Move to: src/c.py\n@@\n-a\n+b\n*** End Patch"
    )
    assert patch_effects(patch) == (
        FileEffect("edited", "src/a.py"),
        FileEffect("created", "tests/test_a.py"),
        FileEffect("deleted", "old.txt"),
        FileEffect("moved", "src/b.py", "src/c.py"),
    )


def test_a_patch_in_a_heredoc_is_read_as_a_patch() -> None:
    command = (
        "apply_patch << 'PATCH'\n*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n"
        "*** End Patch\nPATCH"
    )
    assert shell_effects(command) == (FileEffect("edited", "a.py"),)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -q tests/x.py", True),
        ("cd app && npm run build", True),
        ("cargo test --all", True),
        ("git commit -m 'x'", True),
        ("uv run mypy src", True),
        ("ls -la", False),
        ("sed -n '1,10p' Makefile", False),
        ("git status", False),
    ],
)
def test_looks_like_check(command: str, expected: bool) -> None:
    assert looks_like_check(command) is expected


def test_a_quoted_newline_does_not_split_a_command() -> None:
    command = 'git commit -m "first line\n\n> not a redirect"\ncat notes.md'
    assert shell_effects(command) == (FileEffect("read", "notes.md"),)


class TestWorkingDirectory:
    def test_cd_makes_later_relative_paths_relative_to_it(self) -> None:
        from ctxengine.summarizers.shell import FileEffect, shell_effects

        assert shell_effects("cd pkg/src && mv changelog.ts utils/ && cat ../README.md") == (
            FileEffect("moved", "pkg/src/changelog.ts", "pkg/src/utils/changelog.ts"),
            FileEffect("read", "pkg/README.md"),
        )

    def test_an_unknown_directory_leaves_paths_as_written(self) -> None:
        from ctxengine.summarizers.shell import FileEffect, shell_effects

        assert shell_effects("cd $HOME && rm x; cd - && touch /tmp/y") == (
            FileEffect("deleted", "x"),
            FileEffect("created", "/tmp/y"),
        )
