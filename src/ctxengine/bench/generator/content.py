"""Realistic bulk for generated sessions: source files, logs, grep hits, test runs, git
output. Seeded and deterministic; none of it states a planted fact (the generator checks).

Sizes are in lines; a line of generated code is about 8–12 tokens.
"""

from __future__ import annotations

import random

from ctxengine.bench.generator.worlds import World

_PY_VERBS: tuple[str, ...] = tuple(
    [
        "load",
        "build",
        "apply",
        "resolve",
        "validate",
        "record",
        "fetch",
        "compute",
        "refresh",
        "release",
        "acquire",
        "render",
        "parse",
        "emit",
        "retry",
        "settle",
        "normalize",
        "merge",
    ]
)
_PY_NOUNS: tuple[str, ...] = tuple(
    [
        "charge",
        "refund",
        "session",
        "customer",
        "ledger_entry",
        "token",
        "webhook",
        "payout",
        "invoice",
        "account",
        "batch",
        "receipt",
        "limit",
        "balance",
        "cursor",
        "attempt",
    ]
)
_FIELDS: tuple[str, ...] = tuple(
    [
        "amount_cents",
        "currency",
        "status",
        "created_at",
        "customer_id",
        "idempotency_key",
        "reason",
        "attempts",
        "expires_at",
        "metadata",
        "external_ref",
        "settled_at",
    ]
)
_TS_NOUNS: tuple[str, ...] = tuple(
    [
        "User",
        "Session",
        "Row",
        "Filter",
        "Page",
        "Column",
        "Toast",
        "Route",
        "Query",
        "Badge",
        "Avatar",
        "Menu",
        "Table",
        "Sort",
        "Cursor",
    ]
)
_SUBJECTS: tuple[str, ...] = (
    "Bump dependencies",
    "Fix flaky webhook test",
    "Add pagination to ledger export",
    "Tidy logging",
    "Speed up CI cache",
    "Document the retry policy",
    "Rename settle helper",
    "Handle empty refund reason",
    "Drop unused fixture",
    "Pin the formatter version",
)
_STATUSES = (200, 200, 200, 201, 204, 400, 404, 500)
_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "INFO", "ERROR")
_ROUTES: tuple[str, ...] = (
    "GET /v1/charges",
    "POST /v1/refunds",
    "GET /v1/customers/me",
    "POST /v1/webhooks/stripe",
    "GET /healthz",
    "POST /v1/sessions/refresh",
    "GET /v1/ledger",
    "DELETE /v1/sessions",
)


def _snake(rng: random.Random) -> str:
    return f"{rng.choice(_PY_VERBS)}_{rng.choice(_PY_NOUNS)}"


def _camel(rng: random.Random) -> str:
    verb = rng.choice(_PY_VERBS)
    return verb + rng.choice(_TS_NOUNS)


