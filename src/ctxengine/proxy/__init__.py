"""The compacting proxy (``ctxengine serve``): an HTTP server that speaks the OpenAI Chat
Completions and Responses APIs and the Anthropic Messages API, compacts each request's history
with ctxengine when it nears the model's window, and forwards it to an upstream.

:mod:`.wire` reads and writes request bodies, :mod:`.replies` reads upstream replies,
:mod:`.core` decides what to forward, :mod:`.record` stores the conversations, and
:mod:`.app` is the ASGI application (Starlette, httpx2; the ``serve`` extra).
"""
