"""History recall: exact excerpts from the whole log, compacted entries included, with entry
references, filters and a token budget; the ``recall`` tool's arguments and answer."""

from __future__ import annotations

import json

import pytest

from ctxengine import Session
from ctxengine.errors import ConfigError
from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    SupersedeRecord,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    assistant,
    user,
)
from ctxengine.projection.injection import RECALL_NOTE
from ctxengine.recall import (
    RECALL_TOOL,
    HistoryIndex,
    RecallQuery,
    format_result,
    query_from_arguments,
)
from hand_estimator import HandEstimator

EST = HandEstimator()
FAILURE = (
    "collected 12 items\n\n"
    "tests/test_parser.py ..F\n\n"
    "    def test_precedence():\n"
    ">       assert parse('1+2*3') == 9\n"
    "E       AssertionError: assert 7 == 9\n\n"
    "tests/test_parser.py:41: AssertionError\n"
    "1 failed, 11 passed in 0.12s"
)


def bash(cid: str, command: str, output: str) -> list[Message]:
    call = ToolCallPart(cid, "Bash", json.dumps({"command": command}))
    return [
        Message("assistant", (call,)),
        Message("tool", (ToolResultPart(cid, (TextPart(output),)),)),
    ]


def read(cid: str, path: str, content: str) -> list[Message]:
    call = ToolCallPart(cid, "Read", json.dumps({"file_path": path}))
    return [
        Message("assistant", (call,)),
        Message("tool", (ToolResultPart(cid, (TextPart(content),)),)),
    ]


def long_session() -> Session:
    """A session whose test failure (entry 4) lies before five compactions."""
    s = Session(4_000, estimator=EST)
    s.append(user("Fix the parser's precedence bug."))
    for m in read("r1", "src/parser.py", "def parse(s):\n    return eval_left_to_right(s)\n"):
        s.append(m)
    for m in bash("b1", "pytest -q", FAILURE):
        s.append(m)
    for k in range(5):
        for n in range(6):
            s.append(user(f"step {k}.{n}: " + "more work " * 30))
            s.append(assistant(f"done {k}.{n}: " + "worked on it " * 30))
        s.compact()
    return s


class TestRecallAfterCompactions:
    def test_an_exact_error_line_from_before_five_compactions(self) -> None:
        s = long_session()
        assert [e.kind for e in s.entries].count("compaction") == 5
        # The state keeps the error line; the assertion above it is gone from the context.
        assert any("AssertionError: assert 7 == 9" in m.text for m in s.project().messages)
        assert all("assert parse('1+2*3')" not in m.text for m in s.project().messages)
        result = s.recall("AssertionError: assert 7 == 9")
        assert result.matched == 1
        (hit,) = result.hits
        assert (hit.entry_id, hit.seq) == (s.entries[4].id, 4)
        assert (hit.kind, hit.tool, hit.call_id, hit.line) == ("tool_result", "Bash", "b1", 7)
        assert hit.excerpt == (
            "5:     def test_precedence():\n"
            "6: >       assert parse('1+2*3') == 9\n"
            "7: E       AssertionError: assert 7 == 9\n"
            "8: \n"
            "9: tests/test_parser.py:41: AssertionError"
        )
        assert hit.tokens == EST.text(hit.excerpt)
        assert hit.label() == f"{s.entries[4].id} · seq 4 · tool result of Bash"

    def test_filters_by_path_tool_role_and_range(self) -> None:
        s = long_session()
        by_path = s.recall(RecallQuery(path="src/parser.py"))
        assert [(h.seq, h.kind) for h in by_path.hits] == [(2, "tool_result"), (1, "tool_call")]
        by_tool = s.recall(RecallQuery(tool="Bash"))
        assert [(h.seq, h.kind) for h in by_tool.hits] == [(4, "tool_result"), (3, "tool_call")]
        assert by_tool.hits[1].excerpt == "1: Bash\n2: command: pytest -q"
        users = s.recall(RecallQuery(text="step 1.", role="user", first_seq=20, last_seq=24))
        assert [h.seq for h in users.hits] == [24, 22, 20]
        oldest = s.recall(RecallQuery(text="step 1.", role="user"), newest_first=False)
        assert [h.seq for h in oldest.hits][:2] == [18, 20]

    def test_a_regular_expression_and_case(self) -> None:
        s = long_session()
        hits = s.recall(RecallQuery(text=r"assert \d+ == \d+", regex=True)).hits
        assert [(h.seq, h.line) for h in hits] == [(4, 7)]
        assert s.recall(RecallQuery(text="assertionerror: ASSERT 7")).matched == 1
        assert s.recall(RecallQuery(text="assertionerror", case_sensitive=True)).matched == 0
        with pytest.raises(ConfigError, match=r"invalid regular expression '\('"):
            s.recall(RecallQuery(text="(", regex=True))
        with pytest.raises(
            ConfigError, match="give a text, a path, a tool, a role, an entry or a range"
        ):
            s.recall("")

    def test_the_continuation_states_are_searched_too(self) -> None:
        s = long_session()
        query = RecallQuery(text="Fix the parser's precedence bug.")
        assert [(h.seq, h.kind) for h in s.recall(query).hits] == [(0, "message")]
        hits = s.recall(RecallQuery(text=query.text, summaries=True)).hits
        kinds = [h.kind for h in hits]
        assert kinds.count("summary") == 5 and kinds[-1] == "message"


