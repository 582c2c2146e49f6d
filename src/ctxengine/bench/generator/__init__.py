"""The seeded session generator: realistic coding sessions with planted facts."""

from ctxengine.bench.generator.builder import INJECTION, TEMPLATES, generate, verify

__all__ = ["INJECTION", "TEMPLATES", "generate", "verify"]
