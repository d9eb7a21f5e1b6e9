"""Training a small language model, written to be read top to bottom.

The loop is the one every LLM is trained with, only smaller:

1. **Data.** The text becomes one long stream of token ids (``encode_documents``). A batch is
   ``batch_size`` random windows of ``seq_len + 1`` tokens: the model reads the first ``seq_len``
   and must predict each next one (``get_batch``). For chat fine-tuning the data are instead rows
   of whole conversations with a loss mask (``build_sft_examples``).
2. **Loss.** Cross-entropy of the correct next token, averaged over the positions that count
   (all of them, or only the assistant's answer when a ``loss_mask`` is given).
3. **Update.** AdamW with a learning rate that warms up linearly and then decays along a cosine
   (``lr_at``), gradient clipping, and weight decay on the matrices only.
4. **Validation.** Every ``eval_every`` steps the mean loss on held-out text (``evaluate``). The
   weights with the lowest validation loss are kept: with little data a model starts to memorise
   the training text after a while, and validation is where that shows (early stopping).

Everything random (the initial weights are the caller's, the batches and dropout are drawn here)
comes from ``seed``, so the same call on the same machine gives the same run.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from llmlab.arguments import check_int

__all__ = [
    "build_sft_examples",
    "encode_documents",
    "evaluate",
    "get_batch",
    "lr_at",
    "make_optimizer",
    "masked_mean",
    "progress_bar",
    "stream_rows",
    "token_losses",
    "train",
]


# ----------------------------------------------------------------------------------------------
# Argument checks
# ----------------------------------------------------------------------------------------------


def _check_number(name: str, value, minimum: float = 0.0, allow_equal: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError(f"{name} must be a finite number, got {value!r}")
    if value < minimum or (value == minimum and not allow_equal):
        raise ValueError(f"{name} must be {'>=' if allow_equal else '>'} {minimum}, got {value!r}")
    return float(value)


def _as_ids(name: str, ids) -> torch.Tensor:
    """A 1-D stream or 2-D rows of token ids as a LongTensor."""
    if isinstance(ids, torch.Tensor):
        if ids.dtype.is_floating_point or ids.dtype == torch.bool:
            raise TypeError(f"{name} must hold integer token ids, got dtype {ids.dtype}")
        ids = ids.long()
    elif isinstance(ids, Sequence):
        ids = torch.tensor(list(ids), dtype=torch.long)
    else:
        raise TypeError(f"{name} must be a torch.Tensor or a list of token ids, got {type(ids).__name__}")
    if ids.dim() not in (1, 2):
        raise ValueError(f"{name} must be a 1-D stream or 2-D rows of token ids, got shape {tuple(ids.shape)}")
    return ids


def _as_mask(name: str, mask, like: torch.Tensor) -> torch.Tensor | None:
    if mask is None:
        return None
    mask = torch.as_tensor(mask)
    if mask.shape != like.shape:
        raise ValueError(f"{name} must have the shape of its token ids {tuple(like.shape)}, got {tuple(mask.shape)}")
    return mask.to(torch.float32)


# ----------------------------------------------------------------------------------------------
# 1. Data
# ----------------------------------------------------------------------------------------------


def encode_documents(documents: Iterable[str], tokenizer, *, add_bos: bool = True, add_eos: bool = True) -> torch.Tensor:
    """Documents -> one stream of ids, each document as ``<|bos|> text <|eos|>``.

    The markers tell the model where a text starts and ends, so it can begin a new text after
    ``<|bos|>`` and learn to stop with ``<|eos|>``.
    """
    if isinstance(documents, str):
        raise TypeError("documents must be a list of strings, got one string (wrap it in a list)")
    ids: list[int] = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, str):
            raise TypeError(f"documents[{i}] must be a str, got {type(doc).__name__}")
        if add_bos:
            ids.append(tokenizer.bos_id)
        ids.extend(tokenizer.encode(doc))
        if add_eos:
            ids.append(tokenizer.eos_id)
    if not ids:
        raise ValueError("documents is empty: nothing to encode")
    return torch.tensor(ids, dtype=torch.long)


def get_batch(
    data: torch.Tensor,
    batch_size: int,
    seq_len: int,
    generator: torch.Generator | None = None,
    loss_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """A random batch ``(inputs, targets, target_mask)``, each ``[batch_size, seq_len]``.

    ``data`` is either a 1-D stream (random windows of ``seq_len + 1`` tokens; ``targets`` is
    ``inputs`` shifted by one) or 2-D rows of ``seq_len + 1`` tokens (random rows). ``target_mask``
    says which targets count in the loss (``None``: all of them).
    """
    data = _as_ids("data", data)
    check_int("batch_size", batch_size)
    check_int("seq_len", seq_len)
    mask = _as_mask("loss_mask", loss_mask, data)
    if data.dim() == 1:
        if data.numel() < seq_len + 1:
            raise ValueError(f"the stream has {data.numel()} tokens, fewer than seq_len + 1 = {seq_len + 1}")
        starts = torch.randint(0, data.numel() - seq_len, (batch_size,), generator=generator)
        index = starts[:, None] + torch.arange(seq_len + 1)[None, :]  # [batch, seq_len + 1]
    else:
        if data.shape[1] != seq_len + 1:
            raise ValueError(f"rows must have seq_len + 1 = {seq_len + 1} tokens, got rows of {data.shape[1]}")
        rows = torch.randint(0, data.shape[0], (batch_size,), generator=generator)
        index = None
    chunk = data[index] if index is not None else data[rows]
    chunk_mask = None if mask is None else (mask[index] if index is not None else mask[rows])
    # Position t reads tokens 0..t and is scored on token t + 1.
    return chunk[:, :-1], chunk[:, 1:], None if chunk_mask is None else chunk_mask[:, 1:]


def stream_rows(ids, n_rows: int, seq_len: int, *, seed: int = 0) -> torch.Tensor:
    """``n_rows`` random windows of ``seq_len + 1`` tokens of a stream, as rows ``[n_rows, seq_len + 1]``.

    Used to mix plain text into fine-tuning rows ("replay"): a model fine-tuned only on chat
    forgets part of what it knew about plain text; a share of pretraining text keeps it in practice.
    """
    ids = _as_ids("ids", ids)
    if ids.dim() != 1:
        raise ValueError(f"ids must be a 1-D stream, got shape {tuple(ids.shape)}")
    check_int("n_rows", n_rows, minimum=0)
    check_int("seq_len", seq_len)
    if ids.numel() < seq_len + 1:
        raise ValueError(f"the stream has {ids.numel()} tokens, fewer than seq_len + 1 = {seq_len + 1}")
    starts = torch.randint(0, ids.numel() - seq_len, (n_rows,), generator=torch.Generator().manual_seed(seed))
    return ids[starts[:, None] + torch.arange(seq_len + 1)[None, :]]


def build_sft_examples(
    conversations: Iterable,
    tokenizer,
    *,
    seq_len: int,
    style: str = "chatml",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Chat conversations -> ``(rows, loss_mask)`` for supervised fine-tuning, both ``[n_rows, seq_len + 1]``.

    Each conversation is rendered with the ``llmlab.chat`` template ``style``; ``loss_mask`` is 1
    on the assistant's answer tokens and on the marker that closes them, 0 on everything else
    (system and user text, role markers, padding): the model learns to *answer*, not to write
    questions. Conversations are packed whole, one after another, into rows of ``seq_len + 1``
    tokens (each starts with its own ``<|bos|>``) and the rest of a row is padded with
    ``<|pad|>``. A conversation longer than a row is cut (with a warning).
    """
    from llmlab.chat import encode_chat  # lazy: the trainer itself does not need chat templates

    check_int("seq_len", seq_len)
    pad = tokenizer.pad_id
    if pad is None:
        raise ValueError("the tokenizer has no <|pad|> token, needed to fill the rows")
    width = seq_len + 1
    rows: list[list[int]] = []
    masks: list[list[int]] = []
    row: list[int] = []
    row_mask: list[int] = []
    n_cut = 0
    for conversation in conversations:
        ids, mask = encode_chat(conversation, tokenizer, style, return_assistant_mask=True)
        if len(ids) > width:
            ids, mask, n_cut = ids[:width], mask[:width], n_cut + 1
        if len(row) + len(ids) > width:  # does not fit: close this row
            rows.append(row + [pad] * (width - len(row)))
            masks.append(row_mask + [0] * (width - len(row)))
            row, row_mask = [], []
        row += ids
        row_mask += mask
    if row:
        rows.append(row + [pad] * (width - len(row)))
        masks.append(row_mask + [0] * (width - len(row)))
    if not rows:
        raise ValueError("conversations is empty")
    if n_cut:
        warnings.warn(f"{n_cut} conversations were longer than {width} tokens and were cut", stacklevel=2)
    return torch.tensor(rows, dtype=torch.long), torch.tensor(masks, dtype=torch.long)


