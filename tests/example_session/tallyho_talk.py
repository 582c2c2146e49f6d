"""What is said and shown in the example session: the user's prompts, the assistant's text
and thinking, and the outputs of commands. Test runs and tracebacks take their line numbers
from the project files as edited at that point, so they agree with the files in the session."""

from __future__ import annotations

import difflib

from tallyho_files import PROJECT

CWD = "/home/dev/projects/tallyho"

PROMPT_1 = """\
Splitting a bill is broken: `tallyho split 100 3` prints 33.33 three times, so a cent \
disappears and the shares only add up to 99.99. Please fix `split_evenly` so the shares always \
add up to the total. While you're at it, add a `--currency` option to `tallyho split` that \
prints the amounts with the currency symbol (EUR, USD, GBP and JPY at least).

Two rules for this repo: never touch the migrations folder, those files are applied to \
production databases. And don't push anything; I'll review and push myself."""

PROMPT_2 = (
    "Nice work. Doesn't `split_by_weights` have the same rounding problem? Please fix it the "
    "same way, and add a CHANGELOG entry for the fix and the new option."
)
PROMPT_3 = (
    "Another one: `tallyho report` crashes with a ZeroDivisionError on a fresh database (no "
    "expenses yet). Fix that too, and again: leave the migrations folder alone."
)
PROMPT_4 = "Can `report` get a `--json` flag? I want to pipe the balances into jq."
PROMPT_5 = (
    "Last feature: let `split` take weights, e.g. `tallyho split 100 3 --weights 1,1,2`. Also "
    "update the changelog for everything since the last entry."
)
PROMPT_6 = (
    "Quick question before we commit: what's in the migrations folder, and would showing "
    "currencies in `report` need a schema change?"
)
PROMPT_7 = "OK, commit everything in one commit with a sensible message. Don't push."

THINK_1 = (
    "The user reports that split_evenly(100, 3) gives 33.33 × 3 = 99.99. That is the classic "
    "round-each-share bug: every share is rounded on its own, so the remainder cent is lost. "
    "The fix is to work in integer cents and hand out the remainder. They also want a "
    "--currency option on the split command. Constraints: never modify anything under "
    "migrations/, and never push. First the layout, the README and the git state."
)
THINK_YEN = (
    "The yen has no minor unit, so ¥1,000 is right and ¥1,000.00 is wrong. The format spec "
    'can take its precision from a variable: f"{amount:,.{places}f}". A small table of minor '
    "units (JPY → 0, default 2) is enough here; no need for the whole ISO 4217 list."
)
THINK_2 = (
    "split_by_weights rounds each share with round(total * w / whole, 2), so with weights "
    "[1, 1, 1] it has exactly the same problem. _allocate already takes weights, so "
    "split_by_weights can call it after its validation. I need the changelog's format too."
)
THINK_3 = (
    "For --weights: parse a comma-separated list of ints, check that the count matches "
    "people (exit code 2 and a message on stderr, like argparse), then use split_by_weights. "
    "It combines with --currency because printing goes through the same loop."
)

SAY_REPRODUCED = (
    "Reproduced: each share is rounded on its own, so 100.00 / 3 gives three shares of 33.33 "
    "and the lost cent never comes back. My plan:"
)
SAY_FIX = (
    "The new test fails as expected (99.99 ≠ 100.00). I'll allocate in whole cents: round "
    "every share down, then hand the leftover cents out one at a time, largest remainder "
    "first. Shares stay within one cent of each other and the sum is exact."
)
SAY_MIGRATIONS = (
    "Currency is only mentioned in `money.py`. The migrations create the `expenses` table and "
    "an index; I won't touch them, and the option only changes how amounts are printed, so no "
    "schema change is needed. Adding a formatter to `money.py`:"
)
SAY_YEN = (
    "One failure: the yen has no minor unit, so `¥1,000.00` should be `¥1,000`. I'll add a "
    "small table of minor units."
)
SAY_EMPTY = (
    "Confirmed: `balances()` divides by the number of payers, which is zero on an empty "
    "ledger. I'll return an empty mapping there and have `report` say so."
)
SAY_DECIMAL_JSON = (
    "`json` can't serialise `Decimal`. I'll print the balances as strings, which keeps the "
    "exact cents (floats would not)."
)

