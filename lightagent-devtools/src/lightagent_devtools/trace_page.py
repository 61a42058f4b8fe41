"""The trace page: one self-contained HTML file showing a run on a timeline.

:func:`build_timeline` pairs the event log into spans (runs, model calls, tool calls,
flow steps, DAG tasks) and instants (memory, handoffs, approvals, hook and guardrail
decisions, retries, errors); :func:`render_trace_page` embeds that, redacted, in a page
whose inline script draws it. Nothing is fetched at view time: no CDN, no fonts.
``lightagent trace view SESSION_OR_RUN --store URL --output FILE.html`` writes one.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lightagent.errors import ValidationError
from lightagent.events.trace import summarize_trace
from lightagent.redaction import redact_or_marker

__all__ = [
    "build_timeline",
    "count_events",
    "load_events",
    "render_trace_page",
    "write_trace_page",
]

# (opening type, closing types, kind, key of the pairing id in data)
_PAIRS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("run_start", ("run_end",), "run", ""),
    ("flow_start", ("flow_end", "flow_cancelled"), "flow", ""),
    ("model_request", ("model_response",), "model", "request_index"),
    ("tool_call", ("tool_result",), "tool", "call_id"),
    ("step_start", ("step_end",), "step", "step"),
    (
        "dag.task.claimed",
        ("dag.task.verified", "dag.attempt.failed", "dag.task.blocked"),
        "task",
        "task_id",
    ),
)
_CLOSERS = {c: (opener, kind, key) for opener, closers, kind, key in _PAIRS for c in closers}
_OPENERS = {opener: (kind, key) for opener, _, kind, key in _PAIRS}
# Closers that also mean "this span failed".
_FAILING = {"dag.attempt.failed", "dag.task.blocked", "flow_cancelled"}
# Events that are noise on a timeline a person reads.
_SKIP = {"tool_finished", "trace.recorded", "session.started"}
_KIND_OF_PREFIX = (
    ("memory", "memory"),
    ("handoff", "handoff"),
    ("approval", "approval"),
    ("hook", "policy"),
    ("guardrail", "policy"),
    ("policy", "policy"),
    ("error", "error"),
    ("step_fallback", "retry"),
    ("step_retry", "retry"),
    ("model_retry", "retry"),
    ("dag.", "dag"),
)


def load_events(store: Any, ref: str) -> tuple[list[dict[str, Any]], str]:
    """The events of session ``ref``, or of the run ``ref`` in any session of ``store``.

    Returns ``(events, session_id)``; ``LA-VALIDATION`` when neither is found.
    """
    from lightagent.events.binding import resolve_session_store

    resolved = resolve_session_store(store)
    events = list(resolved.events(ref))
    if events:
        return [_as_dict(e) for e in events], ref
    offset = 0
    while True:  # a run id: find the session that holds it, most recent first
        page = resolved.list_sessions(limit=200, offset=offset)
        for info in page:
            found = [e for e in resolved.events(info.session_id) if e.run_id == ref]
            if found:
                return [_as_dict(e) for e in found], info.session_id
        if len(page) < 200:
            break
        offset += 200
    raise ValidationError(
        "LA-VALIDATION",
        f"no session or run {ref!r} in the store",
        hint="Pass a session id or run id the store holds (a DAG run's session is dag-<run id>).",
        details={"ref": ref},
    )


def _normalize(events: Iterable[Any]) -> list[dict[str, Any]]:
    """Trace dicts from trace dicts or session events, stored model requests resolved and trimmed."""
    items = list(events)
    if items and not isinstance(items[0], Mapping):
        from lightagent.events.projector import resolve_request

        by_seq = {e.sequence: e for e in items}
        out = []
        for event in items:
            item = _as_dict(event)
            if event.type == "model.requested" and isinstance(event.data.get("request"), dict):
                try:
                    item["data"]["request"] = resolve_request(by_seq, event)
                except ValidationError:  # a log cut before its base request: keep what is there
                    pass
            out.append(item)
        items = out
    else:
        items = [dict(e) for e in items]
    for item in items:
        data = item.get("data")
        if isinstance(data, Mapping) and isinstance(data.get("request"), Mapping):
            item["data"] = {**data, "request": _trim_request(data["request"])}
    return items


def _trim_request(request: Mapping[str, Any]) -> dict[str, Any]:
    """The end of the conversation sent, not all of it: a page stays linear in the run's length."""
    messages = request.get("messages")
    messages = list(messages) if isinstance(messages, list) else []
    tools = request.get("tools")
    names = [
        (t.get("function") or {}).get("name") for t in tools or [] if isinstance(t, Mapping)
    ]  # fmt: skip
    return {"message_count": len(messages), "last_messages": messages[-3:], "tools": names}


