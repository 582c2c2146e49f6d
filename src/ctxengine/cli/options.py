"""Options several commands share, and how they become a :class:`~ctxengine.policy.Policy`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ctxengine.cli.output import note
from ctxengine.errors import ConfigError
from ctxengine.policy import DEFAULT_POLICY, Policy, output_reserve
from ctxengine.policy.defaults import MIN_WINDOW_TOKENS
from ctxengine.policy.policy import size_tokens
from ctxengine.policy.presets import PRESET_NAMES, preset

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctxengine.model import Entry
    from ctxengine.tokens.base import Estimator

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
ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace an existing -o file even when it holds something other than what this "
        "command writes (a transcript, another program's data); without it such a file is "
        "refused and left as it is.",
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
    typer.Option(
        "--window", min=MIN_WINDOW_TOKENS, metavar="TOKENS", help="Model context window in tokens."
    ),
]
ModelWindowOpt = Annotated[
    int | None,
    typer.Option(
        "--window",
        min=MIN_WINDOW_TOKENS,
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
    :data:`~ctxengine.policy.defaults.DEFAULT_WINDOW` (tokens), saying so on stderr when a
    ``model`` was named that no profile knows.

    Raises:
        ConfigError: the overrides file is missing or invalid.
    """
    if window is not None:
        return window
    from ctxengine.policy.defaults import DEFAULT_WINDOW

    if model:
        from ctxengine.providers.profiles import ProfileTable

        profile = ProfileTable.load().lookup(model)
        if profile is not None:
            return profile.context_window
        note(
            f"no model profile knows {model!r}: window {DEFAULT_WINDOW:,} tokens (the default); "
            "give --window, or add the model to CTXENGINE_MODEL_PROFILES"
        )
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


#: The tokenizer families the estimate is calibrated for and tiktoken counts exactly (a model
#: profile's ``tokenizer``: :data:`ctxengine.providers.profiles.TOKENIZERS`).
TOKENIZER_FAMILIES: tuple[str, ...] = ("o200k_base", "cl100k_base")
#: ``--tokenizer``: the calibration of ``--model``'s profile, else the default estimate.
TOKENIZER_AUTO = "auto"
#: ``--tokenizer`` values, ``auto`` first, then what ``auto`` resolves to and the exact counts.
TOKENIZER_NAMES: tuple[str, ...] = (
    TOKENIZER_AUTO,
    "estimate",
    *(f"estimate:{f}" for f in TOKENIZER_FAMILIES),
    *(f"exact:{f}" for f in TOKENIZER_FAMILIES),
)


def _check_tokenizer(value: str) -> str:
    """``--tokenizer`` as given, when it is one of :data:`TOKENIZER_NAMES`.

    Raises:
        typer.BadParameter: any other value (the message lists them).
    """
    if value not in TOKENIZER_NAMES:
        raise typer.BadParameter(
            f"{value!r} is not a token counter; expected one of {', '.join(TOKENIZER_NAMES)}",
            param_hint="--tokenizer",
        )
    return value


TokenizerOpt = Annotated[
    str,
    typer.Option(
        "--tokenizer",
        metavar="NAME",
        callback=_check_tokenizer,
        help="How tokens are counted. auto (default): the estimate calibrated for the "
        "tokenizer of --model's profile when the command is given --model (estimate:o200k_base "
        "for GPT-4o and later, estimate:cl100k_base for GPT-4 and GPT-3.5), else (inspect, "
        "recall, compact, revert, handoff, export) of the model the transcript or session "
        "records, else the default estimate; estimate: the default estimate, fitted to the "
        "larger count of both OpenAI encodings (for Claude, Gemini and other models); "
        "estimate:o200k_base, "
        "estimate:cl100k_base: the estimate calibrated for that encoding; exact:o200k_base, "
        "exact:cl100k_base: text counted exactly by tiktoken (pip install "
        "'ctxengine[tiktoken]'; the encoding file is downloaded on first use, or read from "
        'the folder TIKTOKEN_CACHE_DIR names). --json names the one used under "tokenizer".',
    ),
]


