"""``ctxengine report``: the policy comparison as a self-contained HTML page (and a PNG of it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ctxengine.cli.chromium import require_chromium, screenshot
from ctxengine.cli.comparison import (
    ALL_PRESETS,
    CacheProviderOpt,
    CacheTtlOpt,
    ComparisonSpec,
    JobsOpt,
    PolicyOpt,
    PriceModelOpt,
    PricesOpt,
    SampleOpt,
    run_comparison,
)
from ctxengine.cli.load import check_output_path, load_target
from ctxengine.cli.options import (
    DbOpt,
    ForceOpt,
    FormatOpt,
    JsonOpt,
    KeepRecentOpt,
    QuietOpt,
    SessionOpt,
    StrictOpt,
    TargetArg,
    TokenizerOpt,
    WindowOpt,
    resolve_tokenizer,
)
from ctxengine.cli.output import dump_json, say, write_output
from ctxengine.cli.progress import progress
from ctxengine.policy.defaults import DEFAULT_WINDOW
from ctxengine.replay.consumers import token_consumers
from ctxengine.replay.html import report_html

#: Size of the ``--png`` screenshot, in CSS pixels: the least width and height, then what each
#: policy column of the comparison table and each table row below the charts adds.
PNG_WIDTH, PNG_HEIGHT = 1200, 1600
PNG_COLUMN_PX, PNG_ROW_PX = 110, 26
#: Rows of the page's tables besides the consumers (comparison table, cache check, notes).
PNG_FIXED_ROWS = 40


def png_size(policies: int, consumers: int) -> tuple[int, int]:
    """(width, height) of the screenshot of a page comparing ``policies`` policies and
    listing ``consumers`` top consumers (tools and files), in CSS pixels."""
    width = max(PNG_WIDTH, 300 + PNG_COLUMN_PX * policies)
    return width, PNG_HEIGHT + PNG_ROW_PX * (consumers + PNG_FIXED_ROWS)


def report_cmd(
    output: Annotated[
        str, typer.Option("-o", "--output", help="The HTML file to write (never the input).")
    ],
    target: TargetArg = None,
    session: SessionOpt = None,
    png: Annotated[
        bool, typer.Option("--png", help="Also write a screenshot beside it (needs Chromium).")
    ] = False,
    window: WindowOpt = DEFAULT_WINDOW,
    keep_recent: KeepRecentOpt = None,
    policy: PolicyOpt = None,
    sample: SampleOpt = 0,
    model: PriceModelOpt = None,
    prices: PricesOpt = None,
    cache_ttl: CacheTtlOpt = "5m",
    cache_provider: CacheProviderOpt = None,
    db: DbOpt = None,
    format: FormatOpt = None,
    strict: StrictOpt = False,
    quiet: QuietOpt = False,
    force: ForceOpt = False,
    json_out: JsonOpt = False,
    jobs: JobsOpt = 0,
    tokenizer: TokenizerOpt = "auto",
) -> None:
    """Replay a session under each policy (default: every preset) and write one HTML page:
    the context size of every call per policy with the window, the triggers, compactions and
    prunes; the share of each request read from the prompt cache; the comparison table; the
    top token consumers by tool and by file. No network is needed to view it. --tokenizer
    auto counts for --model's tokenizer when --model is given."""
    counting = resolve_tokenizer(tokenizer, model)
    page = Path(output)
    image = page.with_suffix(".png") if png else None
    check_output_path(output, target, db, "html", force)
    if image is not None:
        check_output_path(str(image), target, db, "png", force)
        require_chromium()  # before the replay, and before anything is written
    spec = ComparisonSpec.of(
        policy or [ALL_PRESETS],
        keep_recent=keep_recent,
        window=window,
        prices=prices,
        model=model,
        cache_ttl=cache_ttl,
        cache_provider=cache_provider,
        sample=sample,
        jobs=jobs,
        tokenizer=counting,
    )
    with progress("reading", quiet=quiet) as tracker:
        t = load_target(target, session=session, db=db, format=format, strict=strict)
        comparison = run_comparison(t, spec, tracker)
        tools, files = token_consumers(t.entries, counting.estimator())
        tracker.step(f"writing {page}")
        write_output(str(page), report_html(comparison, tools, files).encode("utf-8"))
        if image is not None:
            tracker.step(f"taking the screenshot {image}")
            width, height = png_size(len(spec.policies), len(tools) + len(files))
            screenshot(page, image, width=width, height=height)
    if json_out:
        doc = {
            "html": str(page),
            "png": None if image is None else str(image),
            "tokenizer": counting.name,
            "comparison": comparison.to_dict(),
        }
        dump_json(doc, None)
        return
    calls = sum(len(r.steps) for r in comparison.runs)
    say(f"wrote {page} ({len(comparison.runs)} policies, {calls:,} model calls)")
    if image is not None:
        say(f"wrote {image}")
