"""The edits the assistant makes in the example session, as ``(old_string, new_string)``
pairs for Claude Code's Edit tool, and the contents of the files it writes."""

from __future__ import annotations

# -- turn 1: rounding bug -------------------------------------------------------------------

TEST_ADDS_UP = (
    "        split_evenly(Money(Decimal(10)), 0)\n",
    """\
        split_evenly(Money(Decimal(10)), 0)


def test_split_evenly_adds_up_to_total():
    shares = split_evenly(Money(Decimal("100.00")), 3)
    assert sum((s.amount for s in shares), Decimal(0)) == Decimal("100.00")
""",
)

SPLIT_IMPORTS = (
    "from tallyho.money import Money\n",
    """from decimal import ROUND_HALF_UP, Decimal

from tallyho.money import Money

CENT = Decimal("0.01")
""",
)

SPLIT_EVENLY = (
    '''def split_evenly(total: Money, people: int) -> list[Money]:
    """Split ``total`` into ``people`` equal shares."""
    if people <= 0:
        raise ValueError("people must be positive")
    share = round(total.amount / people, 2)
    return [Money(share, total.currency) for _ in range(people)]
''',
    '''def _allocate(total: Money, weights: list[int]) -> list[Money]:
    """Split ``total`` in whole cents, proportionally to ``weights``.

    Each share is rounded down to the cent; the cents left over go one at a time to the
    shares with the largest remainders (earliest first on ties), so the shares always add
    up to ``total`` exactly.
    """
    cents = int((total.amount / CENT).to_integral_value(ROUND_HALF_UP))
    whole = sum(weights)
    base = [cents * w // whole for w in weights]
    left = cents - sum(base)
    by_remainder = sorted(range(len(weights)), key=lambda i: -(cents * weights[i] % whole))
    for i in by_remainder[:left]:
        base[i] += 1
    return [Money(c * CENT, total.currency) for c in base]


def split_evenly(total: Money, people: int) -> list[Money]:
    """Split ``total`` into ``people`` shares that differ by at most one cent."""
    if people <= 0:
        raise ValueError("people must be positive")
    return _allocate(total, [1] * people)
''',
)

TEST_EDGES = (
    '    assert sum((s.amount for s in shares), Decimal(0)) == Decimal("100.00")\n',
    """\
    assert sum((s.amount for s in shares), Decimal(0)) == Decimal("100.00")


@pytest.mark.parametrize(
    ("total", "people", "expected"),
    [
        ("0.01", 3, ["0.01", "0.00", "0.00"]),
        ("10.00", 7, ["1.43", "1.43", "1.43", "1.43", "1.43", "1.43", "1.42"]),
        ("100.00", 3, ["33.34", "33.33", "33.33"]),
    ],
)
def test_split_evenly_hands_out_leftover_cents(total, people, expected):
    shares = split_evenly(Money(Decimal(total)), people)
    assert [s.amount for s in shares] == [Decimal(x) for x in expected]
""",
)

# -- turn 1: --currency -----------------------------------------------------------------------

FORMAT_AMOUNT = (
    '        raise ValueError(f"not an amount: {text!r}") from None\n',
    '''        raise ValueError(f"not an amount: {text!r}") from None


#: Symbols printed before the amount; other currencies print their code after it.
SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥"}


def format_amount(money: Money) -> str:
    """``Money(Decimal("1234.5"), "EUR")`` → ``"€1,234.50"``; unknown codes → ``"12.00 CHF"``."""
    value = f"{money.amount:,.2f}"
    symbol = SYMBOLS.get(money.currency)
    return f"{symbol}{value}" if symbol else f"{value} {money.currency}"
''',
)

CLI_IMPORT_FORMAT = (
    "from tallyho.money import Money, parse_amount\n",
    "from tallyho.money import Money, format_amount, parse_amount\n",
)

CLI_CURRENCY_ARG = (
    '    split.add_argument("people", type=int)\n',
    """\
    split.add_argument("people", type=int)
    split.add_argument("--currency", help="print amounts with this currency (ISO 4217 code)")
""",
)

