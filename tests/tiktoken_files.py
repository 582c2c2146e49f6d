"""Where the tests find the ``tiktoken`` encoding files (``o200k_base``, ``cl100k_base``).

``tiktoken`` downloads an encoding on first use unless the folder ``TIKTOKEN_CACHE_DIR``
names holds it (the file named by the SHA-1 of its download address). CI puts the two files
there (``.ci/run`` takes them from the ``litellm`` wheel, which ships both); elsewhere an
installed ``litellm``'s own ``tokenizers`` folder is used. Without either, the tests that
count with an encoding are skipped, saying why.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

#: Download address of each encoding (tiktoken's cache file is named by its SHA-1).
ADDRESSES = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def cache_name(encoding: str) -> str:
    """The file name tiktoken caches ``encoding`` under."""
    return hashlib.sha1(ADDRESSES[encoding].encode()).hexdigest()


def _litellm_tokenizers() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"


def encodings_dir() -> Path | None:
    """A folder holding both encoding files: ``$TIKTOKEN_CACHE_DIR``, else an installed
    litellm's ``tokenizers`` folder; ``None`` when neither holds them."""
    named = os.environ.get("TIKTOKEN_CACHE_DIR")
    for folder in (Path(named) if named else None, _litellm_tokenizers()):
        if folder is not None and all((folder / cache_name(e)).is_file() for e in ADDRESSES):
            return folder
    return None


def skip_reason() -> str | None:
    """Why the encoding tests cannot run here, or ``None`` when they can."""
    if importlib.util.find_spec("tiktoken") is None:
        return "tiktoken is not installed (pip install -e '.[dev]')"
    if encodings_dir() is None:
        names = ", ".join(f"{e} as {cache_name(e)}" for e in ADDRESSES)
        return (
            "the tiktoken encoding files are not available offline: put them ("
            + names
            + ") in a folder named by TIKTOKEN_CACHE_DIR (.ci/run takes them from the "
            "litellm 1.110.2 wheel)"
        )
    return None
