"""How reports name what counted their tokens (``counter_name``)."""

from __future__ import annotations

import sys

import pytest

from ctxengine.tokens import HeuristicEstimator, TiktokenCounter
from ctxengine.tokens.cache import CachingEstimator
from ctxengine.tokens.names import DEFAULT_COUNTER, counter_name
from hand_estimator import HandEstimator
from tiktoken_files import encodings_dir, skip_reason


def test_estimates_are_named_by_their_calibration() -> None:
    assert DEFAULT_COUNTER == "estimate"
    assert counter_name(None) == "estimate"
    assert counter_name(HeuristicEstimator()) == "estimate"
    assert counter_name(HeuristicEstimator(encoding="o200k_base")) == "estimate:o200k_base"
    cached = CachingEstimator(CachingEstimator(HeuristicEstimator(encoding="cl100k_base")))
    assert counter_name(cached) == "estimate:cl100k_base"
    assert counter_name(HandEstimator()) == "HandEstimator"


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_an_exact_counter_is_named_by_its_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(encodings_dir()))
    assert counter_name(TiktokenCounter("cl100k_base")) == "exact:cl100k_base"
    assert counter_name(CachingEstimator(TiktokenCounter("o200k_base"))) == "exact:o200k_base"


def test_naming_never_imports_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    assert counter_name(HeuristicEstimator(encoding="o200k_base")) == "estimate:o200k_base"
