"""Fixtures for provider tests (see :mod:`provider_fixtures`)."""

from provider_fixtures import _clean_provider_env, server, sleeps

__all__ = ["_clean_provider_env", "server", "sleeps"]
