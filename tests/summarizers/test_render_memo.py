"""``StateLayout.render`` writes a group again only when what it shows or leaves out changed:
one layout rendering a sequence of selections, each differing from the one before in one
group (a copy shortened or lengthened, an item shown or left out, a list item's rest left
out, a text part left out, the same copy as an equal but new object), writes exactly what a
new layout writes for each."""

from __future__ import annotations

from itertools import pairwise

from ctxengine.summarizers.items import Item
from ctxengine.summarizers.sections import JOINED, StateLayout
from ctxengine.summarizers.select import Selection, Shown, shortened

GOAL = Item("goal", "goal", "Fix the parser so that nested lists parse.", cut_floor=10)
GOAL_MORE = Item("goal", "goal.more", " And keep the lexer as it is.", order=1, label=JOINED)
MESSAGE = Item("user_messages", "user_message", "Please also add a test", order=0)
MESSAGE_MORE = Item(
    "user_messages", "user_message.more", " for the empty list case.", order=0.5, label=JOINED
)
COMMANDS = [Item("commands", "command", f"pytest tests/test_{n}.py", order=n) for n in range(4)]
CARRIED = [
    Item("earlier_summary", "carried", f"### Part {n}\nline {n}\n", order=n, label=f"Part {n}")
    for n in range(2)
]
ALL = [GOAL, GOAL_MORE, MESSAGE, MESSAGE_MORE, *COMMANDS, *CARRIED]


def selection(shown: list[Shown], absent: tuple[Item, ...] = ()) -> Selection:
    """``shown`` and every other item of :data:`ALL` but ``absent`` left out."""
    ids = {id(s.item) for s in shown} | {id(i) for i in absent}
    return Selection(tuple(shown), tuple(i for i in ALL if id(i) not in ids))


#: One shown copy per item, shared by the steps (as a selection's measures share them).
WHOLE = {id(i): Shown(i, i.text) for i in ALL}


def whole(item: Item) -> Shown:
    return WHOLE[id(item)]


def test_each_render_equals_a_new_layouts() -> None:
    goal_cut = shortened(GOAL, 20)
    rest = [whole(i) for i in ALL if i not in (GOAL_MORE, MESSAGE_MORE)]
    steps: list[tuple[list[Shown], tuple[Item, ...]]] = [
        ([whole(i) for i in ALL], ()),
        ([goal_cut, *(whole(i) for i in ALL[1:])], ()),  # the goal shortened
        ([whole(i) for i in ALL if i is not GOAL_MORE], ()),  # its later part left out
        ([whole(i) for i in ALL if i is not GOAL_MORE], (GOAL_MORE,)),  # neither (same copies)
        (rest, (GOAL_MORE,)),  # a list item's rest left out
        (rest, (GOAL_MORE, MESSAGE_MORE)),  # neither shown nor left out (same copies)
        ([whole(i) for i in ALL if i is not COMMANDS[2]], ()),  # a list item left out
        ([Shown(i, i.text) for i in ALL], ()),  # everything shown again, as new equal copies
        ([shortened(GOAL, 30), *(whole(i) for i in ALL[1:] if i is not CARRIED[1])], ()),
        ([whole(i) for i in ALL if i not in (CARRIED[0], CARRIED[1], COMMANDS[0])], ()),
        ([whole(GOAL)], ()),
        ([whole(i) for i in ALL], ()),
    ]
    layout = StateLayout(entries=(1, 50))
    written: list[str] = []
    for shown, absent in steps:
        chosen = selection(shown, absent)
        text = layout.render(chosen)
        assert text == StateLayout(entries=(1, 50)).render(chosen)
        assert layout.render(chosen) == text  # rendered again from the memo
        written.append(text)
    # every step changes the text (so each render above had to write a group again)
    assert all(a != b for a, b in pairwise(written))
    assert written[0] == written[7] == written[-1]
    assert "- Please also add a test for the empty list case.\n" in written[3]
    assert "- Please also add a test [… 25 more characters not shown]\n" in written[4]
    assert "- Please also add a test\n" in written[5]
    assert "pytest tests/test_2.py" not in written[6]
    assert "1 more command run" in written[6]


def test_the_memo_is_not_part_of_the_layouts_value() -> None:
    used = StateLayout(entries=(1, 50))
    used.render(selection([whole(i) for i in ALL]))
    assert used == StateLayout(entries=(1, 50))
    assert hash(used) == hash(StateLayout(entries=(1, 50)))
    assert "_blocks" not in repr(used)
