"""A model's repr and its errors show where it points, never the credentials in that URL."""

from __future__ import annotations

import pytest
from lightagent import LightAgent
from lightagent.errors import ModelError
from lightagent.models.openai_compat import OpenAIModel
from lightagent.redaction import redact_text

KEY = "KEYzz0123456789"


@pytest.mark.parametrize(
    "url",
    [
        f"https://user:{KEY}@llm.example.com/v1",
        f"https://llm.example.com/openai?api-version=2024-06-01&api-key={KEY}",
        f"https://llm.example.com/v1?key={KEY}",
        f"https://llm.example.com/v1?subscription-key={KEY}&x=1",
        f"https://llm.example.com/v1?sig={KEY}",
        f"https://llm.example.com/v1?access_token={KEY}",
    ],
)
def test_repr_of_the_model_redacts_credentials_in_base_url(url) -> None:
    model = OpenAIModel("gpt-4.1", base_url=url, api_key="k")
    shown = repr(model)
    assert KEY not in shown
    assert "llm.example.com" in shown and "[redacted]" in shown
    agent = LightAgent(name="a", model="gpt-4.1", base_url=url, api_key="k")
    assert KEY not in repr(agent.model) and KEY not in repr(agent)
    assert model.base_url == url  # the model still calls the URL it was given


def test_plain_query_parameters_stay() -> None:
    url = "https://llm.example.com/v1?api-version=2024-06-01&region=eu"
    assert redact_text(url) == url
    assert "region=eu" in repr(OpenAIModel("gpt-4.1", base_url=url, api_key="k"))


def test_a_missing_key_error_names_the_endpoint_without_its_credentials(monkeypatch) -> None:
    for name in ("LIGHTAGENT_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    model = OpenAIModel("gpt-4.1", base_url=f"https://user:{KEY}@api.openai.com/v1")
    with pytest.raises(ModelError) as info:
        model.client  # noqa: B018 - building the client resolves the key
    assert info.value.code == "LA-401"
    assert KEY not in str(info.value) and KEY not in str(info.value.details)
    assert "api.openai.com" in str(info.value)
