"""Dissecting one call to a language model (chapter 08 and the inference guide; lab 09).

A call looks simple from outside: text in, text out. Inside it goes through tokens, a chat template,
a prefill that fills the KV cache, a decode loop that picks one token at a time, stop conditions and
an output contract. When something goes wrong, the first question is *which stage* to look at. This
module holds the small reference pieces lab 09 grades, one per stage:

- ``tokens_per_word``, ``words_per_second``: tokens are the unit of work, but tokenizers differ, so
  tok/s only compares across models after converting to words (guide G-3, G-M6).
- ``answer_perplexity``: how surprised a model is by a given answer after a given prompt; the
  measure that shows a wrong chat template hurts (guide G-M4).
- ``generate_with_stops``: the decode loop with its three stop reasons: ``"eos"``,
  ``"stop_sequence"`` and ``"max_tokens"`` (guide G-M7).
- ``fits_on_device``: weights plus KV cache against the device memory; supported context is not
  free context, and weight bits are not KV bytes (guide G-1, G-5, G-M1, G-M2).
- ``DIAGNOSIS``, ``diagnose``: chapter 08's table "symptom -> first stage to look at" (8-M6); the stages
  are lab 09's Spanish labels (the runtime is ``"entorno de ejecución"``).
- ``score_options``: a weighted decision matrix with minimum thresholds (chapter 08's kit, 8-M1).
- ``kv_growth_over_turns``: the KV cache of a chat after each turn, the history resent every time (G-8).
- ``MODEL_TYPES``, ``recommend_model_type``: base, instruct, chat, reasoning or tool-tuned (guide TG.10).

The KV rule of thumb itself (0.5 MiB per token for a 7B MHA model) lives in
``llmlab.cost.kv_mib_per_token``. Units: decimal GB (1e9 bytes) in ``fits_on_device``; seconds.

One module per idea: ``units``, ``perplexity``, ``stops``, ``memory``, ``decisions``; lab 09 reads them all
here, as ``llmlab.dissect``.
"""

from .decisions import DIAGNOSIS, MODEL_TYPES, diagnose, recommend_model_type, score_options
from .memory import fits_on_device, kv_growth_over_turns
from .perplexity import answer_perplexity
from .stops import STOP_REASONS, generate_with_stops
from .units import tokens_per_word, words_per_second

__all__ = [
    "DIAGNOSIS",
    "MODEL_TYPES",
    "STOP_REASONS",
    "answer_perplexity",
    "diagnose",
    "fits_on_device",
    "generate_with_stops",
    "kv_growth_over_turns",
    "recommend_model_type",
    "score_options",
    "tokens_per_word",
    "words_per_second",
]
