"""The block allocator of the paged KV cache: a free list, reference counts and prefix sharing.

The engine's KV memory is cut into ``num_blocks`` blocks of ``block_size`` token slots (vLLM's
default is 16). A sequence owns a *block table*, the list of its block ids in order: token ``i``
lives in block ``table[i // block_size]`` at offset ``i % block_size``. Blocks are taken from the
free list when a sequence needs room and given back when it ends, so a sequence never reserves
more than one partly filled block: the waste of reserving ``max_seq_len`` slots per sequence
(chapter 07, "fragmentación interna") disappears.

Sharing. A block can belong to several block tables at once; its *reference count* says how many.
Two requests whose prompts start with the same tokens (a system prompt, a few-shot preamble) can
share the blocks of that prefix: the keys and values of a token depend only on the tokens before it,
so they are identical. A full block is identified by its tokens *and* by the block before it (a
chain), so equal blocks after different prefixes never match. A shared block must not be written
in place: ``ensure_writable`` gives the writer its own copy first (copy-on-write).

Prefix caching. When the last owner frees a block whose content is known, the block goes back to
the pool but keeps its content and stays findable; the next request with the same prefix takes it
back instead of recomputing it. Such blocks count as free: ``allocate`` reuses them, oldest first,
only when no blank block is left.

``BlockAllocator`` knows nothing about requests or tensors; ``llmlab.serve.scheduler`` decides who
gets blocks and ``llmlab.serve.paged_attention`` stores the keys and values in them.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, deque
from collections.abc import Sequence

__all__ = ["BlockAllocator", "OutOfBlocks", "blocks_needed", "prefix_cache_savings"]


class OutOfBlocks(RuntimeError):
    """No free block is left (the scheduler preempts a request or waits)."""


def blocks_needed(n_tokens: int, block_size: int) -> int:
    """Blocks that hold ``n_tokens`` tokens: ``ceil(n_tokens / block_size)``."""
    return -(-n_tokens // block_size)


class BlockAllocator:
    """``num_blocks`` blocks of ``block_size`` slots: allocate, share, free, find by prefix.

    >>> alloc = BlockAllocator(num_blocks=4, block_size=16)
    >>> a = alloc.allocate(); _ = alloc.share(a); alloc.refcount(a)
    2
    >>> alloc.free(a); alloc.free(a); alloc.num_free
    4
    """

    def __init__(self, num_blocks: int, block_size: int = 16, *, prefix_caching: bool = True):
        for name, value in (("num_blocks", num_blocks), ("block_size", block_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.prefix_caching = prefix_caching
        self._refcount = [0] * num_blocks
        self._blank: deque[int] = deque(range(num_blocks))  # free, nothing worth keeping
        self._cached: OrderedDict[int, None] = OrderedDict()  # free, content findable; oldest first
        # The prefix cache. A *content id* names one exact token prefix: the key of a full block is
        # (content id of the prefix before it, its tokens), and equal keys get the same content id.
        # Ids are never reused, so a key can never match a block whose prefix was evicted meanwhile.
        self._key_cid: dict[tuple[int, tuple[int, ...]], int] = {}
        self._cid_holders: dict[int, int] = {}  # blocks holding each content id
        self._block_key: dict[int, tuple[int, tuple[int, ...]]] = {}
        self._block_cid: dict[int, int] = {}
        self._findable: dict[tuple[int, tuple[int, ...]], int] = {}  # key -> the block lookups return
        self._next_cid = itertools.count(1)
        self.copies_on_write = 0

    # -- counting ----------------------------------------------------------------------------------

    def refcount(self, block: int) -> int:
        return self._refcount[self._check(block)]

    @property
    def num_free(self) -> int:
        """Blocks ``allocate`` can hand out (blank ones and cached ones)."""
        return len(self._blank) + len(self._cached)

    @property
    def num_used(self) -> int:
        return self.num_blocks - self.num_free

    @property
    def num_cached(self) -> int:
        """Free blocks that still hold a findable prefix."""
        return len(self._cached)

    @property
    def num_shared(self) -> int:
        return sum(1 for r in self._refcount if r > 1)

    # -- allocate, share, free ---------------------------------------------------------------------

    def allocate(self) -> int:
        """A block with reference count 1; a blank one if possible, else the oldest cached one."""
        if self._blank:
            block = self._blank.popleft()
        elif self._cached:
            block, _ = self._cached.popitem(last=False)
            self._forget(block)
        else:
            raise OutOfBlocks(f"all {self.num_blocks} KV blocks are in use")
        self._refcount[block] = 1
        return block

    def share(self, block: int) -> int:
        """One more owner for ``block`` (a fork, or a block found by ``find_prefix``); returns it."""
        self._check(block)
        if self._refcount[block] == 0:
            if block not in self._cached:
                raise ValueError(f"block {block} is free and holds nothing: allocate it instead")
            del self._cached[block]
        self._refcount[block] += 1
        return block

    def free(self, block: int) -> None:
        """One owner fewer; at zero the block returns to the pool (a findable prefix stays findable)."""
        self._check(block)
        if self._refcount[block] == 0:
            raise ValueError(f"block {block} is already free (double free)")
        self._refcount[block] -= 1
        if self._refcount[block] == 0:
            key = self._block_key.get(block)
            if key is not None and self._findable.get(key) == block:
                self._cached[block] = None  # the newest at the end: evicted last
            else:
                self._forget(block)
                self._blank.append(block)

    def free_all(self, blocks: Sequence[int]) -> None:
        for block in reversed(blocks):  # the tail first: evicted before the prefix it extends
            self.free(block)

    def ensure_writable(self, block: int) -> tuple[int, int | None]:
        """Copy-on-write: ``(block, None)`` if the caller may write in place, else ``(new_block, block)``.

        In the second case the caller must copy the keys and values of ``block`` into ``new_block``
        and use ``new_block`` from now on; its reference to ``block`` has been dropped. A block is
        copied when others share it, and also when it is in the prefix cache (its content must stay
        what the cache promises), unless no block is left: then the cache entry is dropped instead.
        """
        self._check(block)
        if self._refcount[block] == 1 and block not in self._block_key:
            return block, None
        try:
            new_block = self.allocate()
        except OutOfBlocks:
            if self._refcount[block] > 1:
                raise
            self._forget(block)
            return block, None
        self.free(block)
        self.copies_on_write += 1
        return new_block, block

    # -- the prefix cache --------------------------------------------------------------------------

    def _key(self, previous_block: int | None, tokens: Sequence[int]) -> tuple[int, tuple[int, ...]] | None:
        if len(tokens) != self.block_size:
            raise ValueError(f"only full blocks ({self.block_size} tokens) are cached, got {len(tokens)}")
        parent = 0 if previous_block is None else self._block_cid.get(previous_block)
        return None if parent is None else (parent, tuple(tokens))

    def find_prefix(self, token_ids: Sequence[int]) -> list[int]:
        """Blocks holding the longest cached prefix of ``token_ids``, in order (no reference taken:
        call ``share`` on each block to use it)."""
        found: list[int] = []
        if not self.prefix_caching:
            return found
        bs = self.block_size
        for i in range(len(token_ids) // bs):
            key = self._key(found[-1] if found else None, token_ids[i * bs:(i + 1) * bs])
            block = self._findable.get(key) if key is not None else None
            if block is None:
                break
            found.append(block)
        return found

    def register(self, block: int, previous_block: int | None, tokens: Sequence[int]) -> None:
        """Declare that ``block`` is full and holds ``tokens`` after ``previous_block`` (None: first)."""
        self._check(block)
        if not self.prefix_caching or block in self._block_key:
            return
        key = self._key(previous_block, tokens)
        if key is None:
            return  # the block before it is not registered: no content id to chain from
        cid = self._key_cid.get(key)
        if cid is None:
            cid = self._key_cid[key] = next(self._next_cid)
        self._cid_holders[cid] = self._cid_holders.get(cid, 0) + 1
        self._block_key[block], self._block_cid[block] = key, cid
        self._findable.setdefault(key, block)  # a second block with the same content is not findable

    def _forget(self, block: int) -> None:
        key = self._block_key.pop(block, None)
        if key is None:
            return
        cid = self._block_cid.pop(block)
        if self._findable.get(key) == block:
            del self._findable[key]
        self._cid_holders[cid] -= 1
        if self._cid_holders[cid] == 0:
            del self._cid_holders[cid], self._key_cid[key]

    def _check(self, block: int) -> int:
        if isinstance(block, bool) or not isinstance(block, int) or not 0 <= block < self.num_blocks:
            raise IndexError(f"block must be an int in [0, {self.num_blocks}), got {block!r}")
        return block

    def __repr__(self) -> str:
        return (f"BlockAllocator(num_blocks={self.num_blocks}, block_size={self.block_size}, used={self.num_used}, "
                f"free={self.num_free}, cached={self.num_cached})")


def prefix_cache_savings(prompts, block_size: int = 16) -> list[int]:
    """Prompt tokens each request takes from the prefix cache instead of computing them in its prefill.

    ``prompts`` (sequences of token ids) arrive one after another at an engine whose cache starts empty
    and evicts nothing; each prompt's full blocks are cached after its prefill (the answers are not
    counted). Block ``k`` of a prompt is a hit when an earlier prompt had the same first
    ``(k + 1) * block_size`` tokens; hits are taken from the start up to the first miss. The last prompt
    token is always computed (its logits give the first answer token), as ``Scheduler`` does: a prompt
    covered entirely saves ``len(prompt) - 1``. Returns one Python int per prompt. Raises ``ValueError``
    for a ``block_size`` that is not an int >= 1 or an empty prompt.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")
    prompts = [[int(t) for t in p] for p in prompts]
    if any(not p for p in prompts):
        raise ValueError("every prompt needs at least one token")
    allocator = BlockAllocator(max(1, sum(len(p) // block_size for p in prompts)), block_size)
    saved = []
    for p in prompts:
        found = allocator.find_prefix(p)
        saved.append(min(len(found) * block_size, len(p) - 1))
        previous = found[-1] if found else None
        for k in range(len(found), len(p) // block_size):
            block = allocator.allocate()
            allocator.register(block, previous, p[k * block_size:(k + 1) * block_size])
            previous = block
    return saved
