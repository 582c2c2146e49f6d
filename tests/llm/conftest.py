"""Fixtures for the LLM summarizer and recovery tests: the scripted local servers of
``tests/providers`` (real HTTP on 127.0.0.1 through the official SDKs), recorded sleeps and a
clean provider environment."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))

from servers import ScriptedServer, SleepRecorder

_PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CTXENGINE_SUMMARY_MODEL",
    "CTXENGINE_MODEL_PROFILES",
)


@pytest.fixture(autouse=True)
def _clean_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A running scripted server; afterwards no step may be left and no request unscripted."""
    srv = ScriptedServer().start()
    try:
        yield srv
    finally:
        srv.stop()
    assert list(srv.steps) == [], "scripted steps were not consumed"
    assert srv.unexpected == [], "requests arrived with no scripted step"


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()
