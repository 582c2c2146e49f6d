"""A comparison as one self-contained HTML page: inline SVG and CSS, no script, nothing
fetched at view time. Pure: data in, text out.

Sections: the context size of every call per policy (the window and each policy's trigger as
dashed lines, compactions as dots, prunes as triangles); the share of each request read from
the simulated prompt cache (breaks as crosses); the comparison table; the top token consumers
by tool and by file; the cache model against the transcript's recorded reads; the notes.

Series are drawn without anti-aliasing (``shape-rendering="crispEdges"``), so every policy's
colour (:data:`PALETTE`, in policy order) appears exactly in a screenshot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from ctxengine.replay.compare import Comparison, PolicyRun
from ctxengine.replay.consumers import Consumer

#: Series colours, one per policy in order (the ten of matplotlib's ``tab10``), as
#: ``#rrggbb``.
PALETTE: tuple[str, ...] = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#003f5c",
    "#a05195",
    "#665191",
    "#00876c",
)
#: Chart size in CSS pixels, and the room left for axis labels.
WIDTH, HEIGHT = 1100, 360
_LEFT, _RIGHT, _TOP, _BOTTOM = 80, 20, 20, 40
_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.meta { color: #555; } .legend span { margin-right: 16px; white-space: nowrap; }
.swatch { display: inline-block; width: 14px; height: 4px; vertical-align: middle;
  margin-right: 4px; }
svg text { font: 11px system-ui, sans-serif; fill: #444; }
"""


def colour(index: int) -> str:
    """The colour of the ``index``-th policy (the palette repeats after fourteen, more than
    the presets there are)."""
    return PALETTE[index % len(PALETTE)]


@dataclass(frozen=True, slots=True)
class _Series:
    name: str
    colour: str
    points: Sequence[tuple[float, float]]


def report_html(
    comparison: Comparison, tools: Sequence[Consumer], files: Sequence[Consumer]
) -> str:
    """The page for ``comparison``, with ``tools`` and ``files`` as the top consumers."""
    c = comparison
    rules = c.price.rules
    ttl = rules.long_ttl_s if c.long_ttl else rules.ttl_s
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>ctxengine replay: {escape(c.source)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Replay of {escape(c.source)}</h1>",
        f'<p class="meta">{c.window:,}-token window; {escape(rules.provider)} prompt cache '
        f"({escape(rules.mode)}, lifetime {int(ttl)} s); {escape(c.price.price.name)} prices. "
        "Sizes are estimated tokens.</p>",
        _legend(c.runs),
        "<h2>Context size per call</h2>",
        _timeline(c),
        "<h2>Share of each request read from the prompt cache</h2>",
        _reuse(c),
        "<h2>Policies</h2>",
        _table(c),
        "<h2>Top token consumers</h2>",
        _consumers("tool", tools),
        _consumers("file", files),
        _check(c),
        _notes(c),
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _legend(runs: Sequence[PolicyRun]) -> str:
    items = "".join(
        f'<span><i class="swatch" style="background:{colour(i)}"></i>{escape(r.name)}</span>'
        for i, r in enumerate(runs)
    )
    return f'<p class="legend">{items}</p>'


def _timeline(c: Comparison) -> str:
    series = [
        _Series(r.name, colour(i), [(s.call, s.tokens) for s in r.steps])
        for i, r in enumerate(c.runs)
    ]
    top = max([c.window, *(r.peak_context for r in c.runs)]) * 1.05
    lines = [(c.window, "#000000", "window")]
    for i, r in enumerate(c.runs):
        if r.trigger is not None:
            lines.append((r.trigger, colour(i), f"{r.name} trigger"))
    marks: list[str] = []
    chart = _Chart(_max_calls(c), top)
    for i, r in enumerate(c.runs):
        for s in r.steps:
            kinds = {e.step for e in s.events}
            x, y = chart.x(s.call), chart.y(s.tokens)
            if "compaction" in kinds:
                marks.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour(i)}"/>')
            if "prune" in kinds:
                marks.append(
                    f'<polygon points="{x:.1f},{y - 6:.1f} {x - 5:.1f},{y + 3:.1f} '
                    f'{x + 5:.1f},{y + 3:.1f}" fill="none" stroke="{colour(i)}"/>'
                )

    def tokens(v: float) -> str:
        return f"{v / 1000:,.0f}k" if top >= 10_000 else f"{v:,.0f}"

    return chart.svg(series, lines, marks, tokens)


