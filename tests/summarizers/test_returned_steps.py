"""Calls of tools that neither run commands nor touch files (a query, a fetch, a subagent)
are done steps that name the call and the first line of its result, so that what they found
stays in the continuation state while it has room."""

from __future__ import annotations

from dataclasses import replace

from summarizer_helpers import QuarterEstimator, call, calls, results

from ctxengine.model import Ledgers, Message, user
from ctxengine.policy.defaults import RETURNED_STEPS_KEPT
from ctxengine.projection.wording import CHINESE_FACTS
from ctxengine.summarizers.anchor import carry
from ctxengine.summarizers.base import SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.fact_items import done_line
from ctxengine.summarizers.ledgers import extract_ledgers

SQL = "SELECT price, stock FROM skus WHERE id = 'SKU-1000'"


def _history() -> list[Message]:
    return [
        user("Find the price of SKU-1000 and write the report."),
        calls(
            call("q", "query_db", sql=SQL),
            call("f", "web_fetch", url="https://supplier.example.com/sku/SKU-1000"),
            call("g", "Grep", pattern="SKU-1000"),
            call("t", "TodoWrite", todos="[]"),
            call("k", "KillShell", shell_id="bash_2"),
            call("s", "submit"),
        ),
        results(
            ("q", '{"rows": [{"price": 10.0, "stock": 0}]}\n' + "padding row " * 50),
            ("f", "\n\nSupplier price for SKU-1000: EUR 12.00, lead time 2 days.\n<div>x</div>"),
            ("g", "src/a.py:3: SKU-1000"),
            ("t", "Todos have been modified successfully."),
            ("k", "Killed: bash_2"),
            ("s", "diff --git a/x b/x"),
        ),
    ]


def test_a_query_and_a_fetch_are_done_steps_with_their_first_result_line() -> None:
    done = extract_ledgers(_history()).done
    assert done == (
        f"`query_db({SQL})` returned: " + '{"rows": [{"price": 10.0, "stock": 0}]}',
        "`web_fetch(https://supplier.example.com/sku/SKU-1000)` returned: Supplier price for "
        "SKU-1000: EUR 12.00, lead time 2 days.",
    )


def test_long_arguments_and_results_are_clipped() -> None:
    history = [
        user("Look it up."),
        calls(call("a", "lookup", query="x" * 100)),
        results(("a", "y" * 300)),
    ]
    (step,) = extract_ledgers(history).done
    assert step == f"`lookup({'x' * 79}…)` returned: {'y' * 199}…"


def test_a_returned_step_is_written_in_the_states_language() -> None:
    step = "`query_db(SELECT 1)` returned: 1"
    assert done_line(step) == step
    assert done_line(step, CHINESE_FACTS) == "`query_db(SELECT 1)` 返回：1"


def test_the_ledgers_carry_the_newest_returned_steps_only() -> None:
    older = tuple(f"`lookup({k})` returned: {k}" for k in range(RETURNED_STEPS_KEPT))
    anchor = Ledgers(done=("ran `make` (succeeded)", *older))
    new = Ledgers(done=("`lookup(new)` returned: new",))
    assert carry(anchor, new).done == ("ran `make` (succeeded)", *older[1:], new.done[0])
    assert carry(replace(anchor, done=older[:3]), new).done == (*older[:3], new.done[0])


def test_the_state_shows_them_under_done() -> None:
    request = SummaryRequest(tuple(_history()), None, "", 2_000)
    text = ExtractiveSummarizer(user_messages_budget=200).summarize(request, QuarterEstimator())
    done = text.text.split("## Done\n", 1)[1].split("\n\n", 1)[0]
    assert done.splitlines() == [
        f"- `query_db({SQL})` returned: " + '{"rows": [{"price": 10.0, "stock": 0}]}',
        "- `web_fetch(https://supplier.example.com/sku/SKU-1000)` returned: Supplier price for "
        "SKU-1000: EUR 12.00, lead time 2 days.",
    ]
