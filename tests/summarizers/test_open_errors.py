"""Which errors a continuation state leaves open for the resuming agent: an error line another
command reported and then ran clean is fixed (a regression after the fix stays open); a call
interrupted or aborted before it returned is a done step, not an error; a lookup of a path
that does not exist found nothing; an ``apply_patch`` heredoc is keyed by the files it
patches; Gemini CLI's ``Error: (none)`` is no error line."""

from __future__ import annotations

from summarizer_helpers import call, calls, results

from corpus import require_corpus
from ctxengine.boundaries.sanitize import SYNTHETIC_RESULT_TEXT
from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model import ErrorFact, Message, TextPart, user
from ctxengine.model.facts import lines_fixed_by, merge_errors, settle_errors
from ctxengine.projection.wording import WORDINGS
from ctxengine.summarizers import ExtractiveSummarizer, SummaryRequest
from ctxengine.summarizers.fact_items import done_line
from ctxengine.summarizers.failures import (
    detect,
    output_lines,
    own_failures,
    passed_tests,
    summary_line,
)
from ctxengine.summarizers.ledgers import extract_ledgers
from ctxengine.summarizers.runs import command_key, missed_lookup
from hand_estimator import HandEstimator

EST = HandEstimator()
SUMMARIZER = ExtractiveSummarizer(user_messages_budget=200)
TS = "src/a.ts(3,1): error TS2304: Cannot find name 'chalk'."
OTHER = "src/b.ts(1,1): error TS2322: Type 'string' is not assignable to type 'number'."
CHECK = "npm run check"
TSC = "npx tsc --noEmit"
#: Claude Code's answer to a tool call the user declined.
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
    "it was a file edit, the new_string was NOT written to the file). STOP what you are "
    "doing and wait for the user to tell you how to proceed."
)


def _bash(cid: str, command: str, output: str, failed: bool = False) -> tuple[Message, Message]:
    code = 2 if failed else 0
    text = f"{output}\n\n\nCommand exited with code {code}" if failed else output
    return calls(call(cid, "bash", command=command)), results((cid, text, failed))


def _history(*steps: tuple[Message, Message]) -> tuple[Message, ...]:
    out: list[Message] = [user("Fix the type errors.")]
    for pair in steps:
        out.extend(pair)
    return tuple(out)


def _errors(msgs: tuple[Message, ...]) -> list[tuple[str, str, str, int | None]]:
    return [(e.status, e.text, e.command, e.fixed_by) for e in extract_ledgers(msgs).error_facts]


