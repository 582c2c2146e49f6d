"""Imports point down only (DESIGN.md "Layers"): checked over the source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ctxengine"

#: For each top-level package/module: the ctxengine packages it may import.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "_runtime": set(),
    "model": set(),
    "policy": {"errors"},
    "tokens": {"model", "errors"},
    "boundaries": {"model", "tokens", "errors"},
    "projection": {"model", "tokens", "boundaries", "errors"},
    "summarizers": {"model", "tokens", "boundaries", "projection", "errors", "providers"},
    "ladder": {"model", "tokens", "boundaries", "projection", "summarizers", "policy", "errors"},
    "assembly": {"model", "tokens", "boundaries", "projection", "summarizers", "errors"},
    "workspace": {"model", "errors", "assembly"},
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
        "assembly",
        "policy",
        "stores",
        "errors",
        "providers",
        "recall",
    },
    "analysis": {"model", "tokens", "errors"},
    "recall": {"model", "tokens", "errors"},
    "cost": {"errors"},
    "replay": {
        "engine",
        "model",
        "policy",
        "projection",
        "tokens",
        "errors",
        "cost",
        "summarizers",
    },
    "bench": {"engine", "model", "policy", "projection", "tokens", "errors", "replay", "importers"},
    "proxy": {
        "engine",
        "model",
        "tokens",
        "projection",
        "policy",
        "providers",
        "importers",
        "stores",
        "errors",
    },
    "adapters": {"engine", "model", "tokens", "projection", "policy", "proxy", "errors"},
    "cli": {"*"},
    "__init__": {"*"},
    "__main__": {"*"},
}


#: ``_runtime`` (loading a package's names on first use, pausing the garbage collector) imports
#: nothing of ctxengine, so any layer may use it.
RUNTIME = "_runtime"

#: ``policy.defaults`` holds every tuning constant and imports nothing, so any layer above
#: ``model`` may read it (importing it runs ``policy/__init__``, which imports only ``errors``).
DEFAULTS = "policy.defaults"
DEFAULTS_FORBIDDEN = frozenset({"model", "errors"})


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
        elif isinstance(node, ast.ImportFrom) and node.module == "ctxengine.policy":
            names = [f"ctxengine.policy.{a.name}" for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if name == f"ctxengine.{DEFAULTS}":
                found.add(DEFAULTS)
            elif parts[0] == "ctxengine" and len(parts) > 1:
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
        targets = _imports(path) - {layer, RUNTIME} - allowed
        if layer not in DEFAULTS_FORBIDDEN:
            targets.discard(DEFAULTS)
        for target in sorted(targets):
            violations.append(f"{path.relative_to(SRC)} imports ctxengine.{target}")
    assert violations == []


def test_the_runtime_helpers_import_nothing_of_ours() -> None:
    assert _imports(SRC / f"{RUNTIME}.py") == set()


def test_model_imports_nothing_of_ours_except_itself() -> None:
    for path in (SRC / "model").rglob("*.py"):
        assert _imports(path) <= {"model"}, path


def test_only_the_defaults_module_of_policy_is_open_to_every_layer(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from ctxengine.policy.defaults import DEFAULT_TRIGGER_RATIO\n"
        "from ctxengine.policy import defaults\n",
        encoding="utf-8",
    )
    assert _imports(module) == {DEFAULTS}
    module.write_text(
        "from ctxengine.policy import DEFAULT_POLICY, defaults\nimport ctxengine.policy\n",
        encoding="utf-8",
    )
    assert _imports(module) == {DEFAULTS, "policy"}