def _as_dict(event: Any) -> dict[str, Any]:
    if isinstance(event, Mapping):
        return dict(event)
    from lightagent.events.mapping import trace_type_of

    data = {k: v for k, v in event.data.items() if k not in ("trace_type", "trace_seq")}
    return {
        "type": trace_type_of(event) or event.type,
        "data": data,
        "timestamp": event.timestamp,
        "run_id": event.run_id,
        "trace_id": event.trace_id,
        "agent_id": event.agent_id,
    }


def _kind(kind: str) -> str:
    for prefix, name in _KIND_OF_PREFIX:
        if kind.startswith(prefix):
            return name
    return "event"


def _label(kind: str, data: Mapping[str, Any], event: Mapping[str, Any]) -> str:
    """A row's name: runs by agent, flows by run id, steps and tasks by name; the model
    (or provider) names a run only when nothing else does."""
    if kind == "run":
        name = data.get("agent") or event.get("agent_id") or data.get("model")
        return f"run {name or data.get('provider') or ''}".strip()
    if kind == "flow":
        return f"flow {data.get('name') or data.get('run_id') or event.get('run_id') or ''}".strip()
    if kind == "model":
        return f"model {data.get('model') or ''} #{data.get('request_index', '')}".strip()
    if kind == "tool":
        return f"tool {data.get('name')}"
    if kind == "step":
        return f"step {data.get('step')}"
    if kind == "task":
        return f"task {data.get('task_id')}"
    return kind