SUMMARY_1 = """\
Done. Summary:

**Rounding fix** (`src/tallyho/split.py`): shares are computed in whole cents and the leftover \
cents go one at a time to the first shares, so `split 100 3` gives 33.34 + 33.33 + 33.33 = \
100.00. New tests cover 100/3, 0.01/3 and 10/7.

**`--currency`** (`src/tallyho/cli.py`, `src/tallyho/money.py`): `tallyho split 100 3 \
--currency USD` prints `$33.34`, `$33.33`, `$33.33`; codes without a known symbol print after \
the amount (`12.00 CHF`), and JPY prints no decimals. Without the option the output is \
unchanged.

All 19 tests pass; ruff and mypy are clean. Nothing under `migrations/` was changed and \
nothing was pushed."""
SUMMARY_2 = (
    "`split_by_weights` now uses the same cent allocation, so `[1, 1, 1]` on 100.00 gives "
    "33.34 / 33.33 / 33.33 (new test). `CHANGELOG.md` has a new **Unreleased** section with "
    "the fix and the `--currency` option. 20 tests pass."
)
SUMMARY_3 = (
    "`Ledger.balances()` now returns `{}` when there are no expenses, and `tallyho report` "
    'prints "no expenses recorded yet" instead of crashing. New test '
    "`test_balances_of_an_empty_ledger`; 21 tests pass. `git status` shows no changes under "
    "`migrations/`."
)
SUMMARY_4 = (
    "`tallyho report --json` prints the balances as a JSON object with string amounts (exact "
    'cents, e.g. `"8.75"`), so `tallyho report --json | jq .alice` works. 22 tests pass.'
)
SUMMARY_5 = (
    "`tallyho split 100 3 --weights 1,1,2` prints 25.00 / 25.00 / 50.00; it combines with "
    "`--currency`, and a wrong number of weights exits with code 2 and a message. Three new "
    "tests, 25 in total, all passing; ruff and mypy are clean. The changelog's Unreleased "
    "section now also lists `--weights`, `report --json` and the empty-ledger fix."
)
ANSWER_6 = """\
`migrations/` has two scripts, applied in order by `Ledger.open()` on every start:

- `0001_init.sql` creates the `expenses` table (`payer`, `amount_cents`, `note`, `created_at`).
- `0002_payer_index.sql` adds an index on `payer` for the grouping in `report`.

There is no currency column: every amount is stored as plain cents. Showing a currency per \
expense in `report` would need a new column, i.e. a new migration (`0003_…`). I haven't \
written one, since that folder is off limits; if you want it, I can draft the SQL here for \
you to add yourself."""
SUMMARY_7 = (
    "Committed as `4f2c9ab` on `main`. The branch is now one commit ahead of `origin/main`; "
    "I did not push."
)

TODOS_1 = (
    ("Reproduce the rounding bug with a failing test", "in_progress", "Reproducing the bug"),
    ("Fix split_evenly so shares add up to the total", "pending", "Fixing split_evenly"),
    ("Add a --currency option to tallyho split", "pending", "Adding --currency"),
    ("Run tests, ruff and mypy", "pending", "Running tests, ruff and mypy"),
)
TODOS_2 = (
    ("Reproduce the rounding bug with a failing test", "completed", "Reproducing the bug"),
    ("Fix split_evenly so shares add up to the total", "completed", "Fixing split_evenly"),
    ("Add a --currency option to tallyho split", "in_progress", "Adding --currency"),
    ("Run tests, ruff and mypy", "pending", "Running tests, ruff and mypy"),
)
TODOS_3 = tuple((c, "completed", a) for c, _, a in TODOS_2)

GIT_LOG_START = """\
9d81e07 Sort payers by name in report
2b6f3c1 Release 0.3.0
71ac0d4 Store a note with each expense
e5b2a90 Keep amounts in cents
03f9c6e Add report command"""

REPRO_CMD = (
    'python -c "from decimal import Decimal; from tallyho.money import Money; '
    "from tallyho.split import split_evenly; s = split_evenly(Money(Decimal('100.00')), 3); "
    'print([x.amount for x in s], sum(x.amount for x in s))"'
)
REPRO_OUT = "[Decimal('33.33'), Decimal('33.33'), Decimal('33.33')] 99.99"
SPLIT_USD = "person 1: $33.34\nperson 2: $33.33\nperson 3: $33.33"
SPLIT_WEIGHTS_OUT = "person 1: 25.00\nperson 2: 25.00\nperson 3: 50.00"
MYPY_OK = "Success: no issues found in 5 source files"
EMPTY_REPORT_CMD = "TALLYHO_DB=$(mktemp -u).db tallyho report"
EMPTY_REPORT_OUT = "no expenses recorded yet"
JSON_DEMO_CMD = (
    "export TALLYHO_DB=$(mktemp -u).db && tallyho add alice 30 && tallyho add bob 12.50 "
    "&& tallyho report --json"
)
JSON_DEMO_OUT = '{\n  "alice": "8.75",\n  "bob": "-8.75"\n}'
BRANCH_VV = "* main 9d81e07 [origin/main] Sort payers by name in report"
COMMIT_MESSAGE = "Fix split rounding; add split --currency/--weights and report --json"
COMMIT_CMD = f'git add CHANGELOG.md src tests && git commit -m "{COMMIT_MESSAGE}"'