def python_module(rng: random.Random, path: str, lines: int) -> str:
    """A plausible Python module of about ``lines`` lines."""
    title = path.rsplit("/", 1)[-1].removesuffix(".py").replace("_", " ")
    out = [
        f'"""{title.capitalize()}: part of the payments service."""',
        "",
        "from __future__ import annotations",
        "",
        "import logging",
        "from dataclasses import dataclass",
        "from datetime import datetime, timezone",
        "",
        "log = logging.getLogger(__name__)",
        "",
    ]
    while len(out) < lines:
        name = _snake(rng)
        noun = rng.choice(_PY_NOUNS)
        field = rng.choice(_FIELDS)
        kind = rng.randrange(4)
        if kind == 0:
            cls = "".join(w.capitalize() for w in noun.split("_"))
            out += ["", "", "@dataclass(frozen=True)", f"class {cls}{rng.randrange(2, 9)}:"]
            out += [
                f"    {f}: {rng.choice(('int', 'str', 'datetime | None'))}"
                for f in rng.sample(_FIELDS, rng.randint(3, 6))
            ]
            continue
        out += ["", "", f"def {name}({noun}, *, limit: int = {rng.randrange(5, 500)}) -> int:"]
        out.append(f'    """{name.replace("_", " ").capitalize()} for one {noun}."""')
        for _ in range(rng.randint(3, 9)):
            s = rng.randrange(6)
            if s == 0:
                out += [
                    f"    if {noun}.{field} is None:",
                    f'        raise ValueError("{noun} without {field}")',
                ]
            elif s == 1:
                out.append(f'    log.info("{name}: %s", {noun}.{field})')
            elif s == 2:
                out += [
                    f"    for item in {noun}.items[:limit]:",
                    f"        total += item.{rng.choice(_FIELDS)}",
                ]
            elif s == 3:
                out.append(f"    {field} = {noun}.get({field!r}, {rng.randrange(0, 99)})")
            elif s == 4:
                out += [
                    "    now = datetime.now(timezone.utc)",
                    f"    if {noun}.expires_at and {noun}.expires_at < now:",
                    "        return 0",
                ]
            else:
                out.append(f"    total = sum(x.{field} for x in {noun}.entries)")
        out.append("    return total")
    return "\n".join(out[:lines]) + "\n"


def typescript_module(rng: random.Random, path: str, lines: int) -> str:
    """A plausible TypeScript/TSX module of about ``lines`` lines."""
    out = [
        "import { useEffect, useState } from 'react';",
        "import { api } from '../api/client';",
        "import type { Session } from '../auth/session';",
        "",
    ]
    while len(out) < lines:
        noun = rng.choice(_TS_NOUNS)
        name = _camel(rng)
        if rng.randrange(3) == 0:
            out += ["", f"export interface {noun}Props {{"]
            out += [
                f"  {f.replace('_', '')}: {rng.choice(('string', 'number', 'boolean'))};"
                for f in rng.sample(_FIELDS, rng.randint(3, 6))
            ]
            out.append("}")
            continue
        out += ["", f"export async function {name}(id: string, limit = {rng.randrange(5, 500)}) {{"]
        for _ in range(rng.randint(3, 8)):
            s = rng.randrange(5)
            if s == 0:
                out.append(f"  const res = await api.get(`/{noun.lower()}s/${{id}}`);")
            elif s == 1:
                out += [
                    "  if (!res.data) {",
                    f"    throw new Error('{name}: empty response');",
                    "  }",
                ]
            elif s == 2:
                out.append(f"  const rows = res.data.items.slice(0, limit).map(to{noun});")
            elif s == 3:
                out.append(f"  console.debug('{name}', id, rows.length);")
            else:
                out += ["  for (const row of rows) {", f"    row.{noun.lower()}Id ??= id;", "  }"]
        out += ["  return rows;", "}"]
    return "\n".join(out[:lines]) + "\n"


def source(rng: random.Random, world: World, path: str, lines: int) -> str:
    """A source file of ``world``'s language."""
    if world.lang == "python":
        return python_module(rng, path, lines)
    return typescript_module(rng, path, lines)


