"""Every fenced Python block in docs/*.md and the READMEs runs (or, if marked a fragment, compiles).

The convention is written for contributors in docs/writing-docs.md. In short:

* The ```` ```python ```` blocks of one page run in order in one namespace, as a reader
  would type them, in a fresh temporary working directory.
* The model is a real OpenAI-wire server on 127.0.0.1 (``LoopbackServer``), bound as
  ``loopback`` in that namespace. ``LIGHTAGENT_BASE_URL``/``OPENAI_BASE_URL`` point at it,
  ``LIGHTAGENT_API_KEY``/``OPENAI_API_KEY`` are set, and the placeholders
  ``"your_base_url"`` and ``"your_api_key"`` in a block are replaced by its URL and key.
  With nothing queued it answers every request with ``DEFAULT_ANSWER``.
* ``<!-- docs-test: fragment -->`` on the line before a block: the block is only compiled
  and its ``lightagent…`` imports resolved (for code that needs your own modules, a
  service we cannot start, or that shows a shape rather than a program).
* ``<!-- docs-test: setup`` … ``-->``: hidden code run at that point of the page. Plain
  ``setup`` only scripts the model (imports and ``loopback.…`` calls); ``setup server`` and
  ``setup file`` stand for what a reader has outside the page (a running server, a file on
  disk). Anything else a block needs is shown, so the visible blocks run in order as a
  reader types them. ``<!-- docs-test: check`` … ``-->`` holds assertions about what a
  block did; it binds nothing a later block reads.
* Scripted replies left unused when the page ends fail the test.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import logging
import os
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lightagent.plugins import reset_host
from lightagent_contracts.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[3]
PAGES = sorted(
    [
        *ROOT.glob("docs/*.md"),
        ROOT / "README.md",
        *ROOT.glob("*/README.md"),
        *ROOT.glob("examples/*/README.md"),
    ]
)
# Our import packages (a plugin author's own ``lightagent_weather`` is not one of them).
OUR_PACKAGES = frozenset(p.name for p in ROOT.glob("*/src/lightagent*") if p.is_dir())
DEFAULT_ANSWER = "This is the loopback model's answer."
API_KEY = "docs-test-key"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})(?P<info>[^`]*)$")
# What hidden setup may stand for besides scripting the model: things a reader has already.
SETUP_TAGS = ("server", "file")
_DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<kind>[a-z-]+)(?P<rest>.*)$")


@dataclass
class Block:
    """One piece of a page to check: a visible code block or a hidden setup comment."""

    page: Path
    line: int  # 1-based line of the fence or the comment
    code: str
    kind: str  # "run" | "fragment" | "setup" | "check"
    tag: str = ""  # for a setup: "" (scripts the model), "server" or "file"

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page.name
        return f"{page}:{self.line}"


def _is_python(info: str) -> bool:
    words = info.strip().split()
    return bool(words) and words[0].lower() in ("python", "py", "python3")


def extract(page: Path) -> list[Block]:
    """The page's Python blocks and hidden setup code, in page order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    pending: str | None = None  # a directive that applies to the next fence
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.match(line)
        if directive:
            kind = directive["kind"]
            if kind in ("setup", "check"):
                rest, tag = directive["rest"], ""
                words = rest.split(maxsplit=1)
                if kind == "setup" and words and words[0] in SETUP_TAGS:
                    tag, rest = words[0], rest.split(words[0], 1)[1]
                start, body = i, [rest]
                while "-->" not in body[-1]:
                    i += 1
                    if i == len(lines):
                        raise AssertionError(f"{page}:{start + 1}: unclosed docs-test comment")
                    body.append(lines[i])
                body[-1] = body[-1].split("-->")[0]
                code = textwrap.dedent("\n".join(body).strip("\n"))
                blocks.append(Block(page, start + 1, code, kind, tag))
            elif kind == "fragment":
                if "-->" not in line:
                    raise AssertionError(f"{page}:{i + 1}: write the directive on one line")
                pending = kind
            else:
                raise AssertionError(f"{page}:{i + 1}: unknown docs-test directive {kind!r}")
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            indent, ticks = fence["indent"], fence["ticks"]
            start, body = i, []
            i += 1
            while i < len(lines) and lines[i].strip() != ticks:
                text = lines[i]
                body.append(text[len(indent) :] if text.startswith(indent) else text.lstrip())
                i += 1
            if _is_python(fence["info"]):
                kind = pending or "run"
                blocks.append(Block(page, start + 1, "\n".join(body) + "\n", kind))
            elif pending is not None:
                raise AssertionError(
                    f"{page}:{start + 1}: docs-test directive on a non-Python block"
                )
            pending = None
            i += 1
            continue
        if line.strip():
            if pending is not None:
                raise AssertionError(f"{page}:{i + 1}: a docs-test directive must precede a block")
        i += 1
    return blocks


