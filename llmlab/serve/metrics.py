"""``GET /metrics``: the server's state and latencies in the Prometheus text format.

Two kinds of numbers (names follow vLLM's ``vllm:`` metrics, with an ``llmlab_`` prefix):

- read at scrape time from the engine: requests running and waiting, KV blocks used / free /
  cached, KV usage, generated tokens per second over the last seconds, preemptions, speculative
  acceptance rate;
- accumulated as requests finish: histograms of the time to first token, the inter-token latency,
  the end-to-end latency and the queueing time, and counters of requests (by finish reason) and
  tokens.

A histogram answers the chapter's question "what do the slowest users see?": p95 and p99 come
from its buckets (``histogram_quantile`` in Prometheus), not from an average.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from .request import RequestOutput

if TYPE_CHECKING:
    from .engine_thread import EngineThread

__all__ = ["ServerMetrics"]

# Seconds. Tiny models on a CPU answer in milliseconds; a queue can push TTFT to seconds.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0,
                   20.0, 40.0, 80.0)


class _EngineCollector:
    """Gauges read from the engine thread's latest snapshot at each scrape."""

    def __init__(self, engine_thread: EngineThread):
        self.engine_thread = engine_thread

    def collect(self):
        t = self.engine_thread
        kv = t.kv_stats

        def gauge(name, doc, value):
            metric = GaugeMetricFamily(name, doc)
            metric.add_metric([], value)
            return metric

        yield gauge("llmlab_requests_running", "Requests in the running batch.", kv.running_requests)
        yield gauge("llmlab_requests_waiting", "Requests queued (new or preempted).", kv.waiting_requests)
        yield gauge("llmlab_requests_in_flight", "Requests accepted and not finished (HTTP side).", t.in_flight)
        yield gauge("llmlab_kv_blocks_total", "KV cache blocks.", kv.num_blocks)
        yield gauge("llmlab_kv_blocks_used", "KV cache blocks held by requests.", kv.used_blocks)
        yield gauge("llmlab_kv_blocks_free", "KV cache blocks available (blank or cached prefix).", kv.free_blocks)
        yield gauge("llmlab_kv_blocks_cached", "Free KV blocks that still hold a reusable prefix.", kv.cached_blocks)
        yield gauge("llmlab_kv_cache_usage_ratio", "Fraction of the KV blocks in use.", kv.usage)
        yield gauge("llmlab_kv_block_size_tokens", "Tokens per KV block.", kv.block_size)
        yield gauge("llmlab_generation_tokens_per_second", "Generated tokens per second over the last seconds.",
                    t.tokens_per_s)
        counter = CounterMetricFamily("llmlab_preemptions", "Requests preempted (KV blocks ran out).")
        counter.add_metric([], kv.preemptions)
        yield counter
        counter = CounterMetricFamily("llmlab_prefix_cache_hit_tokens", "Prompt tokens reused from the prefix cache.")
        counter.add_metric([], kv.prefix_hit_tokens)
        yield counter
        spec = t.spec_stats()
        if spec is not None:
            yield gauge("llmlab_spec_decode_acceptance_rate", "Draft tokens accepted / tested.", spec.acceptance_rate)
            yield gauge("llmlab_spec_decode_tokens_per_pass", "Tokens per target pass (full drafts).",
                        spec.tokens_per_pass)


class ServerMetrics:
    """The metrics of one server: its own registry (two servers in one process do not mix)."""

    def __init__(self):
        disable_created_metrics()  # no "_created" time stamp series: they only add noise here
        self.registry = CollectorRegistry()
        kw = dict(registry=self.registry)
        self.ttft = Histogram("llmlab_time_to_first_token_seconds", "Time to first token (arrival to first token).",
                              buckets=LATENCY_BUCKETS, **kw)
        self.itl = Histogram("llmlab_inter_token_latency_seconds", "Time between consecutive output tokens.",
                             buckets=LATENCY_BUCKETS, **kw)
        self.e2e = Histogram("llmlab_e2e_request_latency_seconds", "Arrival to last token.",
                             buckets=LATENCY_BUCKETS, **kw)
        self.queue = Histogram("llmlab_request_queue_time_seconds", "Arrival to first scheduled step.",
                               buckets=LATENCY_BUCKETS, **kw)
        self.requests = Counter("llmlab_requests", "Finished requests, by finish reason.", ["finish_reason"], **kw)
        self.prompt_tokens = Counter("llmlab_prompt_tokens", "Prompt tokens of finished requests.", **kw)
        self.generation_tokens = Counter("llmlab_generation_tokens", "Tokens generated for finished requests.", **kw)
        self.rejected = Counter("llmlab_requests_rejected",
                                "Requests refused before reaching the engine, by HTTP status.", ["status"], **kw)

    def attach(self, engine_thread: EngineThread) -> None:
        """Also report the live state of ``engine_thread`` (its latest snapshot) at each scrape."""
        self.registry.register(_EngineCollector(engine_thread))

    def observe_finished(self, output: RequestOutput) -> None:
        """Record a finished request (called from the engine thread)."""
        self.requests.labels(finish_reason=output.finish_reason or "unknown").inc()
        self.prompt_tokens.inc(output.num_prompt_tokens)
        self.generation_tokens.inc(output.num_output_tokens)
        m = output.metrics
        if m is None:
            return
        if m.ttft_s is not None:
            self.ttft.observe(m.ttft_s)
        for gap in m.itl_s:
            self.itl.observe(gap)
        if m.e2e_s is not None:
            self.e2e.observe(m.e2e_s)
        if m.queue_s is not None:
            self.queue.observe(m.queue_s)

    def render(self) -> bytes:
        return generate_latest(self.registry)
