"""The engine: :class:`Session`, the one orchestrator of a live session, composed of parts.

Layout (each module one responsibility):

* :mod:`.events`: :class:`LadderEvent`, :class:`CompactionOutcome`, :class:`PlanDecision`.
* :mod:`.history`: the log in memory and its incremental indexes.
* :mod:`.view`: projection settings, the context size against the usage anchor, the tail
  guard.
* :mod:`.log`: :class:`~.log.SessionLog`, the log persisted to its store and projected.
* :mod:`.runner`: :class:`~.runner.Runner`, the executor of a compaction plan.
* :mod:`.compactor`: :class:`~.compactor.Compactor`, prune, plan, hooks, execute, events.
* :mod:`.calls`: rendering, sending and overflow detection of a model call.
* :mod:`.branches`: a checkout of an earlier entry (pi's session tree) and its summary.
* :mod:`.children`: child sessions (fork, spawn, resume) and their evidence entries.
* :mod:`.session`: :class:`Session`, the parts composed.

The decision itself (trigger, plan, prune, cut, recover) is pure and lives in
:mod:`ctxengine.ladder`.
"""

from .branches import Checkout
from .children import Pointers
from .events import CompactionOutcome, LadderEvent, PlanDecision
from .session import Session

__all__ = ["Checkout", "CompactionOutcome", "LadderEvent", "PlanDecision", "Pointers", "Session"]
