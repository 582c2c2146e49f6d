"""Imports point down only (DESIGN.md "Layers"): checked over the source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ctxengine"

#: For each top-level package/module: the ctxengine packages it may import.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "model": set(),
    "policy": {"errors"},
    "tokens": {"model", "errors"},
    "boundaries": {"model", "tokens", "errors"},
    "projection": {"model", "tokens", "boundaries", "errors"},
    "summarizers": {"model", "tokens", "boundaries", "projection", "errors", "providers"},
    "ladder": {"model", "tokens", "boundaries", "projection", "summarizers", "policy", "errors"},
    "stores": {"model", "errors", "importers"},
    "importers": {"model", "errors"},
    "providers": {"model", "projection", "errors"},
    "engine": {
        "model",
        "tokens",
        "boundaries",
        "projection",
        "summarizers",
        "ladder",
        "policy",
        "stores",
        "errors",
        "providers",
    },
    "presets": {"policy", "errors"},
    "analysis": {"model", "tokens", "errors"},
    "replay": {"engine", "model", "policy", "projection", "tokens", "errors"},
    "cli": {"*"},
    "testing": {"*"},
    "__init__": {"*"},
    "__main__": {"*"},
}


def _layer(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "ctxengine" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_every_import_points_down() -> None:
    violations = []
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 10
    for path in files:
        layer = _layer(path)
        allowed = ALLOWED.get(layer)
        assert allowed is not None, f"{path}: layer {layer!r} has no entry in ALLOWED"
        if "*" in allowed:
            continue
        for target in _imports(path) - {layer} - allowed:
            violations.append(f"{path.relative_to(SRC)} imports ctxengine.{target}")
    assert violations == []


def test_model_imports_nothing_of_ours_except_itself() -> None:
    for path in (SRC / "model").rglob("*.py"):
        assert _imports(path) <= {"model"}, path
