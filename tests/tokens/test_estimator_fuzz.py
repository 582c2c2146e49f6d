"""The estimator never raises and never returns 0 for non-empty content that a request
carries (hypothesis)."""

from __future__ import annotations

import itertools
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.carriage import carried_anywhere
from ctxengine.tokens import HeuristicEstimator
from ctxengine.tokens.estimate import _CODES, _bits, _blob_spans, _latin1

EST = HeuristicEstimator()
B64 = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_", max_size=300
)
TEXTS = st.one_of(
    st.text(max_size=300), B64, st.builds(lambda a, b: a + b, st.text(max_size=50), B64)
)
SIZES = st.one_of(st.none(), st.integers(-10, 100_000))

text_parts = st.builds(TextPart, TEXTS)
images = st.builds(
    ImagePart,
    st.text(max_size=20),
    data=st.one_of(st.none(), TEXTS),
    url=st.one_of(st.none(), st.text(max_size=30)),
    byte_size=SIZES,
    width=SIZES,
    height=SIZES,
)
documents = st.builds(
    DocumentPart,
    st.sampled_from(["application/pdf", "text/plain", ""]),
    title=st.one_of(st.none(), st.text(max_size=20)),
    text=st.one_of(st.none(), TEXTS),
    data=st.one_of(st.none(), B64),
    byte_size=SIZES,
)
content = st.one_of(text_parts, images, documents)
parts: st.SearchStrategy[Part] = st.one_of(
    text_parts,
    images,
    documents,
    st.builds(ToolCallPart, st.text(max_size=10), st.text(max_size=20), TEXTS),
    st.builds(
        ToolResultPart,
        st.text(max_size=10),
        st.lists(content, max_size=3).map(tuple),
        is_error=st.booleans(),
    ),
    st.builds(
        ReasoningPart,
        TEXTS,
        signature=st.one_of(st.none(), B64),
        redacted=st.booleans(),
    ),
    st.builds(NativeCompactionPart, st.sampled_from(["anthropic", "openai", ""]), TEXTS),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)),
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=20,
)


def non_empty(part: Part) -> bool:
    """Not empty text, and carried by a rendered request (reasoning and native compaction
    that no request carries cost 0)."""
    return not (isinstance(part, TextPart) and part.text == "") and carried_anywhere(part)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_text_is_positive_for_non_empty_strings(text: str) -> None:
    n = EST.text(text)
    assert isinstance(n, int)
    assert (n >= 1) if text else (n == 0)


@settings(max_examples=300, deadline=None)
@given(parts)
def test_every_non_empty_part_costs_at_least_one(part: Part) -> None:
    n = EST.part(part)
    assert isinstance(n, int)
    assert n >= 1 if non_empty(part) else n == 0


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
    st.lists(parts, max_size=4),
)
def test_messages_cost_overhead_plus_parts(role: Any, items: list[Part]) -> None:
    msg = Message(role, tuple(items))
    assert EST.message(msg) == 4 + sum(EST.part(p) for p in items)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=8), json_values, max_size=5), max_size=4))
def test_tool_schemas_never_raise(schemas: list[dict[str, Any]]) -> None:
    n = EST.tools(schemas)
    assert n == 0 if not schemas else n >= 300 + 8 * len(schemas)


def test_text_of_wrong_type_does_not_raise() -> None:
    assert EST.text(12345) == 2  # type: ignore[arg-type]
    assert EST.part("not a part") == 3  # type: ignore[arg-type]


_RUN = re.compile(r"[A-Za-z0-9+/_=-]+")


def reference_spans(text: str) -> list[tuple[int, int]]:
    """Blob spans by a plain regex over the string (slow, obviously right)."""
    spans = set()
    for m in _RUN.finditer(text):
        s, e = m.span()
        head = m.group()[:256]
        after_data_url = text[:s].endswith(";base64,")
        letters = sum(c.isascii() and c.isalpha() for c in head)
        pairs = [a + b for a, b in itertools.pairwise(head)]
        lower_upper = sum(p[0].islower() and p[1].isupper() for p in pairs)
        upper_upper = sum(p[0].isupper() and p[1].isupper() for p in pairs)
        cased = letters > 0 and 12 * min(lower_upper, upper_upper) >= letters
        run = m.group()
        digits = sum(c in "0123456789" for c in run)
        classes = [
            "l" if c.islower() else "u" if c.isupper() else "d" if c.isdigit() else "o" for c in run
        ]
        # runs of one class of letters or digits (a symbol ends a run and starts none)
        segments = sum(c != "o" and (i == 0 or classes[i - 1] != c) for i, c in enumerate(classes))
        alnum = sum(c != "o" for c in classes)
        key = (
            20 <= e - s < 64
            and digits >= 2
            and any(c.islower() for c in run)
            and any(c.isupper() for c in run)
            and (segments >= 0.52 * alnum or cased)
        )
        if after_data_url or (e - s >= 64 and cased) or key:
            spans.add((s, e))
    return sorted(spans)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            B64, st.text(max_size=20), st.just(";base64,"), st.just("data:image/png;base64,")
        ),
        max_size=8,
    ).map("".join)
)
def test_blob_search_matches_a_plain_regex(text: str) -> None:
    assert _blob_spans(_latin1(text)) == reference_spans(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.integers(1, 9))
def test_codes_read_in_chunks_count_the_same_bits_as_read_whole(text: str, chunk: int) -> None:
    codes = _latin1(text).translate(_CODES)
    whole = int.from_bytes(codes, "big")
    expected = (whole.bit_count() - (whole & (whole >> 8)).bit_count(), whole.bit_count())
    assert _bits(codes, chunk=chunk) == _bits(codes) == expected
