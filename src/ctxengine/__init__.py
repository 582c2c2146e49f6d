"""ctxengine: decides what an LLM agent's model sees on every call.

The whole history is an append-only log; the context is a projection of it; when the context
nears the window a cheapest-first ladder (truncate, prune, summarize, recover) compacts it and
records every step as data.
"""

from ctxengine.projection.validate import validate

__version__ = "0.1.0"

__all__ = ["validate"]
