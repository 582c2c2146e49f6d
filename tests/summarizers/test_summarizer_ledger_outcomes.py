"""Ledgers from outcomes read in the output, indirect writes, one path per file, and errors
fixed by later runs."""

from __future__ import annotations

import json
from pathlib import Path

from summarizer_helpers import call, calls, results

from ctxengine.importers import read_transcript
from ctxengine.model import ErrorFact, FileFact, Message, user
from ctxengine.summarizers.ledgers import extract_ledgers

MAKE_FAILED = (
    "gcc -O2 -c src/parse.c -o build/parse.o\n"
    "src/parse.c:42:13: error: 'tok' undeclared (first use in this function)\n"
    "make: *** [Makefile:12: build/parse.o] Error 1\n"
    "make: *** [all] Error 2\n"
)


def _chat_log(tmp_path: Path, exchanges: list[tuple[str, str]]) -> list[Message]:
    """A plain chat-completions log (no exit codes outside the text) read by the importer."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Build the project and fix what fails."},
    ]
    for i, (command, output) in enumerate(exchanges):
        call_id = f"call_{i}"
        arguments = json.dumps({"command": command})
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "bash", "arguments": arguments},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    session = read_transcript(path)
    return [e.body for e in session.entries if isinstance(e.body, Message)]


def test_make_error_2_without_an_exit_code_is_a_failure_then_fixed(tmp_path: Path) -> None:
    msgs = _chat_log(
        tmp_path,
        [("make all", MAKE_FAILED), ("make all 2>&1 | tail -3", "gcc -o app build/*.o\n")],
    )
    ledgers = extract_ledgers(msgs)
    # one failure, one line: the compiler's, not make's lines that only report it
    assert ledgers.errors == (
        "src/parse.c:42:13: error: 'tok' undeclared (first use in this function)",
    )
    assert [(e.status, e.source, e.command, e.fixed_by) for e in ledgers.error_facts] == [
        ("fixed", 3, "make all", 5)
    ]
    assert ledgers.done == ("ran `make all 2>&1 | tail -3` (succeeded)",)


def test_make_error_2_that_stays_is_open_and_never_succeeded(tmp_path: Path) -> None:
    ledgers = extract_ledgers(_chat_log(tmp_path, [("make all", MAKE_FAILED)]))
    assert [e.status for e in ledgers.error_facts] == ["open"]
    assert ledgers.done == ()


def test_a_failed_sed_in_a_returncode_envelope_is_not_an_edit(tmp_path: Path) -> None:
    failed = (
        "<returncode>2</returncode>\n<output>\n"
        "sed: -e expression #1, char 12: unterminated `s' command\n</output>"
    )
    ok = "<returncode>0</returncode>\n<output>\n</output>"
    msgs = _chat_log(
        tmp_path,
        [
            ("cd /testbed && sed -i 's/old/new src/app.py", failed),
            ("cd /testbed && sed -i 's/a/b/' src/util.py", ok),
        ],
    )
    ledgers = extract_ledgers(msgs)
    assert ledgers.files == (FileFact("/testbed/src/util.py", "modified", 5, "edited"),)
    assert ledgers.done == ("edited /testbed/src/util.py",)
    assert ledgers.error_facts == (
        ErrorFact(
            "sed: -e expression #1, char 12: unterminated `s' command",
            "open",
            3,
            "sed -i 's/old/new src/app.py",
        ),
    )


def test_an_edit_before_a_failing_run_happened_and_a_search_without_match_is_no_error() -> None:
    msgs = (
        calls(call("a", "Bash", command="sed -i 's/a/b/' src/x.py && pytest -q")),
        results(("a", "FAILED tests/t.py::test_x - assert 1 == 2\n1 failed in 0.1s", True)),
        calls(call("b", "Bash", command="grep -n nothing src/x.py")),
        results(("b", "Exit code 1", True)),
    )
    ledgers = extract_ledgers(msgs)
    assert ledgers.files_modified == ("src/x.py",)
    assert ledgers.errors == ("FAILED tests/t.py::test_x - assert 1 == 2",)


def test_a_failed_test_is_fixed_by_a_later_run_of_that_test() -> None:
    msgs = (
        calls(call("a", "Bash", command="pytest -q")),
        results(("a", "FAILED tests/t.py::test_x - assert 1 == 2\n1 failed in 0.1s", True)),
        calls(call("b", "Bash", command="pytest -q tests/t.py::test_x")),
        results(("b", "1 passed in 0.1s")),
    )
    facts = extract_ledgers(msgs).error_facts
    assert [(e.text, e.status, e.fixed_by) for e in facts] == [
        ("FAILED tests/t.py::test_x - assert 1 == 2", "fixed", 3),
    ]


def test_an_error_open_at_one_compaction_is_fixed_at_the_next() -> None:
    first = extract_ledgers(
        (
            calls(call("a", "Bash", command="python check.py")),
            results(("a", "Traceback (most recent call last):\nValueError: bad\n", True)),
        )
    )
    second = extract_ledgers(
        (calls(call("b", "Bash", command="python check.py")), results(("b", "ok")))
    )
    assert [e.status for e in first.error_facts] == ["open"]
    merged = first.merge(second)
    assert [(e.text, e.status) for e in merged.error_facts] == [("ValueError: bad", "fixed")]
    assert merged.errors == ("ValueError: bad",)


def test_a_rerun_that_fails_elsewhere_fixes_the_error_it_no_longer_reports() -> None:
    lint = "pnpm exec eslint src"
    msgs = (
        calls(call("a", "Bash", command=lint)),
        results(
            (
                "a",
                "/w/src/a.ts\n  3:1  error  'x' is not defined  no-undef\n"
                "  9:5  error  'y' is never reassigned  prefer-const\n\n"
                "✖ 2 problems (2 errors, 0 warnings)\n",
                True,
            )
        ),
        calls(call("b", "Bash", command=lint)),
        results(
            (
                "b",
                "/w/src/b.ts\n  7:2  error  'z' is not defined  no-undef\n\n"
                "✖ 1 problem (1 error, 0 warnings)\n",
                True,
            )
        ),
        calls(call("c", "Bash", command="pytest -q")),
        results(("c", "FAILED tests/t.py::test_x - assert 1 == 2\n1 failed in 0.1s", True)),
        calls(call("d", "Bash", command="pytest -q")),
        results(("d", "FAILED tests/t.py::test_y - assert 2 == 3\n1 failed in 0.1s", True)),
    )
    facts = extract_ledgers(msgs).error_facts
    # One line per linter run (its first diagnostic, at its file); the second run no longer
    # reports a.ts, so that error is fixed by it. A test's failure waits for its own test.
    assert [(e.text, e.where, e.status, e.fixed_by) for e in facts] == [
        ("3:1  error  'x' is not defined  no-undef", "/w/src/a.ts", "fixed", 3),
        ("7:2  error  'z' is not defined  no-undef", "/w/src/b.ts", "open", None),
        ("FAILED tests/t.py::test_x - assert 1 == 2", "", "open", None),
        ("FAILED tests/t.py::test_y - assert 2 == 3", "", "open", None),
    ]


def test_a_rerun_in_a_later_range_fixes_the_older_error_it_no_longer_reports() -> None:
    first = extract_ledgers(
        (
            calls(call("a", "Bash", command="python check.py")),
            results(("a", "Traceback (most recent call last):\nValueError: bad\n", True)),
        )
    )
    second = extract_ledgers(
        (
            calls(call("b", "Bash", command="python check.py")),
            results(("b", "Traceback (most recent call last):\nKeyError: 'k'\n", True)),
        )
    )
    merged = first.merge(second)
    assert [(e.text, e.status) for e in merged.error_facts] == [
        ("ValueError: bad", "fixed"),
        ("KeyError: 'k'", "open"),
    ]


def test_relative_and_absolute_spellings_are_one_path() -> None:
    msgs = (
        user("tidy the registry"),
        calls(call("e", "Edit", file_path="/home/u/p/lib/reg.ex", old_string="a", new_string="b")),
        results(("e", "The file /home/u/p/lib/reg.ex has been updated.")),
        calls(call("f", "Bash", command="mix format lib/reg.ex && cat lib/other.ex")),
        results(("f", "defmodule Other do end")),
    )
    ledgers = extract_ledgers(msgs)
    assert ledgers.cwd == "/home/u/p"
    assert ledgers.files == (
        FileFact("/home/u/p/lib/reg.ex", "modified", 4, "formatted"),
        FileFact("/home/u/p/lib/other.ex", "read", 4, "read"),
    )


def test_a_script_the_session_wrote_and_ran_changes_the_file_it_opens_for_writing() -> None:
    script = (
        "cd /testbed && cat > fix.py << 'EOF'\n"
        "src = open('pkg/dataset.py').read()\n"
        "with open('pkg/dataset.py', 'w') as f:\n    f.write(src.replace('a', 'b'))\n"
        "EOF"
    )
    msgs = (
        user("MODIFY: files in /testbed (this is the working directory)"),
        calls(call("a", "bash", command=script)),
        results(("a", "<returncode>0</returncode>\n<output>\n</output>")),
        calls(call("b", "bash", command="cd /testbed && python fix.py")),
        results(("b", "<returncode>1</returncode>\n<output>\nNameError: name 'x'\n</output>")),
        calls(call("c", "bash", command="cd /testbed && python fix.py")),
        results(("c", "<returncode>0</returncode>\n<output>\ndone\n</output>")),
        calls(call("d", "bash", command="cd /testbed && cp pkg/dataset.py pkg/dataset.py.bak")),
        results(("d", "<returncode>0</returncode>\n<output>\n</output>")),
    )
    ledgers = extract_ledgers(msgs)
    assert ledgers.files == (
        FileFact("/testbed/fix.py", "scratch", 2, "wrote", True),
        FileFact("/testbed/pkg/dataset.py", "modified", 6, "script fix.py"),
        FileFact("/testbed/pkg/dataset.py.bak", "scratch", 8, "copied", True),
    )
    assert ledgers.files_modified == ("/testbed/pkg/dataset.py",)
    assert [(e.text, e.status) for e in ledgers.error_facts] == [("NameError: name 'x'", "fixed")]


def test_patches_and_git_diff_output_name_changed_files() -> None:
    patch = (
        "cat > fix.patch <<'EOF'\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x\n+y\nEOF\n"
        "git apply fix.patch"
    )
    msgs = (
        calls(call("a", "Bash", command=patch)),
        results(("a", "")),
        calls(call("b", "Bash", command="git diff --stat && git diff")),
        results(("b", " src/b.py | 2 +-\ndiff --git a/src/b.py b/src/b.py\n")),
        calls(call("c", "Bash", command="git diff > patch.txt")),
        results(("c", "")),
    )
    assert extract_ledgers(msgs).files == (
        FileFact("fix.patch", "scratch", 1, "wrote", True),
        FileFact("src/a.py", "modified", 1, "patched"),
        FileFact("src/b.py", "modified", 3, "diff"),
        FileFact("patch.txt", "scratch", 5, "wrote", True),
    )


def test_extraction_sources_start_where_the_range_starts() -> None:
    msgs = (
        calls(call("a", "Bash", command="make")),
        results(("a", "make: *** [all] Error 2", True)),
    )
    assert extract_ledgers(msgs, start=100).error_facts == (
        ErrorFact("make: *** [all] Error 2", "open", 101, "make"),
    )


def test_a_formatter_run_by_any_command_changes_the_files_its_output_names() -> None:
    black = (
        "black src tests\nreformatted /home/dev/app/src/db/pool.py\n\nAll done!\n"
        "1 file reformatted, 57 files left unchanged.\n"
    )
    prettier = "src/a.ts 4ms (unchanged)\nsrc/store/index.ts 31ms\n"
    msgs = (
        user("Tidy the code in /home/dev/app."),
        calls(call("a", "Bash", command="make fmt")),
        results(("a", black)),
        calls(call("b", "Bash", command="pnpm run format")),
        results(("b", prettier)),
        calls(call("c", "Bash", command="cat fmt.log")),
        results(("c", "reformatted src/old.py\n")),
    )
    ledgers = extract_ledgers(msgs, cwd="/home/dev/app")
    assert ledgers.files == (
        FileFact("/home/dev/app/src/db/pool.py", "modified", 2, "formatted"),
        FileFact("/home/dev/app/src/store/index.ts", "modified", 4, "formatted"),
        FileFact("/home/dev/app/fmt.log", "read", 6, "read"),
    )
