"""BM25 over thousands of tools picks the right one for real queries."""

from __future__ import annotations

import itertools
import random

import pytest
from lightagent.tools import Tool, ToolRegistry, tool
from lightagent_selection import SELECTOR, ToolIndex, estimate_tokens, query_terms, tokenize

VERBS = [
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "export",
    "sync",
    "archive",
    "validate",
]
OBJECTS = [
    "invoice",
    "customer",
    "ticket",
    "report",
    "user",
    "order",
    "shipment",
    "contract",
    "lead",
    "campaign",
    "asset",
    "document",
    "payment",
    "refund",
    "subscription",
    "product",
    "supplier",
    "employee",
    "timesheet",
    "budget",
]
DOMAINS = [
    "crm",
    "erp",
    "hr",
    "billing",
    "support",
    "marketing",
    "logistics",
    "legal",
    "finance",
    "inventory",
]

# The tools users actually want, each with queries phrased the way people ask.
TARGETS = {
    "get_weather_forecast": (
        "Get the weather forecast (temperature, rain, wind) for a city for the next days.",
        ["city", "days"],
        [
            "What's the weather going to be like in Paris tomorrow?",
            "will it rain in Berlin this weekend",
            "temperature forecast for Tokyo",
        ],
    ),
    "send_email": (
        "Send an email message to one or more recipients with a subject and body.",
        ["to", "subject", "body"],
        ["Email Bob the meeting notes", "send a mail to alice@example.com saying I'm late"],
    ),
    "convertCurrency": (
        "Convert an amount of money between currencies using the latest exchange rate.",
        ["amount", "from_currency", "to_currency"],
        ["How much is 100 USD in EUR at today's exchange rate?", "convert 250 pounds to yen"],
    ),
    "book_flight": (
        "Search and book airline flights between two airports on a date.",
        ["origin", "destination", "date"],
        ["Book me a flight from NYC to London on May 3", "find flights from Madrid to Rome"],
    ),
    "translate_text": (
        "Translate text from one language into another language.",
        ["text", "target_language"],
        ["translate 'good morning' into Japanese", "what is 'thank you' in the German language"],
    ),
    "get_stock_price": (
        "Get the real-time stock price and daily change for a ticker symbol.",
        ["ticker"],
        ["what's AAPL stock trading at right now", "current share price of Tesla stock"],
    ),
    "create_calendar_event": (
        "Create an event or meeting in the user's calendar with a title, start time and attendees.",
        ["title", "start", "attendees"],
        [
            "schedule a meeting with Dana on Friday at 3pm",
            "put a dentist appointment in my calendar",
        ],
    ),
    "resize_image": (
        "Resize or scale an image file to a given width and height in pixels.",
        ["path", "width", "height"],
        ["make this picture 800x600 pixels", "scale the image down to half size"],
    ),
}


def info_tool(name: str, description: str, params: list[str]):
    def func(**kwargs):
        return kwargs

    func.tool_info = {
        "tool_name": name,
        "tool_description": description,
        "tool_params": [
            {"name": p, "type": "string", "description": p.replace("_", " ")} for p in params
        ],
    }
    return func


def generated_tools(count: int, seed: int = 7) -> list:
    rng = random.Random(seed)
    combos = list(itertools.product(DOMAINS, VERBS, OBJECTS))
    rng.shuffle(combos)
    out = []
    for i in range(count):
        domain, verb, obj = combos[i % len(combos)]
        suffix = "" if i < len(combos) else f"_v{i // len(combos)}"
        name = f"{domain}_{verb}_{obj}{suffix}"
        description = f"{verb.capitalize()} {obj} records in the {domain.upper()} system. Supports paging and filters."
        out.append(info_tool(name, description, [f"{obj}_id", "page", "filter"]))
    return out


@pytest.fixture(scope="module")
def big_registry() -> ToolRegistry:
    reg = ToolRegistry(generated_tools(2000 - len(TARGETS)))
    for name, (description, params, _) in TARGETS.items():
        reg.register_tool(info_tool(name, description, params))
    assert len(reg) == 2000
    return reg


@pytest.mark.parametrize(
    ("target", "query"),
    [(name, query) for name, (_, _, queries) in TARGETS.items() for query in queries],
)
def test_right_tool_is_in_top_8_among_2000(big_registry, target, query):
    picked = big_registry.select(query, limit=8)
    assert target in picked, (query, picked)
    assert len(picked) <= 8


def test_domain_queries_find_generated_tools(big_registry):
    picked = big_registry.select("list the open support tickets", limit=8)
    assert "support_list_ticket" in picked
    picked = big_registry.select("refund the payment for invoice 42 in billing", limit=8)
    assert any(n.startswith("billing_") for n in picked)


def test_follow_up_uses_recent_messages(big_registry):
    messages = [
        {"role": "user", "content": "What's the exchange rate between dollars and euros?"},
        {"role": "assistant", "content": "About 0.92 euros per dollar."},
    ]
    assert "convertCurrency" not in big_registry.select("and for 500 of them?", limit=8)
    assert "convertCurrency" in big_registry.select(
        "and for 500 of them?", limit=8, messages=messages
    )


