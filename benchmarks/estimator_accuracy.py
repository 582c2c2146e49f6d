"""Accuracy of the heuristic token estimator against OpenAI's BPE encodings, per content class
(not a test).

Run: ``python benchmarks/estimator_accuracy.py [--encodings-dir DIR] [--min-chars 64]
[--worst N]``. Needs ``tiktoken`` (the ``dev`` extra) and the encoding files of
``o200k_base`` and ``cl100k_base``, looked up in this order: ``--encodings-dir``, the folder
``$TIKTOKEN_CACHE_DIR`` names, the ``tokenizers`` folder of an installed ``litellm`` (whose
wheel ships both). Without them the script says how to get them and exits with status 2.

**Samples.** Every transcript of the corpus that ctxengine imports (``_common.importable``)
is read; each text a request carries becomes one sample: a text part (any role), the
arguments of a tool call, the text of a tool result, the text of a reasoning part. Opaque
payloads the corpus keeps (reasoning signatures, encrypted reasoning, native compaction
items: all base64) are samples of the ``blob`` class, measured as the text they would be if
a tool printed them. Identical texts count once; texts shorter than ``--min-chars``
characters (64) are left out (one token of rounding is already 5 % of 20 tokens).

**Classes.** A sample's class comes from the rules below, applied in this order; they are
this script's own and share nothing with the estimator, so the table cannot flatter it:

1. ``blob``: at least half of its characters lie in base64 runs: maximal runs of at least
   64 characters of ``A–Z a–z 0–9 + / - _`` (``=`` padding after) whose letters are 25–75 %
   upper case and of which at least 3 % are digits (paths, identifiers and hex digests fail
   the case test).
2. ``json``: stripped, it starts with ``{`` or ``[`` and parses as a JSON object or array.
3. ``scripts`` (CJK and other scripts): at least 15 % of its non-space characters are
   letters or marks outside ASCII (Unicode categories L* and M*).
4. ``paths``: paths, listings and digits: unless 60 % of its lines carry a line-number
   prefix (``  12→``, ``12<TAB>``: numbered source code), either at least 3 non-empty lines
   of which at least 60 % are listing lines (an ``ls -l`` row; a line of at most three
   fields one of which holds ``/`` or ends in a file extension; a line whose non-space
   characters are at least 30 % digits), or digits are at least 25 % of its non-space
   characters.
5. ``code``: at least 40 % of its non-empty lines (line-number prefixes removed) end in one
   of ``{ } ; : , ( ) [ ]`` or ``=>``/``->``, start with a keyword of a common language
   (``def``, ``class``, ``import``, ``return``, ``const``, ``fn``, ``#include`` …) or an
   ``@decorator``, or are indented and start with something other than a letter.
6. ``prose``: letters are at least 70 % of its non-space characters.
7. ``mixed``: the rest.

**Tool outputs.** A second table checks the estimator on shell outputs the corpus has few
of (``_tool_outputs.py``: column-aligned tables such as ``pip list``, ``df -h``,
``dpkg -l``; ``mount``; ``/proc/cpuinfo``; ANSI-coloured listings, grep hits and diffs;
long runs of blanks), synthesized from a seed the estimator's blank-run and escape
constants were not fitted on; ``--live`` adds the outputs of a few read-only commands of
the machine it runs on (not saved).

**Check texts.** A third table reads ``check_texts.json``: prose in 20 languages written in
Latin letters (documentation, a user's message to a coding agent, news; English among them)
and source files in 15 programming languages, written for this check because the corpus is
almost all English. The foreign-prose rates of ``tokens/constants.py`` were chosen on its
prose; per group it prints how many texts the estimator reads as prose in a language other
than English, and the median and lowest error of each estimate.

**Figures.** Per class and encoding: samples, the median error, the 5th and 95th percentile,
the worst error (largest in size, with its sign), and the share of samples estimated more
than 10 % under the encoding's count. Error = (estimate − encoding's count) / encoding's
count, in %; the estimate is the text alone, without the framing a message adds. Two
tables: the estimator calibrated for the encoding of the row
(``HeuristicEstimator(encoding=...)``, what a session of a GPT model uses), and the default
one (``HeuristicEstimator()``, fitted to the larger of the two counts: what a session whose
model's tokenizer is unknown uses) against each encoding. ``--worst N`` lists, per class,
the N samples the default estimate puts furthest under the larger count, with the error of
each calibrated estimate against its encoding. Images are priced from their pixel size by
the provider's rule, which no text encoding measures: they are listed on their own, with no
error figure.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import importable, median, percentile, require_corpus, table
from _tool_outputs import CHECK_SEED, KINDS, live_samples
from _tool_outputs import samples as tool_samples

from ctxengine.errors import TranscriptError
from ctxengine.importers import read_transcript
from ctxengine.model import (
    ImagePart,
    Message,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.tokens import HeuristicEstimator, estimate_tokens_for_image
from ctxengine.tokens.estimate import _foreign_prose, _latin1

#: Encodings compared, with the address tiktoken downloads each from (its cache file is
#: named by the SHA-1 of that address) and the SHA-256 tiktoken checks the file against.
ENCODINGS: dict[str, tuple[str, str]] = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}
CLASSES = ("code", "prose", "json", "scripts", "paths", "blob", "mixed")
HOW_TO_GET = """\
the encoding files of o200k_base and cl100k_base were not found ({tried}).
They ship inside the litellm wheel (tiktoken itself downloads them on first use):
    pip download --no-deps litellm==1.110.2 -d /tmp/litellm-wheel
    mkdir -p /tmp/tiktoken-cache && cd /tmp/tiktoken-cache
    unzip -j /tmp/litellm-wheel/litellm-1.110.2-*.whl \\
        litellm/litellm_core_utils/tokenizers/{o200k} \\
        litellm/litellm_core_utils/tokenizers/{cl100k}