def _arguments(value: Any, limit: int = 48) -> str:
    """A tool call's arguments in one short line (``key=value, …``), redacted first."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    value = redact_or_marker(value)
    if isinstance(value, Mapping):
        text = ", ".join(
            f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in value.items()
        )
    else:
        text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def count_events(events: Iterable[Any]) -> int:
    """How many events a trace holds: the one count the page's header and
    ``lightagent trace view`` both show (every event of the log, drawn or not)."""
    return sum(1 for _ in events)


def _ms(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def build_timeline(events: Iterable[Any], *, title: str | None = None) -> dict[str, Any]:
    """Spans and instants of a trace (trace dicts or session events), times in ms from the start."""
    # The seeds' lifecycle companions (``companion_of``) repeat an event already drawn.
    everything = _normalize(events)
    items = [
        e
        for e in everything
        if e.get("type") not in _SKIP and "companion_of" not in (e.get("data") or {})
    ]
    stamps = [float(e["timestamp"]) for e in items if _ms(e.get("timestamp")) is not None]
    t0 = min(stamps) if stamps else 0.0
    spans: list[dict[str, Any]] = []
    marks: list[dict[str, Any]] = []
    open_spans: dict[tuple[str, str, str], dict[str, Any]] = {}
    calls: dict[tuple[str, str], int] = {}  # (run, tool) -> calls so far: "#n" tells them apart
    span: dict[str, Any] | None
    for index, event in enumerate(items):
        etype = str(event.get("type") or "")
        raw = event.get("data")
        data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        at = (float(event.get("timestamp") or t0) - t0) * 1000
        run = str(event.get("run_id") or "")
        if etype in _OPENERS:
            kind, key = _OPENERS[etype]
            span = {
                "kind": kind,
                "label": _tool_label(calls, run, data)
                if kind == "tool"
                else _label(kind, data, event),
                "start_ms": round(at, 3),
                "end_ms": None,
                "status": "open",
                "run_id": run,
                "open": data,
                "close": None,
                "order": index,
            }
            open_spans[(kind, run, str(data.get(key, "")) if key else "")] = span
            spans.append(span)
            continue
        if etype in _CLOSERS:
            _, kind, key = _CLOSERS[etype]
            ident = (kind, run, str(data.get(key, "")) if key else "")
            span = open_spans.pop(ident, None)
            if span is None:  # a close without its open (a resumed run): a span ending here
                label = (
                    _tool_label(calls, run, data) if kind == "tool" else _label(kind, data, event)
                )
                span = {"kind": kind, "label": label, "start_ms": at,
                        "run_id": run, "open": {}, "order": index}  # fmt: skip
                spans.append(span)
            span["close"] = data
            duration = _ms(data.get("latency_ms")) or _ms(data.get("duration_ms"))
            start = span["start_ms"]
            span["end_ms"] = round(max(at, start + duration if duration else at), 3)
            failed = bool(data.get("error")) or data.get("success") is False
            failed = failed or etype in _FAILING or data.get("status") in ("failed", "cancelled")
            span["status"] = "failed" if failed else "ok"
            span["usage"] = data.get("usage")
            span["attempts"] = data.get("attempts") or data.get("retry_count")
            continue
        marks.append(
            {
                "kind": _kind(etype),
                "type": etype,
                "at_ms": round(at, 3),
                "run_id": run,
                "data": data,
            }
        )
    end = max([s["end_ms"] or s["start_ms"] for s in spans] + [m["at_ms"] for m in marks] + [0.0])
    for span in spans:
        if span["end_ms"] is None:
            span["end_ms"] = end
    summary = summarize_trace([e for e in items if isinstance(e.get("data"), Mapping)])
    return {
        "title": title or "lightagent trace",
        "started_at": t0,
        "total_ms": round(end, 3),
        "summary": summary.to_dict(),
        "spans": sorted(spans, key=lambda s: (s["start_ms"], s["order"])),
        "marks": marks,
        "event_count": count_events(everything),
    }


def _tool_label(calls: dict[tuple[str, str], int], run: str, data: Mapping[str, Any]) -> str:
    """``tool NAME #n (arguments)``: the n-th call of that tool in its run."""
    name = str(data.get("name"))
    number = calls[(run, name)] = calls.get((run, name), 0) + 1
    arguments = data.get("arguments")
    summary = f" ({_arguments(arguments)})" if arguments not in (None, "", {}) else ""
    return f"tool {name} #{number}{summary}"


def render_trace_page(events: Iterable[Any], *, title: str | None = None) -> str:
    """The self-contained HTML page of a trace (redacted; no network needed to view it)."""
    timeline = redact_or_marker(build_timeline(events, title=title))
    # Inside <script>, "</" and "<!--" must not appear raw; \u003c is the same JSON string.
    payload = json.dumps(timeline, ensure_ascii=False, default=str).replace("<", "\\u003c")
    heading = html.escape(str(timeline.get("title") if isinstance(timeline, dict) else title))
    return _PAGE.replace("__TITLE__", heading).replace("__DATA__", payload)


