"""The files of the small project the example session works on (``tallyho``: split shared
expenses), as they are when the session starts. Used by ``make_session.py``."""

from __future__ import annotations

README = """\
# tallyho

Split shared expenses from the command line.

    tallyho add alice 42.50 --note "groceries"
    tallyho split 100 3
    tallyho report

Amounts are stored in cents in a SQLite database (`~/.tallyho.db`, or `$TALLYHO_DB`).
Schema changes live in `migrations/` and are applied in order on every start.
"""

PYPROJECT = """\
[project]
name = "tallyho"
version = "0.3.1"
requires-python = ">=3.11"

[project.scripts]
tallyho = "tallyho.cli:main"

[project.optional-dependencies]
dev = ["pytest>=8", "ruff>=0.6", "mypy>=1.11"]

[tool.pytest.ini_options]
testpaths = ["tests"]

[tool.ruff]
line-length = 100
"""

INIT = '''\
"""tallyho: split shared expenses."""

__version__ = "0.3.1"
'''

MONEY = '''\
"""Money values: a Decimal amount and a currency code."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation


@dataclass(frozen=True)
class Money:
    """An amount in one currency (ISO 4217 code)."""

    amount: Decimal
    currency: str = "EUR"

    def __add__(self, other: Money) -> Money:
        if other.currency != self.currency:
            raise ValueError(f"cannot add {other.currency} to {self.currency}")
        return Money(self.amount + other.amount, self.currency)


def parse_amount(text: str) -> Decimal:
    """Parse ``"12.50"`` or ``"12,50"`` into a Decimal."""
    try:
        return Decimal(text.strip().replace(",", "."))
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
'''

SPLIT = '''\
"""Split an amount between people."""

from __future__ import annotations

from tallyho.money import Money


def split_evenly(total: Money, people: int) -> list[Money]:
    """Split ``total`` into ``people`` equal shares."""
    if people <= 0:
        raise ValueError("people must be positive")
    share = round(total.amount / people, 2)
    return [Money(share, total.currency) for _ in range(people)]


def split_by_weights(total: Money, weights: list[int]) -> list[Money]:
    """Split ``total`` proportionally to ``weights``."""
    if not weights or any(w < 0 for w in weights) or sum(weights) == 0:
        raise ValueError("weights must be non-negative with a positive sum")
    whole = sum(weights)
    return [Money(round(total.amount * w / whole, 2), total.currency) for w in weights]
'''

LEDGER = '''\
"""Expense ledger stored in SQLite; amounts are kept in cents."""

from __future__ import annotations

import os
import sqlite3
from decimal import Decimal
from pathlib import Path

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


def default_path() -> Path:
    """``$TALLYHO_DB`` when set, else ``~/.tallyho.db``."""
    return Path(os.environ.get("TALLYHO_DB") or Path.home() / ".tallyho.db")


class Ledger:
    """Expenses recorded by payer."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @classmethod
    def open(cls, path: Path | None = None) -> Ledger:
        conn = sqlite3.connect(path or default_path())
        for script in sorted(MIGRATIONS.glob("*.sql")):
            conn.executescript(script.read_text())
        return cls(conn)

    def add(self, payer: str, amount: Decimal, note: str = "") -> None:
        self.conn.execute(
            "INSERT INTO expenses (payer, amount_cents, note) VALUES (?, ?, ?)",
            (payer, int(amount * 100), note),
        )
        self.conn.commit()

    def balances(self) -> dict[str, Decimal]:
        """What each payer is owed (positive) or owes (negative), in currency units."""
        rows = self.conn.execute(
            "SELECT payer, SUM(amount_cents) FROM expenses GROUP BY payer ORDER BY payer"
        ).fetchall()
        total = sum(cents for _, cents in rows)
        fair = total // len(rows)
        return {payer: Decimal(cents - fair) / 100 for payer, cents in rows}
'''

