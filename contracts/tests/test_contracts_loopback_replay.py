"""Every recorded wire fixture replays verbatim through the loopback server to the bare ``openai`` SDK."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest
from lightagent_contracts.loopback import LoopbackServer

WIRE = Path(__file__).resolve().parents[2] / "lightagent-core" / "tests" / "models" / "wire"
FIXTURES = sorted(WIRE.glob("*.json"))


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_loopback_replays_fixture_verbatim(loopback_server: LoopbackServer, path: Path) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    loopback_server.replay(path)
    client = openai.OpenAI(base_url=loopback_server.base_url, api_key="k", max_retries=0)
    stream = "stream" in fixture
    if fixture.get("http_status"):
        with pytest.raises(openai.APIStatusError) as info:
            client.chat.completions.create(model="m", messages=[], stream=stream)
        assert info.value.status_code == fixture["http_status"]
        return
    if not stream:
        raw = client.chat.completions.with_raw_response.create(model="m", messages=[])
        assert raw.http_response.json() == fixture["response"]
        return
    chunks = []
    errors = [c for c in fixture["stream"] if isinstance(c, dict) and c.get("error")]
    try:
        for chunk in client.chat.completions.create(model="m", messages=[], stream=True):
            chunks.append(chunk.model_dump(exclude_unset=True))
    except openai.APIError:
        assert errors, "the SDK raised although the fixture has no in-band error"
    expected = fixture["stream"][: len(fixture["stream"]) - len(errors)]
    assert chunks == expected
