"""Named policies (presets): ``preset(name)`` and :data:`PRESET_NAMES`.

Only ``default`` is defined here: the :data:`~ctxengine.policy.DEFAULT_POLICY` value.
"""

from __future__ import annotations

from ctxengine.errors import ConfigError
from ctxengine.policy.policy import DEFAULT_POLICY, Policy

#: The presets :func:`preset` knows, in the order reports list them.
PRESET_NAMES: tuple[str, ...] = ("default",)


def preset(name: str) -> Policy:
    """The policy named ``name``.

    Raises:
        ConfigError: no preset has that name (the message lists the known ones).
    """
    if name == "default":
        return DEFAULT_POLICY
    raise ConfigError(f"no preset named {name!r}; known: {', '.join(PRESET_NAMES)}")
