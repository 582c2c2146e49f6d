"""The compaction ladder as pure decisions: data in, plan out (no summarizer call, no store,
no clock).

* :mod:`.trigger`: whether a compaction must run, and how hard (:class:`~.plan.Requirement`).
* :mod:`.prune`: which old tool results become placeholders.
* :mod:`.compaction`: the cut of each attempt, the budgets, the size expected after.
* :mod:`.plan`: :class:`~.plan.CompactionPlan`, the value all of it returns.
* :mod:`.recover`: the breaker, the fallback rule, overflow recovery sizing.
* :mod:`.timing`: the prompt cache's lifetime, the idle gap, a precompute's tail limit.
"""
