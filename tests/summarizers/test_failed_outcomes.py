"""Outcomes read from the output when the log states no exit code (chat-completions logs) or
states one the output contradicts: a failed write is no modification and no done step but an
open error, fixed by a later run of the same write; a rejected push never succeeded; one
failure is one error line."""

from __future__ import annotations

import pytest
from summarizer_helpers import QuarterEstimator, call, calls, results

from ctxengine.model import Message, TextPart, user
from ctxengine.summarizers import ExtractiveSummarizer, SummaryRequest
from ctxengine.summarizers.failures import choose, detect, ends_in_failure, shows_failure
from ctxengine.summarizers.ledgers import extract_ledgers

EST = QuarterEstimator()
SUMMARIZER = ExtractiveSummarizer(user_messages_budget=200)


def _bash(call_id: str, command: str, output: str, is_error: bool = False) -> list[Message]:
    """One shell call and its result, as a chat-completions log records it (no exit code,
    no error flag unless ``is_error``)."""
    return [calls(call(call_id, "bash", command=command)), results((call_id, output, is_error))]


def _state(messages: list[Message], budget: int = 2_000) -> str:
    """The continuation state up to its next step, whose open-error line is kept alone."""
    text = SUMMARIZER.summarize(SummaryRequest(tuple(messages), None, "", budget), EST).text
    head, step = text.split("## Next step\n", 1)
    counts = [line for line in step.splitlines() if line.startswith("Open errors")]
    return head + "## Next step\n" + "\n".join(counts)


FAILED_WRITES = [
    user("Apply the hotfix to the payments module."),
    *_bash(
        "c1",
        "cp hotfix/payments.py src/payments.py",
        "cp: cannot stat 'hotfix/payments.py': No such file or directory",
    ),
    *_bash(
        "c2",
        "git apply fix.patch",
        "error: patch failed: src/refunds.py:10\nerror: src/refunds.py: patch does not apply",
    ),
    *_bash("c3", "echo 'DEBUG=0' > config/prod.env", "bash: config/prod.env: Permission denied"),
    *_bash(
        "c4",
        "mv src/old_api.py src/api.py",
        "mv: cannot stat 'src/old_api.py': No such file or directory",
    ),
    *_bash(
        "c5",
        "patch -p1 < hotfix.diff",
        "patching file src/gateway.py\nHunk #1 FAILED at 22.\n"
        "1 out of 1 hunk FAILED -- saving rejects to file src/gateway.py.rej",
    ),
    Message("assistant", (TextPart("None of the writes worked; I'll look for the hotfix."),)),
]


def test_failed_writes_are_open_errors_not_modifications_or_done_steps() -> None:
    ledgers = extract_ledgers(FAILED_WRITES)
    assert ledgers.files_modified == ()
    assert ledgers.done == ()
    assert _state(FAILED_WRITES) == (
        "## Goal\nApply the hotfix to the payments module.\n\n"
        "## Errors\n"
        "- open: cp: cannot stat 'hotfix/payments.py': No such file or directory"
        " — `cp hotfix/payments.py src/payments.py`\n"
        "- open: error: src/refunds.py: patch does not apply — `git apply fix.patch`\n"
        "- open: bash: config/prod.env: Permission denied — `echo 'DEBUG=0' > config/prod.env`\n"
        "- open: mv: cannot stat 'src/old_api.py': No such file or directory"
        " — `mv src/old_api.py src/api.py`\n"
        "- open: 1 out of 1 hunk FAILED -- saving rejects to file src/gateway.py.rej"
        " — `patch -p1 < hotfix.diff`\n\n"
        "## Commands run\n"
        "- cp hotfix/payments.py src/payments.py\n- git apply fix.patch\n"
        "- echo 'DEBUG=0' > config/prod.env\n- mv src/old_api.py src/api.py\n"
        "- patch -p1 < hotfix.diff\n\n"
        "## Next step\nOpen errors to resolve: 5 (listed under Errors)."
    )


def test_a_later_run_of_the_same_write_that_succeeds_fixes_its_error_and_modifies() -> None:
    messages = [*FAILED_WRITES[:3], *_bash("c9", "cp hotfix/payments.py src/payments.py", "")]
    ledgers = extract_ledgers(messages)
    assert [(e.text, e.status, e.fixed_by) for e in ledgers.error_facts] == [
        ("cp: cannot stat 'hotfix/payments.py': No such file or directory", "fixed", 4)
    ]
    assert ledgers.files_modified == ("src/payments.py",)
    assert ledgers.done == ("copied hotfix/payments.py to src/payments.py",)


