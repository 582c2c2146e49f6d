"""Which lines of a command's output say what failed, and which tests passed, read from the
output alone (many logs carry no exit code).

Each detector knows one tool's wording:

- Python tracebacks: the exception line, with the last frame that names project code (not the
  standard library, site-packages, ``<frozen …>`` or ``<string>``) as its location;
- pytest ``FAILED id - msg`` / ``ERROR id - msg`` / ``E   …`` / ``N failed`` summaries;
  unittest ``FAIL: test (mod.Class)`` / ``FAILED (failures=N)``;
- jest and vitest ``● Suite › test`` / ``Tests: N failed``; ``FAIL path``;
- go ``--- FAIL: TestX`` (the next line, indented, is its location) / ``FAIL pkg`` / ``panic:``;
- cargo ``test x ... FAILED`` / ``thread 'x' panicked at …`` / ``test result: FAILED``;
- compilers: gcc/clang/javac ``file:line[:col]: error: …``, rustc ``error[E0308]: …`` (its
  ``--> file:line:col`` as location; a plain ``error: …`` only with such a location), tsc
  ``file(l,c): error TS2304: …``, go build ``file.go:l:c: …`` (for ``go`` commands), ``ld``
  ``undefined reference to …``;
- ``make: *** [target] Error N``; npm's ``npm ERR!``/``npm error`` lines (npm prints them only
  when it failed); pip's ``ERROR: Could not …`` / ``ERROR: No matching distribution …``;
- SWE-agent's rejected edit (the ``ERRORS:`` block only, not the file listing after it);
- a program that never started: ``No module named pytest``, ``foo: command not found``,
  ``python: can't open file 'x.py'``, ``bash: ./x.sh: Permission denied``;
- a program of the command itself saying it failed (:func:`_own_programs`): ``cp: cannot stat
  'a': No such file or directory``, ``mkdir: cannot create directory …``, ``rm: cannot remove
  …``, ``chmod: … Operation not permitted``, ``sed: can't read …``; the shell refusing a
  redirection of the command (``bash: out.txt: Permission denied``, ``/bin/sh: 1: cannot
  create out.txt: Read-only file system``, ``zsh: permission denied: out.txt``);
- ``patch`` and ``git apply`` (``Hunk #1 FAILED at 22.``, ``1 out of 1 hunk FAILED -- saving
  rejects to file a.py.rej``, ``error: a.py: patch does not apply``), and git itself
  (``! [rejected] main -> main (fetch first)``, ``error: failed to push some refs``,
  ``fatal: …``, ``CONFLICT (content): …``, ``error: pathspec 'x' did not match …``);
- linters (ruff/flake8 ``path:l:c: F401 …``, eslint ``3:1  error  …`` under its file),
  Maven ``[ERROR] path:[l,c] …`` and kotlinc ``e: path:l:c …``, an uncaught JavaScript
  ``Error: …``/``TypeError: …`` with its first project frame, webpack's ``ERROR in path``
  and the line after it; their ``Found N errors``, ``✖ N problems``, ``N failing``,
  ``BUILD FAILURE``, ``FAILURE: Build failed``, ``compiled with N errors`` lines are
  summaries; a linter run keeps its first diagnostic only (the rest are one rerun away);
- generic ``error:``/``fatal:``/"No such file or directory" lines.

Exit-code lines (``Exit code 1``, ``<returncode>1</returncode>``, ``Command exited with code 1``)
and ``Traceback (most recent call last):`` never count as saying what failed; neither do a
compiler's quoted source lines (``14 |     rate * qty``, ``|     ^^^^ not found in this
scope``).

One failure often prints several lines: :func:`choose` keeps one line per failure. A line is
*primary* (it says what failed), a *summary* (a consequence: ``1 failed, 3 passed``, ``make:
*** … Error 2``, ``npm ERR! code ELIFECYCLE``, ``error: could not compile``, ``error: failed to
push some refs``) or a *detail* (pytest's ``E   assert …`` under a ``FAILED`` line, ``Hunk #1
FAILED`` under the patch's own summary); lines of one *group* (the ``make`` lines of one
recursive build, the ``bash: line N: …`` lines of one script, the npm lines, the lines about
one patched file, the lines of one rejected push) are one failure.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import accumulate

from ctxengine.policy.defaults import LEDGER_WALK_CACHE
from ctxengine.projection.frame import is_instruction_like, may_hold_instruction
from ctxengine.summarizers.shell import commands

#: Longest error line kept, in characters.
FAILURE_MAX_CHARS = 300
#: Most failures taken from one output.
FAILURES_PER_OUTPUT = 3
#: Score from which a line alone shows a failure, whatever the exit code says.
STRONG = 5


@dataclass(frozen=True, slots=True)
class Failure:
    """One line saying what failed.

    Attributes:
        text: the line, verbatim (whitespace-trimmed, capped at :data:`FAILURE_MAX_CHARS`).
        where: its location when another line gives it (a traceback frame, ``--> a.rs:3:5``).
        test: the failed test's id when the line names one.
        runner: ``pytest``, ``unittest``, ``jest``, ``go``, ``cargo`` for test failures.
        score: how precisely it names the failure (:data:`STRONG` and above show a failure
            even under exit code 0).
        index: its line number in the output.
        role: ``""`` (it says what failed), ``"summary"`` (a consequence of other failures,
            or a count) or ``"detail"`` (it details a line that says what failed).
        group: lines with the same non-empty group are one failure (see the module
            docstring).
        program: the program of the command whose own message this line is (``cp``,
            ``git``, ``patch``; ``redirect`` for the shell refusing one of the command's
            redirections), ``""`` for a line any program the command ran may have printed.
    """

    text: str
    where: str = ""
    test: str = ""
    runner: str = ""
    score: int = 0
    index: int = 0
    role: str = ""
    group: str = ""
    program: str = ""


def _cap(line: str) -> str:
    line = line.strip()
    return line if len(line) <= FAILURE_MAX_CHARS else line[: FAILURE_MAX_CHARS - 1] + "…"


Detector = Callable[[list[str], str], Iterator[Failure]]

_FRAME = re.compile(r'^\s*File "(.+?)", line \d+')
_NOT_PROJECT = re.compile(
    r"site-packages|dist-packages|/lib/python\d|/lib64/python\d|^<|/usr/lib/|/usr/local/lib/"
    r"|/opt/\w+/lib/|\\lib\\"
)
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure)\b")
_BARE_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?::\s.*)?$")


def _tracebacks(lines: list[str], command: str) -> Iterator[Failure]:
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("Traceback (most recent call last)"):
            i += 1
            continue
        where = ""
        i += 1
        while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()):
            frame = _FRAME.match(lines[i])
            if frame is not None and not _NOT_PROJECT.search(frame.group(1)):
                where = lines[i].strip()
            i += 1
        if i < len(lines) and (
            _EXCEPTION.match(lines[i]) or _BARE_EXCEPTION.match(lines[i].strip())
        ):
            yield Failure(_cap(lines[i]), where=where, score=7, index=i)


_PYTEST_FAILED = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - (.*))?$")
_PYTEST_E = re.compile(r"^E {2,}\S")
_PYTEST_SUMMARY = re.compile(
    r"^=+ .*\b\d+ (?:failed|errors?)\b.*=+$|^\d+ (?:failed|errors?)\b.*\bin [\d.]+s\b"
)
_UNITTEST = re.compile(r"^(FAIL|ERROR): (\w+) \((.+?)\)")
_UNITTEST_SUMMARY = re.compile(r"^FAILED \((?:failures|errors)=\d+")


_PYTEST_HEADER = re.compile(r"^_{3,} (\S.*?) _{3,}$")


def _pytest_ids(lines: list[str]) -> dict[str, bool]:
    """The tests pytest's short summary lists as failed, each with whether its line gives
    the failure's message (``FAILED id - msg``)."""
    ids: dict[str, bool] = {}
    for line in lines:
        m = _PYTEST_FAILED.match(line.strip())
        if m is not None and ("::" in m.group(2) or m.group(2).endswith(".py")):
            ids[m.group(2)] = ids.get(m.group(2), False) or bool(m.group(3))
    return ids


