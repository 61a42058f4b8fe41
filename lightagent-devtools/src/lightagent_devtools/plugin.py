"""The lightagent plugin of lightagent-devtools."""

from __future__ import annotations