def test_always_pins_tools_and_unrelated_queries_return_nothing(big_registry):
    picked = big_registry.select("weather in Oslo", limit=3, always=["send_email", "ghost"])
    assert picked[0] == "send_email" and "get_weather_forecast" in picked and "ghost" not in picked
    assert big_registry.select("zzzz qqqq", limit=8) == []
    assert big_registry.select("", limit=8) == []
    assert big_registry.select("weather", limit=0) == []


def test_selection_report_counts_schemas_and_tokens(big_registry):
    picked = big_registry.select("weather forecast for Rome", limit=8)
    report = big_registry.selection_report(picked)
    assert report["tools_total"] == 2000 and report["tools_kept"] == len(picked)
    assert report["schema_tokens_total"] == sum(estimate_tokens(s) for s in big_registry.schemas())
    assert 0 < report["schema_tokens_kept"] < report["schema_tokens_total"] / 100
    assert set(report) == {"tools_total", "tools_kept", "schema_tokens_total", "schema_tokens_kept"}


def test_index_is_incremental():
    reg = ToolRegistry([info_tool("alpha_tool", "Handles alpha things.", ["x"])])
    assert reg.select("alpha") == ["alpha_tool"]
    index = SELECTOR.index(reg)
    reg.register_tool(info_tool("beta_tool", "Handles beta things.", ["x"]))
    assert SELECTOR.index(reg) is index  # updated in place, not rebuilt
    assert reg.select("beta") == ["beta_tool"]
    reg.register_tool(info_tool("alpha_tool", "Now about gamma.", ["x"]))  # replaced
    assert reg.select("gamma") == ["alpha_tool"] and reg.select("alpha") == ["alpha_tool"]
    assert len(index) == 2


def test_overlay_tools_are_ranked_with_the_base(big_registry):
    @tool
    def summarize_pdf(path: str) -> str:
        """Summarize the content of a PDF document."""
        return path

    run = big_registry.with_tools([summarize_pdf])
    assert run.select("summarize this pdf", limit=8)[0] == "summarize_pdf"
    assert "summarize_pdf" not in big_registry.select("summarize this pdf", limit=8)
    assert "get_weather_forecast" in run.select("weather tomorrow", limit=8)
    report = run.selection_report(["summarize_pdf"])
    assert report["tools_total"] == 2001 and report["tools_kept"] == 1


def test_tokenize_splits_identifiers_and_stems():
    assert tokenize("getStockPrice") == tokenize("stock prices") == ["stock", "pric"]
    assert tokenize("send_emails HTTPServer") == ["send", "email", "http", "server"]
    assert tokenize("Trades traded trading trade") == ["trad"] * 4
    assert tokenize("天气 weather") == ["天", "气", "weather"]
    assert query_terms("weather", [{"role": "user", "content": "rain"}]) == {
        "weather": 1.0,
        "rain": 0.5,
    }


def test_index_scores_only_matching_tools():
    index = ToolIndex()
    for t in (
        Tool(name="a", description="red apple", parameters={"type": "object"}, func=print),
        Tool(name="b", description="green pear", parameters={"type": "object"}, func=print),
    ):
        index.add(t)
    assert set(index.scores(query_terms("apples"))) == {"a"}
    assert index.top(query_terms("pear apple"), 1)[0][1] in {"a", "b"}
    index.remove("a")
    index.remove("missing")
    assert index.scores(query_terms("apple")) == {}


def _turn(question: str, called: str, answer: str, index: int) -> list[dict]:
    call = {"id": f"c{index}", "type": "function", "function": {"name": called, "arguments": "{}"}}
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{index}", "content": "(result)"},
        {"role": "assistant", "content": answer},
    ]


def test_offer_keeps_the_tools_the_conversation_called(big_registry):
    messages = _turn("How much is 100 USD in EUR?", "convertCurrency", "92 euros.", 0) + _turn(
        "Email Bob the meeting notes", "send_email", "Sent.", 1
    )
    weak = big_registry.offer("and for 500 of them?", messages=messages)
    assert weak is not None and {"convertCurrency", "send_email"} <= set(weak)
    assert len(weak) <= 2 + 32  # over 64 tools a weak match widens to the 32 best, never all
    strong = big_registry.offer("What's the weather going to be in Oslo?", messages=messages)
    assert strong[:2] == ["convertCurrency", "send_email"] and "get_weather_forecast" in strong
    assert len(strong) <= 2 + 32


def test_offer_gives_every_tool_for_a_weak_match_among_few():
    registry = ToolRegistry(generated_tools(40))
    assert registry.offer("go") is None  # too short to say anything
    assert registry.offer("what about the notes") is None  # words of descriptions only
    picked = registry.offer("list the open support tickets")
    tickets = {n for n in registry.names() if n.endswith("_ticket")}
    assert picked is not None and tickets and tickets <= set(picked) and len(picked) < 40
