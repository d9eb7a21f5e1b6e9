"""A small load generator: N concurrent streaming clients against an OpenAI-compatible server.

``run_load(url, clients=16, duration_s=10)`` keeps ``clients`` chat requests in flight (each
client sends its next request as soon as the previous one ends) for ``duration_s`` seconds or
``max_requests`` requests, and measures what each user sees:

- TTFT: from sending the request to the first piece of text;
- inter-token latency (ITL): the gaps between consecutive pieces of text (one per token, except
  where a character spans several tokens);
- throughput: generated tokens (as the server counts them, ``usage``) per second of the run.

Percentiles use ``llmlab.cost.latency_percentiles`` (chapter 07: report p95/p99, never the mean as
if it were one). Loopback only by design: it is a measuring tool, not a stress tool for other
people's servers. Safe to call from a notebook (it runs its own event loop in a thread).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlparse

__all__ = ["DEFAULT_PROMPTS", "LoadReport", "run_load"]

DEFAULT_PROMPTS = (
    "¿Qué es la fotosíntesis?",
    "Explica qué es una caché KV en pocas palabras.",
    "Escribe una frase sobre el mar.",
    "¿Para qué sirve la temperatura al generar texto?",
    "Resume qué hace un modelo de lenguaje.",
    "Dame un consejo para estudiar mejor.",
    "¿Qué es un token?",
    "Cuenta una historia muy corta sobre un gato.",
)


@dataclass
class LoadReport:
    """What a load run measured; times in seconds."""

    clients: int
    duration_s: float
    requests: int = 0
    failures: int = 0
    output_tokens: int = 0
    ttft_s: list[float] = field(default_factory=list)
    itl_s: list[float] = field(default_factory=list)
    e2e_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # the first few failure messages

    @property
    def throughput_tokens_per_s(self) -> float:
        return self.output_tokens / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0

    def percentiles(self, which: str = "ttft_s", qs: Sequence[float] = (50, 95, 99)) -> dict:
        from llmlab.cost import latency_percentiles

        samples = getattr(self, which)
        return latency_percentiles(samples, qs) if samples else {q: float("nan") for q in qs}

    def summary(self) -> dict:
        ttft, itl, e2e = self.percentiles("ttft_s"), self.percentiles("itl_s"), self.percentiles("e2e_s")
        return {
            "clients": self.clients, "duration_s": round(self.duration_s, 2), "requests": self.requests,
            "failures": self.failures, "output_tokens": self.output_tokens,
            "throughput_tokens_per_s": round(self.throughput_tokens_per_s, 1),
            "requests_per_s": round(self.requests_per_s, 2),
            **{f"ttft_p{q}_ms": round(1e3 * v, 1) for q, v in ttft.items()},
            **{f"itl_p{q}_ms": round(1e3 * v, 1) for q, v in itl.items()},
            **{f"e2e_p{q}_s": round(v, 3) for q, v in e2e.items()},
        }

    def table(self) -> str:
        """A short text table (what the benchmark and the lab print)."""
        s = self.summary()
        lines = [f"{self.clients} clients, {s['duration_s']} s: {self.requests} requests, {self.failures} failures, "
                 f"{self.output_tokens} tokens, {s['throughput_tokens_per_s']} tokens/s, {s['requests_per_s']} req/s",
                 f"{'':12s} {'p50':>9s} {'p95':>9s} {'p99':>9s}"]
        for name, key, unit, scale in (("TTFT", "ttft", "ms", 1e3), ("ITL", "itl", "ms", 1e3), ("e2e", "e2e", "s", 1)):
            p = self.percentiles(f"{key}_s")
            lines.append(f"{name + ' (' + unit + ')':12s} " + " ".join(f"{scale * p[q]:9.1f}" if unit == "ms"
                                                                      else f"{p[q]:9.3f}" for q in (50, 95, 99)))
        return "\n".join(lines)


def run_load(url: str, *, clients: int = 8, duration_s: float | None = 10.0, max_requests: int | None = None,
             prompts: Sequence[str] = DEFAULT_PROMPTS, max_tokens: int = 32, temperature: float = 0.0,
             ignore_eos: bool = False, model: str | None = None, timeout_s: float = 120.0) -> LoadReport:
    """Run ``clients`` concurrent streaming chat clients against ``url`` (the server's base URL).

    Stops starting new requests after ``duration_s`` seconds or ``max_requests`` requests (one of
    them must be given), then waits for the ones in flight. ``ignore_eos=True`` makes every answer
    exactly ``max_tokens`` long (the server's extension), for runs that compare like with like.
    """
    if duration_s is None and max_requests is None:
        raise ValueError("give duration_s or max_requests (a load run must be bounded)")
    if not isinstance(clients, int) or clients < 1:
        raise ValueError(f"clients must be an int >= 1, got {clients!r}")
    host = urlparse(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"run_load only talks to a server on this machine (loopback), got {url!r}")
    if not prompts:
        raise ValueError("prompts must not be empty")
    result: dict = {}

    def thread_main():
        try:
            result["report"] = asyncio.run(_run(url.rstrip("/"), clients, duration_s, max_requests, list(prompts),
                                                max_tokens, temperature, ignore_eos, model, timeout_s))
        except BaseException as err:  # re-raised in the caller's thread
            result["error"] = err

    worker = threading.Thread(target=thread_main, name="llmlab-loadgen")
    worker.start()
    worker.join()
    if "error" in result:
        raise result["error"]
    return result["report"]


async def _run(url, clients, duration_s, max_requests, prompts, max_tokens, temperature, ignore_eos, model,
               timeout_s):
    import httpx

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=timeout_s, limits=limits) as http:
        if model is None:
            answer = await http.get("/v1/models")
            answer.raise_for_status()
            model = answer.json()["data"][0]["id"]
        report = LoadReport(clients=clients, duration_s=0.0)
        started = time.perf_counter()
        deadline = None if duration_s is None else started + duration_s
        counter = iter(range(max_requests if max_requests is not None else 1 << 62))

        async def client(k: int):
            while deadline is None or time.perf_counter() < deadline:
                n = next(counter, None)
                if n is None:
                    return
                body = {"model": model, "messages": [{"role": "user", "content": prompts[n % len(prompts)]}],
                        "max_tokens": max_tokens, "temperature": temperature, "stream": True,
                        "stream_options": {"include_usage": True}, "ignore_eos": ignore_eos}
                await _one_request(http, body, report)

        await asyncio.gather(*(client(k) for k in range(clients)))
        report.duration_s = time.perf_counter() - started
        return report


async def _one_request(http, body: dict, report: LoadReport) -> None:
    t0 = time.perf_counter()
    arrivals, tokens, error = [], 0, None
    try:
        async with http.stream("POST", "/v1/chat/completions", json=body) as answer:
            if answer.status_code != 200:
                error = f"HTTP {answer.status_code}: {(await answer.aread())[:200]!r}"
            else:
                async for line in answer.aiter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    event = json.loads(line[6:])
                    if "error" in event:
                        error = event["error"].get("message", "error event")
                        continue
                    if event.get("usage"):
                        tokens = event["usage"]["completion_tokens"]
                    for choice in event.get("choices", []):
                        if choice.get("delta", {}).get("content"):
                            arrivals.append(time.perf_counter())
    except Exception as err:  # a failed request is counted, never fatal to the run
        error = f"{type(err).__name__}: {err}"
    end = time.perf_counter()
    report.requests += 1
    if error is not None:
        report.failures += 1
        if len(report.errors) < 5:
            report.errors.append(error)
        return
    report.output_tokens += tokens
    report.e2e_s.append(end - t0)
    if arrivals:
        report.ttft_s.append(arrivals[0] - t0)
        report.itl_s.extend(b - a for a, b in zip(arrivals, arrivals[1:]))
