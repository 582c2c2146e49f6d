"""``TiktokenCounter``: exact counts through tiktoken where it and the encoding files are
available (skipped otherwise, saying why), and a clear error naming the extra without it."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from test_token_estimate import CHINESE, PROSE, REFERENCE, SCRIPTS

from ctxengine.engine import Session
from ctxengine.errors import ConfigError
from ctxengine.model import ImagePart, ToolCallPart, Usage, assistant, system, user
from ctxengine.tokens import Estimator, HeuristicEstimator, TiktokenCounter
from ctxengine.tokens.exact import load_encoding
from tiktoken_files import encodings_dir, skip_reason

needs_encodings = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.fixture
def cache_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``TIKTOKEN_CACHE_DIR`` set to the folder holding the encodings, for this test only."""
    folder = encodings_dir()
    assert folder is not None
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    yield


def test_without_tiktoken_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import tiktoken raises ImportError
    with pytest.raises(ConfigError, match=r"pip install 'ctxengine\[tiktoken\]'"):
        TiktokenCounter()


@needs_encodings
@pytest.mark.usefixtures("cache_dir")
class TestCounts:
    def test_is_an_estimator_with_exact_text_counts(self) -> None:
        o200k, cl100k = TiktokenCounter("o200k_base"), TiktokenCounter("cl100k_base")
        assert isinstance(o200k, Estimator)
        assert (o200k.encoding_name, repr(cl100k)) == (
            "o200k_base",
            "TiktokenCounter('cl100k_base')",
        )
        assert (o200k.text(PROSE), cl100k.text(PROSE)) == (77, 77)
        chinese = (CHINESE * 80)[:3000]
        assert (o200k.text(chinese), cl100k.text(chinese)) == (1_976, 2_852)
        assert (o200k.text(SCRIPTS["greek"]), cl100k.text(SCRIPTS["greek"])) == (57, 149)
        assert o200k.text("") == 0
        assert o200k.text("<|endoftext|>") == 7  # special-token text counts as text

    def test_the_counts_the_estimator_tests_pin_are_the_encodings(self) -> None:
        o200k, cl100k = TiktokenCounter("o200k_base"), TiktokenCounter("cl100k_base")
        for text, counts in REFERENCE.items():
            assert (o200k.text(text), cl100k.text(text)) == counts, text[:40]
        cjk = "代理在修改任何文件之前先阅读失败的测试。"  # TestTokenizerProfiles
        assert (o200k.text(cjk), cl100k.text(cjk)) == (12, 17)

    def test_the_fallback_is_calibrated_for_the_encoding(self) -> None:
        assert TiktokenCounter("o200k_base").encoding == "o200k_base"
        assert TiktokenCounter("cl100k_base").encoding == "cl100k_base"
        import tiktoken

        o200k = load_encoding("o200k_base")
        other = tiktoken.Encoding(
            "o200k_copy",
            pat_str=o200k._pat_str,
            mergeable_ranks=o200k._mergeable_ranks,
            special_tokens={},
        )
        assert TiktokenCounter(other).encoding is None  # an encoding with no rates of its own

    def test_framing_images_and_schemas_are_priced_as_the_heuristic_prices_them(self) -> None:
        exact, heuristic = TiktokenCounter(), HeuristicEstimator(encoding="o200k_base")
        assert exact.message(user(PROSE)) == 4 + 77
        call = ToolCallPart("c1", "read", '{"path":"a.py"}')
        assert exact.message(assistant("ok", call)) == 4 + 1 + 8 + 1 + 6
        # an OpenAI encoding prices images by OpenAI's rule: 1,920 × 1,080 is scaled to
        # 1,365 × 768, 3 × 2 tiles of 512 px: 85 + 6 × 170 (Anthropic's rule: 1,532)
        shot = ImagePart("image/png", width=1920, height=1080)
        assert exact.part(shot) == heuristic.part(shot) == 2 + 1_105
        assert HeuristicEstimator().part(shot) == 2 + 1_532
        assert exact.tools([]) == 0

    def test_an_encoding_object_is_accepted(self) -> None:
        encoding = load_encoding("cl100k_base")
        assert TiktokenCounter(encoding).text(SCRIPTS["hebrew"]) == 138

    def test_an_unknown_encoding_is_refused_with_the_known_ones(self) -> None:
        with pytest.raises(ConfigError, match=r"unknown tiktoken encoding 'o300k'.*o200k_base"):
            TiktokenCounter("o300k")

    def test_a_session_counts_with_it(self) -> None:
        counter = TiktokenCounter("o200k_base")
        s = Session(100_000, estimator=counter)
        s.append(system("You are a careful coding agent."))
        s.append(user(PROSE))
        ctx = s.prepare()
        assert ctx.tokens == (4 + counter.text("You are a careful coding agent.")) + (4 + 77)
        s.record(assistant("Reading.", usage=Usage(input_tokens=90, output_tokens=3)))
        s.append(user(PROSE))
        assert s.context_tokens(s.project()) == 93 + 4 + 77
