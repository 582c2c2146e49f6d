"""The JSON-head peek used by sniffers: complete values, cut lists, snippets."""

from __future__ import annotations

from ctxengine.importers._peek import Peek, peek


class TestPeek:
    def test_cut_object_keeps_complete_values_and_leading_list_items(self) -> None:
        head = b'{"info": {"a": 1}, "messages": [{"role": "user", "content": "hi"}, {"role": "ass'
        p = peek(head)
        assert p.kind == "object"
        assert p.keys == ("info", "messages")
        assert p.values == {"info": {"a": 1}}
        assert p.items("messages") == ({"role": "user", "content": "hi"},)
        assert p.snippets["messages"].startswith('[{"role": "user"')

    def test_top_level_array_is_under_the_empty_key(self) -> None:
        p = peek(b'\xef\xbb\xbf [1, {"x": 2}, [3')
        assert (p.kind, p.items("")) == ("array", (1, {"x": 2}))
        assert p.records("") is None

    def test_non_json_and_scalars_are_other(self) -> None:
        assert peek(b"# aider chat started") == Peek("other")
        assert peek(b"  42") == Peek("other")
        assert peek(b"") == Peek("other")

    def test_records_of_a_list_of_objects(self) -> None:
        p = peek(b'{"history": [{"role": "system"}, {"role": "user"}]}')
        assert p.records("history") == ({"role": "system"}, {"role": "user"})
        assert p.records("missing") == ()

    def test_too_deep_or_too_long_values_stop_decoding_like_a_cut(self) -> None:
        deep = b"[" * 100_000 + b"]" * 100_000
        assert peek(deep) == Peek("array", lists={"": ()}, snippets={"": "[" * 200})
        p = peek(b'{"n": 1, "messages": [{"role": "user"}, ' + b"9" * 5000 + b"]}")
        assert (p.keys, p.values) == (("n", "messages"), {"n": 1})
        assert p.items("messages") == ({"role": "user"},)