class TestTheSameLineFixedByAnotherCommand:
    def test_a_later_success_of_a_command_that_reported_the_line_fixes_it(self) -> None:
        msgs = (
            *_history(
                _bash("a", CHECK, TS, failed=True),
                _bash("b", TSC, TS, failed=True),
                _bash("c", f"{TSC} src/x.ts", OTHER, failed=True),
                _bash("d", CHECK, "ok"),
            ),
            Message("assistant", (TextPart("The check passes. Shall I commit?"),)),
        )
        assert _errors(msgs) == [
            ("fixed", TS, CHECK, 8),
            ("fixed", TS, TSC, 8),
            ("open", OTHER, f"{TSC} src/x.ts", None),
        ]
        summary = SUMMARIZER.summarize(
            SummaryRequest(msgs, None, "Fix the type errors.", 2_000), EST
        )
        assert summary.text == (
            "## Goal\nFix the type errors.\n\n"
            "## Done\n- ran `npm run check` (succeeded)\n\n"
            "## Errors\n"
            f"- fixed: {TS} — `{CHECK}`\n"
            f"- fixed: {TS} — `{TSC}`\n"
            f"- open: {OTHER} — `{TSC} src/x.ts`\n\n"
            "## Commands run\n- npm run check\n- npx tsc --noEmit\n- npx tsc --noEmit src/x.ts\n\n"
            "## Next step\nThe goal above was answered before this point (see Current work).\n"
            "The agent's last message ended with: The check passes. Shall I commit?\n"
            "Open errors to resolve: 1 (listed under Errors).\n"
            "Go on with the messages after this summary."
        )
        assert summary.tokens == EST.text(summary.text) == len(summary.text) // 4 + 1 == 173

    def test_a_success_of_a_command_that_reported_the_line_earlier_fixes_it_again(
        self,
    ) -> None:
        # check reports the line and passes; tsc reports it after that fix (a regression,
        # open); check passes once more after it: fixed by that later run
        msgs = _history(
            _bash("a", CHECK, TS, failed=True),
            _bash("b", CHECK, "ok"),
            _bash("c", TSC, TS, failed=True),
            _bash("d", CHECK, "ok"),
        )
        assert _errors(msgs) == [("fixed", TS, CHECK, 4), ("fixed", TS, TSC, 8)]

    def test_the_line_reported_again_after_the_fix_stays_open(self) -> None:
        msgs = _history(
            _bash("a", CHECK, TS, failed=True),
            _bash("b", TSC, TS, failed=True),
            _bash("c", CHECK, "ok"),
            _bash("d", TSC, TS, failed=True),
        )
        assert _errors(msgs) == [("fixed", TS, CHECK, 6), ("open", TS, TSC, None)]

    def test_no_success_of_a_command_that_reported_the_line_leaves_it_open(self) -> None:
        other = OTHER
        msgs = _history(
            _bash("a", CHECK, other, failed=True),
            _bash("b", TSC, TS, failed=True),
            _bash("c", CHECK, "ok"),
            _bash("d", "npm run lint", TS, failed=True),
            _bash("e", TSC, "ok"),
        )
        # check never reported TS: its pass fixes only its own line; tsc's pass fixes its
        # own line and the lint run's (reported before it)
        assert _errors(msgs) == [
            ("fixed", other, CHECK, 6),
            ("fixed", TS, TSC, 10),
            ("fixed", TS, "npm run lint", 10),
        ]
        msgs = _history(_bash("a", CHECK, TS, failed=True), _bash("b", TSC, TS, failed=True))
        assert _errors(msgs) == [("open", TS, CHECK, None), ("open", TS, TSC, None)]

    def test_a_failed_rerun_that_no_longer_reports_a_line_fixes_no_other_command(self) -> None:
        msgs = _history(
            _bash("a", CHECK, f"{TS}\n{OTHER}", failed=True),
            _bash("b", TSC, TS, failed=True),
            _bash("c", CHECK, OTHER, failed=True),
        )
        assert _errors(msgs) == [
            ("fixed", TS, CHECK, 6),
            ("open", TS, TSC, None),
            ("open", OTHER, CHECK, None),
        ]

    def test_across_a_cut_and_a_merge(self) -> None:
        check = ErrorFact(TS, "fixed", 2, CHECK, fixed_by=4)
        tsc = ErrorFact(TS, "open", 6, TSC)
        test = ErrorFact(TS, "open", 7, TSC, test="t::a")
        assert lines_fixed_by((check, tsc, test), [f"cmd:{CHECK}"]) == frozenset({TS})
        assert lines_fixed_by((check, tsc), [f"rerun:{CHECK}"]) == frozenset()
        # the messages after the cut ran check clean: its line is fixed, a test's is not
        settled = settle_errors((check, tsc, test), (), [f"cmd:{CHECK}"])
        assert [e.status for e in settled] == ["fixed", "fixed", "open"]
        assert settle_errors((check, tsc), (), ["cmd:make"]) == (check, tsc)
        # after the cut another command reported the line and ran clean
        later = (ErrorFact(TS, "fixed", 9, "npm run lint", fixed_by=11),)
        assert [e.status for e in settle_errors((tsc,), later, [])] == ["fixed"]
        # ... but a failed rerun of tsc itself after the cut keeps it open
        again = (ErrorFact(TS, "open", 12, TSC), *later)
        assert [e.status for e in settle_errors((tsc,), again, [])] == ["open"]
        merged = merge_errors((check, tsc), later, [])
        assert [(e.status, e.command) for e in merged] == [
            ("fixed", CHECK),
            ("fixed", TSC),
            ("fixed", "npm run lint"),
        ]
        assert [e.status for e in merge_errors((check, tsc), (), [f"cmd:{CHECK}"])] == [
            "fixed",
            "fixed",
        ]
        assert [e.status for e in merge_errors((tsc,), (), ["cmd:make"])] == ["open"]


ABORTED = (
    "> pi-tui@0.7.29 test\n> node --test test/*.test.ts\n\n"
    "Error in the js-debug bootloader, please report to https://aka.ms/js-dbg-issue\n\n\n"
    "Command aborted"
)


