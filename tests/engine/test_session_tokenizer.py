"""A session's default estimator is calibrated for its model's tokenizer: from the profile it
is given, and again each time its profile changes (``complete`` sets the called model's);
an estimator given to it is kept."""

from __future__ import annotations

from ctxengine.engine import Session
from ctxengine.engine.stateless import _kind
from ctxengine.model import user
from ctxengine.providers.profiles import ModelProfile, ProfileTable
from ctxengine.tokens import Estimator, HeuristicEstimator
from hand_estimator import HandEstimator

#: 20 wide-script characters: 23 tokens by the default estimate (cl100k_base counts 17), 17
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
    assert size(session(shipped("gpt-4o"))) == 4 + 17
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
    assert (size(s), s.log.history.goal_tokens) == (21, 17)
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