def test_a_failed_write_under_exit_code_0_still_failed_and_a_failed_read_only_reads_nothing() -> (
    None
):
    messages = [
        user("Tidy up."),
        # ``;`` chains: the shell reports the last program's exit code, 0
        *_bash(
            "a",
            "cp a.py b.py; echo done",
            "Exit code 0\ncp: cannot stat 'a.py': No such file or directory\ndone",
        ),
        *_bash(
            "b",
            "ls docs/missing; cat src/x.py",
            "Exit code 0\nls: cannot access 'docs/missing': No such file or directory\nx = 1",
        ),
    ]
    ledgers = extract_ledgers(messages)
    assert ledgers.errors == ("cp: cannot stat 'a.py': No such file or directory",)
    assert ledgers.files_modified == ()
    assert ledgers.files_read == ("src/x.py",)


PUSH_REJECTED = (
    "To github.com:acme/billing.git\n"
    " ! [rejected]        main -> main (fetch first)\n"
    "error: failed to push some refs to 'github.com:acme/billing.git'"
)


@pytest.mark.parametrize("flagged", [False, True])
def test_a_rejected_push_is_one_open_error_and_never_succeeded(flagged: bool) -> None:
    messages = [
        user("Push the fix."),
        *_bash("p1", "git push", PUSH_REJECTED, flagged),
        Message("assistant", (TextPart("The push was rejected; I'll pull first."),)),
    ]
    assert _state(messages) == (
        "## Goal\nPush the fix.\n\n"
        "## Errors\n- open: ! [rejected]        main -> main (fetch first) — `git push`\n\n"
        "## Commands run\n- git push\n\n"
        "## Next step\nOpen errors to resolve: 1 (listed under Errors)."
    )
    later = [
        *messages,
        *_bash(
            "p2", "git push", "To github.com:acme/billing.git\n   1a2b3c4..5d6e7f8  main -> main"
        ),
    ]
    ledgers = extract_ledgers(later)
    assert [e.status for e in ledgers.error_facts] == ["fixed"]
    assert ledgers.done == ("ran `git push` (succeeded)",)


CI_OUTPUTS = [
    user("Fix the failing CI for the billing service."),
    *_bash(
        "c1",
        "pytest tests/test_billing.py -q",
        "..F.\n"
        "=================================== FAILURES ===================================\n"
        "___________________________ test_invoice_total ____________________________\n"
        "    def test_invoice_total():\n"
        ">       assert invoice_total([1,2]) == 3\n"
        "E       assert 4 == 3\n"
        "tests/test_billing.py:12: AssertionError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_billing.py::test_invoice_total - assert 4 == 3\n"
        "1 failed, 3 passed in 0.12s",
    ),
    *_bash(
        "c2",
        "cargo build",
        "   Compiling billing v0.1.0 (/work/billing)\n"
        "error[E0425]: cannot find value `rate` in this scope\n"
        "  --> src/lib.rs:14:9\n   |\n14 |         rate * qty\n"
        "   |         ^^^^ not found in this scope\n\n"
        "For more information about this error, try `rustc --explain E0425`.\n"
        "error: could not compile `billing` (lib) due to 1 previous error",
    ),
    *_bash(
        "c3",
        "go test ./...",
        "--- FAIL: TestTax (0.00s)\n    tax_test.go:9: expected 1.19, got 1.2\nFAIL\n"
        "FAIL\tgithub.com/acme/billing/tax\t0.004s\n"
        "ok  \tgithub.com/acme/billing/core\t0.003s\nFAIL",
    ),
    *_bash(
        "c4",
        "npx jest",
        "FAIL src/total.test.js\n  ● total › adds VAT\n\n    expect(received).toBe(expected)\n\n"
        "    Expected: 119\n    Received: 120\n\nTests:       1 failed, 5 passed, 6 total",
    ),
    *_bash(
        "c5",
        "npm run build",
        "> billing@1.0.0 build\n> tsc -p .\n\n"
        "src/index.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"
        "npm ERR! code ELIFECYCLE\nnpm ERR! errno 2",
    ),
    *_bash("c6", "make all", "make[1]: *** [Makefile:7: lib] Error 1\nmake: *** [all] Error 2"),
    *_bash(
        "c7",
        "bash setup.sh",
        "bash: line 7: from: command not found\nbash: line 8: from: command not found\n"
        "bash: line 9: from: command not found",
    ),
    *_bash(
        "c8",
        "git add priv/static/assets",
        "The following paths are ignored by one of your .gitignore files:\n"
        "priv/static/assets\nhint: Use -f if you really want to add them.",
        True,
    ),
]


