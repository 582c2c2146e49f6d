"""Session links in every store kind: a child session created with its link to the parent and
its first entries in one transaction, read back by child and by parent, append-only."""

from __future__ import annotations

import pytest
from backends import Backend

from ctxengine.errors import SessionNotFound, StoreError
from ctxengine.model import Entry, Message, TextPart
from ctxengine.stores import SessionInfo, SessionLink


def log(session_id: str, n: int, start: int = 0) -> list[Entry]:
    out: list[Entry] = []
    for i in range(start, start + n):
        parent = out[-1].id if out else None
        body = Message("user", (TextPart(f"message {i}"),))
        out.append(Entry(f"e{i}", session_id, i - start, body, parent, "2026-01-01T00:00:00Z"))
    return out


@pytest.fixture
def db(backend: Backend) -> Backend:
    with backend.open() as store:
        store.create_session(SessionInfo("parent", "ctxengine"))
        store.append("parent", log("parent", 3))
    return backend


def test_a_child_is_stored_with_its_link_and_entries_and_read_back(db: Backend) -> None:
    link = SessionLink("child", "parent", "e1", "fork", "2026-02-03T04:05:06+00:00")
    with db.open() as store:
        assert store.create_session(
            SessionInfo("child", "ctxengine"), link=link, entries=log("child", 2)
        )
    with db.open(read_only=True) as store:
        assert store.session_link("child") == link
        assert store.session_link("parent") is None
        assert store.children("parent") == [link]
        assert store.children("child") == []
        assert [e.id for e in store.entries("child")] == ["e0", "e1"]
        assert store.session("child").entry_count == 2


def test_children_come_in_the_order_they_were_stored(db: Backend) -> None:
    with db.open() as store:
        for name, relation in (("b", "spawn"), ("a", "fork"), ("c", "handoff")):
            store.create_session(
                SessionInfo(name, "ctxengine"), link=SessionLink(name, "parent", "e2", relation)
            )
        found = store.children("parent")
    assert [(x.session_id, x.relation, x.parent_entry_id) for x in found] == [
        ("b", "spawn", "e2"),
        ("a", "fork", "e2"),
        ("c", "handoff", "e2"),
    ]
    # A link stored without a time gets the time of the write.
    assert all(x.created_at is not None and x.created_at.startswith("20") for x in found)


@pytest.mark.parametrize(
    ("link", "entries", "message"),
    [
        (
            SessionLink("child", "nobody", None, "fork"),
            (),
            "parent session 'nobody' is not stored",
        ),
        (
            SessionLink("child", "parent", None, "adopt"),
            (),
            "unknown relation 'adopt' (expected one of fork, spawn, handoff)",
        ),
        (
            SessionLink("other", "parent", None, "fork"),
            (),
            "the link is of session 'other', not 'child'",
        ),
        (
            SessionLink("child", "parent", None, "fork"),
            log("child", 2, start=1)[1:],
            "entry 'e2' has seq 1, expected 0: new entries must continue the log without gaps",
        ),
    ],
)
def test_a_bad_child_is_refused_and_nothing_is_stored(
    db: Backend, link: SessionLink, entries: list[Entry], message: str
) -> None:
    with db.open() as store:
        with pytest.raises(StoreError) as info:
            store.create_session(SessionInfo("child", "ctxengine"), link=link, entries=entries)
        assert str(info.value) == db.where(f"create session 'child': {message}")
        assert [s.id for s in store.sessions()] == ["parent"]
        assert store.children("parent") == []


def test_an_existing_session_is_left_alone(db: Backend) -> None:
    link = SessionLink("parent", "parent", None, "fork")
    with db.open() as store:
        assert not store.create_session(
            SessionInfo("parent", "ctxengine"), link=link, entries=log("parent", 1)
        )
        assert store.session_link("parent") is None
        assert len(store.entries("parent")) == 3


def test_links_are_append_only(db: Backend) -> None:
    with db.open() as store:
        store.create_session(
            SessionInfo("child", "ctxengine"), link=SessionLink("child", "parent", "e0", "spawn")
        )
    for sql in ("UPDATE session_links SET relation = 'fork'", "DELETE FROM session_links"):
        with db.raw() as conn, pytest.raises(db.integrity_errors) as info:
            conn.execute(sql)
        assert db.message(info.value) == "session links are append-only"
    assert [link.relation for link in db.open(read_only=True).children("parent")] == ["spawn"]


def test_an_unknown_session_has_no_link(db: Backend) -> None:
    with db.open() as store:
        with pytest.raises(SessionNotFound):
            store.session_link("nope")
        with pytest.raises(SessionNotFound):
            store.children("nope")


def test_a_child_of_copied_entries_is_not_updated_before_it_was_created(db: Backend) -> None:
    link = SessionLink("child", "parent", "e2", "handoff")
    with db.open() as store:
        # Its entries keep the times they were first written (2026-01-01).
        store.create_session(
            SessionInfo("child", "ctxengine", created_at="2026-03-04T05:06:07+00:00"),
            link=link,
            entries=log("child", 2),
        )
        store.create_session(SessionInfo("empty", "ctxengine", created_at="2026-03-04"))
    with db.open(read_only=True) as store:
        times = {s.id: (s.created_at, s.updated_at) for s in store.sessions()}
        assert store.session("child").updated_at == "2026-03-04T05:06:07+00:00"
    assert times["child"] == ("2026-03-04T05:06:07+00:00", "2026-03-04T05:06:07+00:00")
    assert times["empty"] == ("2026-03-04", None)
    # A session whose newest entry is newer than its creation keeps that entry's time.
    with db.open() as store:
        store.create_session(SessionInfo("old", "ctxengine", created_at="2025-12-31T23:00:00Z"))
        store.append("old", log("old", 1))
        assert store.session("old").updated_at == "2026-01-01T00:00:00Z"
        # Times with other offsets are compared as instants: 01:00+02:00 is 23:00Z before.
        store.create_session(
            SessionInfo("east", "ctxengine", created_at="2026-01-01T01:00:00+02:00")
        )
        store.append("east", log("east", 1))
        assert store.session("east").updated_at == "2026-01-01T00:00:00Z"
