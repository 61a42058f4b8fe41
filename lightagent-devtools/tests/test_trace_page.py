"""The trace page: built from a real session in SQLite, written by the CLI, rendered in a real
headless Chromium with no network and no console errors."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from lightagent import LightAgent, SqliteSessionStore, ValidationError
from lightagent.cli import main
from lightagent_devtools.trace_page import build_timeline, render_trace_page

SECRET = "sk-pageCANARY0123456789abcdef"


def lookup(city: str) -> str:
    """Look up the weather of a city."""
    if city == "nowhere":
        raise ValueError("unknown city")
    return f"{city}: sunny </script><script>alert(1)</script>"


def _record(server, db: Path) -> str:
    server.reply(
        {
            "tool_calls": [
                {"name": "lookup", "arguments": {"city": "Paris"}},
                {"name": "lookup", "arguments": {"city": "nowhere"}},
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        },
        {"content": "Paris is sunny.", "usage": {"prompt_tokens": 50, "completion_tokens": 5}},
    )
    agent = LightAgent(
        name="weather",
        model="gpt-4.1",
        api_key=SECRET,
        base_url=server.base_url,
        tools=[lookup],
        session_store=SqliteSessionStore(db),
    )
    result = agent.run(
        f"Weather in Paris? my key is {SECRET}", session_id="s-page", result_format="object"
    )
    return str(result.run_id)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _browser(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    binary = _chromium()
    if binary is None:
        if os.environ.get("LIGHTAGENT_REQUIRE_BROWSER") == "1":
            pytest.fail("LIGHTAGENT_REQUIRE_BROWSER=1 but no chromium on PATH")
        pytest.skip("no chromium on PATH (apt-get install -y chromium) to render the page")
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-logging=stderr",
        "--v=0",
        # Any network request fails: the page must need none.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp / 'chromium-profile'}",
        "--window-size=1280,640",
        "--virtual-time-budget=3000",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def test_timeline_pairs_spans_and_marks(loopback_server, tmp_path) -> None:
    db = tmp_path / "s.db"
    _record(loopback_server, db)
    store = SqliteSessionStore(db)
    timeline = build_timeline(store.events("s-page"), title="t")
    kinds = [(s["kind"], s["status"]) for s in timeline["spans"]]
    assert kinds.count(("model", "ok")) == 2 and ("run", "ok") in kinds
    assert ("tool", "ok") in kinds and ("tool", "failed") in kinds
    assert [m["type"] for m in timeline["marks"]] == ["error"]
    assert timeline["summary"]["usage"]["total_tokens"] == 175
    assert all(s["end_ms"] >= s["start_ms"] for s in timeline["spans"])
    # Stored requests reference earlier ones; the page shows them resolved, and only their end.
    second = [s for s in timeline["spans"] if s["kind"] == "model"][1]["open"]["request"]
    assert second["message_count"] == 5 and second["tools"] == ["lookup"]
    assert [m["role"] for m in second["last_messages"]] == ["assistant", "tool", "tool"]
    store.close()


def test_cli_writes_a_self_contained_redacted_page(loopback_server, tmp_path, capsys) -> None:
    db = tmp_path / "s.db"
    run_id = _record(loopback_server, db)
    out = tmp_path / "page.html"
    assert (
        main(["trace", "view", "s-page", "--store", f"sqlite:///{db}", "--output", str(out)]) == 0
    )
    assert "wrote" in capsys.readouterr().out
    page = out.read_text()
    assert SECRET not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing remote
    # A tool output cannot close the data block: its "</script>" is escaped.
    assert page.count("</script>") == 2
    data = re.search(r'id="trace-data" type="application/json">(.*?)</script>', page, re.S)
    assert data and json.loads(data.group(1))["title"] == "trace s-page"
    # A run id finds its session.
    by_run = tmp_path / "run.html"
    assert (
        main(["trace", "view", run_id, "--store", f"sqlite:///{db}", "--output", str(by_run)]) == 0
    )
    assert f"trace {run_id} (s-page)" in by_run.read_text()


def test_cli_errors_are_typed(tmp_path, capsys) -> None:
    missing = tmp_path / "missing.db"
    args = ["trace", "view", "x", "--store", f"sqlite:///{missing}", "--output", "o.html"]
    assert main(args) == 2
    assert "LA-VALIDATION" in capsys.readouterr().err and not missing.exists()
    db = tmp_path / "empty.db"
    SqliteSessionStore(db).append("other", [{"type": "turn.started", "data": {}}])
    assert main(["trace", "view", "nope", "--store", f"sqlite:///{db}", "--output", "o.html"]) == 2
    err = capsys.readouterr().err
    assert "no session or run 'nope'" in err and "Hint:" in err
    from lightagent_devtools.trace_page import load_events

    with pytest.raises(ValidationError) as raised:
        load_events(SqliteSessionStore(db), "nope")
    assert raised.value.code == "LA-VALIDATION"


@pytest.mark.slow
def test_page_renders_in_headless_chromium(loopback_server, tmp_path) -> None:
    db = tmp_path / "s.db"
    _record(loopback_server, db)
    out = tmp_path / "page.html"
    store = SqliteSessionStore(db)
    out.write_text(render_trace_page(store.events("s-page"), title="trace s-page"))
    store.close()
    dom = _browser("--dump-dom", out.as_uri(), tmp=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert _console(dom.stderr) == []
    rows = re.findall(r'class="row d\d( failed)?" data-kind="(\w+)"', dom.stdout)
    assert len(rows) == 6  # run, 2 model calls, 2 tool calls, 1 error
    assert (" failed", "tool") in rows and (" failed", "error") in rows
    assert 'data-rendered="6"' in dom.stdout and "tool lookup #2" in dom.stdout
    shot = tmp_path / "page.png"
    taken = _browser(f"--screenshot={shot}", out.as_uri(), tmp=tmp_path)
    assert taken.returncode == 0 and _console(taken.stderr) == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5000


@pytest.mark.slow
def test_the_console_check_catches_a_broken_page(tmp_path) -> None:
    """The detector is real: a page that throws is reported."""
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>throw new Error('broken page')</script></body></html>")
    dom = _browser("--dump-dom", bad.as_uri(), tmp=tmp_path)
    assert any("Uncaught Error: broken page" in line for line in _console(dom.stderr))


@pytest.mark.postgres
def test_view_and_rescore_a_session_in_postgresql(loopback_server, postgres_url, tmp_path) -> None:
    import uuid

    from lightagent import EvaluationCase, LightEvaluator, SqlSessionStore

    prefix = f"h17_{uuid.uuid4().hex[:8]}_"
    store = SqlSessionStore(postgres_url, table_prefix=prefix)
    loopback_server.reply(
        {"tool_calls": [{"name": "lookup", "arguments": {"city": "Oslo"}}]}, "Oslo is sunny."
    )
    agent = LightAgent(
        model="gpt-4.1", api_key="sk-test", base_url=loopback_server.base_url,
        tools=[lookup], session_store=store,
    )  # fmt: skip
    result = agent.run("Weather in Oslo?", session_id="pg-page", result_format="object")
    loopback_server.stop()
    page = tmp_path / "pg.html"
    from lightagent_devtools.trace_page import load_events, write_trace_page

    events, session_id = load_events(store, str(result.run_id))
    assert session_id == "pg-page"
    write_trace_page(events, page, title="pg")
    assert "tool lookup" in json.dumps(build_timeline(events)) and page.stat().st_size > 1000
    report = LightEvaluator().rescore(
        store,
        [EvaluationCase(name="oslo", session_id="pg-page", expected_tools=("lookup",),
                        expected_output_contains=("sunny",))],
    )  # fmt: skip
    report.assert_all_passed()
    store.close()


def _page_data(page: str) -> dict:
    found = re.search(r'id="trace-data" type="application/json">(.*?)</script>', page, re.S)
    assert found
    return json.loads(found.group(1))


def test_the_header_and_the_cli_count_the_same_events(loopback_server, tmp_path, capsys) -> None:
    db = tmp_path / "s.db"
    _record(loopback_server, db)
    out = tmp_path / "page.html"
    assert (
        main(["trace", "view", "s-page", "--store", f"sqlite:///{db}", "--output", str(out)]) == 0
    )
    said = re.search(r"\((\d+) events\)", capsys.readouterr().out)
    assert said, "the CLI names no event count"
    store = SqliteSessionStore(db)
    stored = len(store.events("s-page"))
    store.close()
    assert int(said.group(1)) == _page_data(out.read_text())["event_count"] == stored


def test_rows_are_named_by_agent_and_repeated_tool_calls_differ(loopback_server, tmp_path) -> None:
    db = tmp_path / "s.db"
    _record(loopback_server, db)
    store = SqliteSessionStore(db)
    labels = [s["label"] for s in build_timeline(store.events("s-page"))["spans"]]
    store.close()
    assert labels[0] == "run weather"  # the agent's name, not the provider's
    tools = [label for label in labels if label.startswith("tool ")]
    assert tools == ["tool lookup #1 (city=Paris)", "tool lookup #2 (city=nowhere)"]
    # A trace from RunResult.trace carries the agent's name too.
    loopback_server.reply("hi")
    agent = LightAgent(
        name="greeter", model="gpt-4.1", api_key="k", base_url=loopback_server.base_url
    )
    trace = agent.run("hello", trace=True, result_format="object").trace
    assert build_timeline(trace)["spans"][0]["label"] == "run greeter"
    # Without any name the model is the fallback.
    anonymous = [dict(e, data={k: v for k, v in e["data"].items() if k != "agent"}) for e in trace]
    assert build_timeline(anonymous)["spans"][0]["label"] == "run gpt-4.1"


def test_a_tool_label_summarizes_its_arguments_short_and_redacted() -> None:
    from lightagent_devtools.trace_page import render_trace_page

    long_value = "x" * 200
    trace = [
        {"type": "tool_call", "timestamp": 1.0, "run_id": "r",
         "data": {"call_id": "a", "name": "login", "arguments": {"user": "ada", "password": "hunter2"}}},
        {"type": "tool_result", "timestamp": 1.1, "run_id": "r", "data": {"call_id": "a", "name": "login"}},
        {"type": "tool_call", "timestamp": 1.2, "run_id": "r",
         "data": {"call_id": "b", "name": "login", "arguments": f'{{"token": "{SECRET}", "note": "{long_value}"}}'}},
        {"type": "tool_result", "timestamp": 1.3, "run_id": "r", "data": {"call_id": "b", "name": "login"}},
    ]  # fmt: skip
    first, second = [s["label"] for s in build_timeline(trace)["spans"]]
    assert first == "tool login #1 (user=ada, password=[redacted])"
    assert second.startswith("tool login #2 (token=[redacted], note=xxx") and len(second) < 80
    page = render_trace_page(trace)
    assert "hunter2" not in page and SECRET not in page


def test_flow_rows_are_named_by_the_flow_run_and_its_steps(tmp_path) -> None:
    lightagent_flow = pytest.importorskip("lightagent_flow")
    from lightagent import ScriptedModel

    store = SqliteSessionStore(tmp_path / "f.db")
    agent = LightAgent(name="researcher", model=ScriptedModel(["found"]))
    flow = lightagent_flow.LightFlow(session_store=store).step("research", agent=agent)
    flow.run("Analyze ACME", run_id="report-001", session_id="f")
    labels = [s["label"] for s in build_timeline(store.events("f"))["spans"]]
    store.close()
    assert "flow report-001" in labels and "step research" in labels


@pytest.mark.slow
def test_the_page_has_a_time_axis_in_chromium(loopback_server, tmp_path) -> None:
    db = tmp_path / "s.db"
    _record(loopback_server, db)
    out = tmp_path / "page.html"
    store = SqliteSessionStore(db)
    events = store.events("s-page")
    out.write_text(render_trace_page(events, title="trace s-page"))
    total = build_timeline(events)["total_ms"]
    store.close()
    dom = _browser("--dump-dom", out.as_uri(), tmp=tmp_path)
    assert dom.returncode == 0 and _console(dom.stderr) == []
    assert 'class="row axis"' in dom.stdout
    ticks = [
        (
            re.search(r"left: ([\d.]+)%", tag).group(1),
            re.search(r'data-ms="([\d.]+)"', tag).group(1),
        )
        for tag in re.findall(r'<div class="tick"[^>]*>', dom.stdout)
    ]
    assert len(ticks) >= 3, dom.stdout[:3000]
    positions = [float(p) for p, _ in ticks]
    values = [float(v) for _, v in ticks]
    assert values[0] == 0 and positions[0] == 0 and positions == sorted(positions)
    step = values[1] - values[0]
    assert all(abs((b - a) - step) < 1e-6 for a, b in itertools.pairwise(values))  # an even scale
    assert all(
        abs(p - 100 * v / total) < 0.01 for p, v in zip(positions, values, strict=True)
    )  # true to time
    assert values[-1] <= total
