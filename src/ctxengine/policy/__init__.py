"""Policy (ladder configuration as data) and its defaults.

The names below are loaded from :mod:`ctxengine.policy.policy` on first use (PEP 562), so a
module that reads only :mod:`ctxengine.policy.defaults` does not import pydantic.
"""

from __future__ import annotations

#: ``typing.TYPE_CHECKING`` without importing :mod:`typing`, which costs more than the rest of
#: this module; type checkers read the block below.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxengine.policy.policy import (
        DEFAULT_POLICY,
        Budget,
        Policy,
        SummarizerName,
        output_reserve,
    )

__all__ = ["DEFAULT_POLICY", "Budget", "Policy", "SummarizerName", "output_reserve"]


def __getattr__(name: str) -> Any:
    """A name of :data:`__all__`, imported from :mod:`ctxengine.policy.policy` on first use.

    Raises:
        AttributeError: any other name (that is not a submodule already imported).
    """
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ctxengine.policy import policy

    value = getattr(policy, name)
    globals()[name] = value
    return value
