"""One module per command: each parses its options, calls the engine and prints.
:mod:`ctxengine.cli.app` registers them."""
