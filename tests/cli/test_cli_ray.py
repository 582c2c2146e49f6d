"""``replay --ray`` and ``bench --ray`` (the extra ``ctxengine[ray]``): the same JSON as the run
in this process, over every corpus transcript × every preset; failed tasks named with the other
results kept; the message without the extra; no Ray process left behind.

Each test runs the real command in a subprocess (a local Ray cluster of at most 2 CPUs, started
and stopped by the command). The processes it starts carry a marker in their environment, and
none may be left once the command has returned.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, cli_env, validate

from corpus import CORPUS, TRANSCRIPT_DIRS, replayable_names, require_corpus
from ctxengine.importers import formats
from ctxengine.policy.presets import PRESET_NAMES

SMALL = ("claude-code", "spotter-tool-heavy.jsonl")
ABORTED = ("openai-messages", "mini-swe-agent-deepseek-reasoner-pvlib-1606-aborted.traj.json")
LOOP = (
    "ContextFloorError: no compaction can bring the context under the trigger of 1,750 tokens "
    "(window 3,500): what every compaction keeps is 3,031 tokens already (largest parts: "
    "newest user message 2,733, continuation state 176, continuation message 66); the newest "
    "user message is never cut nor summarized before it is answered: send a shorter one, or "
    "use a model with a larger window"
)
#: The variable that marks the processes a test's command starts.
MARK = "CTXENGINE_TEST_RAY_MARK"


def require_ray() -> None:
    """Skip when Ray is not installed (fail under CI, whose dev extra installs it)."""
    if importlib.util.find_spec("ray") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("ray is required under CI (pip install -e '.[dev]')")
        pytest.skip("Ray is not installed (pip install -e '.[ray]')")


def marked(mark: str) -> list[int]:
    """Ids of the running processes whose environment holds ``MARK=mark``."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def run(*args: str | Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``ctxengine ARGS`` in a subprocess; then checks that no process it started is left
    (Ray's own stop takes a few seconds after the command returns)."""
    mark = uuid.uuid4().hex
    done = cli(*args, env=cli_env(**{MARK: mark}), timeout=timeout)
    deadline = time.monotonic() + 30
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert marked(mark) == []
    return done


def without_seconds(doc: Any) -> Any:
    """``doc`` with every ``seconds`` (wall time) key left out."""
    if isinstance(doc, dict):
        return {k: without_seconds(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [without_seconds(v) for v in doc]
    return doc


def errors(stderr: str) -> list[str]:
    """The ``error:`` lines of ``stderr``."""
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def test_every_corpus_transcript_under_every_preset_gives_the_same_json_on_ray() -> None:
    require_ray()
    require_corpus()
    folders = [CORPUS / d for d in TRANSCRIPT_DIRS if (CORPUS / d).is_dir()]
    args = [*folders, "--policy", "all", "--json"]
    started = time.monotonic()
    here = run("replay", *args)
    middle = time.monotonic()
    on_ray = run("replay", *args, "--ray", "--ray-workers", "2")
    print(
        f"in process {middle - started:.1f} s, on Ray (2 workers) {time.monotonic() - middle:.1f} s"
    )
    assert (here.returncode, errors(here.stderr)) == (0, [])
    assert (on_ray.returncode, errors(on_ray.stderr)) == (0, [])
    mine, theirs = json.loads(here.stdout), json.loads(on_ray.stdout)
    validate(theirs, "replay")
    assert [s["source"] for s in theirs["sources"]] == [str(CORPUS / n) for n in replayable_names()]
    assert theirs["policies"] == list(PRESET_NAMES)
    assert [len(s["policies"]) for s in theirs["sources"]] == [11] * len(replayable_names())
    assert [t["transcripts"] for t in theirs["totals"]] == [len(replayable_names())] * 11
    # Wall time is the only thing allowed to differ.
    assert without_seconds(theirs) == without_seconds(mine)
    assert theirs != without_seconds(theirs)


def test_failed_tasks_are_named_and_the_other_results_kept(tmp_path: Path) -> None:
    require_ray()
    small, aborted = require_corpus(*SMALL), require_corpus(*ABORTED)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a transcript\n", encoding="utf-8")
    args = [aborted, bad, small, "--window", "3500", "--policy", "default,opencode", "--json"]
    on_ray = run("replay", *args, "--ray", "--ray-workers", "1")
    unrecognised = (
        f"TranscriptError: {bad}: unrecognised transcript format: text (first line: "
        f"'not a transcript') (known: {', '.join(formats())})"
    )
    assert on_ray.returncode == 1
    assert errors(on_ray.stderr) == [
        f"error: {aborted} under opencode: {LOOP}",
        f"error: {bad}: {unrecognised}",
        "error: 3 of 6 replays failed or were not run (listed above); the other results are "
        "printed",
    ]
    batch = json.loads(on_ray.stdout)
    validate(batch, "replay")
    assert batch["errors"] == [
        {"source": str(aborted), "policy": "opencode", "error": LOOP},
        {"source": str(bad), "policy": None, "error": unrecognised},
    ]
    assert [(s["source"], [p["name"] for p in s["policies"]]) for s in batch["sources"]] == [
        (str(aborted), ["default"]),
        (str(small), ["default", "opencode"]),
    ]
    here = run("replay", *args)
    assert (here.returncode, errors(here.stderr)) == (1, errors(on_ray.stderr))
    assert without_seconds(json.loads(here.stdout)) == without_seconds(batch)


def test_one_file_on_ray_prints_the_comparison_replay_file_prints() -> None:
    require_ray()
    small = require_corpus(*SMALL)
    args = [small, "--window", "1000", "--policy", "default,pi,none"]
    here, on_ray = run("replay", *args), run("replay", *args, "--ray", "--ray-workers", "2")
    assert (here.returncode, on_ray.returncode) == (0, 0)
    assert on_ray.stdout == here.stdout
    assert on_ray.stdout.splitlines()[1] == "\tdefault\tpi\tnone"


def test_bench_on_ray_gives_the_same_report() -> None:
    require_ray()
    args = ["bench", "--sessions", "2", "--k", "1", "--json"]
    here, on_ray = run(*args), run(*args, "--ray", "--ray-workers", "2")
    assert (here.returncode, on_ray.returncode) == (0, 0)
    mine, theirs = json.loads(here.stdout), json.loads(on_ray.stdout)
    validate(theirs, "bench")
    assert [s["name"] for s in theirs["sessions"]] == ["debug-0", "feature-1"]
    assert theirs["policies"]["default"]["determinism"] == {"cells": 2, "identical": 2}
    assert theirs["errors"] == []
    assert without_seconds(theirs) == without_seconds(mine)


def test_without_the_extra_ray_is_named_in_one_line(tmp_path: Path) -> None:
    small = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"
    blocker = tmp_path / "ray"
    blocker.mkdir()
    (blocker / "__init__.py").write_text(
        "raise ImportError(\"No module named 'ray'\")\n", encoding="utf-8"
    )
    env = cli_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    line = "error: --ray needs Ray, an optional extra: pip install 'ctxengine[ray]'\n"
    for args in (
        ["replay", small, "--policy", "default", "--ray"],
        ["replay", small, "--policy", "default", "--ray-address", "auto"],
        ["bench", "--sessions", "1", "--k", "1", "--ray"],
    ):
        done = cli(*args, env=env)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", line)
