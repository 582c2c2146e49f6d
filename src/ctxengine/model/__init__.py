"""Value types of ctxengine: parts, messages, usage, ledgers, entries. No I/O, no imports of
other ctxengine packages."""

from ctxengine.model.entries import (
    Body,
    CompactionRecord,
    Entry,
    EntryKind,
    PinRecord,
    PruneRecord,
    SupersedeRecord,
    UnpinRecord,
    current_entries,
)
from ctxengine.model.facts import DecisionFact, ErrorFact, FileFact, IdentifierFact, RuleFact
from ctxengine.model.ledgers import Ledgers
from ctxengine.model.messages import (
    ROLES,
    Message,
    Role,
    assistant,
    system,
    tool_result,
    user,
)
from ctxengine.model.parts import (
    PART_KINDS,
    DocumentPart,
    ImagePart,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.usage import Usage

__all__ = [
    "PART_KINDS",
    "ROLES",
    "Body",
    "CompactionRecord",
    "DecisionFact",
    "DocumentPart",
    "Entry",
    "EntryKind",
    "ErrorFact",
    "FileFact",
    "IdentifierFact",
    "ImagePart",
    "Ledgers",
    "Message",
    "NativeCompactionPart",
    "Part",
    "PinRecord",
    "PruneRecord",
    "ReasoningPart",
    "Role",
    "RuleFact",
    "SupersedeRecord",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
    "UnpinRecord",
    "Usage",
    "assistant",
    "current_entries",
    "system",
    "tool_result",
    "user",
]