# -- computed outputs ---------------------------------------------------------------------------


def _line(fs: dict[str, str], path: str, needle: str) -> int:
    for number, text in enumerate(fs[path].splitlines(), start=1):
        if needle in text:
            return number
    raise SystemExit(f"{needle!r} not in {path}")


def _progress(marks: str) -> str:
    return marks + " " * (79 - len(marks) - 6) + "[100%]"


def _rule(title: str, char: str = "=") -> str:
    return f" {title} ".center(80, char)


def pytest_ok(n: int) -> str:
    """``pytest -q`` output for ``n`` passing tests."""
    return f"{_progress('.' * n)}\n{n} passed in {0.12 + n * 0.011:.2f}s"


def _failed(marks: str, body: str, summary: str, passed: int, seconds: float) -> str:
    if len(summary) > 80:  # pytest cuts the summary line to the terminal width
        summary = summary[:77] + "..."
    return "\n".join(
        [
            _progress(marks),
            _rule("FAILURES"),
            body,
            _rule("short test summary info"),
            summary,
            f"1 failed, {passed} passed in {seconds:.2f}s",
        ]
    )


def fail_adds_up(fs: dict[str, str]) -> str:
    line = _line(fs, "tests/test_split.py", "assert sum((s.amount")
    body = f"""{_rule("test_split_evenly_adds_up_to_total", "_")}

    def test_split_evenly_adds_up_to_total():
        shares = split_evenly(Money(Decimal("100.00")), 3)
>       assert sum((s.amount for s in shares), Decimal(0)) == Decimal("100.00")
E       AssertionError: assert Decimal('99.99') == Decimal('100.00')
E        +  where Decimal('99.99') = sum(<generator object test_split_evenly_adds_up_to_total.\
<locals>.<genexpr> at 0x7f3b1c2d9a80>, Decimal('0'))
E        +    where Decimal('0') = Decimal(0)
E        +  and   Decimal('100.00') = Decimal('100.00')

tests/test_split.py:{line}: AssertionError"""
    summary = (
        "FAILED tests/test_split.py::test_split_evenly_adds_up_to_total - AssertionError: "
        "assert Decimal('99.99') == Decimal('100.00')"
    )
    return _failed("..F.", body, summary, 3, 0.21)


def fail_jpy(fs: dict[str, str]) -> str:
    line = _line(fs, "tests/test_format.py", '"JPY")) ==')
    body = f"""{_rule("test_format_jpy_has_no_decimals", "_")}

    def test_format_jpy_has_no_decimals():
>       assert format_amount(Money(Decimal(1000), "JPY")) == "¥1,000"
E       AssertionError: assert '¥1,000.00' == '¥1,000'
E         
E         - ¥1,000
E         + ¥1,000.00
E         ?       +++

tests/test_format.py:{line}: AssertionError"""
    summary = (
        "FAILED tests/test_format.py::test_format_jpy_has_no_decimals - AssertionError: "
        "assert '¥1,000.00' == '¥1,000'"
    )
    return _failed("....F..............", body, summary, 18, 0.34)


def zero_division(fs: dict[str, str]) -> str:
    cli = _line(fs, "src/tallyho/cli.py", "ledger.balances().items()")
    ledger = _line(fs, "src/tallyho/ledger.py", "fair = total // len(rows)")
    return f"""Traceback (most recent call last):
  File "{CWD}/.venv/bin/tallyho", line 8, in <module>
    sys.exit(main())
             ^^^^^^
  File "{CWD}/src/tallyho/cli.py", line {cli}, in main
    for name, balance in ledger.balances().items():
                         ^^^^^^^^^^^^^^^^^
  File "{CWD}/src/tallyho/ledger.py", line {ledger}, in balances
    fair = total // len(rows)
           ~~~~~~^^~~~~~~~~~~
ZeroDivisionError: integer division or modulo by zero"""


