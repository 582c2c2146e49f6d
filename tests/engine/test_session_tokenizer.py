"""A session's default estimator is calibrated for its model's tokenizer: from the profile it
is given, and again each time its profile changes (``complete`` sets the called model's);
an estimator given to it is kept."""

from __future__ import annotations

import math

from ctxengine.engine import Session
from ctxengine.engine.stateless import _kind
from ctxengine.model import Usage, assistant, user
from ctxengine.providers.profiles import ModelProfile, ProfileTable
from ctxengine.tokens import Estimator, HeuristicEstimator, UsageCorrection
from hand_estimator import HandEstimator

#: 20 wide-script characters: 23 tokens by the default estimate (cl100k_base counts 17), 16
#: by the one for o200k_base (which counts 12); tests/tokens/test_token_estimate.py derives
#: both from the constants. Its message adds 4.
CJK = "代理在修改任何文件之前先阅读失败的测试。"


def shipped(model: str) -> ModelProfile:
    found = ProfileTable.builtin().lookup(model)
    assert found is not None
    return found


def session(profile: ModelProfile | None = None, estimator: Estimator | None = None) -> Session:
    s = Session(100_000, profile=profile, estimator=estimator)
    s.append(user(CJK))
    return s


def size(s: Session) -> int:
    return s.context_tokens(s.project())


def test_the_profile_s_tokenizer_picks_the_estimate() -> None:
    assert size(session(shipped("gpt-4o"))) == 4 + 16
    assert size(session(shipped("gpt-4-0613"))) == 4 + 23
    assert size(session(shipped("claude-sonnet-4-5"))) == 4 + 23
    assert size(session()) == 4 + 23
    s = session(shipped("gpt-5.2"))
    assert repr(s.log.base_estimator) == (
        "HeuristicEstimator(encoding='o200k_base', image_tokens=3000)"
    )


def test_a_new_profile_recalibrates_the_estimate_and_the_goal() -> None:
    s = session()
    assert (size(s), s.log.history.goal_tokens) == (27, 23)
    s.profile = shipped("o3-mini")
    assert (size(s), s.log.history.goal_tokens) == (20, 16)
    s.profile = shipped("o4-mini")  # same family: nothing to redo
    assert s.log.use_tokenizer("o200k_base") is False
    s.profile = None
    assert (size(s), s.log.history.goal_tokens) == (27, 23)


def test_a_given_estimator_is_kept() -> None:
    hand = HandEstimator()
    s = session(shipped("gpt-4o"), estimator=hand)
    assert s.log.base_estimator is hand
    s.profile = shipped("gpt-3.5-turbo")
    assert s.log.base_estimator is hand
    assert size(s) == 4 + len(CJK) // 4 + 1


def test_stateless_checkpoints_are_keyed_by_the_calibration() -> None:
    assert _kind(None) is None
    assert _kind(HeuristicEstimator()) == "ctxengine.tokens.estimate.HeuristicEstimator"
    assert _kind(HeuristicEstimator(encoding="o200k_base")) == (
        "ctxengine.tokens.estimate.HeuristicEstimator[o200k_base]"
    )


def anchored(correction: UsageCorrection | None) -> Session:
    """A session whose provider reported 100 prompt tokens, then 160 once two CJK messages
    (the reply and the next request, 2 × 27 tokens by the default estimate, 2 × 20 by
    the one for o200k_base) were added; one more CJK request follows the second anchor."""
    s = Session(100_000)
    s.usage_correction = correction
    s.append(user(CJK))
    s.record(assistant(CJK, usage=Usage(input_tokens=100)))
    s.append(user(CJK))
    s.record(assistant(CJK, usage=Usage(input_tokens=160, output_tokens=5)))
    s.append(user(CJK))
    return s


def test_a_new_tokenizer_resets_the_usage_correction() -> None:
    s = anchored(UsageCorrection(prior_tokens=100, memory_tokens=1_000))
    # the growth 160 - 100 = 60 against the estimate 27 + 27 = 54
    assert size(s) == 165 + math.ceil(27 * 160 / 154)  # 165 + 29
    learned = s.usage_correction
    assert learned is not None
    assert (learned.ratio, learned.observations) == (160 / 154, 1)
    s.profile = shipped("gpt-4o")
    fresh = s.usage_correction
    assert fresh is not None and fresh is not learned
    assert (fresh.ratio, fresh.observations) == (1.0, 0)
    assert (fresh.prior_tokens, fresh.memory_tokens) == (100, 1_000)
    # the same anchors pooled again, against the new estimate 20 + 20 = 40; the old ratio
    # kept would have given 165 + ceil(20 × 160 / 154) = 186
    assert size(s) == 165 + math.ceil(20 * 160 / 140)  # 165 + 23
    assert (fresh.ratio, fresh.observations) == (160 / 140, 1)


def test_the_same_family_keeps_the_correction_and_none_stays_none() -> None:
    s = anchored(UsageCorrection(prior_tokens=100, memory_tokens=1_000))
    s.profile = shipped("gpt-4o")
    size(s)
    kept = s.usage_correction
    s.profile = shipped("o3-mini")  # o200k_base too
    assert s.usage_correction is kept
    off = anchored(None)
    off.profile = shipped("gpt-4o")
    assert off.usage_correction is None
    assert size(off) == 165 + 20
