"""Provider profiles: what each OpenAI-compatible server needs and gets wrong.

A :class:`ProviderProfile` says how to echo reasoning in the history, whether the
server honours ``response_format={"type": "json_schema"}``, whether tool calls may
arrive as text, whether ``stream_options.include_usage`` is understood and whether a
key is needed. :func:`get_profile` picks one by name, by ``base_url`` or by model name.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from lightagent.errors import ConfigurationError
from lightagent.models.base import ModelResponse

__all__ = [
    "PROFILES",
    "ProviderProfile",
    "assistant_message",
    "get_profile",
    "is_local_url",
    "profile_by_name",
    "register_profile",
]

_REASONING_KEYS = ("reasoning_content", "reasoning", "reasoning_details")
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "host.docker.internal"}


@dataclass(frozen=True)
class ProviderProfile:
    """The quirk rules of one provider family.

    ``reasoning_roundtrip`` says which assistant messages keep their reasoning when
    the history is sent back: ``"drop"`` (none), ``"tool_turns"`` (only messages with
    tool calls, as DeepSeek/Kimi/GLM thinking modes require) or ``"all"``;
    ``reasoning_field`` is the key the server reads it from.
    """

    name: str
    supports_json_schema: bool = True
    supports_stream_usage: bool = True
    reasoning_roundtrip: str = "drop"
    reasoning_field: str = "reasoning_content"
    #: Send ``""`` for reasoning on assistant tool-call turns that have none.
    reasoning_fill_empty: bool = False
    #: Recover tool calls written as text (Hermes tags, bare JSON) when tools were offered.
    text_tool_calls: bool = True
    #: ``content`` of an assistant tool-call message without text: ``None`` or ``""``.
    empty_tool_call_content: str | None = None
    requires_api_key: bool = True
    default_base_url: str | None = None
    #: Environment variables holding this provider's key, tried before OPENAI_API_KEY.
    api_key_env: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    model_pattern: str | None = None
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def prepare_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The history as this provider wants it; returns ``messages`` itself when unchanged."""
        out: list[dict[str, Any]] | None = None
        for position, message in enumerate(messages):
            fixed = self._fix(message) if message.get("role") == "assistant" else message
            if fixed is not message and out is None:
                out = list(messages[:position])
            if out is not None:
                out.append(fixed)
        return messages if out is None else out

    def _fix(self, message: dict[str, Any]) -> dict[str, Any]:
        calls = message.get("tool_calls")
        keep = self.reasoning_roundtrip == "all" or (
            self.reasoning_roundtrip == "tool_turns" and bool(calls)
        )
        present = [key for key in _REASONING_KEYS if key in message]
        content = message.get("content")
        bad_content = (
            content == [] or (calls and content is None)
        ) and content != self.empty_tool_call_content
        fill = keep and self.reasoning_fill_empty and bool(calls) and not present
        if not present and not bad_content and not fill:
            return message
        if keep and present == [self.reasoning_field]:
            if not bad_content:
                return message
        fixed = {k: v for k, v in message.items() if k not in _REASONING_KEYS}
        if keep:
            value = message.get("reasoning_content", message.get("reasoning"))
            if value is not None or fill:
                fixed[self.reasoning_field] = value if value is not None else ""
        if bad_content:
            fixed["content"] = self.empty_tool_call_content if calls else ""
        return fixed

    def assistant_message(self, response: ModelResponse) -> dict[str, Any]:
        """The history message for ``response`` under this profile's rules."""
        return self._fix(response.to_message(reasoning=True))


def assistant_message(
    response: ModelResponse, profile: ProviderProfile | str | None = None
) -> dict[str, Any]:
    """The history message for ``response``; with no profile the reasoning is kept neutrally."""
    if profile is None:
        return response.to_message(reasoning=True)
    return get_profile(profile).assistant_message(response)


PROFILES: dict[str, ProviderProfile] = {}
_ALIASES: dict[str, str] = {}


