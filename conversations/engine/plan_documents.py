"""The documents a plan declares (`conversation.documents`), built from the conversation's answers and slots.

A plan names a document by the key a node `produces` and says what it holds; no code knows the workflow. An
answers document lists the form's answers (or the named ones) with their questions; a fields document the
named slots and answers with their labels; an email fills its templates. A value nobody gave yet is shown as its
label in brackets, never made up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from workflows.engine.schema import localize

from .config import ConversationConfig, DocumentSpec, FormQuestionSpec
from .plain_words import answer_shown, choice_label, slot_shown
from .slots import slot_label
from .state import ContextState

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def build_documents(state: ContextState, config: ConversationConfig, lang: str) -> dict[str, dict[str, Any]]:
    """Every declared document's content, in the conversation's language (a pack's builder makes a handler's)."""
    values = _values(state, config, lang)
    return {key: _build(spec, config, state, values, lang) for key, spec in config.documents.items() if spec.kind != "handler"}


def document_title(config: ConversationConfig, key: str, lang: str) -> str | None:
    """The title the plan gives a document, in a language (None when the plan declares none)."""
    spec = config.documents.get(key)
    return localize(spec.title, lang) or None if spec is not None else None


def _values(state: ContextState, config: ConversationConfig, lang: str) -> dict[str, str]:
    """What the templates and fields may show: slots by name, answers by question id and by their slot."""
    values = {name: slot_shown(config.slot_spec(name).extractor, slot.value, lang) for name, slot in state.slots.items() if slot.value}
    questions = {q.id: q for q in config.form.questions} if config.form else {}
    for answer in state.finalized_answers:
        spec = questions.get(answer.question_id)
        shown = _shown(spec, answer.answer, lang) if spec is not None else answer.answer
        values[answer.question_id] = shown
        if spec is not None and spec.slot:
            values[spec.slot] = shown
    return values


def _shown(spec: FormQuestionSpec, answer: str, lang: str) -> str:
    """An answer as a document writes it: a choice by its label in the language ("Road bike", "公路车"), a day in
    words, a number with its unit's words."""
    choice = next((c for c in spec.choices if c.value == answer), None) if spec.answer_type == "choice" else None
    return choice_label(choice, lang) if choice is not None else answer_shown(spec, answer, lang)


def _label(config: ConversationConfig, name: str, lang: str) -> str:
    question = config.form.question(name) if config.form else None
    if question is not None:
        return localize(question.label, lang) or localize(question.question, lang)
    return slot_label(config.slot_spec(name), lang)


def _build(spec: DocumentSpec, config: ConversationConfig, state: ContextState, values: Mapping[str, str],
           lang: str) -> dict[str, Any]:
    title = localize(spec.title, lang)
    if spec.kind == "email":
        return {"title": title, "to": _filled(spec.to, config, values, lang), "subject": _filled(localize(spec.subject, lang), config, values, lang),
                "body": _filled(localize(spec.body, lang), config, values, lang)}
    if spec.kind == "answers":
        questions = {q.id: q for q in config.form.questions} if config.form else {}
        wanted = set(spec.fields)
        return {"title": title, "answers": [
            {"id": a.question_id, "question": localize(questions[a.question_id].question, lang),
             "answer": _shown(questions[a.question_id], a.answer, lang), "value": a.answer}
            for a in state.finalized_answers if a.question_id in questions and (not wanted or a.question_id in wanted)]}
    return {"title": title, "fields": [{"id": name, "label": _label(config, name, lang), "value": values.get(name, "")}
                                       for name in spec.fields]}


def _filled(template: str, config: ConversationConfig, values: Mapping[str, str], lang: str) -> str:
    """A template with its placeholders filled; one nobody gave yet shows its label in brackets."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1)) or f"[{_label(config, m.group(1), lang)}]", template)
