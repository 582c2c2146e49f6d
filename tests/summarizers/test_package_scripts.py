"""An error a command reported is fixed when a package script that runs the same command
succeeds (and the other way round), where an output showed the script's text: npm's failure
line ``npm error command sh -c SCRIPT``, the ``> pkg@1.0.0 build`` / ``> SCRIPT`` lines npm and
pnpm echo, yarn's ``$ SCRIPT``. Another script's success, a script no output showed, a
script run in another directory fix nothing."""

from __future__ import annotations

from summarizer_helpers import call, calls, results

from ctxengine.model import Message, user
from ctxengine.summarizers.ledgers import extract_ledgers
from ctxengine.summarizers.scripts import (
    ScriptRun,
    binary_forms,
    local_binary,
    script_parts,
    script_run,
    shown_script,
)

TS = "src/theme.ts(443,3): error TS2353: Object literal may only specify known properties."
BUILD_SCRIPT = "tsgo -p tsconfig.build.json && chmod +x dist/cli.js && npm run copy-assets"
NPM_FAILED = f"npm error command failed\nnpm error command sh -c {BUILD_SCRIPT}"
NPX = "npx tsgo -p tsconfig.build.json"


def _bash(cid: str, command: str, output: str, failed: bool = False) -> tuple[Message, Message]:
    text = f"{output}\n\n\nCommand exited with code 2" if failed else output
    return calls(call(cid, "bash", command=command)), results((cid, text, failed))


def _errors(*steps: tuple[Message, Message]) -> list[tuple[str, str, str, int | None]]:
    msgs: list[Message] = [user("Fix the build.")]
    for pair in steps:
        msgs.extend(pair)
    return [(e.status, e.text, e.command, e.fixed_by) for e in extract_ledgers(msgs).error_facts]


