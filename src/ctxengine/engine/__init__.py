"""The engine: :class:`Session`, the one orchestrator of a live session.

Layout (each module one responsibility):

* :mod:`.events`: :class:`LadderEvent`, :class:`CompactionOutcome`.
* :mod:`.history`: the log in memory and its incremental indexes.
* :mod:`.view`: projection settings, the context size against the usage anchor.
* :mod:`.log`: :class:`~.log.SessionLog`, the log persisted to its store and projected.
* :mod:`.compaction`: the compaction search (cut, summarize, measure; up to four attempts).
* :mod:`.summary`: the summarizer behind its circuit breaker, with the extractive fallback.
* :mod:`.ladder`: :class:`~.ladder.LadderLog`, the log that runs the ladder.
* :mod:`.calls`: rendering, sending and overflow detection of a model call.
* :mod:`.session`: :class:`Session`, the ladder plus the model calls.
"""

from ctxengine.errors import ConfigError

from .events import CompactionOutcome, LadderEvent
from .session import Session

__all__ = ["CompactionOutcome", "ConfigError", "LadderEvent", "Session"]