class TestInterruptedCalls:
    def test_an_interrupted_call_made_again_and_answered_is_no_done_step(self) -> None:
        msgs = (
            user("Read the two views."),
            calls(call("a", "read", path="src/a.ts"), call("b", "read", path="src/b.ts")),
            results(("a", SYNTHETIC_RESULT_TEXT, True), ("b", SYNTHETIC_RESULT_TEXT, True)),
            calls(call("a2", "read", path="src/a.ts")),
            results(("a2", "export const a = 1;")),
        )
        ledgers = extract_ledgers(msgs)
        assert ledgers.done == ("interrupted: `read(src/b.ts)` (no result)",)

    def test_an_interrupted_or_aborted_call_is_a_done_step_not_an_error(self) -> None:
        msgs = (
            user("Run the tests."),
            calls(call("e", "edit", path="src/a.ts", oldText="x", newText="y")),
            results(("e", SYNTHETIC_RESULT_TEXT, True)),
            *_bash("s", 'sleep 5 && echo "Done sleeping"', "Command aborted", failed=False),
            calls(call("t", "bash", command="npm test")),
            results(("t", ABORTED, True)),
            calls(call("r", "read", path="src/b.ts")),
            results(
                ("r", "[no result recorded: the session ended before this tool call returned]")
            ),
        )
        ledgers = extract_ledgers(msgs)
        assert ledgers.error_facts == ()
        assert ledgers.files_modified == ()
        assert ledgers.files_read == ()
        assert ledgers.commands == ()
        assert ledgers.done == (
            "interrupted: `edit(src/a.ts)` (no result)",
            'interrupted: `sleep 5 && echo "Done sleeping"` (no result)',
            "interrupted: `npm test` (no result)",
            "interrupted: `read(src/b.ts)` (no result)",
        )
        summary = SUMMARIZER.summarize(SummaryRequest(msgs, None, "Run the tests.", 2_000), EST)
        assert summary.text == (
            "## Goal\nRun the tests.\n\n"
            "## Done\n"
            "- interrupted: `edit(src/a.ts)` (no result)\n"
            '- interrupted: `sleep 5 && echo "Done sleeping"` (no result)\n'
            "- interrupted: `npm test` (no result)\n"
            "- interrupted: `read(src/b.ts)` (no result)\n\n"
            "## Next step\nNo later request. Next: check the goal above against Done and "
            "Current work, and do what is not done yet."
        )
        assert summary.tokens == EST.text(summary.text) == len(summary.text) // 4 + 1 == 85

    def test_a_long_command_and_a_gemini_cancellation(self) -> None:
        long = "cp src/a.ts " + "x" * 300 + " && ls"
        msgs = (
            user("Copy it."),
            calls(call("c", "bash", command=long)),
            results(("c", SYNTHETIC_RESULT_TEXT, True)),
            calls(call("g", "replace", file_path="/r/a.go", old_string="a", new_string="b")),
            results(("g", "[Operation Cancelled] Reason: User cancelled the operation.", True)),
            calls(call("h", "list_directory")),
            results(
                ("h", "[no result recorded: the tool call was interrupted before it returned]")
            ),
        )
        ledgers = extract_ledgers(msgs)
        assert ledgers.error_facts == ()
        assert ledgers.done == (
            f"interrupted: `{long[:199]}…` (no result)",
            "interrupted: `replace(/r/a.go)` (no result)",
            "interrupted: `list_directory` (no result)",
        )

    def test_a_mention_of_an_abort_that_is_not_the_last_line_is_a_failure(self) -> None:
        msgs = _history(
            _bash("a", "make deploy", "Command aborted\nmake: *** [deploy] Error 1", failed=True),
            _bash("b", "make", "[no result recorded: cache miss] then\nError: boom", failed=True),
        )
        assert _errors(msgs) == [
            ("open", "make: *** [deploy] Error 1", "make deploy", None),
            ("open", "Error: boom", "make", None),
        ]

    def test_the_step_in_every_language(self) -> None:
        step = "interrupted: `npm test` (no result)"
        assert done_line(step) == step
        assert [done_line(step, WORDINGS[lang].facts) for lang in ("zh", "de", "fr")] == [
            "已中断 `npm test`（无结果）",
            "unterbrochen: `npm test` (kein Ergebnis)",
            "interrompu : `npm test` (aucun résultat)",
        ]


