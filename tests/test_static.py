"""The code base is lint-, format- and type-clean (ruff and mypy, as configured in
pyproject.toml). Skipped only when the dev tools are not installed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TREES = ["src", "tests", "benchmarks", "examples"]


def _tool(name: str) -> str:
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_ruff_check_is_clean() -> None:
    proc = _run(_tool("ruff"), "check", "--no-cache", *TREES)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_clean() -> None:
    proc = _run(_tool("ruff"), "format", "--check", "--no-cache", *TREES)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_is_clean() -> None:
    proc = _run(_tool("mypy"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
