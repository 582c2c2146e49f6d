"""The proxy's own refusals and failures, and how each API shapes them.

A :class:`Refused` names what went wrong by ``kind``; :func:`error_body` writes it in the
API's own error shape, with the types and codes its clients read:

======================  ===============================  ==========================
kind                    OpenAI (``type`` / ``code``)     Anthropic ``type``
======================  ===============================  ==========================
``invalid_request``     ``invalid_request_error`` / null ``invalid_request_error``
``context_length``      ``invalid_request_error`` /      ``invalid_request_error``,
                        ``context_length_exceeded``      message "prompt is too
                                                         long: N tokens > M maximum"
``request_too_large``   ``invalid_request_error`` / null ``request_too_large``
``no_upstream``         ``invalid_request_error`` / null ``invalid_request_error``
``proxy``               ``server_error`` / null          ``api_error``
``upstream``            ``server_error`` / null          ``api_error``
======================  ===============================  ==========================

The Anthropic wording of a too-long prompt is the API's own ("prompt is too long: 210000
tokens > 200000 maximum"), which Claude Code reads to decide on its own compaction; the
proxy's explanation follows it.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

__all__ = ["Kind", "Refused", "error_body"]

Kind: TypeAlias = Literal[
    "invalid_request", "context_length", "request_too_large", "no_upstream", "proxy", "upstream"
]

_OPENAI: dict[Kind, tuple[str, str | None]] = {
    "invalid_request": ("invalid_request_error", None),
    "context_length": ("invalid_request_error", "context_length_exceeded"),
    "request_too_large": ("invalid_request_error", None),
    "no_upstream": ("invalid_request_error", None),
    "proxy": ("server_error", None),
    "upstream": ("server_error", None),
}
_ANTHROPIC: dict[Kind, str] = {
    "invalid_request": "invalid_request_error",
    "context_length": "invalid_request_error",
    "request_too_large": "request_too_large",
    "no_upstream": "invalid_request_error",
    "proxy": "api_error",
    "upstream": "api_error",
}


class Refused(Exception):
    """A request the proxy will not forward, or could not: answered with ``status`` in the
    API's own error shape (:func:`error_body`).

    Attributes:
        status: the HTTP status (400 bad or oversized context, 413 body over the size limit,
            500 the proxy failed, 502 the upstream is unreachable).
        kind: what went wrong (see the module table).
        param: the JSON path at fault, when known (``$.messages[3].role``).
        tokens / limit: for ``context_length``: the context's size and the limit it is over
            (tokens).
        key / model: the conversation and model, when known (for the log line).
    """

    def __init__(
        self,
        status: int,
        kind: Kind,
        message: str,
        param: str | None = None,
        *,
        tokens: int | None = None,
        limit: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind: Kind = kind
        self.param = param
        self.tokens = tokens
        self.limit = limit
        self.key: str | None = None
        self.model: str | None = None

    @property
    def message(self) -> str:
        """The explanation, without the API's wording around it."""
        return str(self.args[0])


def error_body(api: str | None, refused: Refused) -> dict[str, Any]:
    """``refused`` in the error shape of ``api`` (``"anthropic"``: ``{"type": "error",
    "error": {"type", "message"}}``; any other, OpenAI's ``{"error": {"message", "type",
    "param", "code"}}``)."""
    message = refused.message
    if api == "anthropic":
        if refused.kind == "context_length" and refused.tokens is not None:
            message = (
                f"prompt is too long: {refused.tokens} tokens > {refused.limit} maximum ({message})"
            )
        return {"type": "error", "error": {"type": _ANTHROPIC[refused.kind], "message": message}}
    kind, code = _OPENAI[refused.kind]
    return {"error": {"message": message, "type": kind, "param": refused.param, "code": code}}