def log_lines(rng: random.Random, n: int, *, extra: tuple[str, ...] = ()) -> str:
    """``n`` lines of an application log; the ``extra`` lines are spread evenly among them."""
    at = {(j + 1) * n // (len(extra) + 1): line for j, line in enumerate(extra)}
    lines = []
    minute, sec = rng.randrange(60), 0
    for i in range(n):
        sec += rng.randrange(1, 9)
        if sec >= 60:
            minute, sec = (minute + 1) % 60, sec - 60
        rid = "".join(rng.choice("0123456789abcdef") for _ in range(12))
        lines.append(
            f"2025-03-14T10:{minute:02d}:{sec:02d}.{rng.randrange(1000):03d}Z "
            f"{rng.choice(_LEVELS):<5} [worker-{rng.randrange(1, 9)}] rid={rid} "
            f"{rng.choice(_ROUTES)} status={rng.choice(_STATUSES)} dur={rng.randrange(2, 900)}ms"
        )
        if i in at:
            lines.append(at[i])
    return "\n".join(lines) + "\n"


def grep_hits(rng: random.Random, world: World, pattern: str, n: int) -> str:
    """``n`` grep hits (``path:line:text``) for ``pattern`` across the project."""
    files = world.sources + world.tests
    out = []
    for _ in range(n):
        path = rng.choice(files)
        line = rng.randrange(1, 300)
        if world.lang == "python":
            text = f"    {rng.choice(_FIELDS)} = {pattern}({rng.choice(_PY_NOUNS)})"
        else:
            text = f"  const {rng.choice(_TS_NOUNS).lower()} = await {pattern}(id);"
        out.append(f"{path}:{line}:{text}")
    out.sort()
    return "\n".join(out) + "\n"


def passing_tests(rng: random.Random, world: World) -> str:
    """The output of a passing test run."""
    n = rng.randrange(40, 180)
    if world.lang == "python":
        dots = "".join("." for _ in range(min(n, 70)))
        return (
            "============================= test session starts ==============================\n"
            "platform linux -- Python 3.12.4, pytest-8.2.0, pluggy-1.5.0\n"
            f"rootdir: {world.root}\nconfigfile: pyproject.toml\ncollected {n} items\n\n"
            f"tests/test_refunds.py {dots}\n"
            f"============================== {n} passed in {rng.randrange(2, 30)}."
            f"{rng.randrange(10, 99)}s ==============================\n"
        )
    return (
        f" ✓ tests/format.test.ts ({rng.randrange(3, 20)} tests)\n"
        f" ✓ tests/users.test.ts ({rng.randrange(3, 20)} tests)\n\n"
        f" Test Files  3 passed (3)\n      Tests  {n} passed ({n})\n"
        f"   Duration  {rng.randrange(1, 9)}.{rng.randrange(10, 99)}s\n"
    )


def failing_lint(rng: random.Random, world: World) -> tuple[str, str]:
    """``(command, output)`` of a lint run reporting style problems (exit status 1)."""
    if world.lang == "python":
        path = rng.choice(world.sources)
        return (
            "ruff check src tests",
            f"{path}:{rng.randrange(5, 200)}:{rng.randrange(1, 60)}: "
            "E501 Line too long (104 > 100)\n"
            f"{path}:{rng.randrange(5, 200)}:1: F401 `datetime.timezone` imported but unused\n"
            "Found 2 errors.\n[*] 1 fixable with the `--fix` option.\n",
        )
    path = rng.choice(world.sources)
    return (
        "pnpm exec eslint src",
        f"{world.root}/{path}\n  {rng.randrange(5, 200)}:{rng.randrange(1, 40)}  warning  "
        "Unexpected console statement  no-console\n"
        f"  {rng.randrange(5, 200)}:{rng.randrange(1, 40)}  error    'rows' is never reassigned. "
        "Use 'const' instead  prefer-const\n\n✖ 2 problems (1 error, 1 warning)\n",
    )


def git_log(rng: random.Random, extra: tuple[str, ...] = ()) -> str:
    """``git log --oneline`` output; ``extra`` lines are inserted after the first three."""
    subjects = _SUBJECTS
    lines = []
    for _ in range(rng.randrange(8, 16)):
        sha = "".join(rng.choice("0123456789abcdef") for _ in range(7))
        lines.append(f"{sha} {rng.choice(subjects)} (#{rng.randrange(100, 999)})")
    return "\n".join(lines[:3] + list(extra) + lines[3:]) + "\n"


def git_status(rng: random.Random, changed: tuple[str, ...]) -> str:
    """``git status --short`` for ``changed`` paths (``M`` each)."""
    if not changed:
        return ""
    return "\n".join(f" M {p}" for p in changed) + "\n"