CLI = '''\
"""Command line: tallyho add | split | report."""

from __future__ import annotations

import argparse
import sys

from tallyho.ledger import Ledger
from tallyho.money import Money, parse_amount
from tallyho.split import split_evenly


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tallyho")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="record an expense")
    add.add_argument("payer")
    add.add_argument("amount")
    add.add_argument("--note", default="")
    split = sub.add_parser("split", help="split an amount evenly")
    split.add_argument("amount")
    split.add_argument("people", type=int)
    sub.add_parser("report", help="show balances")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "split":
        total = Money(parse_amount(args.amount))
        for i, share in enumerate(split_evenly(total, args.people), start=1):
            print(f"person {i}: {share.amount}")
        return 0
    ledger = Ledger.open()
    if args.command == "add":
        ledger.add(args.payer, parse_amount(args.amount), args.note)
        return 0
    for name, balance in ledger.balances().items():
        print(f"{name:<12} {balance:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

MIGRATION_1 = """\
-- 0001: expenses table
CREATE TABLE IF NOT EXISTS expenses (
    id INTEGER PRIMARY KEY,
    payer TEXT NOT NULL,
    amount_cents INTEGER NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
"""

MIGRATION_2 = """\
-- 0002: balances group by payer
CREATE INDEX IF NOT EXISTS expenses_payer ON expenses (payer);
"""

CONFTEST = """\
import pytest


@pytest.fixture
def ledger_db(tmp_path, monkeypatch):
    path = tmp_path / "ledger.db"
    monkeypatch.setenv("TALLYHO_DB", str(path))
    return path
"""

TEST_MONEY = """\
from decimal import Decimal

import pytest

from tallyho.money import Money, parse_amount


def test_parse_amount_with_dot():
    assert parse_amount("12.50") == Decimal("12.50")


def test_parse_amount_with_comma():
    assert parse_amount(" 7,25 ") == Decimal("7.25")


def test_parse_amount_rejects_text():
    with pytest.raises(ValueError, match="not an amount"):
        parse_amount("twelve")


def test_adding_different_currencies_fails():
    with pytest.raises(ValueError):
        Money(Decimal(1), "EUR") + Money(Decimal(1), "USD")
"""

TEST_SPLIT = """\
from decimal import Decimal

import pytest

from tallyho.money import Money
from tallyho.split import split_by_weights, split_evenly


def test_split_evenly_round_amount():
    shares = split_evenly(Money(Decimal("90.00")), 3)
    assert [s.amount for s in shares] == [Decimal("30.00")] * 3


def test_split_evenly_rejects_zero_people():
    with pytest.raises(ValueError):
        split_evenly(Money(Decimal(10)), 0)


def test_split_by_weights():
    shares = split_by_weights(Money(Decimal("100.00")), [1, 1, 2])
    assert [s.amount for s in shares] == [Decimal("25.00"), Decimal("25.00"), Decimal("50.00")]
"""

TEST_CLI = """\
from tallyho.cli import main


def test_split_prints_one_line_per_person(capsys):
    assert main(["split", "90", "3"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "person 1: 30.00",
        "person 2: 30.00",
        "person 3: 30.00",
    ]


def test_add_then_report(capsys, ledger_db):
    main(["add", "alice", "30"])
    main(["add", "bob", "10"])
    assert main(["report"]) == 0
    assert "alice" in capsys.readouterr().out
"""

TEST_LEDGER = """\
from decimal import Decimal

from tallyho.ledger import Ledger


def test_balances_two_payers(ledger_db):
    ledger = Ledger.open()
    ledger.add("alice", Decimal(30))
    ledger.add("bob", Decimal(10))
    assert ledger.balances() == {"alice": Decimal(10), "bob": Decimal(-10)}


def test_amounts_are_stored_in_cents(ledger_db):
    ledger = Ledger.open()
    ledger.add("alice", Decimal("12.34"))
    assert ledger.conn.execute("SELECT amount_cents FROM expenses").fetchone() == (1234,)
"""

CHANGELOG = """\
# Changelog

## 0.3.1 — 2026-02-11

- `report` sorts payers by name.

## 0.3.0 — 2026-01-28

- `add --note` stores a free-text note with each expense.
"""

PROJECT: dict[str, str] = {
    "README.md": README,
    "CHANGELOG.md": CHANGELOG,
    "pyproject.toml": PYPROJECT,
    "migrations/0001_init.sql": MIGRATION_1,
    "migrations/0002_payer_index.sql": MIGRATION_2,
    "src/tallyho/__init__.py": INIT,
    "src/tallyho/cli.py": CLI,
    "src/tallyho/ledger.py": LEDGER,
    "src/tallyho/money.py": MONEY,
    "src/tallyho/split.py": SPLIT,
    "tests/conftest.py": CONFTEST,
    "tests/test_cli.py": TEST_CLI,
    "tests/test_ledger.py": TEST_LEDGER,
    "tests/test_money.py": TEST_MONEY,
    "tests/test_split.py": TEST_SPLIT,
}
