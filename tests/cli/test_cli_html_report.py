"""``ctxengine report``: a self-contained HTML page, its screenshot in headless Chromium, and
the refusal to write over an input.

The screenshot tests need Chromium (Debian's ``chromium`` package; ``.ci/run`` installs it):
they are skipped where it is absent, and fail under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from cli_helpers import validate

from corpus import require_corpus
from ctxengine.cli import main
from ctxengine.cli.chromium import find_chromium, screenshot
from ctxengine.cost import shipped_price_table
from ctxengine.importers import read_transcript
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.policy.presets import PRESET_NAMES
from ctxengine.replay.compare import compare
from ctxengine.replay.consumers import token_consumers
from ctxengine.replay.html import PALETTE, report_html
from ctxengine.tokens import HeuristicEstimator
from png_pixels import colour_counts, rgb

SMALL = ("claude-code", "spotter-tool-heavy.jsonl")
LONG = ("claude-code", "spotter-long-a0y-main.jsonl")
#: Rows of a screenshot read back: the header and both charts.
CHART_ROWS = 900


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, " ".join(captured.err.split())


def require_chromium() -> str:
    """The Chromium binary; skips without one, fails under CI."""
    found = find_chromium()
    if found is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("Chromium not found under CI (.ci/run installs Debian's chromium)")
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium): no screenshot")
    return found


def test_the_page_is_self_contained_and_plots_every_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = require_corpus(*SMALL)
    page = tmp_path / "report.html"
    argv = ["report", str(path), "-o", str(page), "--window", "1000", "--policy", "default"]
    code, stdout, _ = run(capsys, *argv)
    assert code == 0
    assert " ".join(stdout.split()) == f"wrote {page} (1 policies, 4 model calls)"
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    for external in ("<script", "<link", " src=", " href=", "url(", "@import", "http"):
        assert external not in html, external
    lines = re.findall(r'<polyline points="([^"]*)" fill="none" stroke="#1f77b4"', html)
    assert [len(p.split()) for p in lines] == [4, 4]  # the timeline and the cache reuse
    assert "<title>window: 1,000</title>" in html
    assert "<title>default trigger: 800</title>" in html
    # no compaction: the largest request, 771 tokens (o200k_base: 733), stays under 800
    assert html.count('<circle cx="') == 0
    assert "<td>Bash</td>" in html
    code, stdout, _ = run(capsys, *argv, "--json")
    doc = json.loads(stdout)
    validate(doc, "report")
    assert (doc["html"], doc["png"], doc["comparison"]["policies"][0]["calls"]) == (
        str(page),
        None,
        4,
    )


def test_each_compaction_is_plotted_as_one_circle() -> None:
    path = require_corpus("live-agents", "claude-code-2.1.328", "subagent.jsonl")
    entries = read_transcript(path).entries
    comparison = compare(
        entries, [("default", DEFAULT_POLICY)], window=1_000, prices=shipped_price_table()
    )
    (run,) = comparison.runs
    assert run.result.compactions == 1
    tools, files = token_consumers(entries, HeuristicEstimator())
    assert report_html(comparison, tools, files).count('<circle cx="') == 1


def test_the_screenshot_shows_every_policy_in_its_colour(tmp_path: Path) -> None:
    require_chromium()
    entries = read_transcript(require_corpus(*LONG)).entries
    policies = [("default", DEFAULT_POLICY), ("half", Policy(name="half", trigger_ratio=0.5))]
    comparison = compare(entries, policies, window=64_000, prices=shipped_price_table())
    tools, files = token_consumers(entries, HeuristicEstimator())
    page = tmp_path / "two.html"
    page.write_text(report_html(comparison, tools, files), encoding="utf-8")
    png = tmp_path / "two.png"
    screenshot(page, png, width=1200, height=CHART_ROWS)
    counts = colour_counts(png, CHART_ROWS)
    total = sum(counts.values())
    white = counts[(255, 255, 255)]
    assert total == 1200 * CHART_ROWS
    assert 0.02 < 1 - white / total < 0.5  # not blank, not a wall of colour
    for colour in PALETTE[:2]:
        assert counts[rgb(colour)] >= 1000, colour
    assert counts[rgb(PALETTE[2])] == 0  # no third series


def test_png_writes_the_screenshot_beside_the_page(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    require_chromium()
    path = require_corpus(*LONG)
    page = tmp_path / "long.html"
    argv = ["report", str(path), "-o", str(page), "--png", "--window", "64000"]
    code, stdout, _ = run(capsys, *argv)
    assert code == 0
    assert stdout.splitlines()[-1] == f"wrote {tmp_path / 'long.png'}"
    counts = colour_counts(tmp_path / "long.png", CHART_ROWS)
    assert counts[rgb(PALETTE[0])] >= 1000


def test_the_input_and_the_store_are_never_overwritten(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = require_corpus(*SMALL)
    copy = tmp_path / "session.jsonl"
    copy.write_bytes(source.read_bytes())
    code, stdout, stderr = run(capsys, "report", str(copy), "-o", str(copy))
    assert (code, stdout) == (2, "")
    assert stderr == (
        f"error: refusing to write {copy}: it is the input file {copy}; nothing was written"
    )
    assert copy.read_bytes() == source.read_bytes()
    db = tmp_path / "ctx.db"
    code, _, stderr = run(capsys, "report", str(copy), "-o", str(db), "--db", str(db))
    assert (code, stderr) == (
        2,
        f"error: refusing to write {db}: it is the session store {db}; nothing was written",
    )
    assert not db.exists()
    png_input = tmp_path / "session.png"
    png_input.write_bytes(b"not a picture")
    code, _, stderr = run(capsys, "report", str(copy), "-o", str(tmp_path / "session.html"),
                          "--png", "--db", str(png_input))  # fmt: skip
    assert (code, stderr) == (
        2,
        f"error: refusing to write {png_input}: it is the session store {png_input}; "
        "nothing was written",
    )
    assert png_input.read_bytes() == b"not a picture"


def test_png_without_chromium_fails_before_writing_anything(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = require_corpus(*SMALL)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CTXENGINE_CHROMIUM", raising=False)
    page = tmp_path / "out.html"
    code, stdout, stderr = run(capsys, "report", str(source), "-o", str(page), "--png")
    assert (code, stdout) == (2, "")
    assert stderr == (
        "error: --png needs Chromium: install it (Debian: apt-get install chromium) or name "
        "the binary in CTXENGINE_CHROMIUM"
    )
    assert list(tmp_path.iterdir()) == []


def test_every_preset_has_its_own_colour() -> None:
    assert len(set(PALETTE)) == len(PALETTE) >= len(PRESET_NAMES)
