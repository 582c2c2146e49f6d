"""Framework hooks: ctxengine as the context manager of LangChain agents
(:mod:`.langchain`), OpenAI Agents SDK sessions (:mod:`.openai_agents`) and pydantic-ai agents
(:mod:`.pydantic_ai`). Each module imports its framework when it is imported (the
``langchain``, ``openai-agents`` and ``pydantic-ai`` extras); this package imports none.

Every hook sees the whole conversation on each model call and fits it to the window with a
:class:`~ctxengine.engine.stateless.PrefixCache` (:class:`._fit.Fitter`): the call continues
from the compaction of the previous call, the messages kept verbatim are the framework's own
objects, and the rest (continuation state, pruned or truncated tool results) is made anew in
the framework's types.
"""
