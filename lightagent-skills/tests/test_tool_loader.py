"""ToolLoader: modules from a directory, names validated, traversal refused, import errors typed."""

from __future__ import annotations

import os
import textwrap

import pytest
from lightagent.errors import ToolError
from lightagent.tools import Tool, ToolRegistry
from lightagent_skills import ToolLoader


def write(path, text):
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def tools_dir(tmp_path):
    d = tmp_path / "tools"
    d.mkdir()
    write(
        d / "get_weather.py",
        """
        def get_weather(city_name):
            return f"{city_name} is sunny"

        get_weather.tool_info = {
            "tool_name": "get_weather",
            "tool_description": "Weather for a city.",
            "tool_params": [{"name": "city_name", "type": "string", "description": "City", "required": True}],
        }
        """,
    )
    write(
        d / "math_tools.py",
        """
        from lightagent import tool

        @tool
        def double(x: int) -> int:
            '''Double x.'''
            return 2 * x

        @tool
        def half(x: float) -> float:
            '''Half of x.'''
            return x / 2

        def helper():
            return None
        """,
    )
    write(
        d / "typed.py",
        """
        def typed(text: str, times: int = 2) -> str:
            '''Repeat text.'''
            return text * times
        """,
    )
    write(d / "broken.py", "def broken(:\n    pass\n")
    write(d / "raises.py", "raise RuntimeError('import-time failure')\n")
    write(d / "empty.py", "VALUE = 1\n")
    return d


def test_load_same_named_tool_info_function(tools_dir):
    loaded = ToolLoader(tools_dir).load_tool("get_weather")
    assert isinstance(loaded, Tool) and loaded.source == "tool_info"
    assert loaded("Paris") == "Paris is sunny"


def test_load_typed_function_and_module_of_tools(tools_dir):
    loader = ToolLoader(str(tools_dir))
    typed = loader.load_tool("typed")
    assert typed.parameters["required"] == ["text"]
    tools = loader.load_tools(["math_tools", "get_weather"])
    assert sorted(t.name for t in tools) == ["double", "get_weather", "half"]
    reg = ToolRegistry(tools)
    assert reg.validate_tools() == [
        d for d in reg.validate_tools() if d["level"] == "warning"
    ]  # no errors
    assert loader.load_tools("typed")[0].name == "typed"


def test_loading_twice_reuses_the_module(tools_dir):
    loader = ToolLoader(tools_dir)
    assert loader.load_tool("typed").func is loader.load_tool("typed").func


def test_changed_file_is_reloaded(tools_dir):
    loader = ToolLoader(tools_dir)
    first = loader.load_tool("typed")
    path = tools_dir / "typed.py"
    write(path, "def typed(text: str) -> str:\n    '''Echo.'''\n    return text\n")
    stat = path.stat()
    os.utime(path, (stat.st_atime, stat.st_mtime + 5))
    second = loader.load_tool("typed")
    assert second.func is not first.func and second.description == "Echo."


@pytest.mark.parametrize(
    "name",
    [
        "../secret",
        "..",
        "a/b",
        "a.b",
        "with-dash",
        "1abc",
        "",
        " typed",
        "typed.py",
        "/etc/passwd",
        None,
        3,
    ],
)
def test_bad_names_are_refused(tools_dir, name):
    with pytest.raises(ToolError) as info:
        ToolLoader(tools_dir).load_tool(name)
    assert info.value.code == "LA-TOOL-DEFINITION"
    assert "[A-Za-z_]" in info.value.hint


def test_symlink_escape_is_refused(tools_dir, tmp_path):
    outside = tmp_path / "outside.py"
    write(outside, "def escape():\n    '''x'''\n    return 1\n")
    (tools_dir / "escape.py").symlink_to(outside)
    with pytest.raises(ToolError) as info:
        ToolLoader(tools_dir).load_tool("escape")
    assert info.value.code == "LA-TOOL-DEFINITION" and "outside" in info.value.message


def test_missing_module_and_directory(tools_dir, tmp_path):
    with pytest.raises(ToolError) as info:
        ToolLoader(tools_dir).load_tool("nope")
    assert info.value.code == "LA-TOOL-NOT-FOUND"
    with pytest.raises(ToolError) as info:
        ToolLoader(tmp_path / "missing").load_tool("nope")
    assert info.value.code == "LA-TOOL-NOT-FOUND" and "does not exist" in info.value.message


@pytest.mark.parametrize(
    ("name", "fragment"),
    [("broken", "SyntaxError"), ("raises", "RuntimeError: import-time failure")],
)
def test_import_errors_are_typed(tools_dir, name, fragment):
    with pytest.raises(ToolError) as info:
        ToolLoader(tools_dir).load_tool(name)
    assert info.value.code == "LA-TOOL-DEFINITION"
    assert fragment in info.value.message


def test_module_without_the_named_tool(tools_dir):
    loader = ToolLoader(tools_dir)
    with pytest.raises(ToolError) as info:
        loader.load_tool("empty")
    assert info.value.code == "LA-TOOL-DEFINITION"
    with pytest.raises(ToolError) as info:
        loader.load_tool("math_tools")  # two tools, none named math_tools
    assert "use load_tools" in info.value.message


def test_a_folder_whose_name_is_not_utf8_loads(tmp_path):
    # Linux folder names are bytes; Python hands such a name over with surrogate escapes.
    folder = os.fsdecode(bytes(tmp_path) + b"/tools-\xff")
    os.mkdir(folder)
    with open(os.path.join(folder, "shout.py"), "w", encoding="utf-8") as f:
        f.write('def shout(text: str) -> str:\n    "Shout."\n    return text.upper()\n')
    assert ToolLoader(folder).load_tool("shout")(text="hi") == "HI"
