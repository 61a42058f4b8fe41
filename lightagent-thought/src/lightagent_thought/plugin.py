"""The lightagent plugin of lightagent-thought."""

from __future__ import annotations