def _pytest(lines: list[str], command: str) -> Iterator[Failure]:
    """pytest and unittest failures. A test's ``E`` lines detail its ``FAILED id - msg``
    line; when that line gives no message, the first telling ``E`` line (under the test's
    ``____ name ____`` header) says what failed, with the test's id."""
    ids = _pytest_ids(lines)
    by_name = {i.split("::", 1)[1].replace("::", "."): i for i in ids if "::" in i}
    current = ""
    for i, line in enumerate(lines):
        m = _PYTEST_FAILED.match(line.strip())
        if (h := _PYTEST_HEADER.match(line.strip())) is not None:
            current = by_name.get(h.group(1), "")
        elif m is not None and m.group(2) in ids:
            test = m.group(2)
            role = "" if m.group(3) or not _has_e_line(lines, test, by_name) else "detail"
            yield Failure(
                _cap(line), test=test, runner="pytest", score=8, index=i, role=role,
                group=f"pytest:{test}",
            )  # fmt: skip
        elif _PYTEST_E.match(line):
            telling = re.search(r"Error|Exception|assert|Failed", line) is not None
            score = STRONG if telling else 3
            own = bool(current) and not ids[current]
            yield Failure(
                _cap(line), test=current if own else "", runner="pytest", score=score, index=i,
                role="" if own else "detail", group=f"pytest:{current}" if current else "",
            )  # fmt: skip
        elif _PYTEST_SUMMARY.match(line.strip()):
            yield Failure(_cap(line), runner="pytest", score=STRONG, index=i, role="summary")
        elif (u := _UNITTEST.match(line)) is not None:
            test = f"{u.group(3)}.{u.group(2)}"
            yield Failure(_cap(line), test=test, runner="unittest", score=7, index=i)
        elif _UNITTEST_SUMMARY.match(line):
            yield Failure(_cap(line), runner="unittest", score=STRONG, index=i, role="summary")


def _has_e_line(lines: list[str], test: str, by_name: dict[str, str]) -> bool:
    """True when a telling ``E`` line appears under the header of ``test``."""
    current = ""
    for line in lines:
        if (h := _PYTEST_HEADER.match(line.strip())) is not None:
            current = by_name.get(h.group(1), "")
        elif (
            current == test
            and _PYTEST_E.match(line)
            and re.search(r"Error|Exception|assert|Failed", line)
        ):
            return True
    return False


_JEST_BULLET = re.compile(r"^\s*● (?!Console\b)(.+?)\s*$")
_JEST_SUMMARY = re.compile(r"^Tests:\s+.*\b\d+ failed")
_FAIL_FILE = re.compile(r"^FAIL\s+(\S+\.\w+)(?:\s+\([\d.]+\s*m?s\))?$")


def _jest(lines: list[str], command: str) -> Iterator[Failure]:
    suite = ""
    for i, line in enumerate(lines):
        bullet = _JEST_BULLET.match(line)
        if bullet is not None:
            test = bullet.group(1)
            yield Failure(_cap(line), where=suite, test=test, runner="jest", score=7, index=i)
        elif _JEST_SUMMARY.match(line.strip()):
            yield Failure(_cap(line), runner="jest", score=STRONG, index=i, role="summary")
        elif "\t" not in line and (m := _FAIL_FILE.match(line.strip())) is not None:
            suite = m.group(1)
            yield Failure(
                _cap(line), test=suite, runner="jest", score=STRONG, index=i, role="summary"
            )


_GO_FAIL = re.compile(r"^\s*--- FAIL: (\S+)")
_GO_PKG_FAIL = re.compile(r"^FAIL\t\S+\t[\d.]+s\s*$")
_GO_LOCATION = re.compile(r"^\s+\S+\.go:\d+: ")


def _go(lines: list[str], command: str) -> Iterator[Failure]:
    for i, line in enumerate(lines):
        m = _GO_FAIL.match(line)
        if m is not None:
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            where = nxt.strip() if _GO_LOCATION.match(nxt) else ""
            yield Failure(_cap(line), where=where, test=m.group(1), runner="go", score=7, index=i)
        elif _GO_PKG_FAIL.match(line):
            yield Failure(_cap(line), runner="go", score=STRONG, index=i, role="summary")
        elif line.startswith("panic: "):
            yield Failure(_cap(line), score=7, index=i)


