"""``ProjectionSettings``: the few numbers ``project()`` needs, independent of ``Policy``.

The engine resolves a policy against the model's window and passes the result here; the
projection layer never imports the policy layer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxengine.errors import ConfigError


@dataclass(frozen=True, slots=True)
class ProjectionSettings:
    """Truncate-at-source settings of one projection.

    Attributes:
        truncate_tokens: a tool result estimated above this many tokens is shown as
            head + tail (``Budget.truncate_tokens``). A compaction record's own
            ``truncate_tokens`` overrides it for the epoch it opens.
        truncate_max_chars: a tool result longer than this many characters is shown as
            head + tail, whatever its token estimate (``Policy.truncate_max_chars``).
        truncate_head_ratio: share of the kept characters taken from the head of the text;
            the rest comes from its tail (``Policy.truncate_head_ratio``).
        prune_tail_tokens: a pruned tool result keeps its last this many tokens after its
            placeholder line (``Policy.prune_keep_tail_tokens``); ``None``: the line alone.
        whole_rules: injected user messages that carry rules
            (:func:`~ctxengine.projection.injection.is_rules_message`) are never truncated:
            they are standing instructions, re-injected whole after every compaction
            (``"rules"`` in ``Policy.reinject``), so the live context shows them whole too.
        recall_note: the agent has the recall tool: the continuation state of a compaction
            is followed by :data:`~ctxengine.projection.injection.RECALL_NOTE`.

    Raises:
        ConfigError: a cap below 1, or a head ratio outside ``(0, 1)``.
    """

    truncate_tokens: int
    truncate_max_chars: int
    truncate_head_ratio: float
    prune_tail_tokens: int | None = None
    whole_rules: bool = False
    recall_note: bool = False

    def __post_init__(self) -> None:
        if self.truncate_tokens < 1:
            raise ConfigError(f"truncate_tokens must be ≥ 1, got {self.truncate_tokens}")
        if self.truncate_max_chars < 1:
            raise ConfigError(f"truncate_max_chars must be ≥ 1, got {self.truncate_max_chars}")
        if not 0 < self.truncate_head_ratio < 1:
            raise ConfigError(
                f"truncate_head_ratio must be in (0, 1), got {self.truncate_head_ratio}"
            )
