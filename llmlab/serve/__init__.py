"""Serving: many requests at once on one model, and an OpenAI-compatible HTTP server (chapter 07).

``llmlab.model.generate`` answers one prompt at a time. A server answers hundreds, and chapter 07
is about what that takes. This package is a small serving engine written to be read (vLLM is the
model: its scheduler, block manager and model runner are separate objects here too), one idea per
module, in the order a request meets them:

- ``params``: ``SamplingParams``, what a request asks for (max_tokens, temperature, top_p, seed,
  stops, a JSON schema, logit_bias, penalties, logprobs), turned into the same
  ``llmlab.sampling.Sampler`` that ``generate`` uses.
- ``processors``: the request's own logits processor (logit_bias, presence/frequency penalties,
  min_tokens) and ``grammar``: a JSON schema enforced token by token (llguidance), or refused.
- ``request``: a request's life as an explicit state (waiting → running → finished, or
  preempted / cancelled / failed) and its timings: TTFT, inter-token latencies.
- ``blocks``: the block allocator of the paged KV cache: a free list, reference counts,
  prefix sharing with copy-on-write, a prefix cache.
- ``paged_attention``: the KV memory in blocks and attention that reads it through block tables.
  (The single-stream alternative, a cache preallocated once, is ``llmlab.model.StaticKVCache``.)
- ``scheduler``: continuous batching: who runs at each step, chunked prefill, preemption by recompute.
- ``runner``: one forward pass of the model over the step's tokens.
- ``engine``: the step loop (``Engine``, ``LLM``): schedule, run, sample, retire.
- ``speculative``: draft/target speculative decoding, with the exact accept/reject rule.
- ``engine_thread``, ``protocol``, ``responses``, ``transport``, ``metrics``, ``server``: the HTTP
  side (FastAPI + uvicorn): OpenAI-compatible routes and strict validation, answers and server-sent
  events for ``n`` choices, the edge (API key, CORS, request ids, 408/413, header timeout),
  Prometheus ``/metrics``, 429. ``engine_process``: the same engine stepping in its own process
  (``launch(..., engine_process=True)``, ``serve --engine-process``), so that it does not share
  the interpreter lock with the event loop.
- ``launcher``: ``launch("es-chat")`` starts the server from a notebook, and stops it for sure.
- ``loadgen``: ``run_load(url, clients=16)``: concurrent clients, latency percentiles, throughput.

Offline, in a notebook::

    from llmlab.serve import LLM, SamplingParams
    llm = LLM("es-chat")
    out = llm.chat([[{"role": "user", "content": "¿Qué es un token?"}]], SamplingParams(max_tokens=40, temperature=0))
    out[0].text, out[0].ttft_s, out[0].itl_s, llm.kv_stats()
    llm.generate(["Había una vez", "La luna"], SamplingParams(max_tokens=20, seed=1))   # plain text prompts

    spec = LLM("es-base", draft="es-mini", num_speculative_tokens=4)   # speculative decoding
    spec.generate(["Había una vez"] * 8, SamplingParams(max_tokens=40)); spec.spec_stats().acceptance_rate

Over HTTP::

    from llmlab.serve import launch, run_load
    with launch("es-chat") as server:             # python -m llmlab serve, on a free loopback port
        print(server.url)                         # use it with curl or the openai client
        print(run_load(server.url, clients=16, duration_s=10).table())

The correctness contract, tested in ``tests/test_serve_*.py``: every request produces exactly the
tokens of ``llmlab.model.generate`` with the same sampler, alone or among 32 concurrent ones, and
every KV block is back in the allocator when requests finish, fail or are cancelled.

The server needs the ``serve`` extra (``pip install -e ".[serve]"``: fastapi, uvicorn, httpx,
prometheus-client, llguidance); the engine needs only torch (and llguidance for a JSON schema). Units: seconds, bytes, tokens.
"""

from .blocks import BlockAllocator, OutOfBlocks, prefix_cache_savings
from .engine import LLM, Engine, KVStats
from .launcher import ServerHandle, launch, stop_all
from .loadgen import LoadReport, run_load
from .params import SamplingParams
from .request import Completion, RequestMetrics, RequestOutput, RequestState
from .speculative import SpecStats, speculative_generate, verify_sampled

__all__ = [
    "BlockAllocator",
    "prefix_cache_savings",
    "Completion",
    "Engine",
    "KVStats",
    "LLM",
    "LoadReport",
    "OutOfBlocks",
    "RequestMetrics",
    "RequestOutput",
    "RequestState",
    "SamplingParams",
    "ServerHandle",
    "SpecStats",
    "launch",
    "run_load",
    "speculative_generate",
    "stop_all",
    "verify_sampled",
]