def _check_imports(block: Block, tree: ast.AST) -> None:
    """Every import from our packages names a module or attribute that exists."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [(node.module, alias.name) for alias in node.names]
        else:
            continue
        for module, name in targets:
            if module.split(".")[0] not in OUR_PACKAGES:
                continue
            try:
                loaded = importlib.import_module(module)
            except ImportError as exc:
                raise AssertionError(f"{block.where}: cannot import {module}: {exc}") from None
            if name is not None and name != "*" and not hasattr(loaded, name):
                try:
                    importlib.import_module(f"{module}.{name}")
                except ImportError:
                    raise AssertionError(
                        f"{block.where}: {module} has no {name!r} (line {node.lineno} of the block)"
                    ) from None


def _compile(block: Block, code: str) -> Any:
    try:
        tree = ast.parse(code, filename=block.where)
    except SyntaxError as exc:
        raise AssertionError(f"{block.where}: not valid Python: {exc}") from None
    _check_imports(block, tree)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    return compile(tree, block.where, "exec", flags=flags)


def _run(code: Any, namespace: dict[str, Any]) -> None:
    result = eval(code, namespace)  # a code object compiled with top-level await allowed
    if asyncio.iscoroutine(result):
        asyncio.run(result)


def _default_reply(body: dict[str, Any]) -> Any:
    return DEFAULT_ANSWER


@pytest.fixture
def docs_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    saved = dict(os.environ)  # a block may set variables (os.environ[...] = ...)
    root = logging.getLogger()  # ... or configure logging (docs/tracing.md does)
    logging_state = (root.level, list(root.handlers), {h: list(h.filters) for h in root.handlers})
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith(("LIGHTAGENT_", "OPENAI_"))]:
        if name not in ("LIGHTAGENT_REQUIRE_POSTGRES", "LIGHTAGENT_TEST_POSTGRES"):
            monkeypatch.delenv(name)
    reset_host()
    with LoopbackServer(default=_default_reply) as server:
        for name in ("LIGHTAGENT_BASE_URL", "OPENAI_BASE_URL"):
            monkeypatch.setenv(name, server.base_url)
        for name in ("LIGHTAGENT_API_KEY", "OPENAI_API_KEY"):
            monkeypatch.setenv(name, API_KEY)
        yield server
    reset_host()
    os.environ.clear()
    os.environ.update(saved)
    root.setLevel(logging_state[0])
    root.handlers[:] = logging_state[1]
    for handler, filters in logging_state[2].items():
        handler.filters[:] = filters


def _prepare(code: str, server: LoopbackServer) -> str:
    return code.replace('"your_base_url"', repr(server.base_url)).replace(
        '"your_api_key"', repr(API_KEY)
    )


def _scripts_the_model(statement: ast.stmt) -> bool:
    """An import, or an expression whose call chain starts at ``loopback``."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return True
    node: ast.AST | None = statement.value if isinstance(statement, ast.Expr) else None
    while isinstance(node, (ast.Call, ast.Attribute)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return isinstance(node, ast.Name) and node.id == "loopback"


def _bound(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def check_reader_order(blocks: list[Block]) -> None:
    """The visible blocks need nothing from hidden code but the model's script, servers, files.

    A reader types the visible blocks in order; a name only hidden code defines is a
    NameError for them, so it must be shown instead.
    """
    shown: set[str] = set()
    hidden: dict[str, Block] = {}
    for block in blocks:
        tree = ast.parse(block.code)
        if block.kind == "setup" and not block.tag:
            odd = [s for s in tree.body if not _scripts_the_model(s)]
            if odd:
                raise AssertionError(
                    f"{block.where}: hidden setup does more than script the model (line "
                    f"{odd[0].lineno}); show it in a block, or tag it 'setup server' or "
                    "'setup file' if it stands for a reader's own server or file"
                )
        if block.kind in ("run", "fragment"):
            read = {
                n.id
                for n in ast.walk(tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            }
            for name in sorted((read - _bound(tree) - shown) & hidden.keys()):
                raise AssertionError(
                    f"{block.where}: reads {name!r}, which only hidden code at "
                    f"{hidden[name].where} defines; a reader typing the page has no {name!r}"
                )
            shown |= _bound(tree)
        elif block.tag == "":  # model scripts and checks stand for nothing a reader has
            hidden.update((name, block) for name in _bound(tree) - shown)


def check_page(page: Path, server: LoopbackServer) -> None:
    """Compile every block of ``page`` and run the runnable ones, in order, in one namespace."""
    namespace: dict[str, Any] = {
        "__name__": f"docs_{page.stem.replace('-', '_')}",
        "loopback": server,
    }
    blocks = extract(page)
    for block in blocks:
        _compile(block, _prepare(block.code, server))  # syntax first: its message is clearer
    check_reader_order(blocks)
    for block in blocks:
        code = _compile(block, _prepare(block.code, server))
        if block.kind == "fragment":
            continue
        try:
            _run(code, namespace)
        except Exception as exc:
            raise AssertionError(
                f"{block.where}: the block raised {type(exc).__name__}: {exc}"
            ) from exc
    server.assert_exhausted()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_code_blocks_run(page: Path, docs_env: LoopbackServer) -> None:
    check_page(page, docs_env)


def test_the_pages_have_blocks_and_the_extractor_sees_them() -> None:
    """A guard against a test that checks nothing: the known pages yield their blocks."""
    by_page = {p.relative_to(ROOT).as_posix(): extract(p) for p in PAGES}
    assert len(by_page["docs/agent.md"]) >= 10
    assert sum(len(blocks) for blocks in by_page.values()) >= 120
    assert {"lightagent", "lightagent_flow", "lightagent_contracts"} <= OUR_PACKAGES
    kinds = {b.kind for blocks in by_page.values() for b in blocks}
    assert kinds == {"run", "fragment", "setup", "check"}
    tags = {b.tag for blocks in by_page.values() for b in blocks if b.kind == "setup"}
    assert tags == {"", "server", "file"}


# The checker itself must be able to fail: each kind of drift below is caught.
BROKEN = {
    "a block that raises": (
        "```python\nfrom lightagent import LightAgent\nLightAgent(bogus=1)\n```\n",
        "page.md:1: the block raised",
    ),
    "a fragment importing a name that does not exist": (
        "<!-- docs-test: fragment -->\n```python\nfrom lightagent import NoSuchName\n```\n",
        "lightagent has no 'NoSuchName'",
    ),
    "a fragment importing a module that does not exist": (
        "<!-- docs-test: fragment -->\n```py\nimport lightagent_flow.gone\n```\n",
        "cannot import lightagent_flow.gone",
    ),
    "a fragment that is not Python": (
        "<!-- docs-test: fragment -->\n```python\nflow.step(name, *, x=1) -> LightFlow\n```\n",
        "page.md:2: not valid Python",
    ),
    "a failed check": (
        "```python\nx = 1\n```\n<!-- docs-test: check\nassert x == 2\n-->\n",
        "page.md:4: the block raised AssertionError",
    ),
    "a directive on a non-Python block": (
        "<!-- docs-test: fragment -->\n```bash\nls\n```\n",
        "directive on a non-Python block",
    ),
    "an unknown directive": ("<!-- docs-test: skip -->\n", "unknown docs-test directive"),
    "a block that needs a name only hidden setup defines": (
        "<!-- docs-test: setup file\nimport os\n-->\n"
        "<!-- docs-test: setup\nfrom lightagent import tool\n-->\n"
        "```python\n@tool\ndef f(x: int) -> int:\n    return x\n```\n",
        "page.md:7: reads 'tool', which only hidden code at page.md:4 defines",
    ),
    "hidden setup that defines a reader's tool": (
        "<!-- docs-test: setup\ndef send_payment(to):\n    return to\n-->\n",
        "page.md:1: hidden setup does more than script the model (line 1)",
    ),
    "a block that reads what a check bound": (
        "```python\nx = 1\n```\n<!-- docs-test: check\ny = x\n-->\n```python\nprint(y)\n```\n",
        "page.md:7: reads 'y', which only hidden code at page.md:4 defines",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_checker_catches(case: str, docs_env: LoopbackServer, tmp_path: Path) -> None:
    text, message = BROKEN[case]
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    with pytest.raises(AssertionError, match=re.escape(message)):
        check_page(page, docs_env)


def test_scripted_replies_left_unused_fail_the_page(
    docs_env: LoopbackServer, tmp_path: Path
) -> None:
    page = tmp_path / "page.md"
    page.write_text('<!-- docs-test: setup\nloopback.reply("never asked")\n-->\n')
    with pytest.raises(AssertionError, match="unused"):
        check_page(page, docs_env)


def test_blocks_run_against_the_loopback_server(docs_env: LoopbackServer, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nfrom lightagent import LightAgent\n"
        'answer = LightAgent(model="m", api_key="your_api_key", base_url="your_base_url")'
        '.run("hi")\n```\n'
        "<!-- docs-test: check\n"
        f"assert answer == {DEFAULT_ANSWER!r}\n"
        'assert loopback.headers[-1]["Authorization"] == "Bearer docs-test-key"\n-->\n'
    )
    check_page(page, docs_env)


def test_setup_tagged_server_or_file_may_define_what_a_reader_has(
    docs_env: LoopbackServer, tmp_path: Path
) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        '<!-- docs-test: setup server\nsearch_url = "http://127.0.0.1:9/mcp"\n-->\n'
        '<!-- docs-test: setup file\nopen("notes.txt", "w").write("hi")\n-->\n'
        '```python\nassert search_url.endswith("/mcp")\nassert open("notes.txt").read() == "hi"\n```\n'
    )
    check_page(page, docs_env)
    assert [b.tag for b in extract(page)] == ["server", "file", ""]
