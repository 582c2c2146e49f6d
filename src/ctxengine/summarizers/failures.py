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
- ``make: *** [target] Error N``; npm's ``npm error command …`` / ``Lifecycle script
  `check` failed`` / ``npm ERR! code ELIFECYCLE`` (npm prints them only when a script failed);
- SWE-agent's rejected edit (the ``ERRORS:`` block only, not the file listing after it);
- a program that never started: ``No module named pytest``, ``foo: command not found``,
  ``python: can't open file 'x.py'``, ``bash: ./x.sh: Permission denied``;
- generic ``error:``/``fatal:``/``npm ERR!``/"No such file or directory" lines.

Exit-code lines (``Exit code 1``, ``<returncode>1</returncode>``, ``Command exited with code 1``)
and ``Traceback (most recent call last):`` never count as saying what failed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ctxengine.projection.frame import is_instruction_like

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
    """

    text: str
    where: str = ""
    test: str = ""
    runner: str = ""
    score: int = 0
    index: int = 0


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


def _pytest(lines: list[str], command: str) -> Iterator[Failure]:
    for i, line in enumerate(lines):
        m = _PYTEST_FAILED.match(line.strip())
        if m is not None and ("::" in m.group(2) or m.group(2).endswith(".py")):
            yield Failure(_cap(line), test=m.group(2), runner="pytest", score=8, index=i)
        elif _PYTEST_E.match(line):
            telling = re.search(r"Error|Exception|assert|Failed", line) is not None
            yield Failure(_cap(line), runner="pytest", score=STRONG if telling else 3, index=i)
        elif _PYTEST_SUMMARY.match(line.strip()):
            yield Failure(_cap(line), runner="pytest", score=STRONG, index=i)
        elif (u := _UNITTEST.match(line)) is not None:
            test = f"{u.group(3)}.{u.group(2)}"
            yield Failure(_cap(line), test=test, runner="unittest", score=7, index=i)
        elif _UNITTEST_SUMMARY.match(line):
            yield Failure(_cap(line), runner="unittest", score=STRONG, index=i)


_JEST_BULLET = re.compile(r"^\s*● (?!Console\b)(.+?)\s*$")
_JEST_SUMMARY = re.compile(r"^Tests:\s+.*\b\d+ failed")
_FAIL_FILE = re.compile(r"^FAIL\s+(\S+\.\w+)(?:\s+\([\d.]+\s*m?s\))?$")


def _jest(lines: list[str], command: str) -> Iterator[Failure]:
    for i, line in enumerate(lines):
        bullet = _JEST_BULLET.match(line)
        if bullet is not None:
            yield Failure(_cap(line), test=bullet.group(1), runner="jest", score=7, index=i)
        elif _JEST_SUMMARY.match(line.strip()):
            yield Failure(_cap(line), runner="jest", score=STRONG, index=i)
        elif "\t" not in line and (m := _FAIL_FILE.match(line.strip())) is not None:
            yield Failure(_cap(line), test=m.group(1), runner="jest", score=STRONG, index=i)


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
            yield Failure(_cap(line), runner="go", score=STRONG, index=i)
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
            yield Failure(_cap(line), runner="cargo", score=STRONG, index=i)


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
_NPM_FAILED = re.compile(
    r"^npm (?:ERR!|error) (?:code \S+|command\b|Lifecycle script `?\S+`? failed)"
)


def _compilers(lines: list[str], command: str) -> Iterator[Failure]:
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
            yield Failure(_cap(line), score=6, index=i)
        elif _NPM_FAILED.match(text):
            yield Failure(_cap(line), score=STRONG, index=i)


_NOT_LAUNCHED = re.compile(
    r"^(?:\S+: )?No module named \S+$|: command not found$|^\S*python[\d.]*: can't open file |"
    r"^(?:bash|sh|zsh|dash)(?:: line \d+)?: [^:]+: (?:No such file or directory|Permission denied)$"
)


def _not_launched(lines: list[str], command: str) -> Iterator[Failure]:
    for i, line in enumerate(lines):
        if _NOT_LAUNCHED.search(line.strip()):
            yield Failure(_cap(line), score=6, index=i)


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

#: Lines that only restate an exit status or open a traceback: never what failed.
ENVELOPE = re.compile(
    r"^\s*(?:Exit code:? -?\d+|<returncode>-?\d+</returncode>|</?output>|"
    r"Command exited with code -?\d+|\[Command finished with exit code -?\d+\]|"
    r"Process exited with code -?\d+|exit status -?\d+|"
    r"Traceback \(most recent call last\):?|bash-\$|\(Open file: .*\)|"
    r"\(Current directory: .*\))\s*$",
    re.IGNORECASE,
)

DETECTORS: tuple[Detector, ...] = (
    _rejected_edit,
    _tracebacks,
    _pytest,
    _jest,
    _go,
    _cargo,
    _not_launched,
)


def _generic(lines: list[str], claimed: set[int]) -> Iterator[Failure]:
    for i, line in enumerate(lines):
        if i in claimed or not line.strip() or ENVELOPE.match(line):
            continue
        score = max((s for s, rule in _GENERIC if rule.search(line)), default=0)
        if score:
            yield Failure(_cap(line), score=score, index=i)


def _data_lines(text: str) -> list[str]:
    """The lines of ``text``, with every instruction-like line (``SYSTEM: ignore all previous
    …``, see :func:`~ctxengine.projection.frame.is_instruction_like`) blanked: an order
    printed by a tool is never what failed, so it is never kept as an error."""
    return ["" if is_instruction_like(ln) else ln for ln in text.splitlines()]


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
    return tuple(found[i] for i in sorted(found))


def _traceback_body(lines: list[str]) -> set[int]:
    """Line numbers inside tracebacks (frames and quoted source), which quote code."""
    body: set[int] = set()
    inside = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("Traceback (most recent call last)"):
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
    compiler or linker error, ``make: ***``, a rejected edit."""
    return any(f.score >= STRONG for f in detect(text, command))


def choose(failures: tuple[Failure, ...], limit: int = FAILURES_PER_OUTPUT) -> tuple[Failure, ...]:
    """The ``limit`` failures that name what failed most precisely (highest score, ties to
    the later line), in output order; one per distinct text."""
    unique: dict[str, Failure] = {}
    for failure in failures:
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
    r"found \d+|unknown|unexpected|conflict|rejected|timed? ?out",
    re.IGNORECASE,
)


def summary_line(text: str) -> str:
    """For a failed output no detector understands: the last line that sounds like a failure
    (fail, error, invalid, denied, not …), else the last line; advice lines (``hint:``,
    ``Use … to …``, ``Please report …``), progress lines ending in ``...`` and exit-status
    envelopes never count. Capped; ``""`` when no line is left."""
    lines = [
        ln
        for ln in _data_lines(text)
        if ln.strip() and not ENVELOPE.match(ln) and not _ADVICE.search(ln)
    ]
    telling = [ln for ln in lines if _TELLING.search(ln)]
    chosen = telling[-1] if telling else lines[-1] if lines else ""
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


def passed_tests(text: str) -> tuple[str, ...]:
    """Ids of the tests ``text`` reports as passed (pytest ``-v``/``-rA``, unittest ``-v``,
    go ``-v``, cargo, jest/vitest ``✓``), in order."""
    out: list[str] = []
    for line in text.splitlines():
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
