"""Selection recall on the tools of real MCP servers: the default selection must not hide what a
question needs.

``data/mcp_reference_tools.json`` holds the tool lists of the public MCP reference servers
(npm ``@modelcontextprotocol/server-everything``, ``-filesystem``, ``-memory``,
``-sequential-thinking``; PyPI ``mcp-server-time``, ``mcp-server-git``, ``mcp-server-fetch``;
52 tools), recorded by ``scripts/record_mcp_tool_lists.py`` with each server's version. Each
question below is phrased the way a user asks, labelled with the tool(s) it needs (``a|b``: either
will do). Recall is the fraction of questions whose needed tools are all offered.
"""

from __future__ import annotations

import json
from pathlib import Path

from lightagent.tools import Tool, ToolRegistry
from lightagent_selection import OFFER_ALL_UP_TO

FIXTURE = Path(__file__).parent / "data" / "mcp_reference_tools.json"

# (question, needed tools, earlier turns: (user text, tool called) pairs)
QUESTIONS: list[tuple[str, list[str], list[tuple[str, str]]]] = [
    # time
    ("What time is it in Tokyo?", ["get_current_time"], []),
    ("If it's 9am in New York, what time is it in London?", ["convert_time"], []),
    ("What's the current time in Sydney right now?", ["get_current_time"], []),
    ("I have a call at 3pm Berlin time, when is that for me in Los Angeles?", ["convert_time"], []),
    ("and in Paris?", ["get_current_time"], [("What time is it in Tokyo?", "get_current_time")]),
    # filesystem
    ("Show me what's in the config.yaml file", ["read_text_file|read_file"], []),
    (
        "List the files in the src folder",
        ["list_directory|list_directory_with_sizes|directory_tree"],
        [],
    ),
    ("Create a folder called reports", ["create_directory"], []),
    ("Save these notes to notes.txt", ["write_file"], []),
    ("Rename draft.md to final.md", ["move_file"], []),
    ("Find all the python files in this project", ["search_files"], []),
    (
        "How big is data.csv and when was it last modified?",
        ["get_file_info|list_directory_with_sizes"],
        [],
    ),
    ("Replace the word foo with bar on line 3 of main.py", ["edit_file"], []),
    ("Show me the folder structure of the project", ["directory_tree|list_directory"], []),
    ("Which directories are you allowed to access?", ["list_allowed_directories"], []),
    ("Open the screenshot.png image", ["read_media_file"], []),
    (
        "Compare the contents of a.txt and b.txt",
        ["read_multiple_files|read_text_file|read_file"],
        [],
    ),
    (
        "now settings.yaml",
        ["read_text_file|read_file"],
        [("Show me config.yaml", "read_text_file")],
    ),
    # memory (knowledge graph)
    ("Remember that Alice works at Acme as an engineer", ["create_entities|add_observations"], []),
    ("What do you know about Alice?", ["search_nodes|open_nodes|read_graph"], []),
    ("Forget everything about Bob", ["delete_entities"], []),
    ("Note that Alice and Bob are married", ["create_relations"], []),
    ("Show me everything in your knowledge graph", ["read_graph"], []),
    ("Add to Alice's entry that she likes hiking", ["add_observations"], []),
    # git
    ("What's the status of my git repo?", ["git_status"], []),
    ("Show me the last 5 commits", ["git_log"], []),
    ("Commit my changes with the message 'fix typo'", ["git_commit"], []),
    ("Stage README.md", ["git_add"], []),
    ("Create a new branch called feature-login", ["git_create_branch"], []),
    ("Switch to the main branch", ["git_checkout"], []),
    ("What did I change that isn't staged yet?", ["git_diff_unstaged"], []),
    ("Show me the diff between main and develop", ["git_diff"], []),
    ("Which branches exist in this repository?", ["git_branch"], []),
    ("Unstage everything", ["git_reset"], []),
    ("Show me commit abc123", ["git_show"], []),
    ("What changes are staged for the next commit?", ["git_diff_staged"], []),
    ("and the ones before those?", ["git_log"], [("Show me the last 5 commits", "git_log")]),
    # fetch
    ("Get the content of https://example.com/blog and summarize it", ["fetch"], []),
    ("Download the page at https://docs.python.org and tell me what's new", ["fetch"], []),
    ("What's on the front page of Hacker News right now?", ["fetch"], []),
    # sequential thinking
    ("Think step by step through this tricky logic puzzle", ["sequentialthinking"], []),
    # everything (the protocol demo server)
    ("Echo back 'hello world'", ["echo"], []),
    ("What is 17 plus 25?", ["get-sum"], []),
    ("Compress the file log.txt with gzip", ["gzip-file-as-resource"], []),
    ("Show me the environment variables of the server", ["get-env"], []),
    ("Turn on the simulated logging", ["toggle-simulated-logging"], []),
    ("Start a long running operation", ["trigger-long-running-operation"], []),
    ("Show me a tiny image", ["get-tiny-image"], []),
]

