"""Identifiers kept exactly, deduplicated, newest meaning winning; no encoded-data noise."""

from __future__ import annotations

from ctxengine.model import IdentifierFact, Ledgers
from ctxengine.summarizers.fact_items import identifier_line
from ctxengine.summarizers.identifiers import (
    FINDING_SYMBOLS_MAX,
    Source,
    identifiers,
    port_subject,
)
from ctxengine.summarizers.items import VALUES, identifier_items


def _facts(*sources: Source) -> list[tuple[str, str, str, int]]:
    return [(f.kind, f.text, f.key, f.source) for f in identifiers(sources)]


def test_each_kind_from_a_user_message() -> None:
    text = (
        "Fix PAY-1423 (see issue #88). The bug came with commit 7f3a9c2e in git.\n"
        "The API listens on localhost:8080 and Postgres on port 5432.\n"
        "Docs: https://example.com/api/v2?x=1.\n"
        "Read $DATABASE_URL and export SENTRY_DSN=… before starting; $HOME is fine.\n"
        "We target Python 3.11 and release v2.4.0."
    )
    assert _facts(Source(3, "user", text)) == [
        ("ticket", "PAY-1423", "PAY-1423", 3),
        ("ticket", "#88", "#88", 3),
        ("commit", "7f3a9c2e", "7f3a9c2", 3),
        ("port", "localhost:8080", "8080", 3),
        ("port", "port 5432", "5432", 3),
        ("url", "https://example.com/api/v2?x=1", "https://example.com/api/v2?x=1", 3),
        ("env", "DATABASE_URL", "DATABASE_URL", 3),
        ("env", "SENTRY_DSN", "SENTRY_DSN", 3),
        ("version", "Python 3.11", "python", 3),
        ("version", "v2.4.0", "v2.4.0", 3),
    ]


def test_a_port_is_found_in_every_language_whatever_else_the_text_holds() -> None:
    for said, port in (
        ("El servidor usa puerto 5432.", "puerto 5432"),
        ("O servidor usa a porta 8080.", "porta 8080"),
        ("Сервер слушает порт 8081.", "порт 8081"),
        ("服务监听端口 8082。", "端口 8082"),
    ):
        found = [f for f in _facts(Source(2, "user", said)) if f[0] == "port"]
        linked = [
            f for f in _facts(Source(2, "user", f"{said} (https://x.example)")) if f[0] == "port"
        ]
        assert found == linked == [("port", port, port[-4:], 2)], said


def test_the_newest_meaning_wins_and_first_seen_order_stays() -> None:
    facts = identifiers(
        (
            Source(1, "user", "Always target Python 3.8 on port 8000."),
            Source(9, "user", "From now on target Python 3.11; the server moved to PORT=8000."),
        )
    )
    assert facts == (
        IdentifierFact(
            "Python 3.11",
            "version",
            "python",
            9,
            "From now on target Python 3.11; the server moved to PORT=8000.",
            stated=True,
        ),
        IdentifierFact(
            "PORT=8000",
            "port",
            "8000",
            9,
            "From now on target Python 3.11; the server moved to PORT=8000.",
            stated=True,
        ),
    )


def test_tool_results_give_only_reliable_kinds() -> None:
    commit = "[main 225c5a1] cli: add rules subcommand (PAY-7)\n 2 files changed"
    log = "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: x\n\ncommit " + "f" * 40
    server = "Listening on http://127.0.0.1:4000/ (pid 42)\nversion 1.2.3 of numpy"
    code = 'token = os.environ["API_TOKEN"]\necho "$LOCAL_VAR" PAY-9 #12 fixes #13'
    assert _facts(
        Source(2, "result", commit, "git commit -m 'x'"),
        Source(4, "result", log, "git log -2"),
        Source(6, "result", server, "python -m app"),
        Source(8, "result", code, "cat app.py"),
    ) == [
        ("ticket", "PAY-7", "PAY-7", 2),
        ("commit", "225c5a1", "225c5a1", 2),
        ("commit", "0123456789abcdef0123456789abcdef01234567", "0123456", 4),
        ("url", "http://127.0.0.1:4000/", "http://127.0.0.1:4000/", 6),
        ("port", "127.0.0.1:4000", "4000", 6),
        ("env", "API_TOKEN", "API_TOKEN", 8),
    ]


def test_encoded_data_hex_dumps_and_request_ids_give_nothing() -> None:
    noise = (
        "data: aGVsbG8gd29ybGQgdGhpcyBpcyBhIHZlcnkgbG9uZyBiYXNlNjQgc3RyaW5nIGNvbW1pdA== commit\n"
        "00000000 deadbeef 0badf00d 12345678 commit abcdef12\n"
        "request_id=req_011CY4RR8t5DiSNcujeLfT74 commit 1a2b3c4d on localhost:9000\n"
        "index 89e2dceeaf..9670e21363 100644\n"
        "an ISO-8601 date, UTF-8 text and GPT-4 are not tickets\n"
        "the file main.ts:100 is not a port\n"
    )
    assert _facts(Source(0, "user", noise)) == []


