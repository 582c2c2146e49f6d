"""The fact-survival benchmark of the continuation state (``ctxengine bench``).

Seeded coding sessions carry typed facts planted at known messages; each session is replayed
with the window that gives exactly k compactions, and the request the model would receive at
the end is checked fact by fact, exactly (no judge, no embeddings). See
``evaluation.md`` §2 for the design.

Layout:

* :mod:`.facts`: fact kinds, :class:`Fact`, :class:`PlantedSession`.
* :mod:`.generator`: the seeded session generator (worlds, bulk content, tool dialects,
  plants and their verification).
* :mod:`.corpus`: the same plants inserted into real transcripts.
* :mod:`.text` / :mod:`.checkers`: reading a rendered request; the typed checkers.
* :mod:`.drive`: replaying to the end (:func:`ctxengine.replay.replay`) and the final request.
* :mod:`.windows`: the window search for exactly k compactions.
* :mod:`.cells`: one session × policy × k, checked.
* :mod:`.report`, :mod:`.targets`: aggregation; the issue's targets.
* :mod:`.profiles`, :mod:`.run`: ``smoke``/``full`` and the policies compared; the run.
"""

from ctxengine.bench.facts import FACT_KINDS, Fact, PlantedSession
from ctxengine.bench.profiles import FULL, OFFLINE_POLICIES, PROFILES, SMOKE, BenchPolicy, Profile
from ctxengine.bench.run import run_bench
from ctxengine.bench.targets import ISSUE_TARGETS, target_misses, unmeasured_targets

__all__ = [
    "FACT_KINDS",
    "FULL",
    "ISSUE_TARGETS",
    "OFFLINE_POLICIES",
    "PROFILES",
    "SMOKE",
    "BenchPolicy",
    "Fact",
    "PlantedSession",
    "Profile",
    "run_bench",
    "target_misses",
    "unmeasured_targets",
]