class TestBudget:
    def test_hits_fill_the_budget_newest_first_and_the_rest_are_counted(self) -> None:
        s = Session(100_000, estimator=EST)
        for n in range(10):
            s.append(user(f"note {n}: the cache key is K{n}"))
        # Each excerpt is "1: note N: the cache key is KN" (31 characters: 8 tokens).
        result = s.recall("cache key", budget=20)
        assert [h.seq for h in result.hits] == [9, 8]
        assert [h.tokens for h in result.hits] == [8, 8]
        assert (result.matched, result.more, result.tokens) == (10, 8, 16)
        # The first hit is shown even when it alone is over the budget (cut at a line).
        big = Session(100_000, estimator=EST)
        big.append(user("\n".join(f"line {i} needle" for i in range(40))))
        (hit,) = big.recall("needle", budget=10, newest_first=True).hits
        assert hit.excerpt.splitlines()[0] == "1: line 0 needle"
        assert hit.tokens <= 10

    def test_a_long_line_is_clipped_around_its_match(self) -> None:
        s = Session(100_000, estimator=EST)
        s.append(user("x" * 1_000 + "NEEDLE" + "y" * 1_000))
        (hit,) = s.recall("needle").hits
        line = hit.excerpt.removeprefix("1: ")
        assert line.startswith("…") and line.endswith("…") and "NEEDLE" in line
        assert len(line) == 400 + 2


class TestIndex:
    def test_update_indexes_only_new_entries_and_skips_withdrawn_ones(self) -> None:
        entries = [
            Entry("a", "s", 0, user("alpha")),
            Entry("b", "s", 1, assistant("beta")),
            Entry("c", "s", 2, CompactionRecord("state: alpha", "b", 10, 5, "p", "extractive")),
        ]
        index = HistoryIndex(EST)
        assert index.update(entries) == 3 and index.entries_seen == 3
        assert index.update(entries) == 0
        more = [*entries, Entry("d", "s", 3, user("alpha again"))]
        assert index.update(more, hidden={0}) == 1
        # "a" was indexed before it was withdrawn: an index only grows (a session rebuilds
        # its index when entries are withdrawn).
        assert [h.entry_id for h in index.search(RecallQuery(text="alpha")).hits] == ["d", "a"]
        with_states = RecallQuery(text="alpha", summaries=True)
        assert [h.entry_id for h in index.search(with_states).hits] == ["d", "c", "a"]

    def test_a_session_does_not_find_what_a_supersede_record_withdrew(self) -> None:
        s = Session(100_000, estimator=EST)
        s.append(user("first draft: beta"), entry_id="x1")
        assert s.recall("beta").matched == 1
        s.append(SupersedeRecord(("x1",), "re-imported"))
        s.append(user("second draft: gamma"))
        assert s.recall("beta").matched == 0
        assert s.recall("gamma").matched == 1


