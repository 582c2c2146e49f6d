"""Pinned items in the context: the message that shows them as standing instructions.

A pinned item is a text the user (or the agent on their behalf) asked to keep for the whole
session: a :class:`~ctxengine.model.PinRecord` of the log, or an automatic pin (the first
user request, a rule the user stated). Its text is shown verbatim, in a synthetic user
message that opens with the words of :data:`PIN_WORDS` in the conversation's language::

    Pinned by the user: standing instructions that hold for the whole session, …

    [1] keep the public API stable
    Never add a co-author trailer to commits.

    [2] the user's first request
    Port the parser to Rust.

Each item is a bracketed number, its label (the pin's reason, or what an automatic pin is),
then the text on the lines after it, unchanged; items are separated by a blank line.

Pure data and functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ctxengine.model import Message, TextPart
from ctxengine.projection.language import LANGUAGES, Language

#: Where a pinned item comes from: a pin record, the session's first user request, or a rule
#: the user stated.
PinOrigin: TypeAlias = Literal["pin", "first_request", "rule"]
#: ``meta["synthetic"]`` of a message showing pinned items (never a real user message).
SYNTHETIC_PINNED = "pinned"


@dataclass(frozen=True, slots=True)
class Pinned:
    """One pinned item as the context shows it.

    Attributes:
        text: the text, verbatim.
        origin: :data:`PinOrigin`.
        reason: the reason given with a pin, or ``None``.
        entry_id: the history entry the item comes from (a pinned entry, the first request,
            the message stating the rule), or ``None`` for a pinned text.
    """

    text: str
    origin: PinOrigin = "pin"
    reason: str | None = None
    entry_id: str | None = None


@dataclass(frozen=True, slots=True)
class PinWords:
    """The words around pinned items in one language.

    Attributes:
        intro: the sentence that opens the message (marks the items as standing
            instructions).
        first_request / rule: the label of an automatic pin of that origin.
    """

    intro: str
    first_request: str
    rule: str


#: The words of each language of :data:`~ctxengine.projection.language.LANGUAGES`.
PIN_WORDS: dict[Language, PinWords] = {
    "en": PinWords(
        "Pinned by the user: standing instructions that hold for the whole session, through "
        "every compaction, until the user changes them.",
        "the user's first request",
        "a rule the user stated",
    ),
    "zh": PinWords(
        "用户固定的内容：在整个会话中始终有效的常设指令，每次压缩后依然有效，直到用户更改为止。",
        "用户的第一个请求",
        "用户提出的规则",
    ),
    "ja": PinWords(
        "ユーザーが固定した項目：ユーザーが変更するまで、圧縮の後も含めてセッション全体を通して"
        "有効な常設の指示です。",
        "ユーザーの最初の依頼",
        "ユーザーが示したルール",
    ),
    "ko": PinWords(
        "사용자가 고정한 항목: 사용자가 바꾸기 전까지 압축 이후에도 세션 전체에 걸쳐 유효한 상시 "
        "지시입니다.",
        "사용자의 첫 요청",
        "사용자가 정한 규칙",
    ),
    "es": PinWords(
        "Fijado por el usuario: instrucciones permanentes que valen durante toda la sesión, "
        "también después de cada compactación, hasta que el usuario las cambie.",
        "la primera petición del usuario",
        "una regla que indicó el usuario",
    ),
    "fr": PinWords(
        "Épinglé par l'utilisateur : des instructions permanentes, valables pendant toute la "
        "session et après chaque compaction, jusqu'à ce que l'utilisateur les modifie.",
        "la première demande de l'utilisateur",
        "une règle posée par l'utilisateur",
    ),
    "de": PinWords(
        "Vom Benutzer angeheftet: dauerhafte Anweisungen, die für die ganze Sitzung gelten, "
        "auch nach jeder Verdichtung, bis der Benutzer sie ändert.",
        "die erste Anfrage des Benutzers",
        "eine Regel des Benutzers",
    ),
    "pt": PinWords(
        "Fixado pelo usuário: instruções permanentes que valem durante toda a sessão, também "
        "após cada compactação, até que o usuário as altere.",
        "o primeiro pedido do usuário",
        "uma regra indicada pelo usuário",
    ),
    "ru": PinWords(
        "Закреплено пользователем: постоянные указания, действующие на протяжении всего "
        "сеанса, в том числе после каждого сжатия, пока пользователь их не изменит.",
        "первый запрос пользователя",
        "правило, заданное пользователем",
    ),
}
assert tuple(PIN_WORDS) == LANGUAGES


def pin_words(language: str) -> PinWords:
    """The words of ``language``; English for a code without a table."""
    found = PIN_WORDS.get(language)  # type: ignore[call-overload]
    return found if found is not None else PIN_WORDS["en"]


def pin_label(item: Pinned, words: PinWords) -> str:
    """What the item's bracketed number is followed by: its reason, or the label of its
    automatic origin (``""`` for a pin given without a reason)."""
    if item.origin == "first_request":
        return words.first_request
    if item.origin == "rule":
        return words.rule
    return item.reason or ""


def pinned_text(items: Sequence[Pinned], language: str, *, start: int = 1) -> str:
    """The text of the message showing ``items`` (see the module docstring): the intro in
    ``language``, then each item numbered from ``start``, its text verbatim."""
    words = pin_words(language)
    blocks = [words.intro]
    for n, item in enumerate(items, start):
        label = pin_label(item, words)
        head = f"[{n}] {label}" if label else f"[{n}]"
        blocks.append(f"{head}\n{item.text}")
    return "\n\n".join(blocks)


def pinned_message(items: Sequence[Pinned], language: str, *, start: int = 1) -> Message:
    """The synthetic user message showing ``items`` (``meta["synthetic"]`` is
    :data:`SYNTHETIC_PINNED`)."""
    text = pinned_text(items, language, start=start)
    return Message("user", (TextPart(text),), meta={"synthetic": SYNTHETIC_PINNED})


__all__ = [
    "PIN_WORDS",
    "SYNTHETIC_PINNED",
    "PinOrigin",
    "PinWords",
    "Pinned",
    "pin_label",
    "pin_words",
    "pinned_message",
    "pinned_text",
]