_CARGO_FAILED = re.compile(r"^test (\S+) \.\.\. FAILED\s*$")
_PANICKED = re.compile(r"^thread '(.+?)' panicked at (.+)$")
_CARGO_SUMMARY = re.compile(r"^test result: FAILED\.")


def _cargo(lines: list[str], command: str) -> Iterator[Failure]:
    for i, line in enumerate(lines):
        if (m := _CARGO_FAILED.match(line.strip())) is not None:
            yield Failure(_cap(line), test=m.group(1), runner="cargo", score=6, index=i)
        elif (p := _PANICKED.match(line.strip())) is not None:
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            test = p.group(1) if p.group(1) != "main" else ""
            if line.rstrip().endswith(":") and nxt:
                yield Failure(
                    _cap(nxt), where=_cap(line), test=test, runner="cargo", score=8, index=i + 1
                )
            else:
                yield Failure(_cap(line), test=test, runner="cargo", score=8, index=i)
        elif _CARGO_SUMMARY.match(line.strip()):
            yield Failure(_cap(line), runner="cargo", score=STRONG, index=i, role="summary")


_C_ERROR = re.compile(r"^(?:\S.*?):\d+(?::\d+)?: (?:fatal )?error: \S")
_RUST_ERROR = re.compile(r"^error(?:\[E\d+\])?: (?!aborting due to|could not compile)\S")
_RUST_WHERE = re.compile(r"^\s*--> \S+:\d+:\d+")
_TS_ERROR = re.compile(r"^(?:\S.*?)(?:\(\d+,\d+\):|:\d+:\d+ -) error TS\d+: |^error TS\d+: ")
_GO_BUILD = re.compile(r"^(?:\./)?\S+\.go:\d+:\d+: \S")
_LINKER = re.compile(
    r"undefined reference to |^Undefined symbols for architecture|^ld: (?:error: )?(?:cannot find|"
    r"symbol\(s\) not found|library not found)|multiple definition of "
)
_MAKE = re.compile(r"^(?:g?make|mingw32-make)(?:\[\d+\])?: \*\*\* ")
_NPM = re.compile(r"^npm (?:ERR!|error)(?: |$)")
#: npm lines that only report the exit status, the log file or the directory.
_NPM_SUMMARY = re.compile(
    r"^npm (?:ERR!|error) *(?:$|code\b|errno\b|path\b|syscall\b|command\b|cwd\b|signal\b|"
    r"workspace\b|location\b|Lifecycle script\b|"
    r"spawn\b|A complete log|Log files|This is probably|Failed at the|Exit status|"
    r"[\w@/.-]+@[\w.-]+ \w+: `)"
)
_NPM_COMMAND = re.compile(r"^npm (?:ERR!|error) command sh -c ")
_PIP = re.compile(
    r"^ERROR: (?:Could not|No matching distribution|Cannot |Failed |Invalid requirement|"
    r"ResolutionImpossible|Exception:|Command errored|Directory '.+' is not installable|"
    r"File \"setup.py\" not found)|^error: externally-managed-environment"
)
_PIP_SUMMARY = re.compile(r"^error: subprocess-exited-with-error|^ERROR: Failed building wheel")
#: A line that only says a build, a compile or a format run as a whole failed.
_CONSEQUENCE = re.compile(
    r"could not compile|aborting due to|^error: build failed|Compilation failed|"
    r"^\d+ files? (?:failed to reformat|would be reformatted)|^Oh no! |"
    r"Command failed with exit code|^error Command failed|^Automatic merge failed"
)


#: What a line :func:`_compilers` reports holds: one of these (``error``/``ERROR`` for the
#: compiler, rustc, tsc and pip lines, the linker's words, a Go file's ``.go:``, make's
#: ``***``, ``npm ``).
_COMPILER_WORDS = (
    "error", "ERROR", "undefined reference to ", "Undefined symbols for architecture", "ld: ",
    "multiple definition of ", ".go:", "*** ", "npm ",
)  # fmt: skip


def _compilers(lines: list[str], command: str) -> Iterator[Failure]:
    joined = "\n".join(lines)  # the words hold no line break
    if not any(word in joined for word in _COMPILER_WORDS):
        return
    go = re.search(r"(^|[\s;&|(])go\s+(build|test|vet|run|install)\b", command) is not None
    for i, line in enumerate(lines):
        text = line.strip()
        if _C_ERROR.match(text) or _TS_ERROR.match(text) or _LINKER.search(text):
            yield Failure(_cap(line), score=8, index=i)
        elif _RUST_ERROR.match(text):
            near = next((ln for ln in lines[i + 1 : i + 4] if _RUST_WHERE.match(ln)), "")
            if near or text.startswith("error["):
                yield Failure(_cap(line), where=_cap(near), score=8, index=i)
        elif go and _GO_BUILD.match(text):
            yield Failure(_cap(line), score=7, index=i)
        elif _MAKE.match(text):
            yield Failure(_cap(line), score=6, index=i, role="summary", group="make")
        elif _NPM.match(text):
            # one group: a line saying what failed, else the command that failed, else the rest
            role = "summary" if _NPM_SUMMARY.match(text) else ""
            score = STRONG + (role == "" or _NPM_COMMAND.match(text) is not None)
            yield Failure(_cap(line), score=score, index=i, role=role, group="npm")
        elif _PIP.match(text):
            yield Failure(_cap(line), score=6, index=i, group="pip")
        elif _PIP_SUMMARY.match(text):
            yield Failure(_cap(line), score=STRONG, index=i, role="summary", group="pip")


