"""The base of every typed config section: frozen, camelCase aliases, unknown keys ignored."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A section of dcp.jsonc as a frozen pydantic model (the schema has already rejected unknown keys)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)
