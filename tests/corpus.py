"""Location of the shared transcript corpus (``../shared/corpus`` next to the repository).

Tests that read it call :func:`require_corpus` first: it skips when the corpus is absent on a
developer machine and fails under CI (``CI=true``), where the corpus must be present.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS: Path = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def require_corpus(*parts: str) -> Path:
    """``CORPUS`` joined with ``parts``; skips (or fails under CI) when it does not exist."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{path} not found (the corpus is required under CI)")
        pytest.skip("../shared/corpus not found")
    return path
