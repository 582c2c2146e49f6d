"""Start-up cost: what ``import ctxengine``, ``ctxengine --help`` and the engine load, and how
long the first two take against an empty interpreter (``benchmarks/startup_time.py`` prints
the same cases)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

import ctxengine
from ctxengine import engine, policy, providers, stores, summarizers
from ctxengine.cli.app import COMMANDS, build_command

SRC = Path(__file__).resolve().parents[1] / "src"
#: This checkout's sources first, whatever the interpreter has installed.
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}

#: Prints the sorted names of the loaded modules after the statements given as argv[1].
MODULES_AFTER = "import sys\nexec(sys.argv[1])\nprint('\\n'.join(sorted(sys.modules)))"
HELP = "from ctxengine.cli import main\nmain(['--help'])"


def loaded_after(statements: str) -> set[str]:
    """The modules loaded in a fresh interpreter once ``statements`` have run."""
    out = subprocess.run(
        [sys.executable, "-c", MODULES_AFTER, statements],
        env=ENV,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(out.split())


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


HEAVY = {"pydantic", "rich", "typer", "sqlite3", "httpx", "openai", "anthropic", "asyncio"}


def test_import_ctxengine_loads_no_other_module_of_the_package_nor_a_dependency() -> None:
    found = loaded_after("import ctxengine")
    assert sorted(m for m in found if m.startswith("ctxengine")) == ["ctxengine"]
    assert tops(found) & (HEAVY | {"orjson", "typing"}) == set()


def test_root_help_loads_no_command_module() -> None:
    found = loaded_after(HELP)
    ours = {m for m in found if m.startswith("ctxengine")}
    assert ours == {"ctxengine", "ctxengine.errors", "ctxengine.cli", "ctxengine.cli.app"}
    assert tops(found) & HEAVY == {"typer"}


def test_a_command_loads_its_own_module_only() -> None:
    found = loaded_after("from ctxengine.cli import main\nmain(['sessions', '--help'])")
    commands = {m for m in found if m.startswith("ctxengine.cli.commands.")}
    assert commands == {"ctxengine.cli.commands.sessions"}


def test_a_command_s_help_loads_neither_tiktoken_nor_the_model_profiles() -> None:
    """``--tokenizer`` names its values without loading tiktoken or the profiles (``auto``
    reads them when the command runs)."""

    def help_of(command: str) -> set[str]:
        # the help goes elsewhere: its words ("tiktoken") are not module names
        return loaded_after(
            "import contextlib, io\nfrom ctxengine.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['{command}', '--help'])"
        )

    found = help_of("sessions")
    assert "tiktoken" not in tops(found)
    assert sorted(m for m in found if m.startswith("ctxengine.providers")) == []
    for command in ("inspect", "compact", "replay"):
        found = help_of(command)
        assert "ctxengine.cli.options" in found
        assert "tiktoken" not in tops(found), command


def test_the_engine_loads_no_store_importer_provider_or_printing() -> None:
    found = loaded_after("from ctxengine import Session")
    assert "ctxengine.engine.session" in found
    assert tops(found) & HEAVY == {"pydantic"}  # the policy is a pydantic model
    for module in ("ctxengine.importers", "ctxengine.stores.sqlite", "ctxengine.providers._call"):
        assert module not in found


#: What the first summary loads, not ``from ctxengine import Session`` nor a session's first
#: ``prepare()`` that does not compact: the extractive state's writer and the ledger
#: extraction it runs, the model summarizers, rule extraction.
SUMMARY_MODULES = {
    "ctxengine.summarizers.extractive_state",
    "ctxengine.summarizers.anchor",
    "ctxengine.summarizers.ledgers",
    "ctxengine.summarizers.rules",
    "ctxengine.summarizers.rule_words",
    "ctxengine.summarizers.failures",
    "ctxengine.summarizers.select",
    "ctxengine.summarizers.calls",
    "ctxengine.summarizers.llm",
    "ctxengine.summarizers.prime",
}
FIRST_PREPARE = (
    "from ctxengine import Session\n"
    "from ctxengine.model.messages import user\n"
    "s = Session(window=32_000)\n"
    "s.append(user('Summarise the design notes in three bullet points.'))\n"
    "assert len(s.prepare().messages) == 1\n"
)


@pytest.mark.parametrize("statements", ["from ctxengine import Session", FIRST_PREPARE])
def test_a_session_loads_no_summarizer_machinery_before_it_compacts(statements: str) -> None:
    found = loaded_after(statements)
    assert SUMMARY_MODULES & found == set()
    # pydantic is imported, but no validator is built: that loads its plugins' metadata
    assert "importlib.metadata" not in found


#: Packages and modules that a session loads only when it uses them: a model call, a store,
#: a recall, a head, a native compaction, a checkout, a child session, a hand-off, a summary.
FIRST_USE = (
    "ctxengine.providers",
    "ctxengine.stores",
    "ctxengine.recall",
    "ctxengine.assembly",
    "ctxengine.importers",
    "ctxengine.projection.render",
    "ctxengine.engine.calls",
    "ctxengine.engine.branches",
    "ctxengine.engine.children",
    "ctxengine.engine.handoff",
    "ctxengine.ladder.durable_ledger",
    "ctxengine.summarizers.base",
)


@pytest.mark.parametrize("statements", ["from ctxengine import Session", FIRST_PREPARE])
def test_a_session_loads_what_it_uses_on_first_use(statements: str) -> None:
    found = loaded_after(statements)
    early = sorted(m for m in found if m.startswith(FIRST_USE))
    assert early == []
    summarizers = sorted(m for m in found if m.startswith("ctxengine.summarizers"))
    assert summarizers == ["ctxengine.summarizers", "ctxengine.summarizers.extractive"]


def test_a_compaction_loads_the_summarizer_machinery() -> None:
    """The modules above are the ones a summary needs (the check above could not fail if
    they were misnamed); the model summarizers' (``llm``) and the ledger primer's stay
    unloaded under the extractive summarizer."""
    found = loaded_after(
        "from ctxengine import Session\n"
        "from ctxengine.model.messages import assistant, user\n"
        "s = Session(window=32_000)\n"
        "for i in range(4):\n"
        "    s.append(user(f'Request {i}: summarise the design notes. ' * 20))\n"
        "    s.append(assistant(f'Answer {i}. ' * 50))\n"
        "s.append(user('Then list the open questions.'))\n"
        "assert s.compact().entry.body.summary.startswith('## Goal\\nRequest 0: ')\n"
    )
    idle = {"ctxengine.summarizers.llm", "ctxengine.summarizers.prime"}
    assert SUMMARY_MODULES & found == SUMMARY_MODULES - idle


def test_the_default_policy_equals_a_validated_one() -> None:
    """:data:`~ctxengine.policy.DEFAULT_POLICY` is built without validation."""
    assert policy.Policy() == policy.DEFAULT_POLICY
    assert policy.DEFAULT_POLICY.model_dump() == policy.Policy().model_dump()
    assert policy.DEFAULT_POLICY.resolve(32_000) == policy.Policy().resolve(32_000)


def test_reading_a_default_does_not_import_pydantic() -> None:
    found = loaded_after("from ctxengine.policy.defaults import DEFAULT_WINDOW")
    assert "ctxengine.policy.policy" not in found
    assert "pydantic" not in tops(found)


@pytest.mark.parametrize("package", [ctxengine, engine, policy, providers, stores, summarizers])
def test_every_public_name_of_a_lazy_package_resolves_to_its_home(package: ModuleType) -> None:
    names = package.__all__
    homes = getattr(package, "_HOMES", {})
    assert set(homes) <= set(names)  # the others are defined in the package itself
    for name in names:
        value = getattr(package, name)
        assert value is not None
        assert name in dir(package)


@pytest.mark.parametrize("package", [ctxengine, engine, policy, providers, stores, summarizers])
def test_an_unknown_name_is_an_attribute_error(package: ModuleType) -> None:
    with pytest.raises(
        AttributeError, match=f"module '{package.__name__}' has no attribute 'nope'"
    ):
        _ = package.nope


def test_every_listed_command_builds_with_its_name_and_short_help() -> None:
    for name, spec in COMMANDS.items():
        command = build_command(name, spec)
        assert (command.name, command.short_help) == (name, spec.short_help)


#: :data:`ENV` with bytecode caches written and read, as an installed package has them
#: (with ``PYTHONDONTWRITEBYTECODE`` every run would compile the package again).
TIMING_ENV = {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _min_seconds(argvs: list[list[str]], runs: int) -> list[float]:
    """The shortest of ``runs`` wall-clock times of each command, run in turns."""
    best = [float("inf")] * len(argvs)
    for _ in range(runs):
        for i, argv in enumerate(argvs):
            start = time.perf_counter()
            subprocess.run(argv, env=TIMING_ENV, check=True, capture_output=True)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


#: ``import ctxengine`` may take at most this many times an empty interpreter's start (it was
#: about 50 times before the package loaded its names on first use; now about 1.2 times).
IMPORT_BUDGET = 3.0
#: ``ctxengine --help`` likewise (typer itself costs about 4 empty starts; it was about 100).
HELP_BUDGET = 12.0
#: ``from ctxengine import Session`` likewise: pydantic (the policy) and the engine, the
#: ladder, the projection and the model (about 15 empty starts; it was about 28 when it
#: loaded every summarizer, provider, store and renderer).
SESSION_BUDGET = 25.0


def test_start_up_stays_within_its_budget_against_an_empty_interpreter() -> None:
    """The minimum of several runs, each case in turns, so that a loaded machine slows all
    cases alike and a pause of the machine does not count."""
    py = sys.executable
    empty, imported, helped, session = _min_seconds(
        [
            [py, "-c", "pass"],
            [py, "-c", "import ctxengine"],
            [py, "-c", HELP],
            [py, "-c", "from ctxengine import Session"],
        ],
        runs=7,
    )
    assert imported / empty < IMPORT_BUDGET, (imported, empty)
    assert helped / empty < HELP_BUDGET, (helped, empty)
    assert session / empty < SESSION_BUDGET, (session, empty)