#: A linter's diagnostic (ruff, flake8, pycodestyle, pylint ``--output-format=parseable``):
#: ``src/b.py:4:1: F401 [*] `os` imported but unused``.
_LINT_LINE = re.compile(r"^(?:\./)?[\w./\\-]+:\d+:\d+: [A-Z]{1,3}\d{1,4}\b")
#: Linters whose diagnostics alone show a failure.
_LINTERS = frozenset({"ruff", "flake8", "pycodestyle", "pyflakes", "pylint", "pydocstyle"})
#: A linter's, type checker's or test runner's count of what failed (ruff, mypy, tsc
#: ``Found 1 error.``, eslint ``✖ 3 problems (3 errors, 0 warnings)``, mocha ``1 failing``).
_COUNT = re.compile(
    r"^Found [1-9]\d* (?:errors?|problems?)\b|^[✖×] [1-9]\d* problems? \(|"
    r"^[1-9]\d* (?:tests? )?(?:failed|failing)\b"
)
#: eslint's ``  3:1  error  'x' is not defined  no-undef`` under its file's path.
_ESLINT_LINE = re.compile(r"^\s+\d+:\d+\s+error\s+\S")
_ESLINT_FILE = re.compile(r"^(?:[A-Za-z]:)?[\w./\\@-]+\.\w+$")
#: Maven's ``[ERROR] /repo/App.java:[12,5] cannot find symbol``; Gradle/kotlinc's
#: ``e: file:///repo/App.kt:12:5 Unresolved reference: x``.
_MAVEN_LOCATED = re.compile(r"^\[ERROR\] (?:\S.*?):\[\d+,\d+\] \S")
_KOTLIN_LOCATED = re.compile(r"^e: (?:file://)?\S+?(?::\d+:\d+|: \(\d+, \d+\)):? \S")
_MAVEN_ERROR = re.compile(r"^\[ERROR\] \S")
#: Build-tool lines that only say the build as a whole failed.
_BUILD_SUMMARY = re.compile(
    r"BUILD FAILURE\b|^FAILURE: Build failed|^BUILD FAILED\b|COMPILATION ERROR|"
    r"^\[ERROR\] (?:Failed to execute goal|-> \[Help|Re-run Maven|To see the full stack|"
    r"For more information|\s*$)|^Execution failed for task |^\* What went wrong:"
)
#: An uncaught JavaScript error (node, deno, bun): ``Error: missing config``,
#: ``TypeError: x is not a function``, ``Uncaught ReferenceError: y is not defined``.
_JS_ERROR = re.compile(r"^(?:Uncaught )?(?:[A-Z]\w*)?(?:Error|Exception)(?: \[\w+\])?: \S")
_JS_FRAME = re.compile(r"^\s+at \S")
_JS_NOT_PROJECT = re.compile(r"node:internal|node_modules|\(node:|\(<anonymous>\)|^at <anonymous>$")
#: webpack's ``ERROR in ./src/app.tsx 12:4`` (the next line says what failed) and its
#: ``webpack 5.9.0 compiled with 1 error``.
_WEBPACK_AT = re.compile(r"^ERROR in (\S.*)$")
_WEBPACK_SUMMARY = re.compile(r"\bcompiled with [1-9]\d* errors?\b|^Failed to compile\.")


def _js_where(lines: list[str], start: int) -> str | None:
    """The first stack frame in project code after the error line at ``start`` (``""``
    when every frame is node's or a dependency's), ``None`` when no frame follows."""
    frames = []
    for line in lines[start + 1 :]:
        if not _JS_FRAME.match(line):
            break
        frames.append(line.strip().removeprefix("at "))
    if not frames:
        return None
    return next((f for f in frames if not _JS_NOT_PROJECT.search(f)), "")


def _builds(lines: list[str], command: str) -> Iterator[Failure]:
    """Linters, Maven/Gradle, uncaught JavaScript errors and webpack: the line that names
    what failed, with the counts and build-failed lines as summaries of the same run."""
    linter = bool(_program_names(command) & _LINTERS)
    counted = any(_COUNT.match(ln.strip()) for ln in lines)
    eslint_file = ""
    webpack_at = ""
    for i, line in enumerate(lines):
        text = line.strip()
        if _LINT_LINE.match(text):
            yield Failure(_cap(line), score=7 if linter or counted else 3, index=i, group="lint")
        elif _COUNT.match(text):
            yield Failure(_cap(line), score=STRONG, index=i, role="summary")
        elif _ESLINT_FILE.match(line):
            eslint_file = text
        elif _ESLINT_LINE.match(line):
            yield Failure(_cap(line), where=eslint_file, score=7, index=i, group="lint")
        elif _MAVEN_LOCATED.match(text) or _KOTLIN_LOCATED.match(text):
            yield Failure(_cap(line), score=8, index=i, group="build")
        elif _BUILD_SUMMARY.search(text):
            yield Failure(_cap(line), score=STRONG, index=i, role="summary", group="build")
        elif _MAVEN_ERROR.match(text):
            yield Failure(_cap(line), score=6, index=i, group="build")
        elif _JS_ERROR.match(line) and (where := _js_where(lines, i)) is not None:
            yield Failure(_cap(line), where=where, score=7, index=i)
        elif (m := _WEBPACK_AT.match(text)) is not None:
            webpack_at = m.group(1)
            yield Failure(_cap(line), score=6, index=i, role="detail", group=f"webpack:{i}")
        elif webpack_at and text and i and _WEBPACK_AT.match(lines[i - 1].strip()):
            group = f"webpack:{i - 1}"
            yield Failure(_cap(line), where=webpack_at, score=7, index=i, group=group)
        elif _WEBPACK_SUMMARY.search(text):
            yield Failure(_cap(line), score=STRONG, index=i, role="summary")


_NOT_LAUNCHED = re.compile(
    r"^(?:\S+: )?No module named \S+$|: command not found$|^\S*python[\d.]*: can't open file |"
    r"^(?:bash|sh|zsh|dash)(?:: line \d+)?: [^:]+: (?:No such file or directory|Permission denied)$"
)


#: A line a shell prints while running a script or ``-c`` text (``bash: line 7: …``,
#: ``bash: -c: line 12: …``, ``/bin/sh: 1: …``), also after an agent's prefix (``stderr: ``).
_SCRIPT_LINE = re.compile(
    r"(?:^|\s)(?:\S*/)?(?:bash|sh|zsh|dash|ksh)(?:: -c)?(?:: line \d+|: \d+): "
)


def _not_launched(lines: list[str], command: str) -> Iterator[Failure]:
    for i, line in enumerate(lines):
        if _NOT_LAUNCHED.search(line.strip()):
            # the ``bash: line N: …`` lines of one run are one failure
            group = "shell" if _SCRIPT_LINE.search(line.strip()) else ""
            yield Failure(_cap(line), score=6, index=i, group=group)


