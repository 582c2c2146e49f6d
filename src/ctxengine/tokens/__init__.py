"""Token estimates and context size: the :class:`Estimator` protocol, the default
:class:`HeuristicEstimator`, the exact :class:`TiktokenCounter` (optional ``tiktoken``),
image costs, the usage anchor and the per-session :class:`UsageCorrection`."""

from ctxengine.tokens.base import Estimator
from ctxengine.tokens.correction import UsageCorrection, anchor_growth
from ctxengine.tokens.estimate import HeuristicEstimator
from ctxengine.tokens.exact import TiktokenCounter
from ctxengine.tokens.images import (
    estimate_tokens_for_image,
    image_part_from_provider_block,
    image_size,
    image_size_from_base64,
)
from ctxengine.tokens.size import ContextSize, context_size, find_anchor, is_usable_anchor

__all__ = [
    "ContextSize",
    "Estimator",
    "HeuristicEstimator",
    "TiktokenCounter",
    "UsageCorrection",
    "anchor_growth",
    "context_size",
    "estimate_tokens_for_image",
    "find_anchor",
    "image_part_from_provider_block",
    "image_size",
    "image_size_from_base64",
    "is_usable_anchor",
]