then run again with --encodings-dir /tmp/tiktoken-cache
(or with TIKTOKEN_CACHE_DIR=/tmp/tiktoken-cache)."""


def cache_name(encoding: str) -> str:
    """The file name tiktoken caches ``encoding`` under: SHA-1 of its download address."""
    return hashlib.sha1(ENCODINGS[encoding][0].encode()).hexdigest()


def litellm_tokenizers() -> Path | None:
    """The ``tokenizers`` folder of an installed ``litellm`` (found without importing it:
    importing litellm sets ``TIKTOKEN_CACHE_DIR`` for the whole process)."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"


def holds_encodings(folder: Path) -> bool:
    """True when ``folder`` holds both encoding files, each with tiktoken's checksum."""
    for name, (_, sha256) in ENCODINGS.items():
        path = folder / cache_name(name)
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
            return False
    return True


def find_encodings(explicit: str | None) -> Path:
    """The folder of the encoding files (see the module doc); exits with status 2 and the
    way to get them when none is found."""
    candidates: list[tuple[str, Path | None]] = [
        ("--encodings-dir", Path(explicit) if explicit else None),
        ("TIKTOKEN_CACHE_DIR", Path(os.environ["TIKTOKEN_CACHE_DIR"]))
        if os.environ.get("TIKTOKEN_CACHE_DIR")
        else ("TIKTOKEN_CACHE_DIR", None),
        ("litellm", litellm_tokenizers()),
    ]
    tried = []
    for label, folder in candidates:
        if folder is None:
            continue
        if holds_encodings(folder):
            return folder
        tried.append(f"{label}: {folder}")
        if label == "--encodings-dir":
            break
    print(
        HOW_TO_GET.format(
            tried="; ".join(tried) or "no --encodings-dir, no TIKTOKEN_CACHE_DIR, no litellm",
            o200k=cache_name("o200k_base"),
            cl100k=cache_name("cl100k_base"),
        ),
        file=sys.stderr,
    )
    raise SystemExit(2)


def load_encodings(folder: Path) -> dict[str, Any]:
    """The tiktoken encodings, read from ``folder`` (tiktoken's cache lookup)."""
    try:
        import tiktoken
    except ImportError:
        print("tiktoken is missing: pip install -e '.[dev]'", file=sys.stderr)
        raise SystemExit(2) from None
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    return {name: tiktoken.get_encoding(name) for name in ENCODINGS}


# ----------------------------------------------------------------------------- samples


@dataclass(frozen=True, slots=True)
class Sample:
    """One text a request carries, with where it came from (corpus path, part kind)."""

    text: str
    source: str
    kind: str


