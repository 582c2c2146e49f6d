"""Fixtures shared by the provider and LLM tests: a scripted local server, recorded sleeps,
a clean provider environment.

Provider tests never reach the internet: every client is pointed at a
:class:`servers.ScriptedServer` on 127.0.0.1, and the provider variables of the developer's
shell are removed for the duration of each test. A ``conftest.py`` makes these fixtures
available with ``from provider_fixtures import *``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
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
    """A running scripted server; after the test no step may be left and no request may
    have arrived unscripted."""
    srv = ScriptedServer().start()
    try:
        yield srv
    finally:
        srv.stop()
    assert list(srv.steps) == [], "scripted steps were not consumed"
    assert srv.unexpected == [], "requests arrived with no scripted step"


@pytest.fixture
def sleeps() -> SleepRecorder:
    """Records the waits a provider asked for instead of sleeping (seconds)."""
    return SleepRecorder()


__all__ = ["_clean_provider_env", "server", "sleeps"]
