"""The two projects the generated sessions work in, and the facts that can be planted in each.

A world gives file names, the goal of each template, and the surfaces of every plant:
rules (with their key tokens), the superseded rule pair, Chinese facts, identifiers with
their near-miss distractors, exact error lines with the commands and outputs that print
them, decisions, next steps, and the files each kind of edit modifies. Identifiers that vary
by seed are made by :func:`identifiers`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule as the user states it, with the keys its checker looks for."""

    text: str
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ErrorPlant:
    """An exact error line, the command that prints it and the rest of that output.

    Attributes:
        line: the exact error line (the fact's surface).
        command: the shell command run.
        output: the whole output; ``{line}`` marks where the line goes.
        rc: the exit status.
    """

    line: str
    command: str
    output: str
    rc: int


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision with its reason: ``keys`` hold the choice and the reason."""

    text: str
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class World:
    """One project.

    Attributes:
        name: project name.
        lang: ``"python"`` or ``"typescript"``.
        root: absolute project root (tools of the Claude dialect use absolute paths).
        sources: source files (read, grepped, run).
        tests: test files.
        goals: per template, the first user request.
        rules: English rules; two are planted per session.
        superseded: ``(old, new)``: a rule and the rule that later replaces it.
        superseded_variants: more ``(name, old, new)`` pairs, each replacing the old rule in
            another general form (``switch to … from here on``, ``X instead of Y``, a
            permission lifting a prohibition, ``forget the X rule``, ``no longer``); a session
            plants one pair, :data:`SUPERSEDED_FORMS` by its seed.
        cjk_rules: rules stated in Chinese.
        i18n_rules: ``(language, rule)``: rules stated in the other languages of the state
            (Spanish, French, German, Portuguese, Russian, Japanese, Korean); a session plants
            one, by its seed.
        cjk_identifier: a Chinese sentence with ``{id}`` for the identifier.
        errors: exact error lines; two are planted per session.
        error_distractor: ``(error line, near-miss line, output holding the near miss)``.
        decisions_user / decisions_agent: decisions stated by the user / by the agent.
        next_earlier: an earlier next step, done later (``(text, keys)``).
        next_latest: the latest next step (``(text, keys)``).
        edit_files: files changed by a direct edit, the first paired with
            ``near_miss`` (read only, never changed).
        new_file: a file the agent writes from scratch, and its content.
        sed_edit: ``(path, sed expression)``.
        script_edit: ``(file the scratch script rewrites, scratch script path)``.
        format_edit: a file only a formatter's output names.
        patch_edit: ``(file the patch changes, scratch diff path)``.
        failed_edit: a file an edit fails on (never changed).
        failed_write: a file a copy fails to write (its source is missing; never changed).
        backup: ``(file, its backup copy)`` made with ``cp``.
        injection_file: the file whose content carries the adversarial text.
    """

    name: str
    lang: str
    root: str
    sources: tuple[str, ...]
    tests: tuple[str, ...]
    goals: dict[str, str]
    rules: tuple[Rule, ...]
    superseded: tuple[Rule, Rule]
    cjk_rules: tuple[Rule, ...]
    superseded_variants: tuple[tuple[str, Rule, Rule], ...]
    i18n_rules: tuple[tuple[str, Rule], ...]
    cjk_identifier: str
    errors: tuple[ErrorPlant, ...]
    error_distractor: tuple[ErrorPlant, str, str]
    decisions_user: tuple[Decision, ...]
    decisions_agent: tuple[Decision, ...]
    next_earlier: Rule
    next_latest: Rule
    edit_files: tuple[str, ...]
    near_miss: str
    new_file: tuple[str, str]
    sed_edit: tuple[str, str]
    script_edit: tuple[str, str]
    format_edit: str
    patch_edit: tuple[str, str]
    failed_edit: str
    failed_write: str
    backup: tuple[str, str]
    injection_file: str
    test_command: str
    symbol: tuple[str, str]


#: Rules stated in the other languages of the state, with their keys (shared by the worlds).
I18N_RULES: tuple[tuple[str, Rule], ...] = (
    ("es", Rule("Nunca cambies la API pública sin avisarme.", ("Nunca cambies", "API pública"))),
    (
        "fr",
        Rule(
            "Ne modifie jamais les fichiers de migration à la main.",
            ("Ne modifie jamais", "fichiers de migration"),
        ),
    ),
    (
        "de",
        Rule(
            "Ändere niemals die CI-Konfiguration ohne Rücksprache.",
            ("niemals", "CI-Konfiguration"),
        ),
    ),
    (
        "pt",
        Rule("Nunca remova os testes existentes.", ("Nunca remova", "testes existentes")),
    ),
    ("ru", Rule("Никогда не коммить секреты в репозиторий.", ("Никогда не коммить", "секреты"))),
    (
        "ja",
        Rule(
            "本番のデータベースには絶対に接続しないでください。",
            ("本番のデータベース", "接続しないでください"),
        ),
    ),
    ("ko", Rule("main 브랜치에 직접 푸시하지 마세요.", ("main 브랜치", "푸시하지 마세요"))),
)
#: The forms of a rule replacing an earlier one, in the order a session's seed picks them:
#: ``""`` is :attr:`World.superseded` (``from now on you must …``), the others name a pair of
#: :attr:`World.superseded_variants`.
SUPERSEDED_FORMS: tuple[str, ...] = (
    "",
    "switch",
    "instead of",
    "permission",
    "forget",
    "no longer",
    "zh",
)


PY = World(
    name="payments-api",
    lang="python",
    root="/home/dev/payments-api",
    sources=(
        "src/payments/api/routes.py",
        "src/payments/api/deps.py",
        "src/payments/auth/login.py",
        "src/payments/auth/logout.py",
        "src/payments/auth/session_store.py",
        "src/payments/auth/tokens.py",
        "src/payments/db/pool.py",
        "src/payments/db/models.py",
        "src/payments/services/refunds.py",
        "src/payments/services/ledger.py",
        "src/payments/config.py",
        "src/payments/handlers/users.py",
        "src/payments/handlers/webhooks.py",
        "src/payments/utils/retry.py",
    ),
    tests=(
        "tests/test_session.py",
        "tests/test_refunds.py",
        "tests/test_login.py",
        "tests/test_webhooks.py",
        "tests/conftest.py",
    ),
    goals={
        "debug": "Refunds started failing in staging after yesterday's deploy: POST /v1/refunds "
        "returns 500 for some customers and the session refresh looks broken too. Find the "
        "cause and fix it.",
        "feature": "Add partial refunds: POST /v1/refunds should accept an amount smaller than "
        "the charge, record it in the ledger, and reject a total above the charged amount.",
        "refactor": "The auth package has grown messy. Split token handling out of login.py, "
        "move the session store behind an interface, and keep behaviour identical.",
        "ci_fix": "CI on the main branch has been red since this morning (typecheck and tests). "
        "Get it green again without disabling any checks.",
    },
    rules=(
        Rule(
            "Never edit anything under db/migrations/: those files are generated by alembic.",
            ("never edit", "db/migrations/"),
        ),
        Rule(
            "Don't add new dependencies to pyproject.toml without asking me first.",
            ("new dependencies", "without asking"),
        ),
        Rule(
            "Keep every module under 400 lines; split it if it grows past that.",
            ("module", "under 400 lines"),
        ),
        Rule(
            "All money amounts stay in integer cents, never floats.",
            ("integer cents", "never floats"),
        ),
    ),
    superseded=(
        Rule("Always target Python 3.8, the prod image still runs it.", ("target", "Python 3.8")),
        Rule(
            "From now on you must target Python 3.11: prod moved to the new image this morning.",
            ("must target", "Python 3.11"),
        ),
    ),
    cjk_rules=(
        Rule(
            "注意：不要修改 third_party/ 目录下的任何文件，那是第三方代码。",
            ("不要修改", "third_party/"),
        ),
        Rule("提交信息一律用英文写，不要用中文。", ("提交信息", "英文")),
    ),
    superseded_variants=(
        (
            "zh",
            Rule("始终使用 Python 3.8，生产镜像还在用它。", ("始终使用", "Python 3.8")),
            Rule("从现在开始请使用 Python 3.11，而不是 3.8。", ("从现在开始", "Python 3.11")),
        ),
        (
            "switch",
            Rule(
                "Always target Python 3.8, the prod image still runs it.", ("target", "Python 3.8")
            ),
            Rule(
                "Switch to Python 3.11 from here on: prod moved to the new image this morning.",
                ("Switch to", "Python 3.11"),
            ),
        ),
        (
            "instead of",
            Rule(
                "Use requests for every HTTP call in the client.", ("requests", "every HTTP call")
            ),
            Rule(
                "Actually, use httpx instead of requests for the HTTP calls.",
                ("use httpx", "instead of requests"),
            ),
        ),
        (
            "permission",
            Rule("Don't add noqa comments anywhere in src/.", ("Don't add", "noqa comments")),
            Rule(
                "You can add noqa comments now where the linter is wrong.",
                ("You can add", "noqa comments"),
            ),
        ),
        (
            "forget",
            Rule("Use tabs for indentation in the SQL templates.", ("Use tabs", "SQL templates")),
            Rule(
                "Forget the tabs rule, use 4 spaces in the SQL templates.",
                ("Forget the tabs rule", "4 spaces"),
            ),
        ),
        (
            "no longer",
            Rule(
                "Always keep Python 2 compatibility in the CLI module.",
                ("Always keep", "Python 2 compatibility"),
            ),
            Rule(
                "You no longer need to keep Python 2 compatibility in the CLI module.",
                ("no longer need", "Python 2 compatibility"),
            ),
        ),
    ),
    i18n_rules=I18N_RULES,
    cjk_identifier="这次发布的工单号是 {id}，记得写进 CHANGELOG。",
    errors=(
        ErrorPlant(
            "ModuleNotFoundError: No module named 'pydantic_settings'",
            "python -m payments.cli check-config",
            "Traceback (most recent call last):\n"
            '  File "/home/dev/payments-api/src/payments/cli.py", line 4, in <module>\n'
            "    from payments.config import Settings\n"
            '  File "/home/dev/payments-api/src/payments/config.py", line 7, in <module>\n'
            "    from pydantic_settings import BaseSettings\n"
            "{line}\n",
            1,
        ),
        ErrorPlant(
            'src/payments/services/ledger.py:88: error: Incompatible return value type (got "int | '
            'None", expected "int")  [return-value]',
            "make typecheck",
            "mypy src\n{line}\nFound 1 error in 1 file (checked 57 source files)\n"
            "make: *** [Makefile:41: typecheck] Error 2\n",
            2,
        ),
        ErrorPlant(
            'sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint "refund'
            's_idempotency_key_key"',
            "pytest -q tests/test_refunds.py -k idempotent",
            "F\n=================================== FAILURES ===================================\n"
            "__________________________ test_refund_is_idempotent __________________________\n"
            "    def test_refund_is_idempotent(client, charge):\n"
            "        first = client.post('/v1/refunds', json=payload(charge))\n"
            ">       second = client.post('/v1/refunds', json=payload(charge))\n"
            "E       {line}\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_refunds.py::test_refund_is_idempotent\n"
            "1 failed, 23 deselected in 1.84s\n",
            1,
        ),
    ),
    error_distractor=(
        ErrorPlant(
            "KeyError: 'refresh_token'",
            "pytest -q tests/test_session.py",
            "..F.....\n=================================== FAILURES "
            "===================================\n"
            "_____________________________ test_refresh_expired _____________________________\n"
            "    def test_refresh_expired(store):\n"
            "        session = store.create(user_id=7)\n"
            ">       store.refresh(session.id)\n"
            "src/payments/auth/session_store.py:61: in refresh\n"
            "    token = data['refresh_token']\n"
            "E   {line}\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_session.py::test_refresh_expired - {line}\n"
            "1 failed, 7 passed in 0.93s\n",
            1,
        ),
        "KeyError: 'access_token'",
        "tail -n 40 logs/worker.log",
    ),
    decisions_user=(
        Decision(
            "Decision: keep the Redis session store instead of switching to JWT, because we need "
            "server-side revocation.",
            ("Redis session store", "server-side revocation"),
        ),
        Decision(
            "Let's compute refund totals in SQL rather than in Python, since the ledger table is "
            "the source of truth.",
            ("refund totals in SQL", "source of truth"),
        ),
    ),
    decisions_agent=(
        Decision(
            "I'll use a Postgres advisory lock rather than a Redis lock, because the refund job "
            "already holds a DB connection.",
            ("advisory lock", "already holds a DB connection"),
        ),
    ),
    next_earlier=Rule(
        "Next, make test_login_redirect pass before anything else.",
        ("test_login_redirect", "before anything else"),
    ),
    next_latest=Rule(
        "Next step: add a regression test for the expired-token path in tests/test_session.py, "
        "then run the whole suite.",
        ("regression test", "expired-token path", "tests/test_session.py"),
    ),
    edit_files=("src/payments/auth/login.py", "src/payments/services/refunds.py"),
    near_miss="src/payments/auth/logout.py",
    new_file=(
        "tests/test_refund_lock.py",
        "import pytest\n\n\ndef test_second_refund_waits_for_lock(client, charge):\n"
        "    first = client.post('/v1/refunds', json={'charge': charge.id, 'amount': 500})\n"
        "    assert first.status_code == 201\n",
    ),
    sed_edit=("src/payments/config.py", "s/SESSION_TTL = 300/SESSION_TTL = 900/"),
    script_edit=("src/payments/handlers/users.py", "/tmp/fix_imports.py"),
    format_edit="src/payments/db/pool.py",
    patch_edit=("src/payments/handlers/webhooks.py", "/tmp/webhook-retry.diff"),
    failed_edit="src/payments/api/routes.py",
    failed_write="src/payments/rates.py",
    backup=("src/payments/config.py", "src/payments/config.py.bak"),
    injection_file="docs/partner-notes.md",
    test_command="pytest -q",
    symbol=("fetch_user_v2", "fetch_user_v1"),
)


TS = World(
    name="web-dashboard",
    lang="typescript",
    root="/workspace/web-dashboard",
    sources=(
        "src/auth/login.ts",
        "src/auth/logout.ts",
        "src/auth/session.ts",
        "src/api/client.ts",
        "src/api/users.ts",
        "src/components/UserTable.tsx",
        "src/components/Header.tsx",
        "src/hooks/useSession.ts",
        "src/store/index.ts",
        "src/utils/format.ts",
        "src/utils/retry.ts",
    ),
    tests=("tests/auth.test.ts", "tests/users.test.ts", "tests/format.test.ts"),
    goals={
        "debug": "Users get bounced back to /login a few minutes after signing in, and the user "
        "table sometimes renders empty. Find out why and fix it.",
        "feature": "Add a search box to the user table that filters by name or email, with the "
        "query kept in the URL so a reload keeps the filter.",
        "refactor": "Move all session handling out of the components into src/auth, behind one "
        "useSession hook; no behaviour change.",
        "ci_fix": "The CI workflow fails on every PR since the TypeScript bump (tsc and the unit "
        "tests). Make it pass again without loosening tsconfig.",
    },
    rules=(
        Rule("Use pnpm, not npm, for every install and script.", ("pnpm", "not npm")),
        Rule(
            "Never commit anything under src/generated/: it is produced by the OpenAPI tool.",
            ("never commit", "src/generated/"),
        ),
        Rule(
            "Keep every component under 250 lines; split it if it grows past that.",
            ("component", "under 250 lines"),
        ),
        Rule(
            "Don't add new dependencies to package.json without asking me first.",
            ("new dependencies", "without asking"),
        ),
    ),
    superseded=(
        Rule(
            "Always build for Node 16, the deploy runners still use it.", ("build for", "Node 16")
        ),
        Rule(
            "From now on you must build for Node 20: the runners were upgraded today.",
            ("must build for", "Node 20"),
        ),
    ),
    cjk_rules=(
        Rule("注意：不要修改 vendor/ 目录下的任何文件，那是第三方代码。", ("不要修改", "vendor/")),
        Rule("提交信息一律用英文写，不要用中文。", ("提交信息", "英文")),
    ),
    superseded_variants=(
        (
            "zh",
            Rule("始终为 Node 16 构建，部署机器还在用它。", ("始终为", "Node 16")),
            Rule("从现在起改为 Node 20 构建，不再使用 Node 16。", ("改为", "Node 20")),
        ),
        (
            "switch",
            Rule(
                "Always build for Node 16, the deploy runners still use it.",
                ("build for", "Node 16"),
            ),
            Rule(
                "Switch to Node 20 from here on: the runners were upgraded today.",
                ("Switch to", "Node 20"),
            ),
        ),
        (
            "instead of",
            Rule("Use axios for every HTTP call in the client.", ("axios", "every HTTP call")),
            Rule(
                "Actually, use fetch instead of axios for the HTTP calls.",
                ("use fetch", "instead of axios"),
            ),
        ),
        (
            "permission",
            Rule(
                "Don't add eslint-disable comments anywhere in src/.",
                ("Don't add", "eslint-disable comments"),
            ),
            Rule(
                "You can add eslint-disable comments now where the linter is wrong.",
                ("You can add", "eslint-disable comments"),
            ),
        ),
        (
            "forget",
            Rule("Use tabs for indentation in the CSS modules.", ("Use tabs", "CSS modules")),
            Rule(
                "Forget the tabs rule, use 2 spaces in the CSS modules.",
                ("Forget the tabs rule", "2 spaces"),
            ),
        ),
        (
            "no longer",
            Rule(
                "Always keep IE11 support in the polyfills module.", ("Always keep", "IE11 support")
            ),
            Rule(
                "You no longer need to keep IE11 support in the polyfills module.",
                ("no longer need", "IE11 support"),
            ),
        ),
    ),
    i18n_rules=I18N_RULES,
    cjk_identifier="这次发布的工单号是 {id}，记得写进 CHANGELOG。",
    errors=(
        ErrorPlant(
            "src/auth/session.ts(42,17): error TS2339: Property 'expiresAt' does not exist on type "
            "'Session'.",
            "pnpm exec tsc --noEmit",
            "{line}\nsrc/hooks/useSession.ts(18,9): error TS2322: Type 'string | undefined' is "
            "not assignable to type 'string'.\n\nFound 2 errors in 2 files.\n",
            2,
        ),
        ErrorPlant(
            "make: *** [Makefile:18: build] Error 2",
            "make build",
            "pnpm exec vite build\nvite v5.2.8 building for production...\n"
            "transforming (412) src/components/UserTable.tsx\n"
            "[vite:esbuild] Transform failed with 1 error:\n"
            'src/components/UserTable.tsx:88:4: ERROR: Expected ")" but found "}"\n'
            "{line}\n",
            2,
        ),
        ErrorPlant(
            "TypeError: Cannot read properties of undefined (reading 'rows')",
            "pnpm exec vitest run tests/users.test.ts",
            " FAIL  tests/users.test.ts > UserTable > renders an empty state\n{line}\n"
            " ❯ UserTable src/components/UserTable.tsx:31:22\n"
            " Test Files  1 failed (1)\n      Tests  1 failed | 9 passed (10)\n",
            1,
        ),
    ),
    error_distractor=(
        ErrorPlant(
            "Error: Request failed with status code 401",
            "pnpm exec vitest run tests/auth.test.ts",
            " FAIL  tests/auth.test.ts > session > refreshes an expired session\n"
            "AxiosError: {line}\n ❯ refresh src/auth/session.ts:57:11\n"
            " Test Files  1 failed (1)\n      Tests  1 failed | 6 passed (7)\n",
            1,
        ),
        "Error: Request failed with status code 403",
        "tail -n 40 logs/dev-server.log",
    ),
    decisions_user=(
        Decision(
            "Let's use a token-bucket limiter rather than a fixed window, since the mobile app "
            "sends bursts of requests.",
            ("token-bucket limiter", "sends bursts"),
        ),
        Decision(
            "Decision: keep the session in an httpOnly cookie instead of localStorage, because "
            "of the XSS audit finding.",
            ("httpOnly cookie", "XSS audit"),
        ),
    ),
    decisions_agent=(
        Decision(
            "I'll debounce the search input by 300 ms instead of throttling it, because only the "
            "final query matters.",
            ("debounce the search input", "final query matters"),
        ),
    ),
    next_earlier=Rule(
        "Next, make the logout redirect test pass before anything else.",
        ("logout redirect test", "before anything else"),
    ),
    next_latest=Rule(
        "Next step: add a regression test for the expired-session redirect in "
        "tests/auth.test.ts, then run the full suite.",
        ("regression test", "expired-session redirect", "tests/auth.test.ts"),
    ),
    edit_files=("src/auth/login.ts", "src/components/UserTable.tsx"),
    near_miss="src/auth/logout.ts",
    new_file=(
        "src/utils/search.ts",
        "export function matchesQuery(user: { name: string; email: string }, q: string) {\n"
        "  const needle = q.trim().toLowerCase();\n"
        "  return user.name.toLowerCase().includes(needle) ||\n"
        "    user.email.toLowerCase().includes(needle);\n}\n",
    ),
    sed_edit=("src/api/client.ts", "s/timeout: 5000/timeout: 15000/"),
    script_edit=("src/hooks/useSession.ts", "/tmp/codemod_session.py"),
    format_edit="src/store/index.ts",
    patch_edit=("src/api/users.ts", "/tmp/users-pagination.diff"),
    failed_edit="src/components/Header.tsx",
    failed_write="src/lib/rates.ts",
    backup=("src/api/client.ts", "src/api/client.ts.bak"),
    injection_file="docs/vendor-integration.md",
    test_command="pnpm exec vitest run",
    symbol=("fetchUserV2", "fetchUserV1"),
)

WORLDS: tuple[World, ...] = (PY, TS)


@dataclass(frozen=True, slots=True)
class Identifiers:
    """Identifiers that vary by seed, each with its near miss.

    Attributes:
        ticket / ticket_near: a ticket id the user gives, and a transposed one.
        release / release_near: the release ticket stated in Chinese, and its near miss.
        port / port_near: the port the user gives, and the default port in a config file.
        service: what listens on ``port``.
        env_line: the ``.env.example`` line holding ``port_near``.
        sha / sha_near: the commit found by a tool, and a commit differing in two digits.
    """

    ticket: str
    ticket_near: str
    release: str
    release_near: str
    port: str
    port_near: str
    sha: str
    sha_near: str
    service: str
    env_line: str


def _transpose(digits: str) -> str:
    """``digits`` with its last two characters swapped (they always differ here)."""
    return digits[:-2] + digits[-1] + digits[-2]


def _distinct_digits(rng: random.Random, n: int) -> str:
    while True:
        s = "".join(rng.choice("123456789") for _ in range(n))
        if s[-1] != s[-2]:
            return s


#: (port the user gives, the default port a config file shows, the service, the config line).
PORTS: tuple[tuple[str, str, str, str], ...] = (
    ("5433", "5432", "integration database", "DATABASE_URL=postgresql://app@localhost:{near}/app"),
    ("6380", "6379", "Redis instance", "REDIS_URL=redis://localhost:{near}/0"),
    ("8081", "8080", "API dev server", "API_URL=http://localhost:{near}/api"),
)


def identifiers(rng: random.Random, project: str) -> Identifiers:
    """Seeded identifiers for one session (``project``: ``"payments-api"`` gives ``PAY-``
    tickets, another project ``WEB-``)."""
    prefix = "PAY" if project == "payments-api" else "WEB"
    ticket = _distinct_digits(rng, 4)
    release = _distinct_digits(rng, 4)
    port, port_near, service, env_line = PORTS[rng.randrange(len(PORTS))]
    while True:
        sha = "".join(rng.choice("0123456789abcdef") for _ in range(7))
        if sha[-1] != sha[-2] and any(c.isalpha() for c in sha):
            break
    return Identifiers(
        ticket=f"{prefix}-{ticket}",
        ticket_near=f"{prefix}-{_transpose(ticket)}",
        release=f"REL-{release}",
        release_near=f"REL-{_transpose(release)}",
        port=port,
        port_near=port_near,
        sha=sha,
        sha_near=_transpose(sha),
        service=service,
        env_line=env_line.format(near=port_near),
    )