# ----------------------------------------------------------------------------------------------
# 2. Loss and evaluation
# ----------------------------------------------------------------------------------------------


def token_losses(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of every target, ``[batch, seq]`` (nats)."""
    logits = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none").view_as(targets)


def masked_mean(losses: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    if mask is None:
        return losses.mean()
    return (losses * mask).sum() / mask.sum().clamp(min=1.0)


@torch.no_grad()
def evaluate(
    model: nn.Module,
    ids,
    *,
    seq_len: int | None = None,
    batch_size: int = 16,
    loss_mask=None,
    max_tokens: int | None = None,
) -> float:
    """Mean negative log-likelihood per token (nats) of ``ids``; ``exp`` of it is the perplexity.

    A 1-D stream is cut into consecutive windows of ``seq_len`` (default: the model's
    ``max_seq_len``) that overlap by one token, so that every token after the first is predicted
    exactly once (the same positions a bigram model would score). 2-D rows (from
    ``build_sft_examples``) are scored row by row. With ``loss_mask`` only the positions marked 1
    count. ``max_tokens`` limits a stream to its first tokens (for quick checks during training).
    The model is put in eval mode (no dropout) and back in the mode it was in.
    """
    ids = _as_ids("ids", ids)
    mask = _as_mask("loss_mask", loss_mask, ids)
    if seq_len is None:
        seq_len = model.config.max_seq_len
    check_int("seq_len", seq_len)
    check_int("batch_size", batch_size)
    if max_tokens is not None:
        check_int("max_tokens", max_tokens, minimum=2)
    if ids.dim() == 1:
        if max_tokens is not None:
            ids = ids[:max_tokens]
            mask = None if mask is None else mask[:max_tokens]
        if ids.numel() < 2:
            raise ValueError("need at least 2 tokens to score one prediction")
        # Window i reads tokens [i*L, i*L + L) and is scored on [i*L + 1, i*L + L + 1).
        starts = list(range(0, ids.numel() - 1, seq_len))
        windows = [(ids[s : s + seq_len + 1], None if mask is None else mask[s : s + seq_len + 1]) for s in starts]
    else:
        if max_tokens is not None:
            keep = max(1, max_tokens // ids.shape[1])
            ids = ids[:keep]
            mask = None if mask is None else mask[:keep]
        windows = [(row, None if mask is None else mask[i]) for i, row in enumerate(ids)]

    was_training = model.training
    model.eval()
    total, count = 0.0, 0.0
    try:
        # Windows of equal length go through the model together.
        by_length: dict[int, list] = {}
        for window in windows:
            by_length.setdefault(window[0].numel(), []).append(window)
        for group in by_length.values():
            for i in range(0, len(group), batch_size):
                chunk = torch.stack([w for w, _ in group[i : i + batch_size]])
                losses = token_losses(model, chunk[:, :-1], chunk[:, 1:]).double()
                if mask is None:
                    total += float(losses.sum())
                    count += losses.numel()
                else:
                    m = torch.stack([mm for _, mm in group[i : i + batch_size]])[:, 1:].double()
                    total += float((losses * m).sum())
                    count += float(m.sum())
    finally:
        model.train(was_training)
    if count == 0:
        raise ValueError("loss_mask selects no token to score")
    return total / count


# ----------------------------------------------------------------------------------------------
# 3. Learning rate and progress
# ----------------------------------------------------------------------------------------------


def lr_at(step: int, *, lr: float, warmup: int, steps: int, min_lr_ratio: float = 0.1) -> float:
    """Learning rate at ``step`` (0-based): linear warm-up to ``lr``, then a cosine down to ``lr * min_lr_ratio``.

    The warm-up avoids large, badly aimed first updates while AdamW's moment estimates are still
    noise; the slow decay lets the last steps settle into a minimum instead of jumping around it.
    """
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, steps - warmup))
    return lr * (min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


class _PrintProgress:
    """Fallback progress report when tqdm is not installed: one printed line per evaluation."""

    def __init__(self, total: int):
        self.total, self.n, self.start = total, 0, time.perf_counter()

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix_str(self, text: str) -> None:
        elapsed = time.perf_counter() - self.start
        print(f"step {self.n}/{self.total}  {text}  ({elapsed:.0f} s)", file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


class _NoProgress(_PrintProgress):
    def set_postfix_str(self, text: str) -> None:
        pass


def progress_bar(total: int, enabled: bool, desc: str):
    """A tqdm bar (or printed lines without tqdm, or nothing when not ``enabled``) with ``update`` / ``close``."""
    if not enabled:
        return _NoProgress(total)
    try:
        from tqdm.auto import tqdm  # optional dependency
    except ImportError:
        return _PrintProgress(total)
    return tqdm(total=total, desc=desc, leave=True, dynamic_ncols=True)


# ----------------------------------------------------------------------------------------------
# 4. The training loop
# ----------------------------------------------------------------------------------------------


def make_optimizer(model: nn.Module, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW over the trainable parameters, ``weight_decay`` on the matrices only."""
    # Weight decay pulls weights towards 0; it is meant for the matrices, not for the gains of the
    # norms (pulling those to 0 would switch layers off).
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8)


