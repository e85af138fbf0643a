"""The model a request goes to: what a message or a host names, and which of the two wins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from dcp_plugin.model.messages import info_of, is_mapping, text_id


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True, slots=True)
class ModelRef:
    """The model a request goes to: provider and model ids, and the context limit the host knows."""

    provider_id: str | None = None
    model_id: str | None = None
    context_limit: int | None = None

    def merged_over(self, other: ModelRef | None) -> ModelRef:
        """This reference with its blanks filled from ``other`` (a limit only carries over for the same model)."""
        if other is None:
            return self
        same_model = self.model_id is None or other.model_id is None or self.model_id == other.model_id
        return ModelRef(
            self.provider_id or other.provider_id,
            self.model_id or other.model_id,
            self.context_limit if self.context_limit is not None else (other.context_limit if same_model else None),
        )


def _positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


# A ModelRef's fields (provider id, model id, context limit), as :func:`model_fields` reads them.
ModelFields = tuple[str | None, str | None, int | None]


def model_ref(value: object) -> ModelRef | None:
    """The model named by a message's info or by a host's model object; None when it names none.

    Shapes understood: an assistant info (``providerID``, ``modelID``), a user info
    (``model: {providerID, modelID}``), and a host model object (``{id | modelID,
    providerID, limit: {context}}``, OpenCode's and the hook input's shape).
    """
    fields = model_fields(value)
    return ModelRef(*fields) if fields is not None else None


def model_fields(value: object) -> ModelFields | None:
    """The fields of :func:`model_ref`'s answer, without building it.

    A walk of a history reads every message's model, and nearly all name the one already
    held: building a frozen ModelRef for each, to compare it and drop it, cost more than reading it.
    """
    if not is_mapping(value):
        return None
    # text_id inlined, and None (the usual absent key) ruled out before is_mapping: this runs
    # for every message of a history.
    nested = value.get("model")
    model_id = value.get("modelID")
    if not (isinstance(model_id, str) and model_id):
        model_id = None
        if nested is not None and is_mapping(nested):
            inner = model_fields(nested)
            if inner is not None:
                return inner
        # A host model object names its model `id`; a message's info has an `id` too, its own.
        if "role" not in value and ("limit" in value or "providerID" in value):
            model_id = text_id(value.get("id"))
    provider_id = value.get("providerID")
    if not (isinstance(provider_id, str) and provider_id):
        provider_id = None
    limit = value.get("limit")
    context = _positive_int(limit.get("context")) if limit is not None and is_mapping(limit) else None
    if model_id is None and provider_id is None and context is None:
        return None
    return provider_id, model_id, context


def latest_model(messages: Sequence[object]) -> ModelRef | None:
    """The model of the newest message that names one: the one the next request goes to.

    OpenCode records the model chosen for a turn on its user message and the model that
    answered on each assistant message, so the newest of either is the upcoming model.
    """
    for message in reversed(messages):
        ref = model_ref(info_of(message))
        if ref is not None and ref.model_id is not None:
            return ref
    return None


def request_model(named: ModelRef | None, host: ModelRef | None) -> ModelRef:
    """The model a request goes to: the one the newest message names, its blanks (a limit) filled from the host's.

    The one rule for which wins, used by the session's request history and by the runtime.
    The messages win because they are all a session's past requests can be known by: a
    restart or a replay must find the same model at each request as the live run did. On
    OpenCode the two agree (the user message records the model chosen for the turn, each
    assistant message the model that answered); the host adds the context limit it knows.
    """
    if named is None:
        return host if host is not None else ModelRef()
    return named.merged_over(host)
