"""The decode loop with its three stop reasons: the EOS token, a stop sequence, the token budget."""

from __future__ import annotations

STOP_REASONS = ("eos", "stop_sequence", "max_tokens")


def generate_with_stops(next_token, prompt_ids, max_tokens: int, eos_id: int | None = None,
                        stop_sequences=()) -> dict:
    """The decode loop with explicit stop conditions (guide TG.1 step 6, G-M7).

    ``next_token(ids) -> int`` picks the next token after ``ids`` (the prompt plus what was generated).
    Returns ``{"ids": generated ids, "stop_reason": "eos" | "stop_sequence" | "max_tokens"}``:

    - the EOS token ends the answer and is not part of it;
    - a stop sequence (a list of ids) ends it when the *generated* ids end with it, and is removed,
      like the ``stop`` parameter of OpenAI-style APIs;
    - at most ``max_tokens`` tokens are generated (``max_tokens = 0`` generates nothing).
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValueError(f"max_tokens must be an int >= 0, got {max_tokens!r}")
    stops = [list(s) for s in stop_sequences]
    if any(len(s) == 0 for s in stops):
        raise ValueError("a stop sequence must hold at least one token id")
    context, generated = list(prompt_ids), []
    while len(generated) < max_tokens:
        token = int(next_token(context + generated))
        if eos_id is not None and token == eos_id:
            return {"ids": generated, "stop_reason": "eos"}
        generated.append(token)
        for stop in stops:
            if generated[-len(stop):] == stop:
                return {"ids": generated[:-len(stop)], "stop_reason": "stop_sequence"}
    return {"ids": generated, "stop_reason": "max_tokens"}
