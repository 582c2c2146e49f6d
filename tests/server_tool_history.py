"""A saved Anthropic Messages conversation shaped like real API traffic with provider-side
tool blocks: a web search (``server_tool_use`` + ``web_search_tool_result`` with encrypted
content and a cited answer), a code-execution run, an MCP connector call and a container
upload, next to a client tool call that is answered and one that never is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TASK = "Task A: migrate module X to the storage API v2. Never push to main."
SEARCH_ID = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE"
CODE_ID = "srvtoolu_01A2B3C4D5E6F7G8H9J0K1L2"
MCP_ID = "mcptoolu_014Q35RayjACSWkSj4X2yov1"
ENCRYPTED = "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2MSDCv0e"


def server_tool_conversation() -> dict[str, Any]:
    """The conversation as a request body (model, system, tools, messages)."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8192,
        "system": "You are a coding agent.",
        "tools": [
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
            {"type": "code_execution_20250522", "name": "code_execution"},
            {"name": "read_file", "input_schema": {"type": "object"}},
            {"name": "run_tests", "input_schema": {"type": "object"}},
        ],
        "messages": [
            {"role": "user", "content": TASK},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "I'll look up the v2 migration guide first."},
                    {
                        "type": "server_tool_use",
                        "id": SEARCH_ID,
                        "name": "web_search",
                        "input": {"query": "storage API v2 migration guide"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": SEARCH_ID,
                        "content": [
                            {
                                "type": "web_search_result",
                                "url": "https://docs.example.com/storage/v2/migrate",
                                "title": "Migrating to Storage API v2",
                                "encrypted_content": ENCRYPTED,
                                "page_age": "April 30, 2025",
                            },
                            {
                                "type": "web_search_result",
                                "url": "https://docs.example.com/storage/v2/changelog",
                                "title": "Storage API v2 changelog",
                                "encrypted_content": ENCRYPTED,
                                "page_age": None,
                            },
                        ],
                    },
                    {
                        "type": "text",
                        "text": "The guide says load() becomes open_store().",
                        "citations": [
                            {
                                "type": "web_search_result_location",
                                "url": "https://docs.example.com/storage/v2/migrate",
                                "title": "Migrating to Storage API v2",
                                "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lM2M1",
                                "cited_text": "load() is replaced by open_store()",
                            }
                        ],
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "read_file",
                        "input": {"path": "src/x.py"},
                    },
                ],
                "usage": {
                    "input_tokens": 2_100,
                    "output_tokens": 310,
                    "server_tool_use": {"web_search_requests": 1},
                },
                "stop_reason": "tool_use",
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "content": "def load():\n    return v1.load()\n",
                    }
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "server_tool_use",
                        "id": CODE_ID,
                        "name": "code_execution",
                        "input": {"code": "import ast; print(len(ast.parse(src).body))"},
                    },
                    {
                        "type": "code_execution_tool_result",
                        "tool_use_id": CODE_ID,
                        "content": {
                            "type": "code_execution_result",
                            "stdout": "1\n",
                            "stderr": "",
                            "return_code": 0,
                            "content": [],
                        },
                    },
                    {
                        "type": "mcp_tool_use",
                        "id": MCP_ID,
                        "name": "get_ticket",
                        "server_name": "tracker",
                        "input": {"key": "MIG-42"},
                    },
                    {
                        "type": "mcp_tool_result",
                        "tool_use_id": MCP_ID,
                        "is_error": False,
                        "content": [{"type": "text", "text": "MIG-42: migrate module X (open)"}],
                    },
                    {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
                    {"type": "text", "text": "Running the tests before editing."},
                    {
                        "type": "tool_use",
                        "id": "toolu_02",
                        "name": "run_tests",
                        "input": {"path": "tests/"},
                    },
                ],
                "stop_reason": "tool_use",
            },
            {"role": "user", "content": "The tests hang; skip them for now."},
            {
                "role": "assistant",
                "content": "Skipping the tests; editing src/x.py to call open_store().",
                "stop_reason": "end_turn",
            },
        ],
    }


def write_server_tool_conversation(directory: Path) -> Path:
    """The conversation written as ``conversation.json`` in ``directory``."""
    path = directory / "conversation.json"
    path.write_text(json.dumps(server_tool_conversation(), indent=1), encoding="utf-8")
    return path