def register_profile(profile: ProviderProfile, *, replace: bool = False) -> ProviderProfile:
    """Add a profile (a plugin may register its own); names and aliases are case-insensitive."""
    key = profile.name.lower()
    if key in PROFILES and not replace:
        raise ConfigurationError(
            "LA-CONFIG",
            f"a provider profile named {profile.name!r} is already registered",
            hint="Pass replace=True to override it, or pick another name.",
        )
    PROFILES[key] = profile
    for alias in profile.aliases:
        _ALIASES[alias.lower()] = key
    _lookup.cache_clear()
    return profile


def is_local_url(base_url: str | None) -> bool:
    """Whether ``base_url`` points at this machine or a private network (no key needed)."""
    if not base_url:
        return False
    host = (urlsplit(base_url).hostname or "").lower()
    return (
        host in _LOCAL_HOSTS
        or host.endswith((".local", ".internal", ".localhost"))
        or host.startswith(("10.", "192.168.", "127."))
        or re.match(r"^172\.(1[6-9]|2\d|3[01])\.", host) is not None
    )


def _by_url(base_url: str) -> ProviderProfile | None:
    parts = urlsplit(base_url if "//" in base_url else f"http://{base_url}")
    host = (parts.hostname or "").lower()
    for profile in PROFILES.values():
        if any(host == h or host.endswith("." + h) for h in profile.hosts):
            return profile
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None:
        for profile in PROFILES.values():
            if port in profile.ports:
                return profile
    return None


def _by_model(model: str) -> ProviderProfile | None:
    name = model.lower().rsplit("/", 1)[-1]
    for profile in PROFILES.values():
        if profile.model_pattern and re.search(profile.model_pattern, name):
            return profile
    return None


@functools.lru_cache(maxsize=256)
def _lookup(key: str | None, base_url: str | None) -> ProviderProfile:
    if key:
        lowered = key.lower()
        named = PROFILES.get(lowered) or PROFILES.get(_ALIASES.get(lowered, ""))
        if named is not None:
            return named
        if "://" in key:
            return _by_url(key) or (
                PROFILES["generic"] if base_url is None else _lookup(None, base_url)
            )
    if base_url:
        found = _by_url(base_url)
        if found is not None:
            return found
        if key and not is_local_url(base_url):
            # A proxy or hosted gateway: the model family still says what it does.
            return _by_model(key) or PROFILES["generic"]
        return PROFILES["generic"]
    if key:
        return _by_model(key) or PROFILES["openai"]
    return PROFILES["openai"]


def profile_by_name(name: str | ProviderProfile) -> ProviderProfile:
    """The profile registered under ``name`` (or an alias); ``LA-CONFIG`` when there is none."""
    if isinstance(name, ProviderProfile):
        return name
    key = name.lower()
    found = PROFILES.get(key) or PROFILES.get(_ALIASES.get(key, ""))
    if found is None:
        raise ConfigurationError(
            "LA-CONFIG",
            f"no provider profile named {name!r}",
            hint=f"Use one of {sorted(PROFILES)}, or register_profile() your own.",
        )
    return found


def get_profile(
    name_or_model_or_base_url: str | ProviderProfile | None = None, *, base_url: str | None = None
) -> ProviderProfile:
    """Choose a profile: an exact profile name or alias, else the ``base_url`` host/port,
    else the model name; no hint at all means the OpenAI profile. Cached."""
    if isinstance(name_or_model_or_base_url, ProviderProfile):
        return name_or_model_or_base_url
    return _lookup(name_or_model_or_base_url, base_url)