def fail_json(fs: dict[str, str]) -> str:
    test = _line(fs, "tests/test_cli.py", 'assert main(["report", "--json"]) == 0')
    cli = _line(fs, "src/tallyho/cli.py", "print(json.dumps(balances, indent=2))")
    lib = "/usr/lib/python3.12/json"
    dashes = "_ " * 40
    body = f"""{_rule("test_report_json", "_")}

capsys = <_pytest.capture.CaptureFixture object at 0x7f61a8e3c5d0>
ledger_db = PosixPath('/tmp/pytest-of-dev/pytest-41/test_report_json0/ledger.db')

    def test_report_json(capsys, ledger_db):
        main(["add", "alice", "30"])
        main(["add", "bob", "12.50"])
        capsys.readouterr()
>       assert main(["report", "--json"]) == 0
               ^^^^^^^^^^^^^^^^^^^^^^^^^^

tests/test_cli.py:{test}: 
{dashes}
src/tallyho/cli.py:{cli}: in main
    print(json.dumps(balances, indent=2))
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
{lib}/__init__.py:238: in dumps
    **kw).encode(obj)
          ^^^^^^^^^^^
{lib}/encoder.py:202: in encode
    chunks = list(chunks)
             ^^^^^^^^^^^^
{lib}/encoder.py:432: in _iterencode
    yield from _iterencode_dict(o, _current_indent_level)
{lib}/encoder.py:406: in _iterencode_dict
    yield from chunks
{lib}/encoder.py:439: in _iterencode
    o = _default(o)
        ^^^^^^^^^^^
{dashes}

self = <json.encoder.JSONEncoder object at 0x7f61a8f0e2d0>, o = Decimal('8.75')

    def default(self, o):
        \"\"\"Implement this method in a subclass such that it returns
        a serializable object for ``o``, or calls the base implementation
        (to raise a ``TypeError``).
    
        For example, to support arbitrary iterators, you could
        implement default like this::
    
            def default(self, o):
                try:
                    iterable = iter(o)
                except TypeError:
                    pass
                else:
                    return list(iterable)
                # Let the base class default method raise the TypeError
                return JSONEncoder.default(self, o)
    
        \"\"\"
>       raise TypeError(f'Object of type {{o.__class__.__name__}} '
                        f'is not JSON serializable')
E       TypeError: Object of type Decimal is not JSON serializable

{lib}/encoder.py:180: TypeError"""
    summary = (
        "FAILED tests/test_cli.py::test_report_json - TypeError: Object of type Decimal is not "
        "JSON serializable"
    )
    return _failed("..F", body, summary, 2, 0.19)


def _changes(fs: dict[str, str]) -> list[tuple[str, int, int, bool]]:
    """``(path, insertions, deletions, new)`` for every file that differs from the start."""
    out = []
    for path in sorted(fs):
        old = PROJECT.get(path)
        if old == fs[path]:
            continue
        diff = list(difflib.ndiff((old or "").splitlines(), fs[path].splitlines()))
        ins = sum(1 for d in diff if d.startswith("+ "))
        dels = sum(1 for d in diff if d.startswith("- "))
        out.append((path, ins, dels, old is None))
    return out


def git_status(fs: dict[str, str]) -> str:
    """``git status --short`` of the working tree."""
    return "\n".join(f"{'??' if new else ' M'} {p}" for p, _, _, new in _changes(fs))


def diff_stat(fs: dict[str, str]) -> str:
    """``git diff --stat`` (tracked files only)."""
    rows = [(p, i, d) for p, i, d, new in _changes(fs) if not new]
    width = max(len(p) for p, _, _ in rows)
    lines = [f" {p:<{width}} | {i + d:>3} {'+' * i}{'-' * d}" for p, i, d in rows]
    ins, dels = sum(r[1] for r in rows), sum(r[2] for r in rows)
    lines.append(f" {len(rows)} files changed, {ins} insertions(+), {dels} deletions(-)")
    return "\n".join(lines)


def commit_output(fs: dict[str, str]) -> str:
    """What ``git commit`` prints for all changes."""
    changes = _changes(fs)
    ins, dels = sum(c[1] for c in changes), sum(c[2] for c in changes)
    lines = [
        f"[main 4f2c9ab] {COMMIT_MESSAGE}",
        f" {len(changes)} files changed, {ins} insertions(+), {dels} deletions(-)",
    ]
    lines += [f" create mode 100644 {p}" for p, _, _, new in changes if new]
    return "\n".join(lines)


LOG_AFTER = f"""\
4f2c9ab {COMMIT_MESSAGE}
9d81e07 Sort payers by name in report
2b6f3c1 Release 0.3.0
## main...origin/main [ahead 1]"""