class TestTool:
    def test_the_definition_is_a_plain_json_schema_tool(self) -> None:
        assert RECALL_TOOL["name"] == "recall"
        assert json.loads(json.dumps(RECALL_TOOL)) == RECALL_TOOL
        assert RECALL_TOOL["parameters"]["additionalProperties"] is False

    def test_arguments_become_a_query_and_a_capped_budget(self) -> None:
        q, budget = query_from_arguments('{"query": "E501", "tool": "Bash", "max_tokens": 500}')
        assert (q.text, q.tool, q.regex, budget) == ("E501", "Bash", False, 500)
        assert query_from_arguments({"path": "a.py", "max_tokens": 10**6})[1] == 4_000
        assert query_from_arguments({"from_seq": 3, "to_seq": 9})[0].first_seq == 3

    @pytest.mark.parametrize(
        ("arguments", "message"),
        [
            ("{", "recall: arguments are not JSON"),
            ("[1]", "recall: arguments must be a JSON object"),
            ('{"q": "x"}', "recall: unknown field 'q'; expected one of"),
            ('{"query": 3}', "recall: field 'query' must be str, got 3"),
            ('{"from_seq": true}', "recall: field 'from_seq' must be int, got True"),
            ("{}", "recall: give a query, a path, a tool, an entry or an entry range"),
        ],
    )
    def test_bad_arguments_name_the_field(self, arguments: str, message: str) -> None:
        with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
            query_from_arguments(arguments)

    def test_the_answer_a_session_gives_the_agent(self) -> None:
        s = Session(100_000, estimator=EST)
        for m in bash("b1", "pytest -q", FAILURE):
            s.append(m)
        text, is_error = s.run_recall_tool('{"query": "1 failed"}')
        assert not is_error
        assert text == (
            "1 match for '1 failed' (newest first; 1 shown, 20 tokens):\n\n"
            "[" + s.entries[1].id + " · seq 1 · tool result of Bash] line 10:\n"
            "8: \n"
            "9: tests/test_parser.py:41: AssertionError\n"
            "10: 1 failed, 11 passed in 0.12s"
        )
        assert s.run_recall_tool('{"query": "nothing like this"}') == (
            "No entry of the history matches 'nothing like this'.",
            False,
        )
        assert s.run_recall_tool('{"regex": true}') == (
            "recall: give a query, a path, a tool, an entry or an entry range",
            True,
        )

    def test_more_matches_than_the_budget_say_how_to_narrow(self) -> None:
        index = HistoryIndex(EST)
        index.update([Entry(f"e{n}", "s", n, user(f"retry {n}")) for n in range(3)])
        text = format_result(index.search(RecallQuery(text="retry"), budget=4))
        assert text == (
            "3 matches for 'retry' (newest first; 1 shown, 3 tokens):\n\n"
            "[e2 · seq 2 · user message] line 1:\n1: retry 2\n\n"
            "2 more not shown (budget 4 tokens): narrow the query (a longer text, a regex, "
            "a path, a tool or an entry range)."
        )


class TestContinuationState:
    def test_the_state_says_the_tool_exists_when_the_agent_has_it(self) -> None:
        for tools, said in (([RECALL_TOOL], True), ([], False)):
            s = Session(4_000, estimator=EST, tools=tools)
            for n in range(8):
                s.append(user(f"step {n}: " + "more work " * 30))
                s.append(assistant(f"done {n}: " + "worked on it " * 30))
            ctx = s.compact().context
            state = next(m.text for m in ctx.messages if "<continuation-state>" in m.text)
            assert state.endswith("\n\n" + RECALL_NOTE) is said
        assert RECALL_NOTE.startswith("Everything before this point is still kept word for word")
        assert "call the `recall` tool" in RECALL_NOTE

    def test_an_agent_calls_the_tool_and_gets_the_line_back(self) -> None:
        s = long_session()
        call = ToolCallPart("k1", "recall", json.dumps({"query": "assert parse("}))
        s.append(Message("assistant", (call,)))
        text, is_error = s.run_recall_tool(call.arguments)
        assert not is_error
        assert "6: >       assert parse('1+2*3') == 9" in text
        s.append(Message("tool", (ToolResultPart("k1", (TextPart(text),)),)))
        assert s.project().messages[-1].tool_results[0].content[0] == TextPart(text)


