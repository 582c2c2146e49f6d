"""Ledgers of real corpus sessions: the files a SWE run changed (checked against the patch it
submitted), its scratch files, errors with their exact lines and status, and no error kept
as a bare exit-status or traceback-header line anywhere in the corpus."""

from __future__ import annotations

import json
import re

import pytest

from corpus import require_corpus, transcript_files
from ctxengine.errors import UnsupportedFormatError
from ctxengine.importers import read_transcript
from ctxengine.model import ErrorFact, Ledgers, Message
from ctxengine.summarizers.ledgers import extract_ledgers

PLACEHOLDER = re.compile(
    r"^(?:Exit code -?\d+|<returncode>-?\d+</returncode>|Command exited with code -?\d+|"
    r"\[Command finished with exit code -?\d+\]|Traceback \(most recent call last\):?)$"
)


def _ledgers(*parts: str) -> Ledgers:
    session = read_transcript(require_corpus(*parts))
    return extract_ledgers([e.body for e in session.entries if isinstance(e.body, Message)])


def _submitted(*parts: str) -> list[str]:
    data = json.loads(require_corpus(*parts).read_text(encoding="utf-8"))
    return re.findall(r"^diff --git a/(\S+)", data["info"]["submission"], re.MULTILINE)


def test_pydicom_modified_only_the_file_its_patch_changed() -> None:
    parts = ("swe-agent", "swe-agent-pydicom-1458-gpt4.traj")
    ledgers = _ledgers(*parts)
    assert _submitted(*parts) == ["pydicom/pixel_data_handlers/numpy_handler.py"]
    assert ledgers.cwd == "/pydicom__pydicom"
    assert ledgers.files_modified == (
        "/pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py",
    )
    assert [(f.path, f.how) for f in ledgers.files if f.status == "scratch"] == [
        ("/pydicom__pydicom/reproduce_bug.py", "deleted")
    ]
    assert ledgers.error_facts == (
        ErrorFact(
            "AttributeError: Unable to convert the pixel data as the following required "
            "elements are missing from the dataset: PixelRepresentation",
            "fixed",
            8,
            "python reproduce_bug.py",
            where=(
                'File "/pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py", '
                "line 293, in get_pixeldata"
            ),
            fixed_by=22,
        ),
        ErrorFact(
            "- E999 SyntaxError: unmatched ']'",
            "fixed",
            14,
            "edit /pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py",
            fixed_by=16,  # the next edit failed without it
        ),
        ErrorFact(
            "- E999 SyntaxError: unmatched ')'",
            "fixed",
            18,
            "edit /pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py",
            fixed_by=20,
        ),
    )


def test_django_fix_written_by_scripts_is_the_one_modified_file() -> None:
    parts = ("openai-messages", "mini-swe-agent-deepseek-chat-django-13265.traj.json")
    ledgers = _ledgers(*parts)
    assert _submitted(*parts) == ["django/db/migrations/autodetector.py"]
    assert ledgers.files_modified == ("/testbed/django/db/migrations/autodetector.py",)
    scratch = [f.path for f in ledgers.files if f.status == "scratch"]
    assert len(scratch) == 43
    assert [p for p in scratch if "autodetector.py." in p] == [
        f"/testbed/django/db/migrations/autodetector.py.{suffix}"
        for suffix in (
            "backup",
            "modified",
            "orig",
            "bak",
            "backup2",
            "original",
            "fixed",
            "simple_fix",
            "fixed_final",
            "final_fix",
        )
    ]
    written = [f for f in ledgers.files if f.how.startswith("script ")]
    assert [(f.path.rsplit("/", 1)[1], f.how) for f in written] == [
        ("autodetector.py.modified", "script fix_autodetector.py"),
        ("autodetector.py.fixed", "script apply_minimal_fix.py"),
        ("autodetector.py.simple_fix", "script simple_fix.py"),
        ("autodetector.py.fixed_final", "script apply_proper_fix.py"),
        ("autodetector.py.final_fix", "script create_final_fix.py"),
    ]
    assert [(e.text, e.status) for e in ledgers.error_facts[:4]] == [
        # Each rerun of reproduce_issue.py got past the module the one before missed.
        ("ModuleNotFoundError: No module named 'asgiref'", "fixed"),
        ("ModuleNotFoundError: No module named 'pytz'", "fixed"),
        ("ModuleNotFoundError: No module named 'reproduce_app'", "open"),
        (
            "ValueError: Indexes passed to ModelState require a name attribute. "
            "<Index: fields='look, _order'> doesn't have one.",
            "fixed",
        ),
    ]


@pytest.mark.parametrize(
    "parts",
    [
        ("swe-agent", "swe-agent-marshmallow-1867-function-calling.traj"),
        ("swe-agent", "swe-agent-test-repo-i1-gpt4.traj"),
    ],
)
def test_other_swe_runs_modified_exactly_their_submitted_files(parts: tuple[str, str]) -> None:
    ledgers = _ledgers(*parts)
    submitted = _submitted(*parts)
    assert [p.removeprefix(ledgers.cwd + "/") for p in ledgers.files_modified] == submitted


def test_no_error_anywhere_in_the_corpus_is_a_bare_exit_status_or_traceback_header() -> None:
    require_corpus()
    kept = 0
    for path in transcript_files():
        try:
            session = read_transcript(path)
        except UnsupportedFormatError:
            continue
        msgs = [e.body for e in session.entries if isinstance(e.body, Message)]
        ledgers = extract_ledgers(msgs)
        assert [e for e in ledgers.errors if PLACEHOLDER.match(e)] == [], path.name
        kept += len(ledgers.errors)
    assert kept > 50
