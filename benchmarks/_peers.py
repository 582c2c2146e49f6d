"""Published figures of other compaction libraries, quoted beside ctxengine's by
``peers_measure.py``.

Every number below is copied from ``../shared/reference/peers-measured.md`` (measured on
2026-11-29: langchain 1.5.2 / langchain-core 1.8.3, strands-agents 1.62.0, openhands-sdk
1.58.2; the same three transcripts, one request per assistant turn, B = 4k…64k, tokens by
``langchain_core.messages.utils.count_tokens_approximately``). Section numbers refer to that
file. Nothing here is measured by this repository.
"""

from __future__ import annotations

#: §3 "Inputs and conversion": transcript → (messages, requests, tokens of the largest
#: request, requests over 4k/8k/16k/32k/64k).
INPUTS: dict[str, tuple[int, int, int, tuple[int, ...]]] = {
    "django": (313, 156, 87_609, (149, 139, 123, 84, 44)),
    "pvlib": (10, 5, 4_515, (1, 0, 0, 0, 0)),
    "marshmallow": (28, 13, 7_683, (10, 0, 0, 0, 0)),
}

#: §5.1 first table: library / setting, library calls, invalid % (all), invalid % (history
#: > B), error kinds, over B % (history > B), task verbatim % (all / history > B), last input
#: kept %, system kept %.
VALIDITY: tuple[tuple[str, ...], ...] = (
    ("langchain / trim_default", "870", "62.9", "99.5",
     "no_user_message 547, orphan_tool_result 339", "0.0", "37.1 / 0.5", "100.0", "36.8"),
    ("langchain / trim_safe", "870", "63.2", "100.0", "no_user_message 550", "0.0",
     "36.8 / 0.0", "36.8", "100.0"),
    ("langchain / summarization_stateless", "870", "0.0", "0.0", "none", "27.6",
     "38.0 / 2.0", "100.0", "38.0"),
    ("langchain / summarization_agentloop", "870", "0.0", "0.0", "none", "28.5",
     "38.2 / 2.2", "100.0", "100.0"),
    ("strands / window_stateless", "870", "64.9", "98.7", "no_user_message 565", "1.1",
     "35.1 / 1.3", "100.0", "100.0"),
    ("strands / window_per_turn_loop", "870", "64.9", "98.7", "no_user_message 565", "1.1",
     "35.1 / 1.3", "100.0", "100.0"),
    ("strands / window_pin1_stateless", "870", "0.0", "0.0", "none", "7.1",
     "100.0 / 100.0", "100.0", "100.0"),
    ("strands / window_pin1_per_turn_loop", "870", "0.0", "0.0", "none", "7.1",
     "100.0 / 100.0", "100.0", "100.0"),
    ("strands / default_overflow_driven", "870", "50.8", "80.4", "no_user_message 442", "0.0",
     "49.2 / 19.6", "100.0", "100.0"),
    ("openhands / default_condenser", "174", "0.0", "0.0", "none", "68.2",
     "100.0 / 100.0", "100.0", "100.0"),
    ("openhands / max_tokens_B", "870", "0.0", "0.0", "none", "13.1",
     "100.0 / 100.0", "97.2", "100.0"),
)  # fmt: skip

#: §5.1 "Output sizes" (out/B for history > B): setting, median, p95, max.
SIZES: tuple[tuple[str, str, str, str], ...] = (
    ("trim_default", "0.97", "1.00", "1.00"),
    ("trim_safe", "0.00", "0.01", "0.11"),
    ("summarization_stateless", "0.55", "1.84", "2.95"),
    ("summarization_agentloop", "0.84", "1.85", "2.96"),
    ("Strands window", "0.42", "0.67", "1.16"),
    ("Strands window + pin1", "0.59", "1.05", "1.41"),
    ("Strands overflow-driven", "0.84", "0.99", "1.00"),
    ("OpenHands default", "1.50", "5.59", "8.08"),
    ("OpenHands max_tokens_B", "0.77", "1.05", "1.14"),
)