def texts_of(parts: Sequence[Part], role: str) -> Iterator[tuple[str, str]]:
    """``(kind, text)`` of every text a request carries in ``parts``, and of every opaque
    payload (kind ``payload``)."""
    for part in parts:
        if isinstance(part, TextPart):
            yield role, part.text
        elif isinstance(part, ToolCallPart):
            yield "tool_call", part.arguments
        elif isinstance(part, ToolResultPart):
            yield from (("tool_result", p.text) for p in part.content if isinstance(p, TextPart))
        elif isinstance(part, ReasoningPart):
            yield "reasoning", part.text
            if part.signature:
                yield "payload", part.signature
        elif isinstance(part, NativeCompactionPart):
            yield "payload", part.payload


def collect(corpus: Path) -> tuple[list[Sample], list[tuple[str, ImagePart]]]:
    """Every distinct sample of the corpus, and every image part with its source."""
    samples: list[Sample] = []
    images: list[tuple[str, ImagePart]] = []
    seen: set[str] = set()
    for path, _ in importable(corpus):
        try:
            transcript = read_transcript(path)
        except TranscriptError:
            continue
        source = str(path.relative_to(corpus))
        for entry in transcript.entries:
            message = entry.body
            if not isinstance(message, Message):
                continue
            for kind, text in texts_of(message.parts, message.role):
                if text and text not in seen:
                    seen.add(text)
                    samples.append(Sample(text, source, kind))
            images.extend((source, p) for p in _images(message.parts))
    return samples, images


def _images(parts: Iterable[Part]) -> Iterator[ImagePart]:
    for part in parts:
        if isinstance(part, ImagePart):
            yield part
        elif isinstance(part, ToolResultPart):
            yield from _images(part.content)


# ----------------------------------------------------------------------------- classes

_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{64,}=*")
_LS_ROW = re.compile(r"^[-dlcbps][rwxsStT-]{9}[@+.]?\s+\d+\s")
_NUMBERED = re.compile(r"^\s*\d+(?:→|\t)")
_FILE = re.compile(r"[\w.-]+\.[A-Za-z0-9]{1,6}$")
_KEYWORD = re.compile(
    r"^\s*(?:def|class|import|from|return|if|elif|else|for|while|try|except|with|const|let|"
    r"var|function|fn|pub|use|package|func|defmodule|defp|end|async|await|export|interface|"
    r"type|struct|impl|match|case|switch|#include|#define|@\w+)\b"
)
_CODE_END = re.compile(r"(?:[{};:,()\[\]]|=>|->)\s*$")


def _is_base64_run(run: str) -> bool:
    letters = sum(c.isalpha() for c in run)
    upper = sum(c.isupper() for c in run)
    digits = sum(c.isdigit() for c in run)
    return letters > 0 and 0.25 <= upper / letters <= 0.75 and digits >= 0.03 * len(run)


def _listing_line(line: str) -> bool:
    if _LS_ROW.match(line):
        return True
    fields = line.split()
    if 1 <= len(fields) <= 3 and any("/" in f or _FILE.search(f) for f in fields):
        return True
    solid = [c for c in line if not c.isspace()]
    return bool(solid) and sum(c.isdigit() for c in solid) >= 0.3 * len(solid)


def classify(text: str) -> str:
    """The class of ``text`` by the rules of the module doc."""
    blob = sum(len(m.group()) for m in _B64_RUN.finditer(text) if _is_base64_run(m.group()))
    if blob >= 0.5 * len(text):
        return "blob"
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            if isinstance(json.loads(stripped), dict | list):
                return "json"
        except ValueError:
            pass
    solid = [c for c in text if not c.isspace()]
    if not solid:
        return "mixed"
    foreign = sum(ord(c) > 127 and unicodedata.category(c)[0] in "LM" for c in solid)
    if foreign >= 0.15 * len(solid):
        return "scripts"
    lines = [line for line in text.splitlines() if line.strip()]
    numbered = sum(bool(_NUMBERED.match(line)) for line in lines)
    if numbered < 0.6 * len(lines):
        if len(lines) >= 3 and sum(map(_listing_line, lines)) >= 0.6 * len(lines):
            return "paths"
        if sum(c.isdigit() for c in solid) >= 0.25 * len(solid):
            return "paths"
    body = [_NUMBERED.sub("", line, count=1) for line in lines]
    body = [line for line in body if line.strip()]
    code = sum(
        bool(_CODE_END.search(line) or _KEYWORD.match(line))
        or (line[:1] in (" ", "\t") and not line.lstrip()[:1].isalpha())
        for line in body
    )
    if body and code >= 0.4 * len(body):
        return "code"
    if sum(c.isalpha() for c in solid) >= 0.7 * len(solid):
        return "prose"
    return "mixed"