class TestTheLinkInTheWalk:
    def test_a_script_that_runs_the_command_fixes_its_error(self) -> None:
        # the pi session: npm run build fails naming its script, npx tsgo shows the error,
        # npm run build (in the same directory) passes
        assert _errors(
            _bash("a", "cd web && npm run build 2>&1 | tail -3", NPM_FAILED, True),
            _bash("b", f'cd web && {NPX} 2>&1 | grep -E "error" | head -10', TS, True),
            _bash("c", "cd web && npm run build 2>&1 | tail -3", "done"),
        ) == [
            ("fixed", f"npm error command sh -c {BUILD_SCRIPT}", "npm run build", 6),
            ("fixed", TS, NPX, 6),
        ]

    def test_the_script_echoed_before_it_ran_and_pnpm_exec(self) -> None:
        echo = "> @scope/web@1.0.0 build\n> tsgo -p tsconfig.build.json && vite build\n\nbuilt"
        assert _errors(
            _bash("a", "pnpm exec tsgo -p tsconfig.build.json", TS, True),
            _bash("b", "npm run build", echo),
        ) == [("fixed", TS, "pnpm exec tsgo -p tsconfig.build.json", 4)]

    def test_the_command_a_script_runs_alone_fixes_the_scripts_error(self) -> None:
        echo = f"> web@1.0.0 build /repo/web\n> tsgo -p tsconfig.build.json\n\n{TS}"
        assert _errors(
            _bash("a", "pnpm run build", echo, True),
            _bash("b", NPX, ""),
        ) == [("fixed", TS, "pnpm run build", 4)]
        yarn = f"yarn run v1.22.19\n$ tsgo -p tsconfig.build.json\n{TS}"
        assert _errors(_bash("a", "yarn build", yarn, True), _bash("b", NPX, "")) == [
            ("fixed", TS, "yarn build", 4)
        ]

    def test_a_command_that_is_only_part_of_the_script_does_not_fix_its_error(self) -> None:
        # chmod and the nested script did not run: the script's failure is not fixed
        assert _errors(
            _bash("a", "npm run build", f"{TS}\n{NPM_FAILED}", True),
            _bash("b", NPX, ""),
        ) == [
            ("open", TS, "npm run build", None),
        ]

    def test_another_scripts_success_fixes_nothing(self) -> None:
        lint = "> web@1.0.0 lint\n> eslint .\n\nAll clean"
        vite = "> web@1.0.0 build\n> vite build\n\nbuilt in 2s"
        assert _errors(
            _bash("a", NPX, TS, True),
            _bash("b", "npm run lint", lint),
            _bash("c", "npm run build", vite),
        ) == [("open", TS, NPX, None)]

    def test_a_script_no_output_showed_fixes_nothing(self) -> None:
        assert _errors(
            _bash("a", NPX, TS, True),
            _bash("b", "npm run build", "built"),
        ) == [("open", TS, NPX, None)]

    def test_a_filtered_output_that_may_have_lost_lines_is_not_read(self) -> None:
        # grep keeps a nested workspace's echo and failure lines, not the run's own
        echo = "> web@1.0.0 build\n> tsgo -p tsconfig.build.json"
        for command, output in (
            ("npm run build | grep -A1 web", echo),
            ("npm run build 2>&1 | tail -3", echo),
        ):
            assert _errors(
                _bash("a", command, output),
                _bash("b", NPX, TS, True),
                _bash("c", "npm run build", "built"),
            ) == [("open", TS, NPX, None)], command
        for command in ("npm run build 2>&1 | grep error", "npm run build 2>&1 | head -3"):
            assert _errors(
                _bash("a", command, NPM_FAILED, True),
                _bash("b", NPX, TS, True),
                _bash("c", "npm run build", "built"),
            ) == [
                ("fixed", f"npm error command sh -c {BUILD_SCRIPT}", "npm run build", 6),
                ("open", TS, NPX, None),
            ], command
        # the same outputs unfiltered are read
        assert _errors(
            _bash("a", "npm run build", echo),
            _bash("b", NPX, TS, True),
            _bash("c", "npm run build", "built"),
        ) == [("fixed", TS, NPX, 6)]

    def test_a_script_run_in_another_directory_fixes_nothing(self) -> None:
        assert _errors(
            _bash("a", "cd web && npm run build 2>&1 | tail -3", NPM_FAILED, True),
            _bash("b", f"cd api && {NPX}", TS, True),
            _bash("c", "cd web && npm run build 2>&1 | tail -3", "done"),
        ) == [
            ("fixed", f"npm error command sh -c {BUILD_SCRIPT}", "npm run build", 6),
            ("open", TS, NPX, None),
        ]
        # the directories are compared once joined: "cd /repo/web" is "cd web" under /repo
        msgs: list[Message] = [user("Fix the build.")]
        for pair in (
            _bash("a", "cd web && npm run build 2>&1 | tail -3", NPM_FAILED, True),
            _bash("b", f"cd /repo/web && {NPX}", TS, True),
            _bash("c", "cd web && npm run build", "done"),
        ):
            msgs.extend(pair)
        facts = extract_ledgers(msgs, cwd="/repo").error_facts
        assert [(e.status, e.command, e.fixed_by) for e in facts] == [
            ("fixed", "npm run build", 6),
            ("fixed", NPX, 6),
        ]

    def test_an_error_of_an_earlier_range_is_not_fixed_by_a_script(self) -> None:
        # its directory is unknown there: a root script's tsgo is no package's npx tsgo
        earlier = [user("Fix the build."), *_bash("a", f"cd web && {NPX}", TS, True)]
        later = [
            *_bash("b", "npm run build", f"> root@1.0.0 build\n> {BUILD_SCRIPT}\n\nok"),
            *_bash("c", "npm run build", "ok"),
        ]
        merged = extract_ledgers(earlier).merge(extract_ledgers(later, start=3))
        assert [(e.status, e.text, e.command) for e in merged.error_facts] == [("open", TS, NPX)]
        # the same runs in one range: fixed
        assert _errors(
            _bash("a", NPX, TS, True),
            _bash("b", "npm run build", f"> root@1.0.0 build\n> {BUILD_SCRIPT}\n\nok"),
        ) == [("fixed", TS, NPX, 4)]