# Written after the selection rule was chosen on QUESTIONS and never used to tune it: a check
# that the rule is not fitted to the questions above. (The rule changed once afterwards, to
# also count three shared description words as strong, for tools with uninformative names
# such as tool_7; that left both figures unchanged.)
HELD_OUT: list[tuple[str, list[str], list[tuple[str, str]]]] = [
    ("Convert 14:30 Tokyo time to New York time", ["convert_time"], []),
    ("what's the time in UTC", ["get_current_time"], []),
    ("Write a hello world script to hello.py", ["write_file"], []),
    ("Move report.pdf into the archive folder", ["move_file"], []),
    (
        "What's the size of the logs directory?",
        ["list_directory_with_sizes|get_file_info|directory_tree"],
        [],
    ),
    ("Look for any file named TODO", ["search_files"], []),
    ("Print README.md", ["read_text_file|read_file"], []),
    ("Change the port in server.conf from 80 to 8080", ["edit_file"], []),
    ("Make a new directory src/utils", ["create_directory"], []),
    ("Who is Carol connected to?", ["search_nodes|open_nodes|read_graph"], []),
    (
        "Store the fact that the project deadline is Friday",
        ["create_entities|add_observations"],
        [],
    ),
    ("Remove the relation between Alice and Acme", ["delete_relations"], []),
    ("Delete the observation that Bob likes tea", ["delete_observations"], []),
    ("What branch am I on?", ["git_branch|git_status"], []),
    ("Revert staging of all files", ["git_reset"], []),
    ("Show the git history", ["git_log"], []),
    ("Check out the release branch", ["git_checkout"], []),
    ("Show me what changed in the last commit", ["git_show|git_log|git_diff"], []),
    ("Read this article for me: https://news.example.org/story", ["fetch"], []),
    ("Grab the JSON from https://api.example.com/data", ["fetch"], []),
    ("Add 3 and 4", ["get-sum"], []),
    ("Repeat after me: banana", ["echo"], []),
    ("Let's reason carefully about whether this plan will work", ["sequentialthinking"], []),
]


def reference_registry() -> ToolRegistry:
    document = json.loads(FIXTURE.read_text())
    tools = [
        Tool(
            name=item["name"],
            description=item["description"],
            parameters=item["input_schema"],
            func=print,
            title=item.get("title"),
        )
        for server in document["servers"]
        for item in server["tools"]
    ]
    return ToolRegistry(tools, strict=False)


def transcript(turns: list[tuple[str, str]]) -> list[dict]:
    messages: list[dict] = []
    for i, (text, called) in enumerate(turns):
        call = {"id": f"c{i}", "type": "function", "function": {"name": called, "arguments": "{}"}}
        messages += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "(result)"},
            {"role": "assistant", "content": "Here it is."},
        ]
    return messages


def measure(registry: ToolRegistry, select, questions=None) -> tuple[float, float, list]:
    """(recall, average number of tools offered, the questions missed)."""
    questions = QUESTIONS if questions is None else questions
    hits, sizes, misses = 0, [], []
    for question, needed, turns in questions:
        names = select(registry, question, transcript(turns))
        offered = set(registry.names() if names is None else names)
        sizes.append(len(offered))
        if all(offered & set(group.split("|")) for group in needed):
            hits += 1
        else:
            misses.append((question, needed, sorted(offered)))
    return hits / len(questions), sum(sizes) / len(sizes), misses


def default_selection(registry, question, messages):
    """What the loop offers (``filter_tools=True``, the default limit of 8)."""
    return registry.offer(question, limit=8, messages=messages)


def old_selection(registry, question, messages):
    """The selection before: the 8 best BM25 matches, all tools only when nothing matched."""
    return registry.select(question, limit=8, messages=messages[-5:]) or None


def test_the_fixture_is_the_recorded_reference_servers():
    document = json.loads(FIXTURE.read_text())
    assert {s["server"] for s in document["servers"]} == {
        "everything",
        "filesystem",
        "memory",
        "sequential-thinking",
        "time",
        "git",
        "fetch",
    }
    assert all(s["version"] and s["package"] for s in document["servers"])
    registry = reference_registry()
    assert len(registry) >= 50 and len(QUESTIONS) + len(HELD_OUT) >= 70
    needed = {
        name for _, groups, _ in QUESTIONS + HELD_OUT for g in groups for name in g.split("|")
    }
    assert needed <= set(registry.names())


# Measured on the 52 tools (docs/tools.md states these): the default selection offers the
# tools needed by 48/48 questions (19.6 tools on average) and 19/23 held-out ones (18.3);
# the selection before: 39/48 (5.9) and 15/23 (7.6).
def test_recall_of_the_default_selection_on_real_mcp_servers():
    registry = reference_registry()
    recall, average, misses = measure(registry, default_selection)
    assert recall >= 0.95, misses
    assert average < 0.5 * len(registry), "the selection still narrows the list when it can"
    held_recall, held_average, held_misses = measure(registry, default_selection, HELD_OUT)
    assert held_recall >= 0.8, held_misses
    assert held_average < 0.5 * len(registry)


def test_the_selection_before_fails_the_same_floor():
    recall, _, misses = measure(reference_registry(), old_selection)
    assert recall < 0.95 and len(misses) >= 5


def test_tools_from_toolsets_rank_with_statistics_of_all_tools():
    """MCP tools sit in an overlay over the agent's own tools: the same offer either way."""
    plain = reference_registry()
    layered = ToolRegistry(plain.tools()[:10], strict=False).with_tools(plain.tools()[10:])
    for question, _, turns in QUESTIONS + HELD_OUT:
        assert plain.offer(question, messages=transcript(turns)) == layered.offer(
            question, messages=transcript(turns)
        ), question
    assert len(plain) <= OFFER_ALL_UP_TO
