"""Running the real ``ctxengine`` command in a subprocess (stdout and stderr are pipes, as
in a script), and checking ``--json`` documents against the schemas shipped in the package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxengine.cli.schemas import schema

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "session.jsonl"
#: The example session's id (Claude Code's own session id).
EXAMPLE_ID = "6900ea68-31eb-44fe-9d0f-8366413ede7e"


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: no summary model or store configured, this
    checkout's sources first, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "CTXENGINE_"))
    }
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), *([os.environ["PYTHONPATH"]] if "PYTHONPATH" in os.environ else [])]
    )
    env.update(extra)
    return env


def cli(
    *args: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``python -m ctxengine ARGS`` with stdout and stderr captured through pipes."""
    return subprocess.run(
        [sys.executable, "-m", "ctxengine", *map(str, args)],
        cwd=cwd,
        env=env if env is not None else cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def validate(document: Any, command: str) -> None:
    """Check ``document`` against ``schemas/<command>.json`` (jsonschema, draft 2020-12).
    Skips when jsonschema is missing on a developer machine; fails under CI."""
    try:
        import jsonschema
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("jsonschema is required under CI (pip install -e '.[dev]')")
        pytest.skip("jsonschema is not installed (pip install -e '.[dev]')")
    found = schema(command)
    jsonschema.Draft202012Validator.check_schema(found)
    jsonschema.Draft202012Validator(found).validate(document)