class TestDeclinedCallsShownAsInterruptedOnes:
    def test_a_call_cancelled_because_a_sibling_failed_is_not_an_error_of_its_own(
        self,
    ) -> None:
        sibling = "<tool_use_error>Sibling tool call errored</tool_use_error>"
        msgs = (
            user("Read both templates."),
            calls(call("a", "Read", file_path="lib/a.heex"), call("b", "Read", file_path="b.ex")),
            results(("a", "File does not exist.", True), ("b", sibling, True)),
        )
        ledgers = extract_ledgers(msgs)
        assert [(e.text, e.status) for e in ledgers.error_facts] == [
            ("File does not exist.", "open")
        ]
        assert ledgers.done == ("interrupted: `Read(b.ex)` (no result)",)
        summary = SUMMARIZER.summarize(SummaryRequest(msgs, None, msgs[0].text, 2_000), EST)
        assert summary.text == (
            "## Goal\nRead both templates.\n\n"
            "## Done\n- interrupted: `Read(b.ex)` (no result)\n\n"
            "## Errors\n- open: File does not exist. — `Read(lib/a.heex)`\n\n"
            "## Next step\nNo later request. Next: resolve the latest open error: File does not "
            "exist. — `Read(lib/a.heex)`\nOpen errors to resolve: 1 (listed under Errors)."
        )

    def test_a_declined_and_an_interrupted_call_show_the_same_call(self) -> None:
        long = "cp src/a.ts " + "x" * 300 + " && ls"
        piped = "cd web && git push --force 2>&1 | tail -3\necho done"
        steps = []
        for text, failed in ((REJECTED, True), (SYNTHETIC_RESULT_TEXT, True)):
            msgs = (
                user("Copy it."),
                calls(call("c", "bash", command=long), call("p", "bash", command=piped)),
                calls(call("e", "edit", path="src/a.ts", oldText="x", newText="y")),
                calls(call("g", "glob", pattern="**/*.ts")),
                results(("c", text, failed), ("p", text, failed)),
                results(("e", text, failed), ("g", text, failed)),
            )
            ledgers = extract_ledgers(msgs)
            assert ledgers.error_facts == ()
            assert ledgers.commands == ()
            steps.append(ledgers.done)
        shown = (
            f"{long[:199]}…",
            "cd web && git push --force 2>&1 | tail -3 …",
            "edit(src/a.ts)",
            "glob",
        )
        assert steps == [
            tuple(f"declined by the user: `{c}` (not run)" for c in shown),
            tuple(f"interrupted: `{c}` (no result)" for c in shown),
        ]
        # the long command's step is its first 199 characters and "…", not a key with a hash
        assert len(steps[0][0]) == len("declined by the user: `` (not run)") + 200
        assert "#" not in steps[0][0]

    def test_the_declined_step_in_every_language(self) -> None:
        call_text = "cd web && git push --force 2>&1 | tail -3 …"
        step = f"declined by the user: `{call_text}` (not run)"
        assert {lang: done_line(step, WORDINGS[lang].facts) for lang in WORDINGS} == {
            "en": step,
            "zh": f"用户拒绝了 `{call_text}`（未执行）",
            "ja": f"ユーザーが `{call_text}` を拒否（未実行）",
            "ko": f"사용자가 `{call_text}` 거부 (실행 안 됨)",
            "es": f"rechazado por el usuario: `{call_text}` (no se ejecutó)",
            "fr": f"refusé par l'utilisateur : `{call_text}` (non exécuté)",
            "de": f"vom Benutzer abgelehnt: `{call_text}` (nicht ausgeführt)",
            "pt": f"recusado pelo usuário: `{call_text}` (não executado)",
            "ru": f"отклонено пользователем: `{call_text}` (не выполнено)",
        }
        interrupted = f"interrupted: `{call_text}` (no result)"
        assert {lang: done_line(interrupted, WORDINGS[lang].facts) for lang in WORDINGS} == {
            "en": interrupted,
            "zh": f"已中断 `{call_text}`（无结果）",
            "ja": f"`{call_text}` が中断（結果なし）",
            "ko": f"`{call_text}` 중단됨 (결과 없음)",
            "es": f"interrumpido: `{call_text}` (sin resultado)",
            "fr": f"interrompu : `{call_text}` (aucun résultat)",
            "de": f"unterbrochen: `{call_text}` (kein Ergebnis)",
            "pt": f"interrompido: `{call_text}` (sem resultado)",
            "ru": f"прервано: `{call_text}` (нет результата)",
        }


