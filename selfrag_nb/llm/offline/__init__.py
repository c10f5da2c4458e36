"""The offline model: a deterministic, rule-based ``Model`` (no key, no network).

``from selfrag_nb.llm.offline import OfflineModel`` is the public entry point.
The package is organised by layer; every module imports only modules of lower
layers (``tests/llm/test_offline_model.py`` checks it). In the diagram at the
top of each module, ``a <- b`` reads "b builds on a":

    layer  module       holds
    9      model        OfflineModel: role -> rule, Completion, token estimate
    8      verify       verify: claims x evidence sentences -> verdicts, recommendation
    8      usefulness   usefulness: form, answer type, subject -> yes / partly / no
    7      assess       assess: cover / qualifiers / conflicts -> ANSWER, CLARIFY, REFUSE
    7      generate     generate: scored sentences quoted and cited; direct replies
    6      answer_kind  the kind of answer a question asks for, and whether an answer gives one
    5      evidence     evidence status (current / superseded) and label
    5      subject      what the question names, and how much a chunk is about it
    4      relevance    grade, rerank, exact_adjustment, asked_head
    3      question     decide, rewrite, is_follow_up, effective_question
    2      abbrev       acronyms, numeronyms and "What does X stand for?" as words
    2      phrases      social phrases, arithmetic, entities
    2      quotable     the whole sentences of chunk text an answer may quote; lead-ins
                        read with their lists or code
    2      surface      readable chunk text (no control characters, table rows as
                        sentences), table markup, key terms a claim names
    1      lexical      tokens, weights, bags, coverage, exact terms, sentences,
                        quantities, negation, injections

    ModelRequest -> model.OfflineModel.complete -> role rule (layers 3-8)
                 -> built from phrases and lexical -> Completion(raw JSON)

The heuristics are documented in ``docs/offline_model.md``.
"""

from __future__ import annotations

from selfrag_nb.llm.offline.model import OfflineModel

__all__ = ["OfflineModel"]