def train(
    model: nn.Module,
    train_ids,
    val_ids,
    *,
    steps: int,
    batch_size: int = 16,
    seq_len: int = 128,
    lr: float = 1e-3,
    warmup: int = 100,
    weight_decay: float = 0.1,
    grad_clip: float | None = 1.0,
    eval_every: int = 100,
    eval_tokens: int | None = None,
    seed: int = 0,
    loss_mask=None,
    val_loss_mask=None,
    patience: int | None = None,
    min_lr_ratio: float = 0.1,
    restore_best: bool = True,
    progress: bool = True,
    desc: str = "train",
    loss_fn: Callable | None = None,
) -> dict:
    """Train ``model`` in place and return its history (a dict of plain lists and numbers).

    - ``train_ids`` / ``val_ids``: 1-D streams of ids (random windows of ``seq_len + 1``) or 2-D
      rows of ``seq_len + 1`` ids (``build_sft_examples``). ``loss_mask`` / ``val_loss_mask`` (same
      shapes, 0/1) restrict the loss to the positions marked 1.
    - AdamW (``weight_decay`` on matrices only), ``lr`` with ``warmup`` steps and a cosine decay to
      ``lr * min_lr_ratio``, gradients clipped to norm ``grad_clip`` (``None``: no clipping).
    - Every ``eval_every`` steps (and at the end) the validation loss on the first ``eval_tokens``
      tokens of ``val_ids`` (``None``: all). With ``restore_best`` the weights of the best
      evaluation are put back at the end; ``patience`` stops after that many evaluations in a row
      without improvement (``None``: never stop early).
    - ``loss_fn(model, inputs, targets, mask) -> loss`` replaces the training loss (default: the mean
      cross-entropy of the next tokens over ``mask``); ``llmlab.distill.distill_train`` passes the
      distillation loss. The validation loss stays the plain cross-entropy.
    - ``seed`` fixes the batches and dropout: the same call on the same machine (same torch
      version and number of threads) repeats the same run.

    History keys: ``train_loss`` and ``lr`` (one per step), ``eval_step``, ``val_loss`` and
    ``train_loss_avg`` (the mean training loss since the previous evaluation), ``best_step``,
    ``best_val_loss``, ``steps_run``, ``stopped_early``, ``tokens_seen``, ``seconds``.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if loss_fn is not None and not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable(model, inputs, targets, mask) -> loss, got {type(loss_fn).__name__}")
    train_ids = _as_ids("train_ids", train_ids)
    val_ids = _as_ids("val_ids", val_ids)
    train_mask = _as_mask("loss_mask", loss_mask, train_ids)
    val_mask = _as_mask("val_loss_mask", val_loss_mask, val_ids)
    check_int("steps", steps)
    check_int("batch_size", batch_size)
    check_int("seq_len", seq_len)
    check_int("warmup", warmup, minimum=0)
    check_int("eval_every", eval_every)
    check_int("seed", seed, minimum=0)
    _check_number("lr", lr, 0.0, allow_equal=False)
    _check_number("weight_decay", weight_decay)
    _check_number("min_lr_ratio", min_lr_ratio)
    if grad_clip is not None:
        _check_number("grad_clip", grad_clip, 0.0, allow_equal=False)
    if eval_tokens is not None:
        check_int("eval_tokens", eval_tokens, minimum=2)
    if patience is not None:
        check_int("patience", patience)
    max_len = getattr(getattr(model, "config", None), "max_seq_len", None)
    if max_len is not None and seq_len > max_len:
        raise ValueError(f"seq_len={seq_len} exceeds the model's max_seq_len={max_len}")

    torch.manual_seed(seed)  # dropout masks
    batches = torch.Generator().manual_seed(seed)  # which windows are read, independent of dropout
    optimizer = make_optimizer(model, lr, weight_decay)

    def validate() -> float:
        return evaluate(model, val_ids, seq_len=seq_len, batch_size=batch_size, loss_mask=val_mask, max_tokens=eval_tokens)

    history: dict = {
        "train_loss": [], "lr": [], "eval_step": [], "val_loss": [], "train_loss_avg": [],
        "best_step": 0, "best_val_loss": math.inf, "steps_run": 0, "stopped_early": False,
        "tokens_seen": 0, "seconds": 0.0,
    }
    best_state = None
    bad_evals = 0
    start = time.perf_counter()
    bar = progress_bar(steps, progress, desc)
    model.train()
    try:
        for step in range(steps):
            rate = lr_at(step, lr=lr, warmup=warmup, steps=steps, min_lr_ratio=min_lr_ratio)
            for group in optimizer.param_groups:
                group["lr"] = rate
            inputs, targets, mask = get_batch(train_ids, batch_size, seq_len, batches, train_mask)
            if loss_fn is None:
                loss = masked_mean(token_losses(model, inputs, targets), mask)
            else:
                loss = loss_fn(model, inputs, targets, mask)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if grad_clip is not None:
                nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()

            history["train_loss"].append(loss.item())
            history["lr"].append(rate)
            history["tokens_seen"] += int(inputs.numel())
            history["steps_run"] = step + 1
            bar.update(1)

            if (step + 1) % eval_every == 0 or step + 1 == steps:
                val = validate()
                since = history["eval_step"][-1] if history["eval_step"] else 0
                avg = sum(history["train_loss"][since:]) / (step + 1 - since)
                history["eval_step"].append(step + 1)
                history["val_loss"].append(val)
                history["train_loss_avg"].append(avg)
                if val < history["best_val_loss"]:
                    history["best_val_loss"], history["best_step"] = val, step + 1
                    best_state = {k: v.detach().clone() for k, v in model.state_dict().items()} if restore_best else None
                    bad_evals = 0
                else:
                    bad_evals += 1
                bar.set_postfix_str(f"train {avg:.3f}  val {val:.3f}  best {history['best_val_loss']:.3f}@{history['best_step']}")
                if patience is not None and bad_evals >= patience:
                    history["stopped_early"] = True
                    break
    finally:
        bar.close()
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    history["seconds"] = time.perf_counter() - start
    return history