def test_code_passed_to_an_edit_is_found_and_shown_line_by_line() -> None:
    arguments = {"file_path": "src/parser.py", "old_string": "x", "new_string": "a = 1\nb = 2\n"}
    s = Session(100_000, estimator=EST)
    s.append(Message("assistant", (ToolCallPart("c1", "Edit", json.dumps(arguments)),)))
    (hit,) = s.recall("b = 2").hits
    assert (hit.kind, hit.line) == ("tool_call", 6)
    assert hit.excerpt == "4: new_string:\n5: a = 1\n6: b = 2\n7: "
    assert s.recall(RecallQuery(path="SRC/PARSER.PY")).hits[0].entry_id == hit.entry_id


class TestReviewFixes:
    def test_recall_does_not_find_its_own_calls_and_answers(self) -> None:
        s = Session(100_000, estimator=EST)
        s.append(user("the build failed with UNIQUE_BOOM"))
        for n in range(3):
            arguments = json.dumps({"query": "UNIQUE_BOOM"})
            s.append(Message("assistant", (ToolCallPart(f"k{n}", "recall", arguments),)))
            text, _ = s.run_recall_tool(arguments)
            s.append(Message("tool", (ToolResultPart(f"k{n}", (TextPart(text),)),)))
            assert text.startswith("1 match for 'UNIQUE_BOOM'")

    def test_an_entry_is_read_whole_page_by_page(self) -> None:
        s = Session(100_000, estimator=EST)
        output = "\n".join(f"line {i}: " + "x" * 30 for i in range(1, 41))
        for m in bash("b1", "pytest", output):
            s.append(m)
        entry = s.entries[1].id
        first = s.recall(RecallQuery(entry_id=entry), budget=60)
        (hit,) = first.hits
        lines = hit.excerpt.splitlines()
        assert lines[0] == "1: line 1: " + "x" * 30
        n = len(lines) - 1  # the last line says where to go on
        assert lines[-1] == f"… lines {n + 1}–40 not shown: ask again with from_line {n + 1}"
        assert hit.next_line == n + 1
        rest = s.recall(RecallQuery(entry_id=entry, from_line=n + 1), budget=4_000).hits[0]
        assert rest.excerpt.splitlines()[0] == f"{n + 1}: line {n + 1}: " + "x" * 30
        assert rest.excerpt.splitlines()[-1] == "40: line 40: " + "x" * 30
        assert rest.next_line is None
        # A range without a text shows whole documents too (not three lines of each).
        ranged = s.recall(RecallQuery(first_seq=1, last_seq=1)).hits[0]
        assert ranged.excerpt == rest.excerpt.replace(rest.excerpt, ranged.excerpt)
        assert len(ranged.excerpt.splitlines()) == 40

    def test_a_pasted_paragraph_on_one_line_is_read_whole_in_pieces_of_400(self) -> None:
        s = Session(100_000, estimator=EST)
        paragraph = " ".join(f"word{i:04d}" for i in range(100))  # 999 characters, one line
        s.append(user("Keep this in mind:\n" + paragraph))
        entry = s.entries[0].id
        first = s.recall(RecallQuery(entry_id=entry), budget=120).hits[0]
        assert first.excerpt.splitlines() == [
            "1: Keep this in mind:",
            "2: " + paragraph[:400],
            "… lines 3–4 not shown: ask again with from_line 3",
        ]
        assert first.next_line == 3
        rest = s.recall(RecallQuery(entry_id=entry, from_line=3), budget=4_000).hits[0]
        assert rest.excerpt.splitlines() == ["3: " + paragraph[400:800], "4: " + paragraph[800:]]

    @pytest.mark.parametrize(
        ("arguments", "message"),
        [
            ('{"query": "a{99999999999}", "regex": true}', "recall: invalid regular expression"),
            ('{"query": "x", "max_tokens": 0}', "recall: field 'max_tokens' must be at least 1"),
            ('{"entry": "e1", "from_line": 0}', "recall: field 'from_line' must be at least 1"),
            (
                '{"from_seq": 10, "to_seq": 5}',
                "recall: the entry range 10..5 is empty (from_seq is after to_seq)",
            ),
        ],
    )
    def test_bad_arguments_are_an_error_for_the_agent(self, arguments: str, message: str) -> None:
        s = Session(100_000, estimator=EST)
        s.append(user("hello"))
        text, is_error = s.run_recall_tool(arguments)
        assert is_error and text.startswith(message)