def test_recurring_names_a_user_writes_as_code_or_a_result_defines() -> None:
    user_text = "`parse_config` breaks when AppSettings.load_env( is called; AcmeCorp said so."
    defined = "def parse_config(path):\n    return AppSettings()\nclass AppSettings:\n"
    facts = _facts(
        Source(0, "user", user_text),
        Source(1, "result", defined, "cat cfg.py"),
        Source(3, "result", "parse_config AppSettings load_env AcmeCorp", "grep -rn x ."),
        Source(5, "result", "AppSettings", "grep -rn y ."),
    )
    assert facts == [
        ("symbol", "parse_config", "parse_config", 3),
        ("symbol", "AppSettings", "AppSettings", 5),
    ]


def test_the_agent_s_stated_findings() -> None:
    text = (
        "Found it: `fetch_user_v2` swallows the cache miss and returns None.\n"
        "The bug is in fetchUserV2 as well, not in src/api/fetch_user.py.\n"
        "I'll read load_config next.\n"
        "The integration database listens on port 5433; the fix landed in commit 9f3c2ab.\n"
        "See $DATABASE_URL and https://example.com/docs, served on http://localhost:8081/."
    )
    assert _facts(Source(7, "assistant", text)) == [
        ("port", "port 5433", "5433", 7),
        ("commit", "9f3c2ab", "9f3c2ab", 7),
        ("url", "http://localhost:8081/", "http://localhost:8081/", 7),
        ("port", "localhost:8081", "8081", 7),
        ("symbol", "fetch_user_v2", "fetch_user_v2", 7),
        ("symbol", "fetchUserV2", "fetchUserV2", 7),
    ]


def test_only_the_newest_findings_of_a_range() -> None:
    sources = [Source(i, "assistant", f"The bug is in load_part_{i}.") for i in range(12)]
    names = [text for kind, text, _, _ in _facts(*sources)]
    assert names == [f"load_part_{i}" for i in range(12 - FINDING_SYMBOLS_MAX, 12)]


def test_a_merged_pull_request_s_number_in_git_output_is_no_ticket() -> None:
    log = "a1b2c3d PAY-7: fix refunds (#412)\ne4f5a6b Merge pull request #77 from x/y\n"
    assert _facts(Source(2, "result", log, "git log --oneline -2")) == [
        ("ticket", "PAY-7", "PAY-7", 2),
        ("ticket", "#77", "#77", 2),
        ("commit", "a1b2c3d", "a1b2c3d", 2),
    ]
    assert _facts(Source(3, "user", "That came with (#412).")) == [("ticket", "#412", "#412", 3)]


def test_a_port_s_subject_is_the_clause_that_states_it() -> None:
    assert port_subject("DATABASE_URL=postgresql://app@localhost:5432/app", "localhost:5432") == (
        "database postgresql"
    )
    line = "Postgres runs on port 5432, and the Redis instance listens on port 6379."
    assert port_subject(line, "port 5432") == "postgres"
    assert port_subject(line, "port 6379") == "redis"
    assert port_subject("Listening on http://127.0.0.1:4000/", "127.0.0.1:4000") == ""


def test_a_newer_port_of_the_same_subject_marks_the_older_one_earlier() -> None:
    env = "DATABASE_URL=postgresql://app@localhost:5432/app\nREDIS_URL=redis://localhost:6379/0"
    facts = identifiers(
        (
            Source(2, "result", env, "cat .env.example"),
            Source(5, "user", "The integration database on this box listens on port 5433."),
        )
    )
    assert [(f.text, f.subject, f.status) for f in facts if f.kind == "port"] == [
        ("localhost:5432", "database postgresql", "earlier"),
        ("localhost:6379", "redis", "current"),
        ("port 5433", "database integration", "current"),
    ]
    # across compactions: the merge marks it too, and the state says so
    older = identifiers((Source(2, "result", env, "cat .env.example"),))
    newer = identifiers((Source(9, "assistant", "Redis moved: it is on port 6380 now."),))
    merged = Ledgers(identifiers=older).merge(Ledgers(identifiers=newer)).identifiers
    assert [identifier_line(f) for f in merged if f.kind == "port"] == [
        "port: localhost:5432",
        "port: localhost:6379 (earlier)",
        "port: port 6380",
    ]


def test_a_colour_in_parentheses_is_no_ticket() -> None:
    text = "The border uses (#008899) and the muted text (#666666); see (#4312)."
    assert _facts(Source(1, "assistant", text)) == [("ticket", "#4312", "#4312", 1)]


def test_an_identifier_the_user_or_the_agent_stated_stays_stated_and_ranks_higher() -> None:
    log = "a1b2c3d PAY-7: fix refunds\n"
    tool = Source(2, "result", log, "git log --oneline -1")
    facts = identifiers((Source(1, "user", "Work on PAY-7."), tool))
    assert [(f.text, f.source, f.stated) for f in facts] == [
        ("PAY-7", 2, True),
        ("a1b2c3d", 2, False),
    ]
    # across compactions too: a later tool output keeps it stated
    older = identifiers((Source(1, "assistant", "The bug came with PAY-7."),))
    merged = Ledgers(identifiers=older).merge(Ledgers(identifiers=identifiers((tool,))))
    assert [(f.text, f.source, f.stated) for f in merged.identifiers] == [
        ("PAY-7", 2, True),
        ("a1b2c3d", 2, False),
    ]
    kinds = {i.text: i.kind for i in identifier_items(merged)}
    assert kinds == {"ticket: PAY-7": "identifier.stated", "commit: a1b2c3d": "identifier"}
    assert VALUES["identifier.stated"] > VALUES["identifier"] > VALUES["identifier.earlier"]
