"""Model providers: the contract, the OpenAI-compatible client, profiles, the scripted model.

Names load on first use, so importing this package imports neither ``openai`` nor ``httpx``.
"""

from __future__ import annotations

from lightagent.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "FINISH_REASONS": "lightagent.models.base",
    "Model": "lightagent.models.base",
    "ModelRequest": "lightagent.models.base",
    "ModelResponse": "lightagent.models.base",
    "StreamItem": "lightagent.models.base",
    "ToolCall": "lightagent.models.base",
    "Usage": "lightagent.models.base",
    "OpenAIModel": "lightagent.models.openai_compat",
    "ProviderProfile": "lightagent.models.profiles",
    "get_profile": "lightagent.models.profiles",
    "register_profile": "lightagent.models.profiles",
    "assistant_message": "lightagent.models.profiles",
    "normalize_arguments": "lightagent.models.arguments",
    "StreamAssembler": "lightagent.models.stream",
    "ScriptedModel": "lightagent.models.scripted",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