def _reuse(c: Comparison) -> str:
    series = [
        _Series(
            r.name,
            colour(i),
            [
                (s.call, 100 * s.cache.read / s.cache.prompt)
                for s in r.steps
                if s.cache is not None and s.cache.prompt
            ],
        )
        for i, r in enumerate(c.runs)
    ]
    chart = _Chart(_max_calls(c), 100)
    marks = []
    for i, r in enumerate(c.runs):
        for s in r.steps:
            if s.cause is not None and s.cache is not None and s.cache.prompt:
                x, y = chart.x(s.call), chart.y(100 * s.cache.read / s.cache.prompt)
                marks.append(
                    f'<path d="M{x - 4:.1f},{y - 4:.1f}L{x + 4:.1f},{y + 4:.1f}'
                    f'M{x - 4:.1f},{y + 4:.1f}L{x + 4:.1f},{y - 4:.1f}" '
                    f'stroke="{colour(i)}" stroke-width="1.5"><title>{escape(s.cause)}</title>'
                    "</path>"
                )
    return chart.svg(series, [], marks, lambda v: f"{v:.0f} %")


def _max_calls(c: Comparison) -> int:
    return max([1, *(len(r.steps) for r in c.runs)])


@dataclass(frozen=True, slots=True)
class _Chart:
    """Axes from call 1 to ``calls`` and from 0 to ``top``."""

    calls: int
    top: float

    def x(self, call: float) -> float:
        span = max(1, self.calls - 1)
        return _LEFT + (call - 1) * (WIDTH - _LEFT - _RIGHT) / span

    def y(self, value: float) -> float:
        return HEIGHT - _BOTTOM - value * (HEIGHT - _TOP - _BOTTOM) / max(self.top, 1)

    def svg(
        self,
        series: Sequence[_Series],
        lines: Sequence[tuple[float, str, str]],
        marks: Sequence[str],
        fmt: Callable[[float], str],
    ) -> str:
        out = [
            f'<svg width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">',
            f'<rect x="{_LEFT}" y="{_TOP}" width="{WIDTH - _LEFT - _RIGHT}" '
            f'height="{HEIGHT - _TOP - _BOTTOM}" fill="none" stroke="#bbb"/>',
        ]
        for value in _ticks(self.top):
            y = self.y(value)
            out.append(
                f'<line x1="{_LEFT - 4}" x2="{_LEFT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#888"/>'
                f'<text x="{_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">'
                f"{escape(fmt(value))}</text>"
            )
        for k in range(min(10, self.calls) + 1):
            call = 1 + (self.calls - 1) * k / max(1, min(10, self.calls))
            x = self.x(call)
            out.append(
                f'<text x="{x:.1f}" y="{HEIGHT - _BOTTOM + 16}" text-anchor="middle">'
                f"{round(call)}</text>"
            )
        out.append(
            f'<text x="{(WIDTH + _LEFT) / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle">'
            "model call</text>"
        )
        for value, stroke, name in lines:
            y = self.y(value)
            out.append(
                f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                f'stroke="{stroke}" stroke-dasharray="6 4" stroke-width="1">'
                f"<title>{escape(name)}: {value:,.0f}</title></line>"
            )
        for s in series:
            if not s.points:
                continue
            points = " ".join(f"{self.x(a):.1f},{self.y(b):.1f}" for a, b in s.points)
            out.append(
                f'<polyline points="{points}" fill="none" stroke="{s.colour}" '
                f'stroke-width="3" shape-rendering="crispEdges">'
                f"<title>{escape(s.name)}</title></polyline>"
            )
        out.extend(marks)
        out.append("</svg>")
        return "".join(out)