def test_one_failure_is_one_error_line_that_says_what_failed() -> None:
    text = _state(CI_OUTPUTS)
    errors = text.split("## Errors\n", 1)[1].split("\n\n", 1)[0]
    assert errors.splitlines() == [
        "- open: FAILED tests/test_billing.py::test_invoice_total - assert 4 == 3"
        " — `pytest tests/test_billing.py -q`",
        "- open: error[E0425]: cannot find value `rate` in this scope — at --> src/lib.rs:14:9"
        " — `cargo build`",
        "- open: --- FAIL: TestTax (0.00s) — at tax_test.go:9: expected 1.19, got 1.2"
        " — `go test ./...`",
        "- open: ● total › adds VAT — at src/total.test.js — `npx jest`",
        "- open: src/index.ts(3,7): error TS2322: Type 'string' is not assignable to type"
        " 'number'. — `npm run build`",
        "- open: make[1]: *** [Makefile:7: lib] Error 1 — `make all`",
        "- open: bash: line 7: from: command not found — `bash setup.sh`",
        "- open: The following paths are ignored by one of your .gitignore files:"
        " priv/static/assets — `git add priv/static/assets`",
    ]
    assert "Open errors to resolve: 8 (listed under Errors)." in text


@pytest.mark.parametrize(
    ("command", "output", "line"),
    [
        ("cp a.py b.py", "cp: cannot create regular file 'b.py': Permission denied", 0),
        ("mv a b/", "mv: cannot move 'a' to 'b/a': Not a directory", 0),
        ("rm old.py", "rm: cannot remove 'old.py': No such file or directory", 0),
        ("mkdir out", "mkdir: cannot create directory 'out': File exists", 0),
        ("chmod +x run.sh", "chmod: cannot access 'run.sh': No such file or directory", 0),
        ("echo x > /etc/x.conf", "bash: /etc/x.conf: Read-only file system", 0),
        ("echo x > out/x.txt", "/bin/sh: 1: cannot create out/x.txt: Directory nonexistent", 0),
        ("echo x > out.txt", "zsh: permission denied: out.txt", 0),
        ("patch -p0 < fix.diff", "can't find file to patch at input line 3", 0),
        ("git push origin main", " ! [remote rejected] main -> main (protected branch)", 0),
        (
            "git checkout feature",
            "error: pathspec 'feature' did not match any file(s) known to git",
            0,
        ),
        (
            "git merge dev",
            "Auto-merging a.py\nCONFLICT (content): Merge conflict in a.py\n"
            "Automatic merge failed; fix conflicts and then commit the result.",
            1,
        ),
        ("git status", "fatal: not a git repository (or any of the parent directories): .git", 0),
        (
            "npm install nopkg",
            "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/nopkg",
            1,
        ),
        (
            "pip install nopkg",
            "ERROR: Could not find a version that satisfies the requirement nopkg\n"
            "ERROR: No matching distribution found for nopkg",
            0,
        ),
    ],
)
def test_each_failure_shape_shows_a_failure_and_its_line(
    command: str, output: str, line: int
) -> None:
    assert shows_failure(output, command) is True
    assert [f.text for f in choose(detect(output, command))] == [output.splitlines()[line].strip()]


def test_a_program_of_another_command_quoted_in_a_log_is_not_a_failure() -> None:
    log = "cp: cannot stat 'a': No such file or directory\n ! [rejected] main -> main\n"
    assert shows_failure(log, "cat deploy.log") is False


def test_an_output_ending_in_an_error_line_failed_only_when_the_log_states_no_status() -> None:
    out = "connecting to db\nError: connect ECONNREFUSED 127.0.0.1:5432"
    assert ends_in_failure(out) is True
    assert ends_in_failure("Error: x\nall good") is False
    plain = [user("Migrate."), *_bash("m", "python manage.py migrate", out)]
    assert extract_ledgers(plain).errors == ("Error: connect ECONNREFUSED 127.0.0.1:5432",)
    # a log whose results state their status elsewhere: this result succeeded by its account
    stated = [*plain, *_bash("x", "pytest -q", "Exit code 1\n1 failed in 0.1s", True)]
    assert extract_ledgers(stated).errors == ("1 failed in 0.1s",)