def write_trace_page(events: Iterable[Any], path: str | Path, *, title: str | None = None) -> Path:
    """Write :func:`render_trace_page` to ``path``; returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_trace_page(events, title=title), encoding="utf-8")
    return target


def configure_trace(parser: Any) -> None:
    """Arguments of ``lightagent trace``."""
    sub = parser.add_subparsers(dest="trace_command", metavar="ACTION", required=True)
    view = sub.add_parser("view", help="write a self-contained HTML timeline of a session or run")
    view.add_argument("ref", metavar="SESSION_OR_RUN", help="a session id or a run id")
    view.add_argument("--store", required=True, help="session store URL or name (sqlite:///f.db)")
    view.add_argument("--output", required=True, help="the HTML file to write")
    view.add_argument("--title", default=None, help="page title (default: the session/run id)")


def run_trace(args: Any) -> int:
    """``lightagent trace view``: load the events, write the page, print its path."""
    store = args.store
    if isinstance(store, str) and store.startswith("sqlite:///"):
        # Viewing never creates a database: a mistyped path is an error, not an empty page.
        file = Path(store[len("sqlite:///") :])
        if not file.exists():
            raise ValidationError(
                "LA-VALIDATION",
                f"no session store at {file}",
                hint="Pass the sqlite:/// URL of an existing session database.",
            )
    events, session_id = load_events(store, args.ref)
    title = args.title or (args.ref if session_id == args.ref else f"{args.ref} ({session_id})")
    path = write_trace_page(events, args.output, title=f"trace {title}")
    print(f"wrote {path} ({count_events(events)} events)")
    return 0


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
body{font:13px/1.4 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{padding:14px 20px;background:#1d2330;color:#fff}
header h1{font-size:16px;margin:0 0 6px}
.stats{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;opacity:.9}
.stats b{font-weight:600}
.legend{padding:8px 20px;display:flex;gap:12px;flex-wrap:wrap;font-size:12px}
.legend label{cursor:pointer}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
#rows{padding:0 20px 30px}
.row{display:grid;grid-template-columns:320px 1fr 90px;align-items:center;border-bottom:1px solid #e3e6eb;cursor:pointer;min-height:24px}
.row:hover{background:#eef1f5}
.d1 .name{padding-left:14px}.d2 .name{padding-left:28px}
.name{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;padding-right:8px}
.track{position:relative;height:16px;background-image:linear-gradient(to right,#e3e6eb 1px,transparent 1px);background-size:var(--grid,100%) 100%}
.axis{position:sticky;top:0;z-index:1;background:#f6f7f9;cursor:default;color:#55607a;font-size:11px;border-bottom:1px solid #b9c0cc}
.axis:hover{background:#f6f7f9}
.axis .track{height:18px}
.tick{position:absolute;top:2px;border-left:1px solid #8a93a6;padding-left:3px;height:14px;white-space:nowrap;font-variant-numeric:tabular-nums}
.bar{position:absolute;top:2px;height:12px;border-radius:3px;min-width:2px}
.mark{position:absolute;top:1px;width:10px;height:14px;margin-left:-5px;transform:rotate(45deg) scale(.7)}
.dur{text-align:right;font-variant-numeric:tabular-nums;color:#55607a}
.failed .name{color:#b3261e;font-weight:600}
.failed .bar{outline:2px solid #b3261e}
pre{margin:4px 0 8px 320px;padding:8px;background:#fff;border:1px solid #e3e6eb;border-radius:4px;white-space:pre-wrap;word-break:break-word;max-height:360px;overflow:auto;font-size:12px}
.k-run{background:#56627a}.k-flow{background:#6b5b95}.k-model{background:#3b82f6}.k-tool{background:#10b981}
.k-step{background:#8b5cf6}.k-task{background:#f59e0b}.k-memory{background:#06b6d4}.k-handoff{background:#ec4899}
.k-approval{background:#eab308}.k-policy{background:#f97316}.k-error{background:#dc2626}.k-retry{background:#a855f7}
.k-dag{background:#d97706}.k-event{background:#9ca3af}
</style></head>
<body>
<header><h1 id="title"></h1><div class="stats" id="stats"></div></header>
<div class="legend" id="legend"></div>
<div id="rows"></div>
<script id="trace-data" type="application/json">__DATA__</script>
<script>
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  var total = Math.max(data.total_ms || 0, 0.001);
  var hidden = {};
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function fmt(ms) {
    if (ms === null || ms === undefined) return "";
    return ms >= 1000 ? (ms / 1000).toFixed(2) + " s" : ms.toFixed(1) + " ms";
  }
  document.getElementById("title").textContent = data.title;
  var s = data.summary || {};
  var usage = s.usage || {};
  var stats = [
    ["duration", fmt(Math.max(s.duration_ms || 0, data.total_ms || 0))], ["events", data.event_count],
    ["model calls", s.model_request_count], ["tool calls", s.tool_call_count],
    ["tokens", usage.total_tokens === undefined ? "-" : usage.total_tokens],
    ["retries", (s.retry_count || 0) + data.marks.filter(function (m) { return m.kind === "retry"; }).length],
    ["errors", s.error_count]
  ];
  stats.forEach(function (pair) {
    var item = el("span");
    item.appendChild(el("b", "", pair[0] + ": "));
    item.appendChild(document.createTextNode(String(pair[1])));
    document.getElementById("stats").appendChild(item);
  });
  var rows = [];
  data.spans.forEach(function (sp) {
    rows.push({kind: sp.kind, name: sp.label, start: sp.start_ms, end: sp.end_ms,
      failed: sp.status === "failed", detail: {start: sp.open, end: sp.close, usage: sp.usage,
      attempts: sp.attempts, run_id: sp.run_id}});
  });
  data.marks.forEach(function (m) {
    rows.push({kind: m.kind, name: m.type, start: m.at_ms, end: null,
      failed: m.kind === "error", detail: m.data});
  });
  rows.sort(function (a, b) { return a.start - b.start; });
  var kinds = {};
  rows.forEach(function (r) { kinds[r.kind] = (kinds[r.kind] || 0) + 1; });
  // The time axis: even steps of 1, 2 or 5 x 10^n ms from the first event, about six of
  // them; the same steps draw faint lines behind every row.
  var raw = total / 6, unit = Math.pow(10, Math.floor(Math.log10(raw))), step = unit * 10;
  [1, 2, 5].some(function (m) { if (raw <= m * unit) { step = m * unit; return true; } return false; });
  document.getElementById("rows").style.setProperty("--grid", (100 * step / total) + "%");
  function axis() {
    var row = el("div", "row axis");
    row.appendChild(el("div", "name", "time from start"));
    var track = el("div", "track");
    for (var i = 0; i * step <= total + 1e-9; i++) {
      var at = Number((i * step).toPrecision(12));
      var tick = el("div", "tick", at >= 1000 ? +(at / 1000).toPrecision(4) + " s" : +at.toPrecision(4) + " ms");
      tick.style.left = (100 * at / total) + "%";
      tick.setAttribute("data-ms", String(at));
      track.appendChild(tick);
    }
    row.appendChild(track);
    row.appendChild(el("div", "dur", "duration"));
    return row;
  }
  function draw() {
    var box = document.getElementById("rows");
    box.textContent = "";
    box.appendChild(axis());
    rows.forEach(function (r) {
      if (hidden[r.kind]) return;
      var depth = {run: 0, flow: 0, step: 1, task: 1, model: 1}[r.kind];
      if (depth === undefined) depth = r.kind === "tool" ? 2 : 1;
      var row = el("div", "row d" + depth + (r.failed ? " failed" : ""));
      row.setAttribute("data-kind", r.kind);
      var name = el("div", "name", r.name);
      name.title = r.name;  // the whole label when the column cuts it
      row.appendChild(name);
      var track = el("div", "track");
      var left = (100 * r.start / total);
      if (r.end === null) {
        var mark = el("div", "mark k-" + r.kind);
        mark.style.left = left + "%";
        track.appendChild(mark);
      } else {
        var bar = el("div", "bar k-" + r.kind);
        bar.style.left = left + "%";
        bar.style.width = Math.max(0.2, 100 * (r.end - r.start) / total) + "%";
        track.appendChild(bar);
      }
      row.appendChild(track);
      row.appendChild(el("div", "dur", r.end === null ? "@" + fmt(r.start) : fmt(r.end - r.start)));
      var pre = null;
      row.addEventListener("click", function () {
        if (pre) { pre.remove(); pre = null; return; }
        pre = el("pre", "", JSON.stringify(r.detail, null, 2));
        row.after(pre);
      });
      box.appendChild(row);
    });
  }
  Object.keys(kinds).sort().forEach(function (k) {
    var label = el("label");
    var box = el("input");
    box.type = "checkbox";
    box.checked = true;
    box.addEventListener("change", function () { hidden[k] = !box.checked; draw(); });
    label.appendChild(box);
    label.appendChild(el("span", "sw k-" + k));
    label.appendChild(document.createTextNode(k + " (" + kinds[k] + ")"));
    document.getElementById("legend").appendChild(label);
  });
  draw();
  document.body.setAttribute("data-rendered", String(rows.length));
})();
</script>
</body></html>
"""