class TestLookupsOfMissingPaths:
    def test_a_lookup_whose_only_failure_is_a_missing_path_found_nothing(self) -> None:
        grep = 'grep -A 3 "function wrap" packages/tui/src/wrap-ansi.ts'
        missing = "grep: packages/tui/src/wrap-ansi.ts: No such file or directory"
        ls = "cd src && ls -la old new 2>&1 | head -5"
        msgs = _history(
            _bash("a", grep, missing, True),
            _bash("b", ls, "ls: cannot access 'old': No such file or directory\nnew", True),
            _bash("c", "head -n 5 a.txt", "head: cannot open 'a.txt' for reading: No such file "
                  "or directory", True),
        )  # fmt: skip
        ledgers = extract_ledgers(msgs)
        assert ledgers.error_facts == ()
        assert ledgers.commands == (grep, ls, "head -n 5 a.txt")

    def test_a_file_operation_another_failure_or_another_path_is_still_an_error(self) -> None:
        missing = "No such file or directory"
        cases = (
            ("cp a.json b.json", f"cp: a.json: {missing}"),
            ("cat a.txt > b.txt", f"cat: a.txt: {missing}"),
            ("cat a.txt", "cat: a.txt: Permission denied"),
            ("cat a.txt", f"cat: zz.txt: {missing}"),
            ("find build -delete", f"find: 'build': {missing}"),
            ("grep x a.py b.py", f"grep: b.py: {missing}\na.py:3: raise ValueError: bad"),
            ("npm run build", f"sh: dist/cli.js: {missing}"),
        )
        for command, output in cases:
            assert not missed_lookup(command, output), command
            msgs = _history(_bash("a", command, output, failed=True))
            assert [e.status for e in extract_ledgers(msgs).error_facts] == ["open"], command
        assert missed_lookup("rg foo src/x", f"rg: src/x: {missing} (os error 2)")
        assert missed_lookup("ls x || echo none", f"ls: cannot access 'x': {missing}\nnone")


def _patch(*headers: str) -> str:
    body = "\n".join(f"{h}\n@@\n-a\n+b" for h in headers)
    return f"apply_patch <<'PATCH'\n*** Begin Patch\n{body}\n*** End Patch\nPATCH"


class TestHeredocPatchKeys:
    def test_the_key_holds_the_files_the_patch_names(self) -> None:
        assert command_key(_patch("*** Update File: a.py")) == (
            "apply_patch <<'PATCH' ; *** Update File: a.py"
        )
        assert command_key("cd /r && " + _patch("*** Update File: a.py", "*** Add File: b.py")) == (
            "apply_patch <<'PATCH' ; *** Update File: a.py ; *** Add File: b.py"
        )
        assert command_key("cat <<'EOF' > x.txt\nhi\nEOF") == "cat <<'EOF' > x.txt"

    def test_only_a_later_patch_of_the_same_files_fixes_a_failed_patch(self) -> None:
        failed = "error: patch failed: a.py:1\nerror: a.py: patch does not apply"
        a, b = _patch("*** Update File: a.py"), _patch("*** Update File: b.py")
        key = "apply_patch <<'PATCH' ; *** Update File: a.py"
        msgs = _history(_bash("a", a, failed, True), _bash("b", b, "Done!"))
        assert _errors(msgs) == [
            ("open", "error: patch failed: a.py:1", key, None),
            ("open", "error: a.py: patch does not apply", key, None),
        ]
        msgs = _history(_bash("a", a, failed, True), _bash("b", b, "Done!"), _bash("c", a, "ok"))
        assert [(e.status, e.fixed_by) for e in extract_ledgers(msgs).error_facts] == [
            ("fixed", 6),
            ("fixed", 6),
        ]


GEMINI = (
    "Command: go vet ./...\nDirectory: (root)\nOutput: {output}\nError: (none)\n"
    "Exit Code: {code}\nSignal: 0\nBackground PIDs: (none)\nProcess Group PGID: 4242"
)


