"""The session's working directory, one normal form per path, and scratch files."""

from __future__ import annotations

import pytest
from summarizer_helpers import call, calls, results

from ctxengine.model import FileFact, Ledgers, Message, TextPart, user
from ctxengine.summarizers.anchor import carry
from ctxengine.summarizers.ledgers import session_cwd
from ctxengine.summarizers.paths import (
    guessed_cwd,
    normalize,
    rebased,
    scratch_reason,
    stated_cwd,
)


def test_the_stated_working_directory_of_each_agent() -> None:
    codex = [user("<environment_context>\n  <cwd>/home/u/proj</cwd>\n</environment_context>")]
    swe = [
        Message("user", (TextPart("(Current directory: /demo)"),), meta={"synthetic": "is_demo"}),
        calls(call("a", "bash", command="ls")),
        results(("a", "a.py\n(Open file: n/a)\n(Current directory: /pydicom__pydicom)\nbash-$")),
    ]
    mini = [user("- MODIFY: Regular source code files in /testbed (this is the working directory)")]
    assert stated_cwd(codex) == "/home/u/proj"
    assert stated_cwd(swe) == "/pydicom__pydicom"
    assert stated_cwd(mini) == "/testbed"
    assert stated_cwd([user("fix it in /srv/app")]) == ""


def test_a_guessed_working_directory() -> None:
    assert guessed_cwd(["cd /repo && make", "cd /repo && make test", "cd /x && ls"], []) == "/repo"
    assert guessed_cwd(["cd /repo && make"], []) == ""
    paths = ["/home/u/p/lib/a.ex", "lib/a.ex", "/home/u/p/test/b.exs", "test/b.exs", "x.md"]
    assert guessed_cwd([], paths) == "/home/u/p"
    assert guessed_cwd([], ["a.py", "/etc/hosts"]) == ""


def test_session_cwd_joins_edit_tool_paths_and_shell_paths() -> None:
    msgs = [
        calls(call("e", "Edit", file_path="/home/u/p/lib/a.ex", old_string="a", new_string="b")),
        results(("e", "ok")),
        calls(call("f", "Bash", command="mix format lib/a.ex")),
        results(("f", "")),
    ]
    assert session_cwd(msgs) == "/home/u/p"


@pytest.mark.parametrize(
    ("path", "cwd", "normal"),
    [
        ("src/a.py", "/repo", "/repo/src/a.py"),
        ("./src/../src/a.py", "/repo", "/repo/src/a.py"),
        ("/repo/src//a.py", "/repo", "/repo/src/a.py"),
        ("~/.config/x.json", "/repo", "~/.config/x.json"),
        ("./src/a.py", "", "src/a.py"),
    ],
)
def test_normalize(path: str, cwd: str, normal: str) -> None:
    assert normalize(path, cwd) == normal


def _reason(
    path: str,
    *,
    created: bool = False,
    deleted: bool = False,
    executed: bool = False,
    diff_output: bool = False,
    known: tuple[str, ...] = (),
) -> str:
    return scratch_reason(
        path,
        cwd="/repo",
        created=created,
        deleted=deleted,
        executed=executed,
        diff_output=diff_output,
        known=known,
    )


def test_scratch_reasons() -> None:
    assert _reason("/tmp/fix.py") == "temporary"
    assert _reason("/repo/tmp/out.json") == "temporary"
    assert _reason("/repo/src/a.py.orig") == "backup"
    assert _reason("/repo/src/a.py.backup2") == "backup"
    assert _reason("/repo/src/a.py.fixed", known=("/repo/src/a.py",)) == "backup"
    assert _reason("/repo/src/a.py.fixed") == ""
    assert _reason("/repo/notes.md", created=True, deleted=True) == "created then deleted"
    assert _reason("/repo/fix.patch", created=True) == "patch"
    assert _reason("/repo/patch.txt", diff_output=True) == "patch"
    assert _reason("/repo/fix_bug.py", created=True, executed=True) == "helper script"
    assert _reason("/repo/reproduce.py", created=True) == "helper script"
    assert _reason("/repo/src/gen.py", created=True, executed=True) == ""
    assert _reason("/repo/fix_bug.py", executed=True) == ""
    assert _reason("/repo/src/a.py", created=True) == ""


def test_ledgers_read_without_a_working_directory_are_rebased_onto_one_found_later() -> None:
    older = Ledgers(
        files_modified=("src/a.py", "/r/src/b.py"),
        files_read=("src/c.py", "src/a.py"),
        files=(
            FileFact("src/a.py", "modified", 3, "edited"),
            FileFact("/r/src/b.py", "modified", 5, "edited"),
            FileFact("src/c.py", "read", 6, "read"),
        ),
    )
    assert rebased(older, "/r") == Ledgers(
        files_modified=("/r/src/a.py", "/r/src/b.py"),
        files_read=("/r/src/c.py",),
        files=(
            FileFact("/r/src/a.py", "modified", 3, "edited"),
            FileFact("/r/src/b.py", "modified", 5, "edited"),
            FileFact("/r/src/c.py", "read", 6, "read"),
        ),
        cwd="/r",
    )
    assert rebased(older, "") is older
    assert rebased(Ledgers(cwd="/x"), "/r") == Ledgers(cwd="/x")


def test_carrying_ledgers_keeps_one_spelling_per_file() -> None:
    # the anchor knew no directory; the new range does
    anchor = Ledgers(files=(FileFact("src/a.py", "modified", 3, "diff"),))
    new = Ledgers(files=(FileFact("/r/src/a.py", "modified", 9, "edited"),), cwd="/r")
    assert carry(anchor, new).files == (FileFact("/r/src/a.py", "modified", 9, "edited"),)
    # neither knew one: an absolute path ending with a relative one gives it
    anchor = Ledgers(files=(FileFact("/r/src/a.py", "modified", 3, "edited"),))
    new = Ledgers(files=(FileFact("src/a.py", "modified", 9, "diff"),))
    carried = carry(anchor, new)
    assert (carried.cwd, carried.files) == ("/r", (FileFact("/r/src/a.py", "modified", 9, "diff"),))
