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

The names below are loaded from their modules on first use (PEP 562): ``Session`` does not
import the modules of checkouts and child sessions until a session makes one.
"""

from __future__ import annotations

from ctxengine._runtime import load_name, names

#: ``typing.TYPE_CHECKING`` without importing :mod:`typing`; type checkers read the block below.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .branches import Checkout
    from .children import Pointers
    from .events import CompactionOutcome, LadderEvent, PlanDecision
    from .session import Session

__all__ = ["Checkout", "CompactionOutcome", "LadderEvent", "PlanDecision", "Pointers", "Session"]

#: The module each public name is loaded from on first use.
_HOMES: dict[str, str] = {
    "Checkout": "ctxengine.engine.branches",
    "Pointers": "ctxengine.engine.children",
    "CompactionOutcome": "ctxengine.engine.events",
    "LadderEvent": "ctxengine.engine.events",
    "PlanDecision": "ctxengine.engine.events",
    "Session": "ctxengine.engine.session",
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept (PEP 562).

    Raises:
        AttributeError: ``name`` is not a public name (nor a submodule already imported).
    """
    return load_name(__name__, _HOMES, globals(), name)


def __dir__() -> list[str]:
    return names(globals(), __all__)