CLI_CURRENCY_PRINT = (
    """\
        total = Money(parse_amount(args.amount))
        for i, share in enumerate(split_evenly(total, args.people), start=1):
            print(f"person {i}: {share.amount}")
""",
    """\
        total = Money(parse_amount(args.amount), (args.currency or "EUR").upper())
        for i, share in enumerate(split_evenly(total, args.people), start=1):
            shown = format_amount(share) if args.currency else share.amount
            print(f"person {i}: {shown}")
""",
)

TEST_FORMAT = """\
from decimal import Decimal

from tallyho.cli import main
from tallyho.money import Money, format_amount


def test_format_euro_with_thousands_separator():
    assert format_amount(Money(Decimal("1234.5"), "EUR")) == "€1,234.50"


def test_format_unknown_code_goes_after_the_amount():
    assert format_amount(Money(Decimal(12), "CHF")) == "12.00 CHF"


def test_format_jpy_has_no_decimals():
    assert format_amount(Money(Decimal(1000), "JPY")) == "¥1,000"


def test_split_with_currency(capsys):
    assert main(["split", "100", "3", "--currency", "usd"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "person 1: $33.34",
        "person 2: $33.33",
        "person 3: $33.33",
    ]
"""

DECIMALS = (
    '''SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥"}


def format_amount(money: Money) -> str:
    """``Money(Decimal("1234.5"), "EUR")`` → ``"€1,234.50"``; unknown codes → ``"12.00 CHF"``."""
    value = f"{money.amount:,.2f}"
''',
    '''SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥"}
#: Digits after the decimal point where it is not 2 (ISO 4217 minor units).
MINOR_UNITS = {"JPY": 0}


def format_amount(money: Money) -> str:
    """``Money(Decimal("1234.5"), "EUR")`` → ``"€1,234.50"``; unknown codes → ``"12.00 CHF"``."""
    places = MINOR_UNITS.get(money.currency, 2)
    value = f"{money.amount:,.{places}f}"
''',
)

# -- turn 2: split_by_weights, changelog --------------------------------------------------------

SPLIT_WEIGHTS = (
    """\
    whole = sum(weights)
    return [Money(round(total.amount * w / whole, 2), total.currency) for w in weights]
""",
    "    return _allocate(total, weights)\n",
)

TEST_WEIGHTS = (
    '    assert [s.amount for s in shares] == [Decimal("25.00"), Decimal("25.00"), '
    'Decimal("50.00")]\n',
    """\
    assert [s.amount for s in shares] == [Decimal("25.00"), Decimal("25.00"), Decimal("50.00")]


def test_split_by_weights_adds_up_to_total():
    shares = split_by_weights(Money(Decimal("100.00")), [1, 1, 1])
    assert [s.amount for s in shares] == [Decimal("33.34"), Decimal("33.33"), Decimal("33.33")]
""",
)

CHANGELOG_1 = (
    "# Changelog\n\n",
    """# Changelog

## Unreleased

- `split` hands out leftover cents so the shares always add up to the total
  (100.00 / 3 was 33.33 × 3 = 99.99); the same for weighted splits.
- `split --currency CODE` prints amounts with the currency symbol (`€`, `$`, `£`, `¥`).

""",
)

# -- turn 3: empty ledger ---------------------------------------------------------------------

LEDGER_EMPTY = (
    """\
        total = sum(cents for _, cents in rows)
        fair = total // len(rows)
""",
    """\
        if not rows:
            return {}
        total = sum(cents for _, cents in rows)
        fair = total // len(rows)
""",
)

CLI_EMPTY_REPORT = (
    """\
    for name, balance in ledger.balances().items():
        print(f"{name:<12} {balance:>10}")
    return 0
""",
    """\
    balances = ledger.balances()
    if not balances:
        print("no expenses recorded yet")
        return 0
    for name, balance in balances.items():
        print(f"{name:<12} {balance:>10}")
    return 0
""",
)

