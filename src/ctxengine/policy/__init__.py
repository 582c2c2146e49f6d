"""Policy (ladder configuration as data) and its defaults."""

from ctxengine.policy.policy import DEFAULT_POLICY, Budget, Policy, SummarizerName, output_reserve

__all__ = ["DEFAULT_POLICY", "Budget", "Policy", "SummarizerName", "output_reserve"]