#: What a program or the shell says when it could not do what it was asked on a file.
_ERRNO = re.compile(
    r"No such file or directory|Permission denied|Read-only file system|Not a directory|"
    r"Is a directory|File exists|Operation not permitted|Directory not empty|"
    r"No space left on device|Disk quota exceeded|Too many levels of symbolic links|"
    r"Device or resource busy|Text file busy|Input/output error|Invalid cross-device link|"
    r"\b(?:cannot|can't|could not|unable to|failed to) (?:stat|lstat|create|remove|move|"
    r"access|open|overwrite|copy|touch|change|make|set|read|write|find|delete|rename|link|"
    r"preserve)\b|missing (?:destination )?file operand|are the same file|"
    r"omitting directory|not a regular file|invalid option|unrecognized option|"
    r"-e expression #\d+, char \d+|No match\b",
    re.IGNORECASE,
)
_OWN_LINE = re.compile(r"^(?:/\S*/)?([\w.+-]+): (.+)$")
_SHELL = r"(?:/\S*/)?(?:bash|sh|zsh|dash|ksh)(?:: line \d+|: \d+)?: "
#: The shell refusing a redirection: bash ``bash: PATH: MSG``, dash ``/bin/sh: 1: cannot
#: create PATH: MSG``, zsh ``zsh: MSG: PATH``.
_REDIRECT = (
    re.compile(rf"^{_SHELL}(?:cannot create |cannot open )?(?P<path>[^:]+): (?P<msg>.+)$"),
    re.compile(rf"^{_SHELL}(?P<msg>[a-z][a-z -]+): (?P<path>.+)$"),
)


def _program_names(command: str) -> set[str]:
    """The programs ``command`` runs, by base name (``git``, ``cp`` …)."""
    return {c.name for c in commands(command) if c.name}


def _redirected(command: str) -> set[str]:
    """Paths the command's redirections write or read (``> out.txt``, ``< in.diff``)."""
    found: set[str] = set()
    for c in commands(command):
        found.update(c.writes)
        if c.stdin:
            found.add(c.stdin)
    return found


def _own_programs(lines: list[str], command: str) -> Iterator[Failure]:
    """Lines in which a program of ``command`` itself says it failed on a file
    (``cp: cannot stat 'a': No such file or directory``), and the shell refusing one of the
    command's redirections (``bash: out.txt: Permission denied``)."""
    if not command:
        return
    names = _program_names(command)
    paths = _redirected(command)
    if not names and not paths:
        return  # no program to name, no redirection to refuse
    for i, line in enumerate(lines):
        text = line.strip()
        if ": " not in text:
            continue  # every pattern here needs it
        for pattern in _REDIRECT:
            m = pattern.match(text)
            if m is not None and m.group("path").strip("'\"") in paths and _ERRNO.search(text):
                yield Failure(_cap(line), score=7, index=i, program="redirect")
                break
        else:
            own = _OWN_LINE.match(text)
            if own is not None and own.group(1) in names and _ERRNO.search(own.group(2)):
                yield Failure(_cap(line), score=6, index=i, program=own.group(1))


_PATCHING = re.compile(r"^(?:patching|checking) file '?([^'\n]+?)'?\s*$")
_HUNK_FAILED = re.compile(r"^Hunk #\d+ FAILED at \d+")
_HUNKS_SUMMARY = re.compile(
    r"^\d+ out of \d+ hunks? (?:FAILED|ignored)(?: -- saving rejects to file (.+))?"
)
_PATCH_OTHER = re.compile(
    r"^can't find file to patch at input line \d+|^patch: \*\*\*\* |"
    r"^Reversed \(or previously applied\) patch detected|^No file to patch\.|"
    r"^patch unexpectedly ends in middle of line|^Only garbage was found in the patch input"
)
_APPLY_FAILED = re.compile(r"^error: patch failed: (.+?):\d+\s*$")
_APPLY_NOT = re.compile(
    r"^error: (.+?): (?:patch does not apply|does not exist in index|already exists in "
    r"(?:working directory|index)|No such file or directory)\s*$"
)


def _patches(lines: list[str], command: str) -> Iterator[Failure]:
    """GNU ``patch`` and ``git apply`` failures, one group per patched file."""
    names = _program_names(command)
    if "patch" not in names and "git" not in names:
        return
    program = "patch" if "patch" in names else "git"
    current = ""
    for i, line in enumerate(lines):
        text = line.strip()
        if (m := _PATCHING.match(text)) is not None:
            current = m.group(1)
        elif _HUNK_FAILED.match(text):
            group = f"patch:{current}"
            yield Failure(_cap(line), score=6, index=i, role="detail", group=group, program=program)
        elif (m := _HUNKS_SUMMARY.match(text)) is not None:
            group = f"patch:{current}"
            yield Failure(_cap(line), score=7, index=i, group=group, program=program)
        elif _PATCH_OTHER.match(text):
            yield Failure(_cap(line), score=7, index=i, group=f"patch:{current}", program=program)
        elif (m := _APPLY_FAILED.match(text)) is not None:
            group = f"patch:{m.group(1)}"
            yield Failure(_cap(line), score=6, index=i, role="detail", group=group, program="git")
        elif (m := _APPLY_NOT.match(text)) is not None:
            group = f"patch:{m.group(1)}"
            yield Failure(_cap(line), score=7, index=i, group=group, program="git")


_PUSH_REJECTED = re.compile(r"^! \[(?:remote )?rejected\]|^! \[remote failure\]")
_PUSH_FAILED = re.compile(r"^error: failed to push some refs")
_GIT_FAILED = re.compile(
    r"^CONFLICT \(|^error: pathspec '.*' did not match|^error: Your local changes to the "
    r"following files would be overwritten|^error: The following untracked working tree files "
    r"would be|^error: could not apply |^error: cannot (?:pull|rebase|lock)|^error: src refspec "
    r"|^error: failed to|^error: unable to|^error: Committing is not possible|"
    r"^error: you need to resolve your current index first"
)
_GIT_FATAL = re.compile(r"^(?:fatal|error): \S")