class TestGeminiEnvelope:
    def test_error_none_is_no_error_line(self) -> None:
        failed = GEMINI.format(output="pkg/a.go:3: unreachable code", code=1)
        assert detect(failed, "go vet ./...") == ()
        # the envelope's "Output: " is no part of the line the command printed
        assert summary_line(failed) == "pkg/a.go:3: unreachable code"
        msgs = _history(
            (
                calls(call("g", "run_shell_command", command="go vet ./...")),
                results(("g", failed, True)),
            )
        )
        assert _errors(msgs) == [("open", "pkg/a.go:3: unreachable code", "go vet ./...", None)]
        clean = GEMINI.format(output="(empty)", code=0)
        assert detect(clean) == ()
        # a real error line starting the same way still is one
        assert [f.text for f in detect("Error: (none) of the hosts answered")] == [
            "Error: (none) of the hosts answered"
        ]

    def test_the_output_prefix_is_transparent_to_the_line_detectors(self) -> None:
        build = GEMINI.format(
            output="pkg/a.go:3:1: undefined: x\npkg/b.go:4:2: undefined: y", code=1
        )
        assert output_lines(build)[:4] == [
            "Command: go vet ./...",
            "Directory: (root)",
            "pkg/a.go:3:1: undefined: x",
            "pkg/b.go:4:2: undefined: y",
        ]
        # go build's "file.go:l:c: …" detector anchors at the line's start: both lines, and
        # the first one as the command printed it
        assert [(f.text, f.score, f.index) for f in detect(build, "go build ./...")] == [
            ("pkg/a.go:3:1: undefined: x", 7, 2),
            ("pkg/b.go:4:2: undefined: y", 7, 3),
        ]
        cp = GEMINI.format(output="cp: cannot stat 'a.txt': No such file or directory", code=1)
        assert [(f.text, f.program, f.index) for f in own_failures(cp, "cp a.txt b.txt")] == [
            ("cp: cannot stat 'a.txt': No such file or directory", "cp", 2)
        ]
        passed = GEMINI.format(output="--- PASS: TestA (0.00s)\nok  \tpkg\t0.01s", code=0)
        assert passed_tests(passed) == ("TestA",)
        msgs = _history(
            (
                calls(call("g", "run_shell_command", command="go build ./...")),
                results(("g", build, True)),
            )
        )
        assert _errors(msgs) == [
            ("open", "pkg/a.go:3:1: undefined: x", "go build ./...", None),
            ("open", "pkg/b.go:4:2: undefined: y", "go build ./...", None),
        ]

    def test_only_the_envelope_output_loses_its_prefix(self) -> None:
        empty = GEMINI.format(output="(empty)", code=1)
        assert output_lines(empty)[2] == "Output: (empty)"
        # no envelope: a line that starts with "Output: " is the command's own
        plain = "Output: pkg/a.go:3:1: undefined: x"
        assert output_lines(plain) == [plain]
        assert detect(plain, "go build ./...") == ()
        # only the output's first line carries the prefix; a later "Output: " line is kept
        later = GEMINI.format(output="a\nOutput: b", code=0)
        assert output_lines(later)[2:4] == ["a", "Output: b"]
        # a command of several lines: the prefix after its Directory line
        multi = "Command: cat <<EOF\nx\nEOF\nDirectory: /r\nOutput: x\nError: (none)"
        assert output_lines(multi) == [
            "Command: cat <<EOF",
            "x",
            "EOF",
            "Directory: /r",
            "x",
            "Error: (none)",
        ]

    def test_the_gemini_corpus_errors_are_the_lines_the_commands_printed(self) -> None:
        short = extract_ledgers(_messages("gemini-cli", "gemini-cli-chat-share-2025-11-05.md"))
        assert [(e.status, e.text, e.command) for e in short.error_facts if e.source == 107] == [
            (
                "open",
                "go: cannot write multiple packages to non-directory gemini-cli",
                "go build -o gemini-cli ./...",
            )
        ]
        long = extract_ledgers(_messages("gemini-cli", "go-ai-agent-chat-share-long-2025-11-09.md"))
        assert [(e.status, e.text, e.fixed_by) for e in long.error_facts if e.source == 1280] == [
            (
                "fixed",
                "error: pathspec 'pkg/extension/manager_test.go' did not match any file(s) "
                "known to git",
                1282,
            )
        ]
        for ledgers in (short, long):
            assert not [e.text for e in ledgers.error_facts if e.text.startswith("Output: ")]


def _messages(*parts: str) -> tuple[Message, ...]:
    entries = read_transcript(require_corpus(*parts)).entries
    return tuple(e.message for e in entries if e.message is not None)


FILLER = "filler log line with some words and numbers 12345 " * 8


