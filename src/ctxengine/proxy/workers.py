"""The proxy application of one worker process of ``ctxengine serve --workers N``.

uvicorn starts each worker in a fresh process and builds its application from an import
string, so the serve command hands the settings over in the environment
(:data:`SETTINGS_ENV_VAR`, JSON) and every worker opens its own store and a shared
:class:`~ctxengine.proxy.record.Recorder` on it: the conversations' checkpoints, usage
anchors and locks live in the store, so a conversation keeps its compactions whichever worker
serves its next request.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import orjson
from starlette.applications import Starlette

from ctxengine.errors import ConfigError
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.policy.defaults import PROXY_MAX_BODY_MB
from ctxengine.policy.presets import preset
from ctxengine.stores.location import open_store

from .app import Upstreams, create_app
from .core import ProxyCore
from .record import Recorder

__all__ = ["SETTINGS_ENV_VAR", "WorkerSettings", "app_from_environment"]

#: The environment variable the serve command passes a worker's settings in (JSON).
SETTINGS_ENV_VAR = "CTXENGINE_SERVE_WORKER"


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """What every worker is built from.

    Attributes:
        upstream: the upstream base URL of the OpenAI APIs (``None``: none).
        db: the store every worker shares (a PostgreSQL URL or a SQLite file), or ``None``
            for the default store.
        window: the context window for every model (tokens), or ``None`` for each model's
            profile.
        policy: the preset's name, or ``None`` for the default policy.
        anthropic_upstream: the upstream base URL of the Anthropic API (``None``: none).
        max_body_mb: the largest request body read (MB).
    """

    upstream: str | None
    db: str | None
    window: int | None
    policy: str | None
    anthropic_upstream: str | None = None
    max_body_mb: float = PROXY_MAX_BODY_MB

    def to_environment(self) -> str:
        """The JSON text :func:`app_from_environment` reads."""
        return orjson.dumps(asdict(self)).decode()


def app_from_environment() -> Starlette:
    """This worker's application, from :data:`SETTINGS_ENV_VAR` (uvicorn's app factory).

    Raises:
        ConfigError: the variable is missing or not the serve command's JSON.
        StoreError: the store cannot be opened.
    """
    raw = os.environ.get(SETTINGS_ENV_VAR)
    if not raw:
        raise ConfigError(f"{SETTINGS_ENV_VAR} is not set: start workers with ctxengine serve")
    try:
        settings = WorkerSettings(**orjson.loads(raw))
    except (orjson.JSONDecodeError, TypeError) as exc:
        raise ConfigError(f"{SETTINGS_ENV_VAR} is not valid: {exc}") from exc
    policy = DEFAULT_POLICY if settings.policy is None else preset(settings.policy)
    recorder = Recorder(open_store(settings.db), shared=True)
    core = ProxyCore(window=settings.window, policy=policy, recorder=recorder)
    return create_app(
        core,
        Upstreams(settings.upstream, settings.anthropic_upstream),
        worker_header=True,
        on_shutdown=recorder.close,
        max_body_bytes=int(settings.max_body_mb * 2**20),
    )
