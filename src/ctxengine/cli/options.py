"""Options several commands share, and how they become a :class:`~ctxengine.policy.Policy`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ctxengine.errors import ConfigError
from ctxengine.policy import DEFAULT_POLICY, Policy, output_reserve
from ctxengine.policy.policy import size_tokens
from ctxengine.policy.presets import PRESET_NAMES, preset

DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="CTXENGINE_DB",
        metavar="PATH|URL",
        help="The store: a SQLite file (or sqlite:///path), or postgresql://user@host/db "
        "(the postgres extra) shared by many processes and hosts (default: a SQLite file in "
        "the user data dir).",
    ),
]
BusyTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--busy-timeout",
        min=0,
        metavar="SECONDS",
        envvar="CTXENGINE_BUSY_TIMEOUT",
        help="Seconds a write waits while another process writes to the store, then fails "
        "with exit code 3 (store busy). Reads never wait. Default: 5.",
    ),
]
SessionOpt = Annotated[
    str | None,
    typer.Option(
        "--session",
        metavar="ID",
        help="A stored session id (or unique prefix), taken as an id whatever its characters "
        "(an id containing / or ending in .json would otherwise be read as a file).",
    ),
]
TargetArg = Annotated[
    str | None,
    typer.Argument(
        metavar="FILE|SESSION",
        help="Transcript file or stored session id (or give the id with --session).",
        show_default=False,
    ),
]
JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print the result as one JSON document (its schema: ctxengine/cli/schemas/).",
    ),
]
QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="No progress display (it shows only on a terminal, for work over about a "
        "second); errors and warnings still print.",
    ),
]
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format", metavar="NAME", help="Force the transcript format instead of sniffing."
    ),
]
StrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Refuse a transcript at its first record that cannot be read as it is, naming "
        "file and line (default: skip or repair it and print one line saying what).",
    ),
]
NextUserOpt = Annotated[
    str | None,
    typer.Option(
        "--user",
        metavar="TEXT",
        help="The next user message, appended to the request (newer Anthropic models reject "
        "a request that ends with the assistant's turn).",
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option("--model", metavar="NAME", help="Model name written into the request body."),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        metavar="TOKENS",
        help="Output budget written into the request body.",
    ),
]
WindowOpt = Annotated[
    int,
    typer.Option("--window", min=1, metavar="TOKENS", help="Model context window in tokens."),
]
ModelWindowOpt = Annotated[
    int | None,
    typer.Option(
        "--window",
        min=1,
        metavar="TOKENS",
        help="Model context window in tokens (default: the window of --model's profile, "
        "else 128,000).",
        show_default=False,
    ),
]

RayOpt = Annotated[
    bool,
    typer.Option(
        "--ray",
        help="One Ray task per (transcript, policy) (replay --policy) or (session, policy) "
        "(bench), on a local cluster or "
        "the one --ray-address names (needs the extra ctxengine[ray]).",
    ),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        metavar="ADDRESS",
        help="Join this Ray cluster (host:port from 'ray start --head', or auto) instead of "
        "starting a local one; implies --ray. Every node must reach the transcripts' paths.",
    ),
]
RayWorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--ray-workers",
        min=1,
        metavar="N",
        help="CPUs of the local Ray cluster: replays run at once (default: the CPUs this "
        "process may use).",
    ),
]


def resolve_window(window: int | None, model: str | None) -> int:
    """``window``, else the context window of ``model``'s profile (the shipped table with
    the ``CTXENGINE_MODEL_PROFILES`` overrides), else
    :data:`~ctxengine.policy.defaults.DEFAULT_WINDOW` (tokens).

    Raises:
        ConfigError: the overrides file is missing or invalid.
    """
    if window is not None:
        return window
    if model:
        from ctxengine.providers.profiles import ProfileTable

        profile = ProfileTable.load().lookup(model)
        if profile is not None:
            return profile.context_window
    from ctxengine.policy.defaults import DEFAULT_WINDOW

    return DEFAULT_WINDOW


KeepRecentOpt = Annotated[
    int | None,
    typer.Option(
        "--keep-recent",
        min=0,
        metavar="TOKENS",
        help="Keep-recent budget in tokens (newest history kept verbatim).",
    ),
]
PolicyOpt = Annotated[
    str | None,
    typer.Option(
        "--policy",
        help=f"A preset policy: {', '.join(PRESET_NAMES)} (default: default).",
    ),
]


def policy_from_options(
    keep_recent: int | None = None,
    *,
    window: int = 0,
    max_tokens: int | None = None,
    name: str | None = None,
    model: str | None = None,
) -> Policy:
    """The preset ``name`` (default: the default policy) for ``model`` (its per-model
    overrides, :meth:`~ctxengine.policy.Policy.for_model`), changed by the command-line
    options.

    An explicit ``--keep-recent`` (tokens) is taken as given: not capped at a share of the
    window, and refused (``typer.BadParameter``) when it leaves nothing to compact under the
    trigger. An explicit ``--max-tokens`` is the output the reserve keeps free: a policy
    that reserves the model's output (``reserve_output``) takes it as that output; otherwise
    the reserve is at least the output with a 5 % margin of ``window``
    (:func:`~ctxengine.policy.output_reserve`), so the request and its output budget fit the
    window together.

    A policy that cannot work is not refused here: the session refuses it with a
    ConfigError when it resolves its budget for the window.

    Raises:
        ConfigError: an unknown preset ``name``.
    """
    base = DEFAULT_POLICY if name is None else preset(name).for_model(model)
    update: dict[str, Any] = {}
    if keep_recent is not None:
        update |= {"keep_recent_tokens": keep_recent, "keep_recent_max_ratio": 1.0}
        update |= {"keep_recent_share": None, "keep_recent_messages": None}
    if max_tokens is not None:
        if base.reserve_output:
            update["max_output_tokens"] = max_tokens
        else:
            reserve = output_reserve(max_tokens, window)
            if base.reserve_tokens is not None:
                reserve = max(reserve, size_tokens(base.reserve_tokens, window))
            update["reserve_tokens"] = reserve
    policy = base.model_copy(update=update) if update else base
    if keep_recent is not None and window > 0:
        _check_keep_recent(policy, keep_recent, window)
    return policy


def _check_keep_recent(policy: Policy, keep_recent: int, window: int) -> None:
    """Refuse a ``--keep-recent`` (tokens) that leaves nothing to compact under the
    window's trigger, naming the value as typed.

    Raises:
        typer.BadParameter: ``keep_recent`` is at or above the trigger.
    """
    try:
        budget = policy.model_copy(update={"keep_recent_tokens": 0}).resolve(window)
    except ConfigError:
        return  # the session names what else is wrong with the window
    if keep_recent >= budget.trigger:
        raise typer.BadParameter(
            f"{keep_recent:,} tokens leaves nothing to compact: a {window:,}-token window "
            f"compacts at {budget.trigger:,} tokens (reserve {budget.reserve:,}); give less "
            f"than {budget.trigger:,}",
            param_hint="--keep-recent",
        )