#: §5.1 "By budget": invalid % / task kept verbatim % at B = 4k, 8k, 16k, 32k, 64k.
BY_BUDGET: tuple[tuple[str, ...], ...] = (
    ("langchain / trim_default", "90.8 / 9.2", "79.9 / 20.1", "70.7 / 29.3", "47.7 / 52.3",
     "25.3 / 74.7"),
    ("langchain / trim_safe", "92.0 / 8.0", "79.9 / 20.1", "70.7 / 29.3", "48.3 / 51.7",
     "25.3 / 74.7"),
    ("langchain / summarization_stateless", "0.0 / 14.4", "0.0 / 20.1", "0.0 / 29.3",
     "0.0 / 51.7", "0.0 / 74.7"),
    ("langchain / summarization_agentloop", "0.0 / 14.4", "0.0 / 20.1", "0.0 / 29.3",
     "0.0 / 52.3", "0.0 / 74.7"),
    ("strands / window (both variants)", "89.1 / 10.9", "81.6 / 18.4", "73.0 / 27.0",
     "56.9 / 43.1", "24.1 / 75.9"),
    ("strands / window_pin1 (both)", "0.0 / 100", "0.0 / 100", "0.0 / 100", "0.0 / 100",
     "0.0 / 100"),
    ("strands / default_overflow_driven", "90.8 / 9.2", "79.9 / 20.1", "60.3 / 39.7",
     "23.0 / 77.0", "0.0 / 100"),
    ("openhands / default_condenser", "0.0 / 100", "0.0 / 100", "0.0 / 100", "0.0 / 100",
     "0.0 / 100"),
    ("openhands / max_tokens_B", "0.0 / 100", "0.0 / 100", "0.0 / 100", "0.0 / 100",
     "0.0 / 100"),
)  # fmt: skip

#: §5.3 "Time per call": setting, median ms, p95 ms, max ms, median ms by input size
#: (<8k / 8–16k / 16–32k / 32–64k / ≥64k tokens).
TIMES: tuple[tuple[str, ...], ...] = (
    ("langchain / trim_default", "0.881", "6.50", "9.4",
     "0.054 / 0.159 / 0.626 / 1.890 / 3.610"),
    ("langchain / trim_safe", "0.870", "6.83", "10.0", "0.056 / 0.165 / 0.651 / 1.899 / 3.585"),
    ("langchain / summarization_stateless", "1.816", "5.60", "10.8",
     "0.072 / 0.333 / 1.515 / 2.880 / 5.289"),
    ("langchain / summarization_agentloop", "0.209", "0.85", "3.2",
     "0.038 / 0.109 / 0.209 / 0.507 / 0.357"),
    ("strands / window_stateless", "0.074", "0.24", "0.50",
     "0.001 / 0.002 / 0.059 / 0.123 / 0.196"),
    ("strands / window_per_turn_loop", "0.015", "0.08", "0.11",
     "0.001 / 0.001 / 0.014 / 0.020 / 0.029"),
    ("strands / window_pin1_stateless", "0.079", "0.24", "0.45",
     "0.001 / 0.001 / 0.060 / 0.124 / 0.204"),
    ("strands / window_pin1_per_turn_loop", "0.018", "0.08", "0.23",
     "0.001 / 0.002 / 0.017 / 0.020 / 0.029"),
    ("strands / default_overflow_driven (reduce_context only)", "0.000", "0.05", "0.26",
     "≈0 in every bucket"),
    ("openhands / default_condenser (174 calls)", "0.026", "0.03", "4.4",
     "0.014 / 0.020 / 0.024 / 0.028 / 0.029"),
    ("openhands / max_tokens_B", "4.793", "27.3", "244", "2.068 / 5.166 / 7.474 / 7.636 / 7.249"),
)  # fmt: skip
