"""Quantisation: storing weights (and the KV cache) in fewer bits, and measuring what it costs.

From chapter 08's notebook (int8 by hand) to the formats llama.cpp runs on a laptop, one idea per
module:

- ``basics``: the memory formula ``N * b / 8``; symmetric absmax quantisation per tensor, per
  channel and per group; the asymmetric (zero-point) variant; dequantisation; the error measures
  of the chapter (relative mat-vec error, max error <= scale / 2) and ``quant_report``, which never
  reports the memory saved without the error paid. NumPy, lists welcome.
- ``ggml``: GGUF's block formats Q8_0 (34 bytes per 32 weights) and Q4_0 (18 bytes per 32), byte
  for byte as llama.cpp writes them; packing one Q4_0 block by hand.
- ``kquants``: Q6_K, a k-quant with two levels of scales (210 bytes per 256 weights), byte-exact too.
- ``storage``: the in-memory formats of ``quantize_model`` (``f16``, ``int8``, ``int8_channel``,
  ``intB_gG``, ``q8_0``, ``q4_0``) and their bit-packing.
- ``layers``: ``QuantizedLinear``, ``QuantizedEmbedding`` and ``quantize_model(model, fmt)``:
  packed weights in memory, dequantised on the fly; ``module_nbytes`` measures them.
- ``kv``: an int8 KV cache (keys per channel, values per token) that plugs into ``llmlab.model``.

Only NumPy and PyTorch are needed. Writing GGUF files is ``llmlab.export`` (it needs the ``gguf``
package). Units: bytes; ``GB = 1e9``, ``GiB = 2**30``.
"""

from .basics import (
    GB,
    GiB,
    dequantize,
    dequantize_affine,
    dequantize_groupwise,
    fake_quantize,
    max_abs_error,
    qmax_for_bits,
    quant_report,
    quantize_absmax,
    quantize_affine,
    quantize_groupwise,
    quantize_int8_absmax,
    quantized_nbytes,
    relative_matvec_error,
    weight_memory_bytes,
)
from .ggml import (
    BLOCK_FORMATS,
    QK,
    BlockFormat,
    dequantize_blocks,
    dequantize_q4_0,
    dequantize_q8_0,
    get_block_format,
    pack_q4_0_block,
    quantize_blocks,
    quantize_q4_0,
    quantize_q8_0,
    round_half_away,
    unpack_q4_0_block,
)
from .kquants import QK_K, dequantize_q6_k, quantize_q6_k
from .kv import QuantizedKVCache, kv_quantization_error, quantize_per_channel, quantize_per_token, use_quantized_kv_cache
from .layers import QuantizedEmbedding, QuantizedLinear, module_nbytes, quantize_model, quantized_layers
from .storage import EXAMPLE_FORMATS, QuantFormat, parse_format

__all__ = [
    # basics
    "GB", "GiB", "weight_memory_bytes", "qmax_for_bits", "quantize_absmax", "quantize_int8_absmax", "dequantize",
    "quantize_affine", "dequantize_affine", "quantize_groupwise", "dequantize_groupwise", "fake_quantize",
    "relative_matvec_error", "max_abs_error", "quantized_nbytes", "quant_report",
    # GGUF blocks
    "QK", "QK_K", "BlockFormat", "BLOCK_FORMATS", "get_block_format", "round_half_away", "quantize_q8_0",
    "dequantize_q8_0", "quantize_q4_0", "dequantize_q4_0", "pack_q4_0_block", "unpack_q4_0_block",
    "quantize_q6_k", "dequantize_q6_k", "quantize_blocks", "dequantize_blocks",
    # model
    "QuantFormat", "EXAMPLE_FORMATS", "parse_format", "QuantizedLinear", "QuantizedEmbedding", "quantize_model",
    "module_nbytes", "quantized_layers",
    # KV cache
    "QuantizedKVCache", "quantize_per_channel", "quantize_per_token", "kv_quantization_error",
    "use_quantized_kv_cache",
]  # fmt: skip
