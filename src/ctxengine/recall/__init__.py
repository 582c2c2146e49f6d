"""History recall: search a session's whole log (compacted entries included) for exact
excerpts (:class:`HistoryIndex`), and the ``recall`` tool an agent calls to do it
(:data:`RECALL_TOOL`, :func:`run_recall_tool`)."""

from .search import HistoryIndex, RecallHit, RecallQuery, RecallResult
from .tool import RECALL_TOOL, format_result, query_from_arguments, run_recall_tool

__all__ = [
    "RECALL_TOOL",
    "HistoryIndex",
    "RecallHit",
    "RecallQuery",
    "RecallResult",
    "format_result",
    "query_from_arguments",
    "run_recall_tool",
]
