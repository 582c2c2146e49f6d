"""``python -m ctxengine`` runs the CLI."""

from ctxengine.cli import run

run()
