"""llmlab: the reference library of a Spanish-language lab course on how LLMs work inside.

Each module holds one idea of the course, written to be read top to bottom:

- ``functional``: softmax, log-softmax and entropy (NumPy).
- ``metrics``: loss, log-probability of a sequence, perplexity.
- ``embeddings`` / ``positional``: token embeddings; sinusoidal, learned and rotary positions (NumPy).
- ``attention``: scaled dot-product, causal, multi-head and grouped-query attention, KV cache (NumPy).
- ``layers``: residual, LayerNorm, RMSNorm, activations and the MLP (NumPy).
- ``model``: a GPT-2 / Llama style transformer with a KV cache and ``generate`` (PyTorch), gathered from one
  module per idea: ``model_config`` (``ModelConfig``), ``transformer`` (norms, positions, attention, blocks),
  ``ffn`` (the GELU MLP and SwiGLU), ``kv_cache`` (``KVCache``, ``StaticKVCache``), ``generation`` (the decoding
  loop); convertible from and to Hugging Face models (``convert_hf``: ``from_hf``, ``to_hf``); MoE layers come
  from ``moe``.
- ``lora``: LoRA layers, merging, adapter folders that PEFT loads (and that load PEFT's);
  ``distill``: distillation and DPO losses; ``train_step``: one training step by hand (the linear head's
  gradient, the SGD update, answer-only labels); ``datasets``: data mixtures, leak-proof splits, contamination,
  dataset cards; ``adaptation``: which technique to try first, and what "open" means
  (``course/tools/makedata`` measures real adaptations of the shipped models).
- ``moe``: the mixture-of-experts router, load statistics, the auxiliary loss and ``SparseMoE``;
  ``moe_balance``: lab 05's load-balancing experiment.
- ``families`` / ``reasoning`` / ``multimodal`` / ``recurrence``: the rest of chapter 05 — the map
  of architectures, voting and verification, CLIP similarity and ViT patches, a linear recurrence (O(n)).
- ``sampling``: logits processors with Hugging Face semantics, ``Sampler`` and presets.
- ``constrained``: decoding restricted to choices, integers or a JSON schema.
- ``serve``: an inference engine (paged KV blocks, continuous batching, speculative decoding) behind an
  OpenAI-compatible server; ``dissect``: lab 09's pieces of one call (tokens per word, answer perplexity, stop
  reasons, does it fit, diagnosis and decision tables).
- ``tokenizer`` / ``chat``: byte-level BPE and chat templates.
- ``corpus`` / ``train`` / ``pretrained``: the project's Spanish corpus, a small trainer, the
  tiny models shipped with the package and the real published one (SmolLM2-135M-Instruct, from its GGUF file):
  ``gguf_model`` reads a real GGUF file of the Llama family, ``gguf_tokenizer`` its byte-level BPE and
  ``chat_template`` renders the file's own Jinja chat template.
- ``cost``: parameter counts, memory, serving speed and price, for real architectures.
- ``quant``: quantisation (absmax, zero point, groups), GGUF's Q8_0/Q4_0/Q6_K blocks byte for byte,
  ``quantize_model`` with packed weights, an int8 KV cache; ``export``: GGUF files for llama.cpp.
- ``checks``: the Spanish-language checks used by the notebooks (``mistakes``: a failing check names the common
  mistake the answer behaves like, from ``data/mistakes/``); ``spanish``: numbers printed the Spanish way;
  ``arguments``: the library's own argument checks (English errors that name the argument).

The machinery that builds ``data/`` (the generated corpus, the models, the adapters) is course tooling and lives
outside the package, in ``course/tools/makedata``; nothing here imports it.
"""

__version__ = "0.1.0"
