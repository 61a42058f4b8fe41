"""``seeds_keywords``: a method accepts the seeds' (LightAgent 0.11) spelling of a keyword.

This project renamed some parameters for clarity (``CapabilityRegistry.invoke(capability,
arguments)`` where the seeds wrote ``invoke(cap, args)``). Code written for 0.11 passes
the old names as keywords; the decorator maps them to ours, so both spellings work and the
signature shown (``inspect.signature`` follows ``__wrapped__``) is ours.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from lightagent.errors import ConfigurationError

__all__ = ["seeds_keywords"]

F = TypeVar("F", bound=Callable[..., Any])


def seeds_keywords(**renamed: str) -> Callable[[F], F]:
    """Decorate a function so each ``old=`` keyword in ``renamed`` (``old="new"``) is
    accepted as ``new=``; giving both is ``LA-CONFIG``."""

    def decorate(func: F) -> F:
        def rename(kwargs: dict[str, Any]) -> dict[str, Any]:
            for old, new in renamed.items():
                if old in kwargs:
                    if new in kwargs:
                        raise ConfigurationError(
                            "LA-CONFIG",
                            f"{func.__qualname__}() got both {old}= (the 0.11 name) and {new}=",
                            hint=f"Pass only {new}=.",
                        )
                    kwargs[new] = kwargs.pop(old)
            return kwargs

        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                return await func(*args, **rename(kwargs))

            return awrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **rename(kwargs))

        return wrapper  # type: ignore[return-value]

    return decorate
