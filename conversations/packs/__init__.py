"""What a workflow's pack does in code, registered under names its plan gives (a name nothing registers is
refused at upload).

Most of a workflow is data: its plan's graph, slots, questions and documents (`conversation.documents`:
answers, fields, email templates). What needs more than that lives in the workflow's pack, one module per
workflow here, never in the engine:
- a **document builder** (`"kind": "handler", "handler": name`) takes the conversation's slots and returns a
  document's content (the manager assistant's invitation, whose start is the next such hour to come);
- a **signal source** (`conversation.signals_from: name`) reads the slots every turn and publishes signals the
  plan's conditions test (the project intake's classification), declared with the signals it publishes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workflows.handlers import publishes_signals

Builder = Callable[..., dict[str, Any]]  # (slots, *, lang, owner) -> content
_BUILDERS: dict[str, Builder] = {}


def document_builder(name: str) -> Callable[[Builder], Builder]:
    """Register a builder under the name plans give it."""

    def register(fn: Builder) -> Builder:
        _BUILDERS[name] = fn
        return fn

    return register


def builder_names() -> frozenset[str]:
    return frozenset(_BUILDERS)


def build_with(name: str, slots: Mapping[str, str], *, lang: str, owner: str) -> dict[str, Any]:
    """The content the named builder makes (validation has made sure it exists)."""
    return _BUILDERS[name](slots, lang=lang, owner=owner)


def builder_problems(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A plan's documents naming a builder nothing registers (checked at upload beside the rest)."""
    conversation = document.get("conversation")
    documents = conversation.get("documents") if isinstance(conversation, Mapping) else None
    if not isinstance(documents, Mapping):
        return []
    known = ", ".join(sorted(_BUILDERS))
    return [(f"$.conversation.documents.{key}.handler", f"unknown document builder {spec.get('handler')!r}; known: {known}")
            for key, spec in documents.items()
            if isinstance(spec, Mapping) and spec.get("kind") == "handler" and spec.get("handler") not in _BUILDERS]


SignalSource = Callable[..., dict[str, Any]]  # (slots, *, form_finished) -> signals
_SOURCES: dict[str, SignalSource] = {}


def signal_source(name: str, *, signals: tuple[str, ...]) -> Callable[[SignalSource], SignalSource]:
    """Register a source under the name plans give it, with the signals it publishes (what conditions may test)."""

    def register(fn: SignalSource) -> SignalSource:
        _SOURCES[name] = fn
        publishes_signals(name, *signals)
        return fn

    return register


def source_names() -> frozenset[str]:
    return frozenset(_SOURCES)


def signals_from(name: str, slots: Mapping[str, Any], *, form_finished: bool) -> dict[str, Any]:
    """The signals the named source reads from the slots (validation has made sure it exists)."""
    return _SOURCES[name](slots, form_finished=form_finished)


def source_problems(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A plan naming a signal source nothing registers."""
    conversation = document.get("conversation")
    name = conversation.get("signals_from") if isinstance(conversation, Mapping) else None
    if not name or name in _SOURCES:
        return []
    return [("$.conversation.signals_from", f"unknown signal source {name!r}; known: {', '.join(sorted(_SOURCES))}")]


from . import manager_assistant, project_intake  # noqa: E402, F401  register the shipped packs' builders and sources