class TestTheLineThatSaysWhatFailed:
    """A failed output no detector understands is named by the line that says what failed:
    an HTTP status with its reason, a check's finding, not a line of filler after it."""

    def test_a_status_or_a_finding_is_told(self) -> None:
        deploy = "Uploading bundle... done\nHealth check: 503 Service Unavailable\n"
        deploy += f"Rollback complete.\n[exit status 1]\n{FILLER}\n"
        assert summary_line(deploy) == "Health check: 503 Service Unavailable"
        migrate = "<returncode>1</returncode>\n<output>\nYou have 2 unapplied migration(s).\n"
        assert summary_line(migrate + f"</output>\n{FILLER}") == (
            "You have 2 unapplied migration(s)."
        )
        assert summary_line("GET /api/users\n404 (Not Found)\ndone\n") == "404 (Not Found)"

    def test_filler_is_passed_over_and_alone_gives_the_exit_status(self) -> None:
        assert summary_line(f"Deploying\n{FILLER}\n") == "Deploying"
        assert summary_line(f"Exit code 22\n{FILLER}\n") == "Exit code 22"
        # an envelope without a status is no summary: the filler is all there is
        assert summary_line(f"<output>\n{FILLER}\n</output>\n") == summary_line(FILLER)
        # a short line of repeated words is no filler
        assert summary_line("retry retry retry retry\n") == "retry retry retry retry"


def test_the_history_helpers_build_what_they_say() -> None:
    pair = _bash("x", "ls", "out", failed=True)
    assert pair[1].parts[0].text == "out\n\n\nCommand exited with code 2"  # type: ignore[union-attr]
    assert isinstance(pair[1].parts[0].content[0], TextPart)  # type: ignore[union-attr]


#: A pi session whose agent ends asking to commit and tag a release after ``npm run build``
#: and ``npm run check`` passed.
PI_LARGE = ("pi", "pi-mono-large-session.jsonl")


def test_the_open_errors_of_a_pi_release_session_at_32k() -> None:
    path = require_corpus(*PI_LARGE)
    entries = tuple(read_transcript(path).entries)
    state = Session(32_000, entries=entries).compact().context.messages[0].parts[0]
    text = state.text  # type: ignore[union-attr]
    assert "\nOpen errors to resolve: 4 (listed under Errors).\n" in text
    tsc = "npx tsc --noEmit --skipLibCheck src/**/*.ts"
    assert [ln for ln in text.splitlines() if ln.startswith("- open: ")] == [
        "- open: src/theme/theme.ts(10,46): error TS1343: The 'import.meta' meta-property is "
        "only allowed when the '--module' option is 'es2020', 'es2022', 'esnext', 'system', "
        f"'node16', 'node18', 'node20', or 'nodenext'. — `{tsc}`",
        "- open: src/tui/tool-execution.ts(3,8): error TS1259: Module "
        "'\"/home/user/workspaces/pi-mono/node_modules/strip-ansi/index\"' can only be "
        f"default-imported using the 'esModuleInterop' flag — `{tsc}`",
        "- open: src/tui/tui-renderer.ts(533,45): error TS2802: Type 'MapIterator<[string, "
        "ToolExecutionComponent]>' can only be iterated through when using the "
        "'--downlevelIteration' flag or with a '--target' of 'es2015' or higher. — "
        f"`{tsc}`",
        "- open: cp: /opt/homebrew/lib/node_modules/@examplescope/pi-coding-agent/dist/theme/"
        "dark.json: No such file or directory",
    ]
    # npx tsgo's error is fixed by the npm run build after it, whose script runs tsgo -p
    # tsconfig.build.json (its failure line showed it)
    assert (
        "- fixed: src/theme/theme.ts(443,3): error TS2353: Object literal may only specify "
        "known properties, and 'linkUrl' does not exist in type 'MarkdownTheme'. — "
        "`npx tsgo -p tsconfig.build.json`\n"
    ) in text
    # the TS errors npx tsc shared with npm run check are fixed with them; the lookup of a
    # missing file and the interrupted or aborted calls are no errors
    wrap = "../tui/test/wrap-ansi.test.ts(70,52): error TS2353"
    assert [ln.split(": ", 1)[0] for ln in text.splitlines() if wrap in ln] == [
        "- fixed",
        "- fixed",
    ]
    assert "No such file or directory\n" not in text.replace("dark.json: No such", "")
    assert '- interrupted: `sleep 5 && echo "Done sleeping"` (no result)' in text
    assert "Command aborted" not in text and "[no result recorded" not in text
