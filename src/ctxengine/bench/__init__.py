"""The fact-survival benchmark of the continuation state (``ctxengine bench``)."""
