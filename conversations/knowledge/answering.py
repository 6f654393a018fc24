"""Knowledge for a turn: which chunks the reply cites, chosen by what the turn is about.

Tool answers cite the knowledge that explains them (a rule version's explanation, the
arrears or verification FAQ); side questions and what / how / where questions cite the
workflow's own knowledge pack. Retrieval is filtered, so a citation is always in scope.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.utils import timezone

from .engine.packs import load_pack, pack_names, pack_source_ids
from .engine.search import RetrievalFilters, citation_for
from .services.retrieval import citation_dict, knowledge_retrieve

ASKING_INTENTS = ("EXPLAIN", "HOWTO", "LOCATE")
GUIDANCE_CHARS = 320  # a guidance passage is read as advice, not as a pointer to the source


@lru_cache(maxsize=16)
def _pack_ids(workflow_id: str) -> tuple[str, ...]:
    return pack_source_ids(workflow_id) if workflow_id in pack_names() else ()


def _local(value: str | None) -> str | None:
    """Effective times as people read them: in the product's time zone."""
    if not value:
        return value
    return timezone.localtime(datetime.fromisoformat(value)).isoformat()


def _retrieve(query: str, filters: RetrievalFilters, top_k: int = 2) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    result = knowledge_retrieve(query, filters=filters, top_k=top_k)
    citations = [citation_dict(c) for c in result.citations]
    for citation in citations:
        citation["effective_from"], citation["effective_to"] = _local(citation["effective_from"]), _local(citation["effective_to"])
    hits = [{"source_id": h.chunk.source_id, "version": h.chunk.source_version, "chunk_id": h.chunk.chunk_id,
             "score": round(float(h.score), 4)} for h in result.hits]
    return citations, hits


def _tool_query(tool_result: dict[str, Any], text: str, lang: str) -> tuple[str, RetrievalFilters] | None:
    tool = tool_result.get("tool")
    if tool_result.get("error"):
        return None
    if tool == "fee_verify" and (tool_result.get("fee_decision") or {}).get("overpaid"):
        # paid over an adjusted total: how the money comes back is the operator's refund policy, from its pack
        return (text + " how a refund is made: refunded to the payment method 怎么退款 原路退回",
                RetrievalFilters(source_ids=_pack_ids_in("parking_help_desk", lang) or None))
    if tool in ("rule_explain", "fee_verify"):
        source = f"rule:{tool_result['rule_code']}:v{tool_result['version_no']}"
        return text, RetrievalFilters(source_ids=(source,))
    if tool == "arrears_check":
        return text + " 欠费 arrears unpaid", RetrievalFilters(source_ids=_pack_ids("parking_help_desk") or None)
    return None


@lru_cache(maxsize=16)
def _pack_ids_in(workflow_id: str, lang: str) -> tuple[str, ...]:
    """The pack's sources in the reply's language (all of them when it has none in that language)."""
    if workflow_id not in pack_names():
        return ()
    records = [d.record for d in load_pack(workflow_id)]
    local = tuple(r.source_id for r in records if (r.locale or "en").split("-")[0] == lang.split("-")[0])
    return local or tuple(r.source_id for r in records)


def guidance_for_action(*, plan, state, action, lang: str) -> tuple[tuple[dict[str, Any], ...], list[dict[str, Any]]]:  # noqa: ANN001
    """The knowledge an offered action rests on: passages of the workflow's pack found by the
    action's guidance topics and the situation the manager described, each cited."""
    query = (action.guidance.get(lang) or action.guidance.get("en") or "") if action is not None else ""
    pack = _pack_ids_in(plan.workflow_id, lang)
    if not query or not pack:
        return (), []
    situation = " ".join(a.answer for a in state.finalized_answers if a.question_id == "situation")
    filters = RetrievalFilters(source_ids=pack)
    # the problem first (lateness, a conflict, the quality of work, conduct each have their page), then the action
    searches = [(situation, knowledge_retrieve(situation, filters=filters, top_k=4).hits)] if situation else []
    searches.append((query, knowledge_retrieve(f"{situation} {query}".strip(), filters=filters, top_k=6).hits))
    hits = [{"source_id": h.chunk.source_id, "version": h.chunk.source_version, "chunk_id": h.chunk.chunk_id,
             "score": round(float(h.score), 4)} for _, found in searches for h in found]
    chosen: list[dict[str, Any]] = []
    for words, found in searches:  # one passage from each search, one per source; guidance asks nothing
        best = float(found[0].score) if found else 0.0
        for hit in found:
            if float(hit.score) < 0.8 * best:
                break  # far below what the words found best: about something else ("no-show" is no conduct matter)
            citation = citation_dict(citation_for(hit, words, max_chars=GUIDANCE_CHARS))
            if citation["source_id"] not in {c["source_id"] for c in chosen} and not re.search(r"[?？]", citation["snippet"]):
                chosen.append(citation)
                break
    return tuple(chosen[:2]), hits