def _git(lines: list[str], command: str) -> Iterator[Failure]:
    """git's own failures (``git`` must be a program of ``command``): a rejected push (one
    group with its ``error: failed to push`` line), conflicts, ``fatal:``/``error:`` lines."""
    if "git" not in _program_names(command):
        return
    for i, line in enumerate(lines):
        text = line.strip()
        if _PUSH_REJECTED.match(text):
            yield Failure(_cap(line), score=8, index=i, group="push", program="git")
        elif _PUSH_FAILED.match(text):
            yield Failure(_cap(line), score=6, index=i, role="summary", group="push", program="git")
        elif _GIT_FAILED.match(text):
            yield Failure(_cap(line), score=7, index=i, program="git")
        elif _GIT_FATAL.match(text):
            yield Failure(_cap(line), score=6, index=i, program="git")


_REJECTED_EDIT = "Your proposed edit has introduced new syntax error(s)"


def _rejected_edit(lines: list[str], command: str) -> Iterator[Failure]:
    if not lines or not lines[0].startswith(_REJECTED_EDIT):
        return
    start = next((i for i, ln in enumerate(lines) if ln.strip() == "ERRORS:"), None)
    if start is None:
        return
    for i in range(start + 1, len(lines)):
        if not lines[i].strip():
            break
        yield Failure(_cap(lines[i]), score=9, index=i)


#: (score, pattern) for lines no tool-specific detector claims.
_GENERIC: tuple[tuple[int, re.Pattern[str]], ...] = (
    (4, re.compile(r"\b[A-Z]\w*(?:Error|Exception|Failure)\b(?::|\s*$)")),
    (4, re.compile(r"^\s*(?:error|fatal|panic)(?:\[\w+\])?\b\s*[:\s]", re.IGNORECASE)),
    (3, re.compile(r"\berror\s+[A-Z]+\d+\b")),
    (3, re.compile(r"\bFAILED\b|\bFAIL:|npm ERR!|<tool_use_error>")),
    (3, re.compile(r"\b\d+ (?:failed|errors?)\b")),
    (3, re.compile(r"No such file or directory|command not found|Permission denied")),
    (2, re.compile(r"not found|does not exist|cannot |can't |unable to", re.IGNORECASE)),
)

#: Lines that only restate an exit status or open a traceback, and Gemini CLI's shell
#: envelope lines (``Error: (none)`` when the command reported no error, ``Output:
#: (empty)``, ``Signal: 0``, ``Background PIDs: (none)``, ``Process Group PGID: N``): never
#: what failed.
ENVELOPE = re.compile(
    r"^\s*(?:Exit code:? -?\d+|<returncode>-?\d+</returncode>|</?output>|"
    r"Error: \(none\)|Output: \(empty\)|Signal: (?:-?\d+|\(none\))|"
    r"Background PIDs: .*|Process Group PGID: .*|"
    r"Command exited with code -?\d+|\[Command finished with exit code -?\d+\]|"
    r"Process exited with code -?\d+|exit status -?\d+|"
    r"Traceback \(most recent call last\):?|bash-\$|\(Open file: .*\)|"
    r"\(Current directory: .*\))\s*$",
    re.IGNORECASE,
)

#: A compiler's quoted source (rustc, gcc ≥ 9, clang: ``14 |     rate * qty``, ``|  ^^^^ not
#: found in this scope``), its caret line, and rustc's ``= note:`` lines: never what failed.
_QUOTED_SOURCE = re.compile(r"^\s*\d*\s*\|(?:\s|$)|^\s*[\^~]+(?:\s|$)|^\s*= (?:note|help):")

DETECTORS: tuple[Detector, ...] = (
    _rejected_edit,
    _tracebacks,
    _pytest,
    _jest,
    _go,
    _cargo,
    _not_launched,
    _own_programs,
    _patches,
    _git,
    _builds,
)


#: The rules of :data:`_GENERIC` as one pattern (each alternative keeps its own flags): a
#: line that holds no match of it scores 0 without trying each rule.
_ANY_GENERIC = re.compile(
    "|".join(
        f"(?i:{rule.pattern})" if rule.flags & re.IGNORECASE else f"(?:{rule.pattern})"
        for _, rule in _GENERIC
    )
)


def _generic_score(line: str) -> int:
    """The generic score of one line (0: it does not sound like a failure)."""
    if not line.strip() or ENVELOPE.match(line) or _QUOTED_SOURCE.match(line):
        return 0
    if _ANY_GENERIC.search(line) is None:
        return 0
    return max((s for s, rule in _GENERIC if rule.search(line)), default=0)


#: Words (lowercase) one of which every match of a :data:`_GENERIC` rule holds: an ASCII
#: text holding none of them has no line that scores (a text that is not ASCII is searched,
#: lowercasing not being the rules' case folding there).
_GENERIC_WORDS = (
    "error", "exception", "fail", "fatal", "panic", "npm err!", "no such file",
    "permission denied", "not found", "does not exist", "cannot ", "can't ", "unable to",
)  # fmt: skip
#: :data:`_ANY_GENERIC` over a whole output, ``^`` and ``$`` at each line's ends.
_ANY_GENERIC_LINES = re.compile(_ANY_GENERIC.pattern, re.MULTILINE)


def _generic_candidates(lines: list[str]) -> Iterator[int]:
    """The indices of the lines that may score (:func:`_generic_score`), in order: one
    search over the lines joined by line breaks instead of one per line (none when an ASCII
    text holds none of :data:`_GENERIC_WORDS`). A rule that matches a line alone matches
    the joined text at the same place (its ``^`` and ``$`` hold at line breaks there, its
    ``\\b`` and ``\\s`` read a line break as a space does), so after a match the search
    goes on from the next line's start and no such line is passed over; a match that only
    the joined text holds (``\\s`` across a line break) makes a candidate that scores 0."""
    text = "\n".join(lines)
    if text.isascii():
        low = text.lower()
        if not any(word in low for word in _GENERIC_WORDS):
            return
    starts = list(accumulate((len(ln) + 1 for ln in lines), initial=0))
    pos = 0
    while (m := _ANY_GENERIC_LINES.search(text, pos)) is not None:
        i = bisect_right(starts, m.start()) - 1
        yield i
        if i + 1 >= len(lines):
            return
        pos = starts[i + 1]


def _generic(lines: list[str], claimed: set[int]) -> Iterator[Failure]:
    for i in _generic_candidates(lines):
        if i in claimed:
            continue
        line = lines[i]
        score = _generic_score(line)
        if score:
            role = "summary" if _CONSEQUENCE.search(line.strip()) else ""
            yield Failure(_cap(line), score=score, index=i, role=role)


