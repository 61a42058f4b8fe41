"""The lightagent plugin of lightagent-skills."""

from __future__ import annotations