def citations_for_turn(*, outcome, plan, state, tool_result, lang: str, offered_action=None) -> tuple[tuple[dict[str, Any], ...], list[dict[str, Any]]]:  # noqa: ANN001
    """(citations for the reply, retrieval hits for the execution path)."""
    text = state.latest_user_text or ""
    if offered_action is not None and offered_action.guidance:
        return guidance_for_action(plan=plan, state=state, action=offered_action, lang=lang)
    if tool_result:
        found = _tool_query(dict(tool_result), text, lang)
        if found is None:
            return (), []
        citations, hits = _retrieve(*found, top_k=1 if tool_result.get("tool") != "arrears_check" else 2)
        return tuple(citations[:2]), hits
    if outcome.meaning == "next_step":
        return (), []  # "what's the next step?" is answered by the procedure, not the knowledge base
    asking = outcome.intent in ASKING_INTENTS or outcome.side_question is not None
    pack = _pack_ids(plan.workflow_id)
    if not asking or not pack or not text:
        return (), []
    citations, hits = _retrieve(text, RetrievalFilters(source_ids=pack), top_k=4)
    # a passage that shares no word of substance with the question answers another one: none is cited (the
    # name of the place or thing asked about is no such word: "who runs the Tianhe car park?" is not about parking)
    asked = _without_names(text, state)
    if asked != text and not any(_substance(asked)):
        return (), hits[:2]  # nothing asked but the name
    relevant = [c for c in citations if _about(asked, c)]
    if system := _system_named(plan, state, lang):
        # a passage of the system being diagnosed first ("where's the gas valve on it?" during the water heater:
        # a walk was answered from the refrigerator's procedure), looked for with the system's name
        own, _ = _retrieve(f"{text} {system}", RetrievalFilters(source_ids=pack), top_k=4)
        relevant = [c for c in own if _about(asked, c) and _of_system(system, c)] + relevant
    return tuple(relevant[:1]), hits[:2]


def _system_named(plan, state, lang: str) -> str:  # noqa: ANN001
    """The name of the system being diagnosed, in the conversation's language ("" when none is)."""
    if not state.primary_system:
        return ""
    from conversations.engine._text import localize
    from conversations.selectors import conversation_config

    procedure = conversation_config(plan).procedure(state.primary_system)
    return localize(procedure.label, lang) if procedure is not None else ""


def _of_system(system: str, citation: dict[str, Any]) -> bool:
    """The cited document is about that system: every word of its name is in the title ("Water heater" in "RV
    water heater (Suburban / Atwood ...)", 热水器 in 热水器快速参考)."""
    title = str(citation.get("title") or "").casefold()
    words = re.findall(r"[a-zа-яёáéíóúñ]{4,}", system.casefold())
    cjk = re.sub(r"[^\u4e00-\u9fff]", "", system)
    return bool(words or cjk) and all(w[:max(4, len(w) - 2)] in title for w in words) and (not cjk or cjk in title)


def _without_names(text: str, state) -> str:  # noqa: ANN001
    """The question without the words this turn's slot values were read from."""
    for slot in state.slots.values():
        if slot.source_turn == state.turn_index and slot.raw and len(slot.raw) > 1 and slot.raw != "reference":
            text = text.replace(slot.raw, " ")
    return text


_STOP = frozenset(["what", "which", "where", "when", "does", "about", "have", "with", "from", "that", "this", "there", "their", "would", "should", "could", "your", "what's", "whats", "into", "also", "been", "they", "them", "then", "than", "some", "more", "most", "very", "just", "like", "know",
                    "runs", "running"])  # a window "runs from 8 pm", a company runs a car park: the same word, no shared subject


def _substance(question: str) -> tuple[set[str], set[str]]:
    """The question's words of substance: of four letters or more, and pairs of Chinese characters."""
    words = {w for w in re.findall(r"[a-zа-яё]{4,}", question.casefold()) if w not in _STOP}
    cjk = re.sub(r"[^\u4e00-\u9fff]", " ", question)
    pairs = {cjk[i:i + 2] for i in range(len(cjk) - 1) if " " not in cjk[i:i + 2]} - {"什么", "怎么", "是否", "这个", "那个", "可以"}
    return words, pairs


def _about(question: str, citation: dict[str, Any]) -> bool:
    """The passage speaks of something the question names (a word of four letters or more, or two Chinese characters)."""
    passage = f"{citation.get('title', '')} {citation.get('snippet', '')}".casefold()
    words, pairs = _substance(question)
    if any(re.search(rf"\b{re.escape(w[:max(4, len(w) - 2)])}", passage) for w in words):
        return True
    return any(pair in passage for pair in pairs) or not (words or pairs)