#: Gemini CLI's shell result (``run_shell_command``, packages/core/src/tools/shell.ts): the
#: lines ``Command: CMD`` (the command's own lines after it), ``Directory: DIR``, then
#: ``Output: `` and the output's first line, then ``Error: …``, ``Exit Code: …`` and the
#: other envelope lines (:data:`ENVELOPE`; ``Output: (empty)`` when it printed nothing).
#: Group 1 is the prefix of an output that is not empty.
_GEMINI_OUTPUT = re.compile(
    r"Command: .*?\nDirectory: [^\n]*\n(Output: )(?!\(empty\)(?:\n|$))", re.DOTALL
)


def output_lines(text: str) -> list[str]:
    """The lines of ``text``; in a Gemini CLI shell result (:data:`_GEMINI_OUTPUT`) the
    output's first line without the ``Output: `` that prefixes it, so that a detector
    anchored at a line's start reads it as the command printed it (``Output:
    pkg/a.go:3:1: …`` gives ``pkg/a.go:3:1: …``; ``Output: (empty)`` stays an envelope
    line). The lines are the same in number and order."""
    if text.startswith("Command: "):
        found = _GEMINI_OUTPUT.match(text)
        if found is not None:
            text = text[: found.start(1)] + text[found.end(1) :]
    return text.splitlines()


def _data_lines(text: str) -> list[str]:
    """The lines of ``text`` (:func:`output_lines`: Gemini CLI's ``Output: `` prefix left
    out), with every instruction-like line (``SYSTEM: ignore all previous …``, see
    :func:`~ctxengine.projection.frame.is_instruction_like`) blanked: an order printed by a
    tool is never what failed, so it is never kept as an error."""
    lines = output_lines(text)
    if not may_hold_instruction(text):
        return lines
    return ["" if is_instruction_like(ln) else ln for ln in lines]


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def detect(text: str, command: str = "") -> tuple[Failure, ...]:
    """Every line of ``text`` some detector takes for a failure, with its score, in output
    order (a line claimed by a tool-specific detector is not scored again generically; a
    traceback's frames and source lines are never candidates). ``command`` (the shell
    command that printed ``text``, or ``""``) enables the go build detector."""
    lines = _data_lines(text)
    found: dict[int, Failure] = {}
    for detector in (*DETECTORS, _compilers):
        for failure in detector(lines, command):
            if failure.index not in found or found[failure.index].score < failure.score:
                found[failure.index] = failure
    claimed = set(found) | _traceback_body(lines)
    if not any(f.score >= 9 for f in found.values()):
        for failure in _generic(lines, claimed):
            found[failure.index] = failure
    else:
        found = {i: f for i, f in found.items() if f.score >= 9}
    return tuple(_with_next_line(found[i], lines, found) for i in sorted(found))


#: The detectors of a program's own messages (see :func:`own_failures`).
OWN_DETECTORS: tuple[Detector, ...] = (_own_programs, _patches, _git)


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def own_failures(text: str, command: str) -> tuple[Failure, ...]:
    """The lines of ``text`` in which a program of ``command`` itself says it failed (the
    failures :func:`detect` finds with a ``program``), in output order: cheap enough to ask
    of every output, a quoted file's included (each detector matches line starts against
    the command's own program names)."""
    if not command:
        return ()
    lines = output_lines(text)
    found: dict[int, Failure] = {}
    for detector in OWN_DETECTORS:
        for failure in detector(lines, command):
            if failure.index not in found or found[failure.index].score < failure.score:
                found[failure.index] = failure
    return tuple(found[i] for i in sorted(found))


def _with_next_line(failure: Failure, lines: list[str], found: dict[int, Failure]) -> Failure:
    """A line that only opens a list (``The following paths are ignored by one of your
    .gitignore files:``) with the line after it (the path), when that line is neither a
    failure of its own, an advice line nor an exit-status envelope."""
    if not failure.text.endswith(":") or failure.where:
        return failure
    nxt = failure.index + 1
    if nxt >= len(lines) or nxt in found:
        return failure
    line = lines[nxt].strip()
    if not line or ENVELOPE.match(line) or _ADVICE.search(line):
        return failure
    return replace(failure, text=_cap(f"{failure.text} {line}"))


def _traceback_body(lines: list[str]) -> set[int]:
    """Line numbers inside tracebacks (frames and quoted source), which quote code."""
    body: set[int] = set()
    inside = False
    for i, line in enumerate(lines):
        if _JS_FRAME.match(line):
            body.add(i)
        elif line.lstrip().startswith("Traceback (most recent call last)"):
            inside = True
            body.add(i)
        elif inside and (not line.strip() or line[:1].isspace()):
            body.add(i)
        else:
            inside = False
    return body


def shows_failure(text: str, command: str = "") -> bool:
    """True when a line of ``text`` alone shows a failure (a detector scores it
    :data:`STRONG` or more): a traceback's exception, a failed test or its summary, a
    compiler or linker error, ``make: ***``, a rejected edit, a program of ``command``
    saying it failed (``cp: cannot stat …``, ``! [rejected] …``, ``Hunk #1 FAILED …``)."""
    return any(f.score >= STRONG for f in detect(text, command))


#: Score from which the last line of an output without an exit status shows that the
#: command failed (``Error: connect ECONNREFUSED``, ``fatal: …``, ``SomeError: …``).
LAST_LINE_SCORE = 4


@lru_cache(maxsize=LEDGER_WALK_CACHE)
def ends_in_failure(text: str) -> bool:
    """True when the last line of ``text`` that is no advice (``hint: …``), no exit-status
    envelope and no instruction-like line sounds like a failure (a generic score of at
    least :data:`LAST_LINE_SCORE`, or a tool-specific detector's :data:`STRONG` line): for
    an output whose agent states no exit code, the way a command that failed ends."""
    lines = _data_lines(text)
    last = next(
        (
            i
            for i in range(len(lines) - 1, -1, -1)
            if lines[i].strip() and not ENVELOPE.match(lines[i]) and not _ADVICE.search(lines[i])
        ),
        None,
    )
    if last is None:
        return False
    if _generic_score(lines[last]) >= LAST_LINE_SCORE:
        return True
    return any(f.index == last and f.score >= STRONG for f in detect(text))