@dataclass(frozen=True, slots=True)
class TokenizerChoice:
    """How a command counts tokens: a ``--tokenizer`` value with ``auto`` resolved (a plain
    value: it travels to worker processes and Ray tasks as it is).

    Attributes:
        name: ``"estimate"``, ``"estimate:<family>"`` or ``"exact:<family>"`` (a family of
            :data:`TOKENIZER_FAMILIES`); what ``--json`` reports under ``"tokenizer"``.
    """

    name: str = "estimate"

    @property
    def encoding(self) -> str | None:
        """The tokenizer family counted for, ``None`` for the default estimate."""
        return self.name.partition(":")[2] or None

    @property
    def exact(self) -> bool:
        """True when text is counted by tiktoken, not estimated."""
        return self.name.startswith("exact:")

    @property
    def phrase(self) -> str:
        """How the counts were made, for a report's text: ``"estimated"``, ``"estimated for
        o200k_base"``, ``"counted by o200k_base"``."""
        if self.encoding is None:
            return "estimated"
        return f"{'counted by' if self.exact else 'estimated for'} {self.encoding}"

    def estimator(self, *, image_tokens: int | None = None) -> Estimator:
        """A new estimator of this choice: :class:`~ctxengine.tokens.HeuristicEstimator`
        (calibrated for :attr:`encoding`) or :class:`~ctxengine.tokens.TiktokenCounter`;
        ``image_tokens``: tokens of an image of unknown size (default: the estimator's own,
        the most an image costs; a session uses
        :data:`~ctxengine.policy.defaults.DEFAULT_IMAGE_TOKENS`).

        Raises:
            ConfigError: an exact count without tiktoken (the message names the extra), or
                its encoding file could not be read or downloaded.
        """
        from ctxengine.tokens.constants import MAX_IMAGE_TOKENS
        from ctxengine.tokens.estimate import HeuristicEstimator

        images = MAX_IMAGE_TOKENS if image_tokens is None else image_tokens
        if self.exact:
            from ctxengine.tokens.exact import TiktokenCounter

            assert self.encoding is not None
            return TiktokenCounter(self.encoding, image_tokens=images)
        return HeuristicEstimator(image_tokens=images, encoding=self.encoding)

    def session_estimator(self) -> Estimator | None:
        """The estimator a command's :class:`~ctxengine.engine.Session` (or replay) counts
        with: as :meth:`estimator`, images of unknown size at the session's default;
        ``None`` for the default estimate, which is a session's own default.

        Raises:
            ConfigError: as :meth:`estimator`.
        """
        from ctxengine.policy.defaults import DEFAULT_IMAGE_TOKENS

        if self.name == "estimate":
            return None
        return self.estimator(image_tokens=DEFAULT_IMAGE_TOKENS)


def resolve_tokenizer(value: str, model: str | None = None) -> TokenizerChoice:
    """``--tokenizer value`` for a command given ``--model model`` (``None``: not given):
    ``auto`` is the estimate calibrated for the tokenizer family of ``model``'s profile (the
    shipped table with the ``CTXENGINE_MODEL_PROFILES`` overrides), the default estimate for
    no model, a model without a profile or a profile that names no family; any other value
    as given.

    Raises:
        typer.BadParameter: a value not in :data:`TOKENIZER_NAMES`.
        ConfigError: the profile overrides file is missing or invalid.
    """
    _check_tokenizer(value)
    if value != TOKENIZER_AUTO:
        return TokenizerChoice(value)
    family = None
    if model:
        from ctxengine.providers.profiles import ProfileTable

        profile = ProfileTable.load().lookup(model)
        family = profile.tokenizer if profile is not None else None
    return TokenizerChoice("estimate" if family is None else f"estimate:{family}")


def for_recorded_model(
    choice: TokenizerChoice, value: str, model: str | None, entries: Sequence[Entry]
) -> TokenizerChoice:
    """``choice`` (``--tokenizer value`` resolved for ``--model model``) once a transcript's
    ``entries`` are read: with ``auto`` and no ``--model``, :func:`resolve_tokenizer` for the
    model most of its assistant messages name
    (:func:`~ctxengine.replay.compare.recorded_model`); else ``choice`` unchanged.

    Raises:
        ConfigError: the profile overrides file is missing or invalid.
    """
    if value != TOKENIZER_AUTO or model:
        return choice
    from ctxengine.replay.compare import recorded_model

    recorded = recorded_model(entries)
    return resolve_tokenizer(value, recorded) if recorded else choice