# ----------------------------------------------------------------------------- report


def error_pct(estimate: int, reference: int) -> float:
    """``(estimate − reference) / reference`` in % (reference ≥ 1)."""
    return 100.0 * (estimate - reference) / max(1, reference)


def row(name: str, encoding: str, errors: Sequence[float]) -> list[object]:
    """One table row: class, encoding, samples, median, p5, p95, worst, share under 10 %."""
    if not errors:
        return [name, encoding, 0, "-", "-", "-", "-", "-"]
    worst = max(errors, key=abs)
    under = sum(e < -10 for e in errors)
    return [
        name,
        encoding,
        len(errors),
        f"{median(errors):+.1f}",
        f"{percentile(errors, 5):+.1f}",
        f"{percentile(errors, 95):+.1f}",
        f"{worst:+.1f}",
        f"{100 * under / len(errors):.1f}",
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encodings-dir", help="folder holding the two encoding files")
    parser.add_argument("--min-chars", type=int, default=64, help="shortest sample (chars)")
    parser.add_argument(
        "--live", action="store_true", help="add outputs of this machine's commands (table 2)"
    )
    parser.add_argument(
        "--worst", type=int, default=0, help="print the N samples most under per class"
    )
    args = parser.parse_args(argv)
    corpus = require_corpus()
    encodings = load_encodings(find_encodings(args.encodings_dir))
    samples, images = collect(corpus)
    samples = [s for s in samples if len(s.text) >= args.min_chars]
    # Each sample's estimate by profile: None (the default) and each encoding's own.
    estimators = {p: HeuristicEstimator(encoding=p) for p in (None, *encodings)}
    by_class: dict[str, list[tuple[Sample, dict[str | None, int], dict[str, int]]]] = {
        c: [] for c in CLASSES
    }
    for s in samples:
        counts = {n: len(e.encode(s.text, disallowed_special=())) for n, e in encodings.items()}
        estimates = {p: est.text(s.text) for p, est in estimators.items()}
        by_class[classify(s.text)].append((s, estimates, counts))
    print(f"corpus: {corpus}  samples: {len(samples)} (at least {args.min_chars} characters)")
    header = ("class", "encoding", "samples", "median %", "p5 %", "p95 %", "worst %", "under >10 %")
    for calibrated, title in (
        (True, "HeuristicEstimator(encoding=<the row's encoding>).text against that encoding"),
        (False, "HeuristicEstimator().text (tokenizer unknown) against the encodings"),
    ):
        rows = []
        for name in (*CLASSES, "all"):
            members = (
                [m for ms in by_class.values() for m in ms] if name == "all" else by_class[name]
            )
            for enc in encodings:
                profile = enc if calibrated else None
                errors = [error_pct(e[profile], c[enc]) for _, e, c in members]
                rows.append(row(name, enc, errors))
        table(header, rows, f"{title} (error = estimate / count − 1)")
    tool_table(encodings, estimators, live=args.live)
    check_table(encodings, estimators)
    if images:
        table(
            ("source", "media type", "pixels", "estimate"),
            [
                (
                    src,
                    p.media_type,
                    f"{p.width}x{p.height}" if p.width and p.height else "unknown",
                    estimate_tokens_for_image(p.width, p.height),
                )
                for src, p in images
            ],
            "Images (priced from pixel size by the Anthropic rule; no text encoding measures "
            "them, so there is no error figure)",
        )
    else:
        print("\nImages: none in the corpus.")
    for name in CLASSES if args.worst else ():
        members = sorted(by_class[name], key=lambda m: error_pct(m[1][None], max(m[2].values())))[
            : args.worst
        ]
        for s, e, c in members:
            top = max(c.values())
            own = ", ".join(f"{n} {error_pct(e[n], c[n]):+.1f} % ({e[n]} vs {c[n]})" for n in c)
            print(
                f"\n[{name}] {error_pct(e[None], top):+.1f} % ({e[None]} vs {top}); "
                f"calibrated: {own}; {s.source} {s.kind}"
            )
            print("    " + repr(s.text[:160]))


def tool_table(
    encodings: dict[str, Any], estimators: dict[str | None, HeuristicEstimator], *, live: bool
) -> None:
    """The second table: the held-out tool outputs of ``_tool_outputs`` (seed
    :data:`CHECK_SEED`; the blank-run and escape constants were fitted on another seed), and
    with ``live`` the outputs of this machine's commands. Per kind, profile and encoding:
    samples, median, worst, share under by more than 10 %."""
    by_kind: dict[str, list[str]] = {k: [] for k in KINDS}
    for kind, text in tool_samples(CHECK_SEED):
        by_kind[kind].append(text)
    for kind, text in live_samples(sys.executable) if live else ():
        by_kind.setdefault(kind, []).append(text)
    rows = []
    for kind, texts in by_kind.items():
        counts = [
            {n: len(e.encode(t, disallowed_special=())) for n, e in encodings.items()}
            for t in texts
        ]
        for profile in (None, *encodings):
            estimates = [estimators[profile].text(t) for t in texts]
            for enc in encodings if profile is None else (profile,):
                errors = [error_pct(e, c[enc]) for e, c in zip(estimates, counts, strict=True)]
                worst = max(errors, key=abs)
                under = 100 * sum(x < -10 for x in errors) / len(errors)
                rows.append(
                    [
                        kind,
                        "default" if profile is None else "calibrated",
                        enc,
                        len(errors),
                        f"{median(errors):+.1f}",
                        f"{worst:+.1f}",
                        f"{under:.1f}",
                    ]
                )
    table(
        ("kind", "profile", "encoding", "samples", "median %", "worst %", "under >10 %"),
        rows,
        f"Tool outputs (synthesized, seed {CHECK_SEED}{'; live: this machine' if live else ''}): "
        "HeuristicEstimator().text (default) and HeuristicEstimator(encoding=...).text "
        "(calibrated) against each encoding",
    )


#: Texts in 20 languages written in Latin letters (three registers each: documentation, a
#: user's message to a coding agent, news) and source files in 15 programming languages,
#: written for this check: the corpus is almost all English.
CHECK_TEXTS = Path(__file__).with_name("check_texts.json")


def check_table(
    encodings: dict[str, Any], estimators: dict[str | None, HeuristicEstimator]
) -> None:
    """The third table: :data:`CHECK_TEXTS`, per language (prose) or kind and language
    (code). Per group: texts, how many the estimator reads as prose in a language other than
    English, and the median and worst error of the default estimate against the larger
    count and of each calibrated estimate against its encoding."""
    texts = json.loads(CHECK_TEXTS.read_text(encoding="utf-8"))
    groups: dict[str, list[str]] = {}
    for item in texts:
        kind = "prose" if item["kind"].startswith("prose") else item["kind"]
        groups.setdefault(f"{kind} {item['lang']}", []).append(item["text"])
    rows = []
    for name, members in sorted(groups.items()):
        counts = [
            {n: len(e.encode(t, disallowed_special=())) for n, e in encodings.items()}
            for t in members
        ]
        cells = []
        for profile in (None, *encodings):
            errors = [
                error_pct(
                    estimators[profile].text(t), max(c.values()) if profile is None else c[profile]
                )
                for t, c in zip(members, counts, strict=True)
            ]
            cells.append(f"{median(errors):+.1f} / {min(errors):+.1f}")
        foreign = sum(_foreign_prose(_latin1(t)) for t in members)
        rows.append([name, len(members), foreign, *cells])
    table(
        (
            "group",
            "texts",
            "read as other-language prose",
            "default vs larger: median / lowest %",
            *(f"calibrated vs {n}: median / lowest %" for n in encodings),
        ),
        rows,
        f"Check texts ({CHECK_TEXTS.name}: languages and code the corpus lacks)",
    )


if __name__ == "__main__":
    main()
