"""File effects of multi-line shell scripts as agents write them: comment lines and BSD
``sed -i ''`` (both seen in the pi corpus session)."""

from __future__ import annotations

from ctxengine.summarizers.shell import FileEffect, shell_effects

SCRIPT = """cd packages/coding-agent/src

# Fix core/tools imports
sed -i '' 's|from "../shell.js"|from "../../utils/shell.js"|g' core/tools/bash.ts
sed -i '' 's|from "../tools-manager.js"|from "../../utils/tools-manager.js"|g' core/tools/find.ts

# Fix index.ts (don't touch main.ts)
sed -i '' 's|from "./tools/index.js"|from "./core/tools/index.js"|g' index.ts
"""


class TestShellScripts:
    def test_a_comment_line_does_not_hide_the_commands_after_it(self) -> None:
        # (the script's leading ``cd`` places the relative paths)
        assert shell_effects(SCRIPT) == (
            FileEffect("edited", "packages/coding-agent/src/core/tools/bash.ts"),
            FileEffect("edited", "packages/coding-agent/src/core/tools/find.ts"),
            FileEffect("edited", "packages/coding-agent/src/index.ts"),
        )

    def test_bsd_sed_in_place_takes_an_empty_suffix_not_a_script(self) -> None:
        assert shell_effects("sed -i '' 's/a/b/g' src/app.py") == (
            FileEffect("edited", "src/app.py"),
        )

    def test_a_hash_inside_a_word_or_quotes_is_not_a_comment(self) -> None:
        assert shell_effects("echo a#b > x.txt  # keep x\nsed -i 's/#//' y.py # strip") == (
            FileEffect("wrote", "x.txt"),
            FileEffect("edited", "y.py"),
        )

    def test_a_trailing_comment_after_a_command_is_dropped(self) -> None:
        assert shell_effects("cat notes.md # read it first") == (FileEffect("read", "notes.md"),)