def test_shell_variables_and_substitutions_are_no_paths() -> None:
    messages = [
        user("Look at the tests."),
        *_bash("a", "sed -n '1,200p' tests/$(ls tests | head -n 1) 2>/dev/null || true", "x"),
        *_bash("b", 'cat "$HOME/notes.md" src/$name.py', "y"),
    ]
    assert extract_ledgers(messages).files_read == ()


def test_the_source_of_a_successful_move_is_not_listed_as_modified() -> None:
    messages = [
        user("Rename the module."),
        *_bash("m1", "echo data | tee src/config.toml", "data"),
        *_bash("m2", "mv src/old.rs src/new.rs", ""),
        *_bash("m3", "git mv docs/a.md docs/b.md", ""),
        Message("assistant", (TextPart("Renamed."),)),
    ]
    ledgers = extract_ledgers(messages)
    assert ledgers.files_modified == ("src/config.toml", "src/new.rs", "docs/b.md")
    assert ledgers.done == (
        "wrote src/config.toml",
        "moved src/old.rs to src/new.rs",
        "moved docs/a.md to docs/b.md",
    )
    # written again after the move: modified once more
    again = [*messages, *_bash("m4", "echo x > src/old.rs", "")]
    assert extract_ledgers(again).files_modified == (
        "src/config.toml",
        "src/old.rs",
        "src/new.rs",
        "docs/b.md",
    )


def test_linter_build_tool_and_node_failures_without_exit_code_are_open_errors() -> None:
    messages = [
        user("Get the checks green."),
        *_bash(
            "r", "ruff check src", "src/b.py:4:1: F401 [*] `os` imported but unused\nFound 1 error."
        ),
        *_bash(
            "m",
            "mvn -q package",
            "[ERROR] COMPILATION ERROR :\n"
            "[ERROR] /repo/src/main/java/App.java:[12,5] cannot find symbol\n[INFO] BUILD FAILURE",
        ),
        *_bash(
            "n",
            "node build.js",
            "/repo/build.js:10\n  throw new Error('missing config')\n  ^\n\nError: missing config\n"
            "    at Object.<anonymous> (/repo/build.js:10:9)\n"
            "    at Module._compile (node:internal/modules/cjs/loader:1256:14)\n\nNode.js v20.11.0",
        ),
        *_bash(
            "c",
            "npm run check",
            "src/main.ts(499,20): error TS2304: Cannot find name 'join'.\n"
            "npm error Lifecycle script `check` failed with error:\nnpm error code 2",
        ),
        *_bash(
            "w",
            "npm run build",
            "ERROR in ./src/app.tsx 12:4\nModule not found: Error: Can't resolve './Kafka'\n"
            "webpack compiled with 1 error",
        ),
        *_bash(
            "e",
            "npx eslint src",
            "/repo/src/a.js\n  3:1  error  'x' is not defined  no-undef\n\n"
            "✖ 1 problem (1 error, 0 warnings)",
        ),
        Message("assistant", (TextPart("Several checks fail."),)),
    ]
    assert extract_ledgers(messages).done == ()
    assert _state(messages) == (
        "## Goal\nGet the checks green.\n\n"
        "## Errors\n"
        "- open: src/b.py:4:1: F401 [*] `os` imported but unused — `ruff check src`\n"
        "- open: [ERROR] /repo/src/main/java/App.java:[12,5] cannot find symbol"
        " — `mvn -q package`\n"
        "- open: Error: missing config — at Object.<anonymous> (/repo/build.js:10:9)"
        " — `node build.js`\n"
        "- open: src/main.ts(499,20): error TS2304: Cannot find name 'join'. — `npm run check`\n"
        "- open: Module not found: Error: Can't resolve './Kafka' — at ./src/app.tsx 12:4"
        " — `npm run build`\n"
        "- open: 3:1  error  'x' is not defined  no-undef — at /repo/src/a.js"
        " — `npx eslint src`\n\n"
        "## Commands run\n- ruff check src\n- mvn -q package\n- node build.js\n"
        "- npm run check\n- npm run build\n- npx eslint src\n\n"
        "## Current work\nSeveral checks fail.\n\n"
        "## Next step\nOpen errors to resolve: 6 (listed under Errors)."
    )
