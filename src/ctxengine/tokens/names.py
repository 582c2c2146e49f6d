"""How reports name what counted their tokens (``"tokenizer"`` in the CLI's ``--json``
documents, a comparison's ``tokenizer``)."""

from __future__ import annotations

from ctxengine.tokens.base import Estimator
from ctxengine.tokens.cache import CachingEstimator
from ctxengine.tokens.estimate import HeuristicEstimator
from ctxengine.tokens.exact import TiktokenCounter

#: The name of the default estimate (:class:`HeuristicEstimator` calibrated for no encoding).
DEFAULT_COUNTER = "estimate"


def counter_name(estimator: Estimator | None) -> str:
    """The name of what ``estimator`` counts with: ``"exact:<encoding>"`` for a
    :class:`TiktokenCounter`, ``"estimate:<encoding>"`` for a :class:`HeuristicEstimator`
    calibrated for an encoding, :data:`DEFAULT_COUNTER` (``"estimate"``) for the default one
    and for ``None`` (a session's default), else the estimator's class name. A
    :class:`CachingEstimator` is named by the estimator it wraps."""
    while isinstance(estimator, CachingEstimator):
        estimator = estimator.base
    if estimator is None:
        return DEFAULT_COUNTER
    if isinstance(estimator, TiktokenCounter):
        return f"exact:{estimator.encoding_name}"
    if isinstance(estimator, HeuristicEstimator):
        return DEFAULT_COUNTER if estimator.encoding is None else f"estimate:{estimator.encoding}"
    return type(estimator).__name__
