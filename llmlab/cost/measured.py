"""Published throughput measurements, to fit and check the speed model against.

``LLAMA2_NVIDIA`` is the table the efficiency factors are fitted on; ``LLAMA3_NVIDIA`` is a later
table from the same repository (different model, quantisation, generation length and llama.cpp
version), kept aside to check how the fitted model transfers.

Source: XiongjieDai/GPU-Benchmarks-on-LLM-Inference, README.md (read from the source; transcribed
in serving-facts.md §2b). llama.cpp ``llama-bench``: ``tg128``/``tg512`` = tokens/s generating 128
or 512 tokens from an empty context; ``pp512`` = tokens/s processing a 512-token prompt.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Measurement", "LLAMA2_NVIDIA", "LLAMA3_NVIDIA"]

_SRC_2023 = "XiongjieDai/GPU-Benchmarks-on-LLM-Inference README, llama.cpp, Dec 2023 (RunPod); serving-facts §2b"
_SRC_2024 = "XiongjieDai/GPU-Benchmarks-on-LLM-Inference README, llama.cpp, May 2024; serving-facts §2b"


@dataclass(frozen=True)
class Measurement:
    """One published number: ``tokens_per_s`` for ``kind`` = ``"decode"`` (generate ``tokens``
    from an empty context) or ``"prefill"`` (a ``tokens``-long prompt)."""

    model: str  # catalog name (llmlab.cost.get_model)
    hardware: str  # catalog name (llmlab.cost.get_hardware)
    kind: str
    weight_format: str
    tokens: int
    tokens_per_s: float
    source: str = ""

    def __post_init__(self):
        if self.kind not in ("decode", "prefill"):
            raise ValueError(f"kind must be 'decode' or 'prefill', got {self.kind!r}")
        if not self.tokens_per_s > 0 or self.tokens <= 0:
            raise ValueError("tokens and tokens_per_s must be > 0")


# GPU: 7B Q4_0 tg, 7B F16 tg, 70B Q4_0 tg, 7B Q4_0 pp, 7B F16 pp. The README's "A100 80GB" is the PCIe
# part: the repository's notebook of that run ('LLaMA 2/A100_v2.ipynb', 2023-12-22) prints nvidia-smi's
# "NVIDIA A100 80GB PCIe" (the same reading as data/throughput.json's table xd-llama2-cuda-2023-12).
_2023 = {
    "rtx-3090": (120.6, 51.85, None, 2601.81, 3075.37),
    "rtx-4090": (149.37, 60.78, None, 5531.19, 7348.69),
    "rtx-4080": (118.01, 44.2, None, 3774.79, 5158.19),
    "rtx-a6000": (111.57, 44.01, 15.18, 2979.12, 3707.88),
    "a100-80gb-pcie": (136.24, 73.83, 25.68, 3443.98, 5105.77),
    "h100-pcie": (133.77, 83.32, 25.88, 4868.59, 7367.0),
}
LLAMA2_NVIDIA: list[Measurement] = []
for _hw, (_q4, _f16, _q4_70, _pq4, _pf16) in _2023.items():
    LLAMA2_NVIDIA += [
        Measurement("llama-2-7b", _hw, "decode", "q4_0", 128, _q4, _SRC_2023),
        Measurement("llama-2-7b", _hw, "decode", "f16", 128, _f16, _SRC_2023),
    ]
    if _q4_70 is not None:
        LLAMA2_NVIDIA.append(Measurement("llama-2-70b", _hw, "decode", "q4_0", 128, _q4_70, _SRC_2023))
    LLAMA2_NVIDIA += [
        Measurement("llama-2-7b", _hw, "prefill", "q4_0", 512, _pq4, _SRC_2023),
        Measurement("llama-2-7b", _hw, "prefill", "f16", 512, _pf16, _SRC_2023),
    ]

# LLaMA-3-8B, tg512 / pp512.
_2024 = {
    ("q4_k_m", "rtx-3070-8gb"): (72.79, 2402.51),
    ("q4_k_m", "rtx-3080-10gb"): (109.57, 3728.86),
    ("q4_k_m", "rtx-3090"): (115.42, 4030.40),
    ("q4_k_m", "rtx-4090"): (130.58, 7138.99),
    ("f16", "rtx-3090"): (47.40, 4444.65),
    ("f16", "rtx-4090"): (54.84, 9382.00),
}
LLAMA3_NVIDIA: list[Measurement] = []
for (_fmt, _hw), (_tg, _pp) in _2024.items():
    LLAMA3_NVIDIA += [
        Measurement("llama-3-8b", _hw, "decode", _fmt, 512, _tg, _SRC_2024),
        Measurement("llama-3-8b", _hw, "prefill", _fmt, 512, _pp, _SRC_2024),
    ]

del _hw, _q4, _f16, _q4_70, _pq4, _pf16, _fmt, _tg, _pp
