"""llmlab: the reference library of a Spanish-language lab course on how LLMs work inside.

Each module holds one idea of the course, written to be read top to bottom:

- ``functional``: softmax and friends (NumPy).
- ``metrics``: loss, perplexity and log-probabilities of sequences.
- ``cost``: parameter counts, memory, serving speed and cost.
- ``model``: a GPT-2 / Llama style transformer with a KV cache (PyTorch).
- ``sampling``: logits processors and decoding policies.
- ``tokenizer`` / ``chat``: byte-level BPE and chat templates.
- ``checks``: the Spanish-language checks used by the notebooks.
"""

__version__ = "0.1.0"
