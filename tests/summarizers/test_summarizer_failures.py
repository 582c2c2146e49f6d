"""Which output lines say what failed, per tool, and which tests passed: exact lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxengine.summarizers.failures import (
    Failure,
    _generic_candidates,
    _generic_score,
    choose,
    detect,
    passed_tests,
    shows_failure,
    summary_line,
)

PY_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/testbed/reproduce.py", line 17, in <module>\n'
    "    result = ds.pixel_array\n"
    '  File "/testbed/pydicom/dataset.py", line 1882, in pixel_array\n'
    "    self.convert_pixel_data()\n"
    '  File "/opt/conda/lib/python3.11/site-packages/numpy/core/fromnumeric.py", line 3, in f\n'
    "    raise x\n"
    "AttributeError: Unable to convert the pixel data: PixelRepresentation is missing\n"
)


def _chosen(text: str, command: str = "") -> list[tuple[str, str, str]]:
    return [(f.text, f.where, f.test) for f in choose(detect(text, command))]


def test_a_traceback_keeps_the_exception_and_the_last_project_frame() -> None:
    assert _chosen(PY_TRACEBACK) == [
        (
            "AttributeError: Unable to convert the pixel data: PixelRepresentation is missing",
            'File "/testbed/pydicom/dataset.py", line 1882, in pixel_array',
            "",
        )
    ]


def test_chained_tracebacks_give_each_exception_and_no_frame_or_header_line() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 2, in <module>\n'
        "    import yaml\n"
        "ModuleNotFoundError: No module named 'yaml'\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        "RuntimeError: giving up\n"
    )
    assert _chosen(text) == [
        ("ModuleNotFoundError: No module named 'yaml'", 'File "app.py", line 2, in <module>', ""),
        ("RuntimeError: giving up", "", ""),
    ]


def test_gcc_and_make_keep_the_compiler_error_not_the_make_lines_that_report_it() -> None:
    text = (
        "gcc -Wall -c src/parse.c -o build/parse.o\n"
        "src/parse.c: In function 'parse':\n"
        "src/parse.c:42:13: error: 'tok' undeclared (first use in this function)\n"
        "   42 |     return tok;\n"
        "make: *** [Makefile:12: build/parse.o] Error 1\n"
        "make: *** [all] Error 2\n"
    )
    assert _chosen(text, "make all") == [
        ("src/parse.c:42:13: error: 'tok' undeclared (first use in this function)", "", ""),
    ]
    assert shows_failure(text, "make all") is True
    # make alone: the lines of one recursive build are one failure, its innermost line
    alone = (
        "make[2]: *** [src/Makefile:40: parse.o] Error 1\n"
        "make[1]: *** [Makefile:12: src] Error 2\n"
        "make: *** [all] Error 2\n"
    )
    innermost = "make[2]: *** [src/Makefile:40: parse.o] Error 1"
    assert _chosen(alone, "make all") == [(innermost, "", "")]


def test_the_linker_line_names_the_missing_symbol() -> None:
    text = (
        "/usr/bin/ld: build/main.o: in function `main':\n"
        "main.c:(.text+0x1a): undefined reference to `parse_args'\n"
        "collect2: error: ld returned 1 exit status\n"
    )
    assert _chosen(text, "gcc main.o -o app")[0] == (
        "main.c:(.text+0x1a): undefined reference to `parse_args'",
        "",
        "",
    )


def test_rustc_errors_carry_their_location() -> None:
    text = (
        "   Compiling demo v0.1.0 (/work/demo)\n"
        "error[E0308]: mismatched types\n"
        " --> src/main.rs:4:18\n"
        "  |\n"
        '4 |     let n: u32 = "x";\n'
        'error: could not compile `demo` (bin "demo") due to 1 previous error\n'
    )
    assert _chosen(text, "cargo build")[0] == (
        "error[E0308]: mismatched types",
        "--> src/main.rs:4:18",
        "",
    )


def test_tsc_errors_in_both_formats() -> None:
    text = (
        "src/app.ts(3,1): error TS2304: Cannot find name 'chalk'.\n"
        "src/ui.ts:9:5 - error TS2339: Property 'x' does not exist on type 'Y'.\n"
        "Found 2 errors.\n"
    )
    assert shows_failure(text.splitlines()[0]) is True
    assert shows_failure(text.splitlines()[1]) is True
    assert [t for t, _, _ in _chosen(text, "npx tsc --noEmit")] == [
        "src/app.ts(3,1): error TS2304: Cannot find name 'chalk'.",
        "src/ui.ts:9:5 - error TS2339: Property 'x' does not exist on type 'Y'.",
    ]


def test_pytest_failed_lines_name_their_test_and_beat_the_exit_code() -> None:
    text = (
        "F.\n"
        "E       assert 3.3333333333333335 == 2.5\n"
        "E        +  where 3.3333333333333335 = mean([1, 2, 3, 4])\n"
        "FAILED tests/test_stats.py::test_mean - assert 3.3333333333333335 == 2.5\n"
        "1 failed, 3 passed in 0.14s\n"
        "Exit code 1\n"
    )
    found = choose(detect(text, "pytest -q"))
    assert [(f.text, f.test, f.runner) for f in found] == [
        (
            "FAILED tests/test_stats.py::test_mean - assert 3.3333333333333335 == 2.5",
            "tests/test_stats.py::test_mean",
            "pytest",
        ),
    ]
    # without the short summary, the ``E`` line says what failed
    found = choose(detect("F.\nE       assert 1 == 2\n1 failed, 1 passed in 0.1s\n", "pytest"))
    assert [f.text for f in found] == ["E       assert 1 == 2"]


def test_unittest_jest_go_and_cargo_failures_name_their_tests() -> None:
    unittest_out = "FAIL: test_round (tests.test_fields.TestTimeDelta)\nFAILED (failures=1)\n"
    jest_out = (
        "FAIL src/sum.test.js\n  ● math › adds numbers\n\n"
        "Tests:       1 failed, 2 passed, 3 total\n"
    )
    go_out = (
        "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2\nFAIL\n"
        "FAIL\texample.com/demo\t0.004s\n"
    )
    cargo_out = (
        "test tests::it_adds ... FAILED\n\n---- tests::it_adds stdout ----\n"
        "thread 'tests::it_adds' panicked at src/lib.rs:10:5:\n"
        "assertion `left == right` failed\n"
        "test result: FAILED. 1 passed; 1 failed; 0 ignored\n"
    )
    assert [(f.test, f.runner) for f in choose(detect(unittest_out)) if f.test] == [
        ("tests.test_fields.TestTimeDelta.test_round", "unittest")
    ]
    assert [(f.text, f.where, f.test) for f in choose(detect(jest_out))] == [
        ("● math › adds numbers", "src/sum.test.js", "math › adds numbers"),
    ]
    assert [(f.text, f.where, f.test) for f in choose(detect(go_out, "go test ./..."))] == [
        ("--- FAIL: TestParse (0.00s)", "parse_test.go:12: got 1, want 2", "TestParse"),
    ]
    assert [(f.text, f.where, f.test) for f in choose(detect(cargo_out, "cargo test"))] == [
        ("test tests::it_adds ... FAILED", "", "tests::it_adds"),
        (
            "assertion `left == right` failed",
            "thread 'tests::it_adds' panicked at src/lib.rs:10:5:",
            "tests::it_adds",
        ),
    ]


def test_a_rejected_swe_agent_edit_keeps_only_its_errors_block() -> None:
    text = (
        "Your proposed edit has introduced new syntax error(s). Please understand the fixes.\n\n"
        "ERRORS:\n- E999 SyntaxError: unmatched ']'\n\n"
        "This is how your edit would have looked if applied\n"
        '282:            "Unable to convert the pixel data: one of Pixel Data"\n'
    )
    assert _chosen(text) == [("- E999 SyntaxError: unmatched ']'", "", "")]


@pytest.mark.parametrize(
    "text",
    [
        "Exit code 1",
        "<returncode>1</returncode>",
        "Command exited with code 2",
        "[Command finished with exit code 1]",
        "Traceback (most recent call last):",
    ],
)
def test_an_exit_status_or_traceback_header_alone_is_never_what_failed(text: str) -> None:
    assert detect(text) == ()
    assert summary_line(text) == ""


def test_the_fallback_line_sounds_like_a_failure_and_skips_advice() -> None:
    credo = (
        "Exit code 2\nChecking 3 source files ...\n\n"
        "40 mods/funs, found 1 software design suggestion.\n\n"
        "Use `mix credo explain` to explain issues, `mix credo --help` for options."
    )
    assert summary_line(credo) == "40 mods/funs, found 1 software design suggestion."
    git_add = (
        "Exit code 1\nThe following paths are ignored by one of your .gitignore files:\n"
        "priv/static/assets\nhint: Use -f if you really want to add them."
    )
    assert summary_line(git_add) == (
        "The following paths are ignored by one of your .gitignore files: priv/static/assets"
    )
    assert summary_line("Exit code 3\nall good\nbye") == "bye"


def test_choose_keeps_three_most_precise_one_per_text_in_output_order() -> None:
    found = (
        Failure("a", score=2, index=0),
        Failure("b", score=8, index=1),
        Failure("c", score=5, index=2),
        Failure("b", score=8, index=3),
        Failure("d", score=6, index=4),
    )
    assert [(f.text, f.index) for f in choose(found)] == [("c", 2), ("b", 3), ("d", 4)]


def test_quoted_code_and_passing_output_show_no_failure() -> None:
    assert shows_failure("def raise_error():\n    raise ValueError('x')") is False
    assert shows_failure("3 passed in 0.20s") is False
    assert shows_failure("error: something generic") is False


def test_passed_tests_in_each_runners_verbose_output() -> None:
    text = (
        "tests/test_a.py::test_one PASSED\n"
        "test_round (tests.test_fields.TestTimeDelta) ... ok\n"
        "--- PASS: TestParse (0.00s)\n"
        "test tests::it_adds ... ok\n"
        "  ✓ adds numbers (3 ms)\n"
    )
    assert passed_tests(text) == (
        "tests/test_a.py::test_one",
        "tests.test_fields.TestTimeDelta.test_round",
        "TestParse",
        "tests::it_adds",
        "adds numbers",
    )


@pytest.mark.parametrize(
    "line",
    [
        "/opt/miniconda3/bin/python: No module named pytest",
        "bash: line 7: from: command not found",
        "python: can't open file '/testbed/x.py': [Errno 2] No such file or directory",
        "bash: ./run.sh: Permission denied",
    ],
)
def test_a_program_that_never_started_shows_a_failure_even_under_exit_code_0(line: str) -> None:
    assert shows_failure(f"{line}\n") is True
    assert _chosen(line) == [(line, "", "")]


def test_an_npm_script_that_failed_shows_it_under_a_piped_exit_code_0() -> None:
    tail = (
        "npm error Lifecycle script `check` failed with error:\n"
        "npm error code 2\nnpm error path /w/packages/app\n"
        "npm error command failed\n"
    )
    assert shows_failure(tail, "npm run check 2>&1 | tail -4") is True
    assert _chosen(tail) == [("npm error Lifecycle script `check` failed with error:", "", "")]


def test_a_failed_line_without_message_gives_way_to_its_tests_e_line() -> None:
    text = (
        "F.\n"
        "=================================== FAILURES ===================================\n"
        "__________________________ test_refund_is_idempotent __________________________\n"
        "    def test_refund_is_idempotent(client, charge):\n"
        ">       second = client.post('/v1/refunds', json=payload(charge))\n"
        "E       sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint\n"
        "E        +  where x = y\n"
        "______________________________ TestMean.test_two ______________________________\n"
        "E       assert 3 == 2\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_refunds.py::test_refund_is_idempotent\n"
        "FAILED tests/test_stats.py::TestMean::test_two - assert 3 == 2\n"
        "2 failed, 23 deselected in 1.84s\n"
    )
    assert [(f.text, f.test) for f in choose(detect(text, "pytest -q"))] == [
        (
            "E       sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint",
            "tests/test_refunds.py::test_refund_is_idempotent",
        ),
        (
            "FAILED tests/test_stats.py::TestMean::test_two - assert 3 == 2",
            "tests/test_stats.py::TestMean::test_two",
        ),
    ]


_LINE_PIECES = (
    "ValueError: bad value",
    "  error: could not compile",
    "FAILED tests/test_a.py::test_b",
    "npm ERR! missing script",
    "2 failed, 3 passed",
    "ls: cannot access 'x': No such file or directory",
    "bash: foo: command not found",
    "Permission denied",
    "Does Not Exist",
    "doeſ not exiſt",  # matched case-insensitively
    "error E0425",
    "TypeError",
    "   ",
    "",
    "all good",
    "    14 |     rate * qty",
    "Exit code: 1",
)


@given(
    st.lists(
        st.one_of(
            st.sampled_from(_LINE_PIECES),
            st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30),
            st.tuples(st.sampled_from(_LINE_PIECES), st.sampled_from(_LINE_PIECES)).map(" ".join),
        ),
        max_size=10,
    )
)
def test_every_line_that_scores_is_a_generic_candidate(lines: list[str]) -> None:
    lines = "\n".join(lines).splitlines()  # lines as detect() gets them
    scoring = [i for i, line in enumerate(lines) if _generic_score(line)]
    candidates = list(_generic_candidates(lines))
    assert candidates == sorted(set(candidates))
    assert set(scoring) <= set(candidates)
