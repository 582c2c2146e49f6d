"""Fixtures for the benchmark tests: the scripted local model server of ``tests/providers``
(for the model summarizers) and a clean provider environment."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from provider_fixtures import _clean_provider_env, server

__all__ = ["_clean_provider_env", "server"]
