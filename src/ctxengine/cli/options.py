"""Options several commands share, and how they become a :class:`~ctxengine.policy.Policy`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ctxengine.errors import ConfigError
from ctxengine.policy import DEFAULT_POLICY, Policy, output_reserve

DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="CTXENGINE_DB",
        metavar="PATH",
        help="SQLite store (default: user data dir).",
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
KeepRecentOpt = Annotated[
    int | None,
    typer.Option(
        "--keep-recent",
        min=0,
        metavar="TOKENS",
        help="Keep-recent budget in tokens (newest history kept verbatim).",
    ),
]


def policy_from_options(
    keep_recent: int | None = None, *, window: int = 0, max_tokens: int | None = None
) -> Policy:
    """The default policy, changed by the command-line options.

    An explicit ``--keep-recent`` (tokens) is taken as given: not capped at a share of the
    window (a budget that leaves nothing to compact is a ConfigError). An explicit
    ``--max-tokens`` becomes the reserve with a 5 % margin of ``window``
    (:func:`~ctxengine.policy.output_reserve`), so the request and its output budget fit the
    window together.

    A policy that cannot work is not refused here: the session refuses it with a
    ConfigError when it resolves its budget for the window.
    """
    update: dict[str, Any] = {}
    if keep_recent is not None:
        update |= {"keep_recent_tokens": keep_recent, "keep_recent_max_ratio": 1.0}
    if max_tokens is not None:
        update["reserve_tokens"] = output_reserve(max_tokens, window)
    policy = DEFAULT_POLICY.model_copy(update=update) if update else DEFAULT_POLICY
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
