"""Fixtures for the native-compaction tests: the scripted local servers of
``tests/providers`` (real HTTP on 127.0.0.1 through the official SDKs), recorded sleeps and a
clean provider environment (see :mod:`provider_fixtures`); the CLI helpers of ``tests/cli``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))

from provider_fixtures import _clean_provider_env, server, sleeps

__all__ = ["_clean_provider_env", "server", "sleeps"]
