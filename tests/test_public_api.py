"""The package facade exports exactly its documented names, sorted."""

import ctxengine


def test_all_is_sorted_and_every_name_resolves() -> None:
    names = list(ctxengine.__all__)
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    for name in names:
        assert getattr(ctxengine, name) is not None


def test_facade_round_trip_on_a_tiny_session() -> None:
    from ctxengine.model import user

    session = ctxengine.Session(8_000)
    session.append(user("hello"))
    body = ctxengine.render_anthropic(session.prepare())
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    assert ctxengine.validate(body, "anthropic") == []