def _ticks(top: float) -> list[float]:
    """Round values from 0 up to ``top`` for an axis: a step of 1, 2 or 5 times a power of
    ten, at most six ticks."""
    if top <= 0:
        return [0.0]
    step = 1.0
    while top / step > 5:
        for factor in (2, 2.5, 2):
            step *= factor
            if top / step <= 5:
                break
    while top / step < 2 and step > 1:
        step /= 10
    return [k * step for k in range(int(top // step) + 1)]


def _table(c: Comparison) -> str:
    runs = c.runs

    def row(label: str, cells: Sequence[str]) -> str:
        return (
            f"<tr><td>{escape(label)}</td>"
            + "".join(f"<td>{escape(cell)}</td>" for cell in cells)
            + "</tr>"
        )

    def kept(pair: tuple[int, int]) -> str:
        return f"{pair[0]}/{pair[1]}" if pair[1] else "–"

    def yes(value: bool | None) -> str:
        return "–" if value is None else ("yes" if value else "no")

    rows = [
        row("model calls", [f"{len(r.steps):,}" for r in runs]),
        row("compactions", [f"{r.result.compactions:,}" for r in runs]),
        row("prunes", [f"{r.result.prunes:,}" for r in runs]),
        row(
            "summarizer (calls, in / out tokens)",
            [
                f"{r.summary.name}{' (stand-in)' if r.summary.stand_in else ''}: "
                f"{r.summary.calls}, {r.summary.input_tokens:,} / {r.summary.output_tokens:,}"
                for r in runs
            ],
        ),
        row("peak context", [f"{r.peak_context:,}" for r in runs]),
        row("mean context", [f"{r.mean_context:,}" for r in runs]),
        row("input tokens billed", [f"{r.billed_input:,}" for r in runs]),
        row("cache reads", [f"{r.cache_read:,}" for r in runs]),
        row("cache writes", [f"{r.cache_write:,}" for r in runs]),
        row(
            "cache breaks",
            [", ".join(f"{k} {n}" for k, n in r.breaks.items()) or "0" for r in runs],
        ),
        row("estimated cost", [f"${r.cost:,.2f}" for r in runs]),
        row("first request kept", [yes(r.survival.first_request) for r in runs]),
        row("constraints kept", [kept(r.survival.constraints) for r in runs]),
        row("modified files kept", [kept(r.survival.modified_files) for r in runs]),
        row("last error kept", [yes(r.survival.last_error) for r in runs]),
        row("over the window at call", [str(r.overflow_call or "–") for r in runs]),
        row("invalid requests", [f"{r.result.invalid:,}" for r in runs]),
    ]
    head = "<tr><th></th>" + "".join(
        f'<th style="color:{colour(i)}">{escape(r.name)}</th>' for i, r in enumerate(runs)
    )
    return f"<table>{head}</tr>{''.join(rows)}</table>"


def _consumers(kind: str, items: Sequence[Consumer]) -> str:
    if not items:
        return f"<p>No {kind} results.</p>"
    rows = "".join(
        f"<tr><td>{escape(i.name)}</td><td>{i.calls:,}</td><td>{i.tokens:,}</td></tr>"
        for i in items
    )
    return f"<table><tr><th>{kind}</th><th>calls</th><th>result tokens</th></tr>{rows}</table>"


def _check(c: Comparison) -> str:
    check = c.cache_check
    if check is None:
        return ""

    def pct(value: float | None) -> str:
        return "–" if value is None else f"{100 * value:.1f} %"

    rows = "".join(
        f"<tr><td>{b['call']}</td><td>{b['recorded_read']:,} / {b['recorded_prompt']:,}</td>"
        f"<td>{escape(b['recorded_cause'] or ('break' if b['recorded_break'] else '–'))}</td>"
        f"<td>{b['simulated_read']:,}</td><td>{escape(b['simulated_cause'] or '–')}</td></tr>"
        for b in check["breaks"]
    )
    table = (
        "<table><tr><th>call</th><th>recorded read / prompt</th><th>recorded cause</th>"
        f"<th>simulated read</th><th>simulated cause</th></tr>{rows}</table>"
        if rows
        else ""
    )
    return (
        "<h2>The cache model against the transcript's own requests</h2>"
        f"<p>{check['compared']:,} calls after the first; cache-read ratio recorded "
        f"{pct(check['recorded_share'])}, simulated {pct(check['simulated_share'])}; reads "
        f"recorded {check['recorded_read']:,}, simulated {check['simulated_read']:,} tokens; "
        f"unrecorded head {check['head_tokens']:,} tokens.</p>{table}"
    )


def _notes(c: Comparison) -> str:
    if not c.notes:
        return ""
    items = "".join(f"<li>{escape(n)}</li>" for n in c.notes)
    return f"<h2>Notes</h2><ul>{items}</ul>"