for _profile in (
    ProviderProfile(
        "openai",
        text_tool_calls=False,
        default_base_url="https://api.openai.com/v1",
        hosts=("api.openai.com",),
        model_pattern=r"^(gpt-|o\d|chatgpt|text-embedding|gpt\d)",
        notes="Reference behaviour; reasoning is never sent back.",
    ),
    ProviderProfile(
        "deepseek",
        api_key_env=("DEEPSEEK_API_KEY",),
        supports_json_schema=False,
        reasoning_roundtrip="tool_turns",
        reasoning_fill_empty=True,
        default_base_url="https://api.deepseek.com",
        hosts=("api.deepseek.com",),
        model_pattern=r"deepseek",
        notes="Thinking mode with tools needs reasoning_content echoed on tool-call turns; json_object only; "
        "thinking mode (the V4 default) refuses a forced tool_choice.",
        extra={"forced_tool_choice": False},
    ),
    ProviderProfile(
        "qwen",
        api_key_env=("DASHSCOPE_API_KEY",),
        aliases=("dashscope", "alibaba"),
        supports_json_schema=False,
        default_base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
        hosts=(
            "dashscope.aliyuncs.com",
            "dashscope-intl.aliyuncs.com",
            "dashscope-us.aliyuncs.com",
        ),
        model_pattern=r"^(qwen|qwq|qvq)",
        notes="Thinking text in reasoning_content, not needed back; usage on a trailing choices:[] chunk.",
    ),
    ProviderProfile(
        "vllm",
        requires_api_key=False,
        ports=(8000,),
        notes="Tool calls need --tool-call-parser; without it they arrive as text.",
    ),
    ProviderProfile(
        "llamacpp",
        aliases=("llama.cpp", "llama-server", "llama_cpp"),
        reasoning_roundtrip="tool_turns",
        requires_api_key=False,
        ports=(8080,),
        notes="Leaks tool markup into content before structured calls; usage with timings.",
    ),
    ProviderProfile(
        "ollama",
        supports_json_schema=True,
        supports_stream_usage=True,
        reasoning_roundtrip="all",
        reasoning_field="reasoning",
        requires_api_key=False,
        default_base_url="http://localhost:11434/v1",
        hosts=("ollama.com",),
        ports=(11434,),
        notes='Reasoning in a `reasoning` field; finish_reason "" in older streams; tool calls as text.',
    ),
    ProviderProfile(
        "openrouter",
        api_key_env=("OPENROUTER_API_KEY",),
        reasoning_roundtrip="tool_turns",
        reasoning_field="reasoning",
        default_base_url="https://openrouter.ai/api/v1",
        hosts=("openrouter.ai",),
        notes="Reasoning in `reasoning`; in-band error chunks; duplicate finish chunks.",
    ),
    ProviderProfile(
        "zhipu",
        api_key_env=("ZHIPUAI_API_KEY", "ZAI_API_KEY"),
        aliases=("glm", "zai", "z.ai", "bigmodel"),
        supports_json_schema=False,
        reasoning_roundtrip="tool_turns",
        default_base_url="https://open.bigmodel.cn/api/paas/v4",
        hosts=("open.bigmodel.cn", "api.z.ai"),
        model_pattern=r"^glm",
        notes="No finish_reason key until the last chunk; usage rides on the finish chunk; "
        "tool_choice must be auto.",
        extra={"forced_tool_choice": False},
    ),
    ProviderProfile(
        "moonshot",
        api_key_env=("MOONSHOT_API_KEY",),
        aliases=("kimi",),
        supports_json_schema=False,
        reasoning_roundtrip="tool_turns",
        default_base_url="https://api.moonshot.ai/v1",
        hosts=("api.moonshot.ai", "api.moonshot.cn"),
        model_pattern=r"(kimi|moonshot)",
        notes="Tool-call ids like `add:0` repeat across turns; thinking models need reasoning on tool turns "
        "and refuse a forced tool_choice.",
        extra={"forced_tool_choice": False},
    ),
    ProviderProfile(
        "generic",
        aliases=("openai-compatible", "local"),
        supports_json_schema=False,
        notes="Unknown OpenAI-compatible server: conservative rules.",
    ),
):
    register_profile(_profile)