class TestReadingTheScript:
    def test_which_commands_run_one_package_script(self) -> None:
        assert script_run("cd web && npm run build 2>&1 | tail -3") == ScriptRun(
            "build", "web", "npm", keeps_end=True, keeps_start=False
        )
        assert script_run("npm run build -- --watch | head -5") == ScriptRun(
            "build", "", "npm", keeps_end=False, keeps_start=True
        )
        assert script_run("npm test") == ScriptRun("test", "", "npm", True, True)
        assert script_run("pnpm build") == ScriptRun("build", "", "pnpm", True, True)
        assert script_run("yarn run lint | grep x") == ScriptRun("lint", "", "yarn", False, False)
        for command in (
            "pnpm install",
            "npm install",
            "npm run",
            "yarn",
            "npm -w web run build",
            "npm run build --workspaces",
            "pnpm -r build",
            "pnpm --filter web build",
            "npm run build && npm test",
            "npx tsgo -p tsconfig.build.json",
        ):
            assert script_run(command) is None, command

    def test_the_script_an_output_shows(self) -> None:
        npm = ScriptRun("build", "", "npm", True, True)
        nested = (
            "> web@1.0.0 build\n> npm run compile && npm run copy\n\n"
            "> web@1.0.0 compile\n> tsgo\n\n"
            "npm error command sh -c tsgo\n"
            "npm error command sh -c npm run compile && npm run copy\n"
        )
        # the last failure line is the outer script's; the echo pair is the one of its name
        assert shown_script(npm, nested) == "npm run compile && npm run copy"
        assert shown_script(ScriptRun("build", "", "npm", False, True), nested) == (
            "npm run compile && npm run copy"
        )
        pre = "> web@1.0.0 prebuild\n> rm -rf dist\n\n> web@1.0.0 build\n> tsc -b\n"
        assert shown_script(npm, pre) == "tsc -b"
        assert shown_script(npm, "npm ERR! command sh -c tsc -b\n") == "tsc -b"
        pnpm = ScriptRun("build", "", "pnpm", True, True)
        assert shown_script(pnpm, "> web@1.0.0 build /repo/web\n> tsc -b\n") == "tsc -b"
        # pnpm prints no npm failure line; a header without the script after it shows none
        assert shown_script(pnpm, "npm error command sh -c tsc -b") == ""
        assert shown_script(npm, "> web@1.0.0 build\nbuilt") == ""
        yarn = ScriptRun("build", "", "yarn", True, True)
        assert shown_script(yarn, "yarn run v1.22.19\n$ tsc -b\nDone in 2s.") == "tsc -b"
        assert shown_script(yarn, "$ tsc -b\nDone in 2s.") == ""
        # neither end kept (grep): nothing is read
        assert shown_script(ScriptRun("build", "", "npm", False, False), nested) == ""

    def test_the_commands_a_script_runs(self) -> None:
        assert script_parts(BUILD_SCRIPT) == (
            "tsgo -p tsconfig.build.json",
            "chmod +x dist/cli.js",
            "npm run copy-assets",
        )
        assert script_parts("tsc -b 2>&1") == ("tsc -b",)
        for script in (
            "tsc -b || true",
            "tsc -b; vite build",
            "tsc -b | tee log",
            "cd web && tsc -b",
            'echo "a && b"',
            "tsc -b &",
            "tsc $(cat flags)",
            "tsc -b\nvite build",
        ):
            assert script_parts(script) == (), script

    def test_local_binaries_and_their_forms(self) -> None:
        assert local_binary(NPX) == "tsgo -p tsconfig.build.json"
        assert local_binary("pnpm exec tsc") == "tsc"
        assert local_binary("npx -y tsgo") == "npx -y tsgo"
        assert binary_forms(NPX) == (
            "tsgo -p tsconfig.build.json",
            NPX,
            "pnpm exec tsgo -p tsconfig.build.json",
            "yarn exec tsgo -p tsconfig.build.json",
        )
        assert binary_forms("npm run copy-assets") == ("npm run copy-assets",)