TEST_LEDGER_EMPTY = (
    '    assert ledger.conn.execute("SELECT amount_cents FROM expenses").fetchone() == (1234,)\n',
    """\
    assert ledger.conn.execute("SELECT amount_cents FROM expenses").fetchone() == (1234,)


def test_balances_of_an_empty_ledger(ledger_db):
    assert Ledger.open().balances() == {}
""",
)

# -- turn 4: report --json ----------------------------------------------------------------------

CLI_JSON_IMPORT = ("import argparse\nimport sys\n", "import argparse\nimport json\nimport sys\n")

CLI_JSON_ARG = (
    '    sub.add_parser("report", help="show balances")\n',
    """\
    report = sub.add_parser("report", help="show balances")
    report.add_argument("--json", action="store_true", help="print balances as a JSON object")
""",
)

CLI_JSON_PRINT = (
    """\
    balances = ledger.balances()
    if not balances:
""",
    """\
    balances = ledger.balances()
    if args.json:
        print(json.dumps(balances, indent=2))
        return 0
    if not balances:
""",
)

TEST_CLI_JSON_IMPORT = (
    "from tallyho.cli import main\n",
    "import json\n\nfrom tallyho.cli import main\n",
)

TEST_CLI_JSON = (
    '    assert "alice" in capsys.readouterr().out\n',
    """\
    assert "alice" in capsys.readouterr().out


def test_report_json(capsys, ledger_db):
    main(["add", "alice", "30"])
    main(["add", "bob", "12.50"])
    capsys.readouterr()
    assert main(["report", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"alice": "8.75", "bob": "-8.75"}
""",
)

CLI_JSON_FIX = (
    "        print(json.dumps(balances, indent=2))\n",
    "        print(json.dumps({name: str(value) for name, value in balances.items()}, indent=2))\n",
)

# -- turn 5: split --weights --------------------------------------------------------------------

CLI_WEIGHTS_IMPORT = (
    "from tallyho.split import split_evenly\n",
    "from tallyho.split import split_by_weights, split_evenly\n",
)

CLI_WEIGHTS_ARG = (
    '    split.add_argument("--currency", '
    'help="print amounts with this currency (ISO 4217 code)")\n',
    """\
    split.add_argument("--currency", help="print amounts with this currency (ISO 4217 code)")
    split.add_argument("--weights", help="comma-separated weights, one per person (e.g. 1,1,2)")
""",
)

CLI_WEIGHTS_USE = (
    "        for i, share in enumerate(split_evenly(total, args.people), start=1):\n",
    """\
        if args.weights:
            weights = [int(w) for w in args.weights.split(",")]
            if len(weights) != args.people:
                print(f"--weights needs {args.people} values, got {len(weights)}", file=sys.stderr)
                return 2
            shares = split_by_weights(total, weights)
        else:
            shares = split_evenly(total, args.people)
        for i, share in enumerate(shares, start=1):
""",
)

TEST_CLI_WEIGHTS = """\
from tallyho.cli import main


def test_split_with_weights(capsys):
    assert main(["split", "100", "3", "--weights", "1,1,2"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "person 1: 25.00",
        "person 2: 25.00",
        "person 3: 50.00",
    ]


def test_split_with_weights_and_currency(capsys):
    assert main(["split", "10", "2", "--weights", "2,1", "--currency", "GBP"]) == 0
    assert capsys.readouterr().out.splitlines() == ["person 1: £6.67", "person 2: £3.33"]


def test_weights_must_match_people(capsys):
    assert main(["split", "10", "3", "--weights", "1,2"]) == 2
    assert "--weights needs 3 values, got 2" in capsys.readouterr().err
"""

CHANGELOG_2 = (
    "- `split --currency CODE` prints amounts with the currency symbol (`€`, `$`, `£`, `¥`).\n",
    """- `split --currency CODE` prints amounts with the currency symbol (`€`, `$`, `£`, `¥`).
- `split --weights 1,1,2` splits in proportion to the weights.
- `report --json` prints the balances as a JSON object (amounts as exact strings).
- `report` on an empty ledger prints a message instead of failing with ZeroDivisionError.
""",
)
