"""``TiktokenCounter``: exact counts of an OpenAI BPE encoding, through ``tiktoken``.

Optional: ``pip install 'ctxengine[tiktoken]'``. ``tiktoken`` is imported when a counter is
made, never by ``import ctxengine``. The counter is an
:class:`~ctxengine.tokens.base.Estimator`: pass it where an estimator goes
(``Session(window, estimator=TiktokenCounter("o200k_base"))``). Text is counted exactly by
the encoding; everything else (message and tool-call framing, images from pixel size,
documents, reasoning signatures, tool schemas) is priced as :class:`HeuristicEstimator`
prices it, since no encoding sees it.

``tiktoken`` reads an encoding's file from the folder ``TIKTOKEN_CACHE_DIR`` names (the file
named by the SHA-1 of its download address) and downloads it there otherwise. Offline, put
the files in such a folder first: the ``litellm`` wheel ships ``o200k_base`` and
``cl100k_base`` under ``litellm/litellm_core_utils/tokenizers/``, already named that way.
"""

from __future__ import annotations

from typing import Any

from ctxengine.errors import ConfigError
from ctxengine.tokens.constants import MAX_IMAGE_TOKENS, TOKENIZER_SCRIPT_RATES
from ctxengine.tokens.estimate import HeuristicEstimator

#: The extra that installs ``tiktoken``.
EXTRA = "pip install 'ctxengine[tiktoken]'"


def load_encoding(name: str) -> Any:
    """The ``tiktoken`` encoding ``name`` (``"o200k_base"``, ``"cl100k_base"`` …).

    Raises:
        ConfigError: ``tiktoken`` is not installed (the message names the extra), the name
            is not an encoding ``tiktoken`` knows, or its file could not be read or
            downloaded (the message says how to supply it offline).
    """
    try:
        import tiktoken
    except ImportError as exc:
        raise ConfigError(f"exact token counts need tiktoken: {EXTRA}") from exc
    known = tiktoken.list_encoding_names()
    if name not in known:
        raise ConfigError(f"unknown tiktoken encoding {name!r} (known: {', '.join(known)})")
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:
        raise ConfigError(
            f"tiktoken could not load the encoding {name!r} ({type(exc).__name__}: {exc}); "
            "offline, name a folder holding its file with TIKTOKEN_CACHE_DIR (the litellm "
            "wheel ships o200k_base and cl100k_base under "
            "litellm/litellm_core_utils/tokenizers/)"
        ) from exc


class TiktokenCounter(HeuristicEstimator):
    """An :class:`~ctxengine.tokens.base.Estimator` whose text counts are exact for one
    ``tiktoken`` encoding (see the module doc).

    Args:
        encoding: an encoding name (``"o200k_base"``: GPT-4o and later; ``"cl100k_base"``:
            GPT-4 and GPT-3.5) or a ``tiktoken.Encoding`` already loaded.
        image_tokens: tokens of an image whose pixel size is unknown (as
            :class:`HeuristicEstimator`).

    Text the encoding fails on is estimated with the rates calibrated for the encoding
    (:data:`~ctxengine.tokens.constants.TOKENIZER_SCRIPT_RATES`; the default rates for
    an encoding without any).

    Raises:
        ConfigError: as :func:`load_encoding`.

    Special-token text (``<|endoftext|>``) is counted as ordinary text. Every method
    returns tokens (an int ≥ 0), at least 1 for non-empty content, and never raises.
    """

    __slots__ = ("_encode", "encoding_name")

    def __init__(self, encoding: str | Any = "o200k_base", *, image_tokens: int = MAX_IMAGE_TOKENS):
        loaded = load_encoding(encoding) if isinstance(encoding, str) else encoding
        calibrated = loaded.name if loaded.name in TOKENIZER_SCRIPT_RATES else None
        super().__init__(image_tokens=image_tokens, encoding=calibrated)
        self.encoding_name: str = loaded.name
        self._encode = loaded.encode_ordinary

    def text(self, text: str) -> int:
        """Tokens of ``text`` under the encoding; 0 only for ``""``."""
        try:
            if not text:
                return 0
            return max(1, len(self._encode(text)))
        except Exception:
            return super().text(text)

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.encoding_name!r})"
