"""``ctxengine serve``: the compacting proxy (:mod:`ctxengine.proxy`) on uvicorn.

The server modules (Starlette, uvicorn, httpx2: the ``serve`` extra) are imported when the
command runs, so the CLI works without them.
"""

from __future__ import annotations

import socket
from typing import Annotated

import typer

from ctxengine.cli.options import DbOpt, PolicyOpt
from ctxengine.cli.output import say
from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import PROXY_DEFAULT_PORT, PROXY_MAX_BODY_MB

#: The hosts that keep the proxy on this machine.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (port 0: a free one).

    Raises:
        ConfigError: the address cannot be bound (in use, not an address of this machine).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: without it a reply's second write waits for the
    # client's delayed ACK (about 40 ms per request on a keep-alive connection).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(
    upstream: Annotated[
        str | None,
        typer.Option(
            "--upstream",
            metavar="URL",
            help="Base URL of the real API every request goes to (https://api.openai.com/v1, "
            "https://api.anthropic.com, http://127.0.0.1:8000/v1 …): both the OpenAI and the "
            "Anthropic APIs, unless the options below name one of their own.",
            show_default=False,
        ),
    ] = None,
    openai_upstream: Annotated[
        str | None,
        typer.Option(
            "--openai-upstream",
            metavar="URL",
            help="Base URL the OpenAI requests (Chat Completions, Responses) go to.",
            show_default=False,
        ),
    ] = None,
    anthropic_upstream: Annotated[
        str | None,
        typer.Option(
            "--anthropic-upstream",
            metavar="URL",
            help="Base URL the Anthropic requests (Messages) go to.",
            show_default=False,
        ),
    ] = None,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            metavar="HOST",
            help="Address to listen on. Another than 127.0.0.1 exposes the proxy (and the "
            "keys it passes on) to the network.",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option("--port", min=0, max=65535, metavar="PORT", help="Port (0: a free one)."),
    ] = PROXY_DEFAULT_PORT,
    window: Annotated[
        int | None,
        typer.Option(
            "--window",
            min=1,
            metavar="TOKENS",
            help="Context window in tokens for every model (default: each request's model "
            "profile; 32,768 for a model without one).",
            show_default=False,
        ),
    ] = None,
    policy_name: PolicyOpt = None,
    db: DbOpt = None,
    no_store: Annotated[
        bool,
        typer.Option("--no-store", help="Keep conversations in memory only (nothing stored)."),
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            metavar="N",
            help="Worker processes sharing the listening socket and the store (--db; "
            "postgresql://… for workers on several hosts): any worker continues any "
            "conversation from its latest compaction.",
        ),
    ] = 1,
    max_body_mb: Annotated[
        float,
        typer.Option(
            "--max-body-mb",
            min=0.001,
            metavar="MB",
            help="Largest request body read; a larger one is answered 413.",
        ),
    ] = PROXY_MAX_BODY_MB,
) -> None:
    """Run the compacting proxy: agents send their OpenAI (Chat Completions, Responses) or
    Anthropic (Messages) requests here; each request's history is compacted when it nears
    the model's window and forwarded to the upstream, replies (streams too) pass back as
    they are. Conversations are stored (ctxengine sessions lists them). Keys pass through
    and are never stored or logged. One log line per request on stderr; Ctrl-C stops it.
    The window: --window, else the model's profile (its 1M-token window when the request
    sends Anthropic's context-1m beta header and the profile has one). Tokens are estimated
    for the model's tokenizer family (o200k_base, cl100k_base; the default estimate for
    others), as --tokenizer auto does in the other commands. With --workers N the
    requests are served by N processes on one store (their replies name the process in an
    x-ctxengine-worker header)."""
    try:
        import uvicorn

        from ctxengine.proxy.app import Upstreams, create_app
        from ctxengine.proxy.core import ProxyCore
        from ctxengine.proxy.record import Recorder
    except ImportError as exc:
        raise ConfigError(
            "ctxengine serve needs the serve extra (in a clone of the repository: pip install "
            f"-e '.[serve]'): {exc}"
        ) from exc
    from ctxengine.cli.load import open_store, store_path
    from ctxengine.cli.options import policy_from_options

    openai_url = openai_upstream or upstream
    anthropic_url = anthropic_upstream or upstream
    if openai_url is None and anthropic_url is None:
        raise ConfigError("give --upstream URL, or --openai-upstream and/or --anthropic-upstream")
    for option, url in (
        ("--upstream", upstream),
        ("--openai-upstream", openai_upstream),
        ("--anthropic-upstream", anthropic_upstream),
    ):
        if url is not None and not url.startswith(("http://", "https://")):
            raise ConfigError(f"{option} must be an http:// or https:// URL, got {url!r}")
    policy = policy_from_options(name=policy_name)
    if workers > 1:
        if no_store:
            raise ConfigError("--workers needs the store the workers share: drop --no-store")
        urls = (openai_url, anthropic_url)
        _serve_workers(urls, host, port, window, policy_name, db, workers, max_body_mb)
        return
    recorder = None if no_store else Recorder(open_store(db))
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{bound}"
    core = ProxyCore(window=window, policy=policy, recorder=recorder)
    upstreams = Upstreams(openai_url, anthropic_url)
    app = create_app(core, upstreams, max_body_bytes=int(max_body_mb * 2**20))
    _say_urls(base, openai_url, anthropic_url)
    if recorder is not None:
        say(f"  conversations stored in {store_path(db)}")
    if host not in LOCAL_HOSTS:
        say(f"warning: listening on {host}: reachable from other machines", stderr=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn shut down gracefully, then raised the Ctrl-C it caught
    finally:
        sock.close()
        if recorder is not None:
            recorder.close()
    say("stopped", stderr=True)


def _serve_workers(
    upstreams: tuple[str | None, str | None],
    host: str,
    port: int,
    window: int | None,
    policy_name: str | None,
    db: str | None,
    workers: int,
    max_body_mb: float,
) -> None:
    """Run ``workers`` uvicorn worker processes on one listening socket, each with its own
    store connection and a shared recorder (:mod:`ctxengine.proxy.workers`); ``upstreams``:
    the OpenAI and the Anthropic upstream.

    Raises:
        ConfigError: the address cannot be bound, or the store cannot be opened.
    """
    import os

    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from ctxengine.cli.load import open_store, store_path
    from ctxengine.proxy.workers import SETTINGS_ENV_VAR, WorkerSettings

    open_store(db).close()  # migrated once, and a bad store fails here, not in N workers
    openai_url, anthropic_url = upstreams
    settings = WorkerSettings(openai_url, db, window, policy_name, anthropic_url, max_body_mb)
    os.environ[SETTINGS_ENV_VAR] = settings.to_environment()
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{bound}"
    _say_urls(base, openai_url, anthropic_url, f" ({workers} workers)")
    say(f"  conversations stored in {store_path(db)}")
    if host not in LOCAL_HOSTS:
        say(f"warning: listening on {host}: reachable from other machines", stderr=True)
    config = uvicorn.Config(
        "ctxengine.proxy.workers:app_from_environment",
        factory=True,
        workers=workers,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    try:
        try:
            supervisor = Multiprocess(config, sockets=[sock])
        except TypeError:  # uvicorn before 0.36 took the target as well
            target = uvicorn.Server(config).run
            supervisor = Multiprocess(config, target=target, sockets=[sock])  # type: ignore[call-arg]
        supervisor.run()
    except KeyboardInterrupt:
        pass  # the supervisor stopped its workers
    finally:
        sock.close()
    say("stopped", stderr=True)


def _say_urls(base: str, openai_url: str | None, anthropic_url: str | None, note: str = "") -> None:
    """Print the proxy's base URL and the variables to give the agents (each with its
    upstream when the two APIs go to different ones)."""
    if openai_url == anthropic_url:
        say(f"ctxengine proxy on {base} -> {openai_url}{note}")
        say(f"  OPENAI_BASE_URL={base}/v1")
        say(f"  ANTHROPIC_BASE_URL={base}")
        return
    say(f"ctxengine proxy on {base}{note}")
    if openai_url is not None:
        say(f"  OPENAI_BASE_URL={base}/v1 -> {openai_url}")
    if anthropic_url is not None:
        say(f"  ANTHROPIC_BASE_URL={base} -> {anthropic_url}")
