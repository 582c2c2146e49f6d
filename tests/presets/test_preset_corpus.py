"""Every preset replayed over corpus transcripts: every projected request validates for both
providers (OpenAI and Anthropic), and the ladder acted as each preset says (compactions and
prunes counted exactly). Presets that name a model summarizer run offline (the extractive
summarizer stands in)."""

from __future__ import annotations

import pytest

from corpus import CORPUS, require_corpus
from ctxengine.importers import read_transcript
from ctxengine.policy.presets import PRESET_NAMES, offline, preset
from ctxengine.replay import replay

#: (transcript, window): small windows, so that most presets compact more than once.
CASES: list[tuple[str, int]] = [
    ("swe-agent/swe-agent-pydicom-1458-gpt4.traj", 8_000),
    ("codex/codex-cpolar-connect-2025-09-16-a.jsonl", 32_000),
    ("openhands/openhands-resolver-mock-output.jsonl", 8_000),
    ("claude-code/spotter-long-dov-subagent-a2898e3.jsonl", 8_000),
]

#: Per case, per preset: (compactions, prunes) of the replay. Codex compacts in the background
#: from 65 % of the window: an adopted candidate keeps the entries appended since its
#: snapshot, so its compactions fall at other calls than the default preset's.
EXPECTED: dict[str, dict[str, tuple[int, int]]] = {
    "swe-agent/swe-agent-pydicom-1458-gpt4.traj": {
        "default": (2, 0),
        "pi": (6, 0),
        "codex": (2, 0),
        "gemini-cli": (5, 0),
        "opencode": (6, 0),
        "claude-code": (4, 0),
        "roo-code": (4, 0),
        "openhands": (3, 0),
        "none": (0, 0),
        "keep-last-n": (3, 0),
        "observation-masking": (2, 0),
    },
    "codex/codex-cpolar-connect-2025-09-16-a.jsonl": {
        "default": (2, 0),
        "pi": (4, 0),
        "codex": (1, 0),
        "gemini-cli": (3, 2),  # its states show the agent's long last reports whole
        "opencode": (1, 1),
        "claude-code": (5, 0),
        "roo-code": (2, 0),
        "openhands": (3, 0),
        "none": (0, 0),
        "keep-last-n": (3, 0),
        "observation-masking": (0, 37),
    },
    "openhands/openhands-resolver-mock-output.jsonl": {
        "default": (4, 0),
        "pi": (9, 0),  # the states list what its IPython cells returned
        "codex": (3, 0),
        "gemini-cli": (6, 0),
        "opencode": (9, 0),
        "claude-code": (6, 0),
        "roo-code": (5, 0),
        "openhands": (5, 0),
        "none": (0, 0),
        "keep-last-n": (7, 0),
        "observation-masking": (4, 0),
    },
    "claude-code/spotter-long-dov-subagent-a2898e3.jsonl": {
        "default": (2, 0),
        "pi": (3, 0),
        "codex": (1, 0),
        "gemini-cli": (2, 1),
        "opencode": (3, 0),  # a failed file tool error names its call
        "claude-code": (2, 0),
        "roo-code": (2, 0),
        "openhands": (3, 0),
        "none": (0, 0),
        "keep-last-n": (2, 0),
        "observation-masking": (2, 1),
    },
}


@pytest.mark.parametrize(("name", "window"), CASES)
def test_every_request_of_every_preset_validates(name: str, window: int) -> None:
    require_corpus()
    entries = read_transcript(CORPUS / name).entries
    measured: dict[str, tuple[int, int]] = {}
    for policy_name in PRESET_NAMES:
        result = replay(entries, window=window, policy=offline(preset(policy_name)))
        bad = [(s.call, s.problems) for s in result.steps if any(s.problems.values())]
        assert bad == [], f"{policy_name}: {bad[:3]}"
        assert result.steps, policy_name
        measured[policy_name] = (result.compactions, result.prunes)
    assert measured == EXPECTED[name]


def test_the_none_baseline_outgrows_the_window_where_the_others_do_not() -> None:
    require_corpus()
    entries = read_transcript(CORPUS / CASES[0][0]).entries
    window = CASES[0][1]
    over = {
        n: replay(entries, window=window, policy=offline(preset(n))).max_tokens > window
        for n in PRESET_NAMES
    }
    assert over == {n: n == "none" for n in PRESET_NAMES}