def failed_programs(failures: tuple[Failure, ...]) -> frozenset[str]:
    """The programs (``cp``, ``git``, ``patch``, ``redirect`` …) whose own messages among
    ``failures`` say they failed (score :data:`STRONG` or more)."""
    return frozenset(f.program for f in failures if f.program and f.score >= STRONG)


def _one_per_group(failures: list[Failure]) -> list[Failure]:
    """Of each group, the line that says most (a primary line first, then the higher
    score, then the earlier line); lines without a group are kept."""
    best: dict[str, Failure] = {}
    for f in failures:
        if not f.group:
            continue
        old = best.get(f.group)
        if old is None or (f.role == "", f.score, -f.index) > (
            old.role == "",
            old.score,
            -old.index,
        ):
            best[f.group] = f
    return [f for f in failures if not f.group or best[f.group] is f]


def choose(failures: tuple[Failure, ...], limit: int = FAILURES_PER_OUTPUT) -> tuple[Failure, ...]:
    """One line per failure, in output order, at most ``limit``: only the lines scored
    :data:`STRONG` or more of the best role present (primary, else detail; every line when
    only summaries are that strong: the weaker lines may say what the summary reports);
    each group keeps one line (see the module docstring); one line per distinct text; then
    the ``limit`` most precise (highest score, ties to the later line)."""
    pool = list(failures)
    for role in ("", "detail"):
        strong = [f for f in pool if f.role == role and f.score >= STRONG]
        if strong:
            pool = strong
            break
    pool = _one_per_group(pool)
    unique: dict[str, Failure] = {}
    for failure in pool:
        old = unique.get(failure.text)
        if old is None or (failure.score, failure.index) >= (old.score, old.index):
            unique[failure.text] = failure
    best = sorted(unique.values(), key=lambda f: (-f.score, -f.index))[:limit]
    return tuple(sorted(best, key=lambda f: f.index))


_ADVICE = re.compile(
    r"^\s*(?:hint|help|note|tip):|^\s*(?:Use|Run|See|For more information|Please report)\b|"
    r"(?:\.\.\.|…)\s*$",
    re.IGNORECASE,
)
_TELLING = re.compile(
    r"fail|error|invalid|denied|refused|ignored|not |cannot|can't|unable|missing|"
    r"found \d+|unknown|unexpected|conflict|rejected|timed? ?out|unavailable|unapplied|"
    r"unreachable|forbidden|unauthori[sz]ed|exceeded|expired|abort|fatal|panic|exception|"
    r"mismatch|violat|no such|\b[45]\d\d (?:[A-Z][a-z]+|\()",
    re.IGNORECASE,
)
#: A line longer than this many characters whose words are this share or fewer distinct
#: words repeats itself (filler, a progress bar of words): never the summary line while
#: another line is left.
_FILLER_CHARS = 200
_FILLER_DISTINCT = 0.2
_DIGIT = re.compile(r"\d")


def _is_filler(line: str) -> bool:
    """A long line of the same few words over and over (see :data:`_FILLER_CHARS`)."""
    if len(line) <= _FILLER_CHARS:
        return False
    words = line.split()
    return len(set(words)) <= _FILLER_DISTINCT * len(words)


def summary_line(text: str) -> str:
    """For a failed output no detector understands: the last line that sounds like a failure
    (fail, error, invalid, denied, not, unavailable, an HTTP status of 400 or more before its
    reason …), else the last line; advice lines (``hint:``, ``Use … to …``, ``Please report
    …``), progress lines ending in ``...``, exit-status envelopes and, while another line is
    left, filler (:func:`_is_filler`) never count; an output of filler alone gives its
    exit-status envelope when it has one. Capped; ``""`` when no line is left."""
    data = [ln for ln in _data_lines(text) if ln.strip()]
    lines = [ln for ln in data if not ENVELOPE.match(ln) and not _ADVICE.search(ln)]
    said = [ln for ln in lines if not _is_filler(ln)]
    if not said and lines:
        # only filler: the exit status (``Exit code 22``) says more
        status = [ln for ln in data if ENVELOPE.match(ln) and _DIGIT.search(ln)]
        if status:
            return _cap(status[-1].strip())
    lines = said or lines
    telling = [i for i, ln in enumerate(lines) if _TELLING.search(ln)]
    at = telling[-1] if telling else len(lines) - 1
    if at < 0:
        return ""
    chosen = lines[at].strip()
    if chosen.endswith(":") and at + 1 < len(lines):
        chosen = f"{chosen} {lines[at + 1].strip()}"
    return _cap(chosen)


def first_line(text: str) -> str:
    """The first non-empty line of ``text`` that is not an exit-status envelope, capped."""
    for line in _data_lines(text):
        if line.strip() and not ENVELOPE.match(line):
            return _cap(line)
    return ""


_PASSED_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pytest", re.compile(r"^(\S+::\S+) PASSED\b|^PASSED (\S+::\S+)")),
    ("unittest", re.compile(r"^(\w+) \((.+?)\) \.\.\. ok$")),
    ("go", re.compile(r"^\s*--- PASS: (\S+)")),
    ("cargo", re.compile(r"^test (\S+) \.\.\. ok$")),
    ("jest", re.compile(r"^\s*[✓√] (.+?)(?: \(\d+ ?ms\))?$")),
)


#: Tool outputs whose passed tests :func:`passed_tests` remembers (a compaction walks its
#: range's outputs, and a split turn's prefix again).
PASSED_TESTS_CACHE = 4096


@lru_cache(maxsize=PASSED_TESTS_CACHE)
def passed_tests(text: str) -> tuple[str, ...]:
    """Ids of the tests ``text`` reports as passed (pytest ``-v``/``-rA``, unittest ``-v``,
    go ``-v``, cargo, jest/vitest ``✓``), in order. Remembered for the
    :data:`PASSED_TESTS_CACHE` outputs asked most recently."""
    out: list[str] = []
    for line in output_lines(text):
        for runner, pattern in _PASSED_PATTERNS:
            m = pattern.match(line.strip() if runner != "go" else line)
            if m is None:
                continue
            if runner == "unittest":
                out.append(f"{m.group(2)}.{m.group(1)}")
            else:
                out.append(next(g for g in m.groups() if g))
            break
    return tuple(dict.fromkeys(out))
