"""llmlab.serve.blocks: the free list, reference counts, the prefix cache and copy-on-write."""

import pytest

from llmlab.serve.blocks import BlockAllocator, OutOfBlocks, blocks_needed


def test_blocks_needed_rounds_up():
    assert [blocks_needed(n, 16) for n in (0, 1, 15, 16, 17, 32, 33)] == [0, 1, 1, 1, 2, 2, 3]


def test_allocate_until_empty_then_out_of_blocks_and_free_returns_them():
    alloc = BlockAllocator(num_blocks=3, block_size=4)
    blocks = [alloc.allocate() for _ in range(3)]
    assert sorted(blocks) == [0, 1, 2] and alloc.num_free == 0 and alloc.num_used == 3
    with pytest.raises(OutOfBlocks):
        alloc.allocate()
    for b in blocks:
        alloc.free(b)
    assert alloc.num_free == 3 and alloc.num_used == 0


def test_reference_counts_keep_a_shared_block_until_its_last_owner_frees_it():
    alloc = BlockAllocator(num_blocks=2, block_size=4)
    b = alloc.allocate()
    alloc.share(b)
    assert alloc.refcount(b) == 2 and alloc.num_shared == 1
    alloc.free(b)
    assert alloc.refcount(b) == 1 and alloc.num_used == 1  # still owned once
    alloc.free(b)
    assert alloc.num_used == 0
    with pytest.raises(ValueError, match="double free"):
        alloc.free(b)
    with pytest.raises(ValueError, match="allocate it instead"):
        alloc.share(b)  # a blank free block cannot be shared


@pytest.mark.parametrize("bad", [-1, 2, 1.0, True, "0"])
def test_block_ids_are_checked(bad):
    with pytest.raises(IndexError):
        BlockAllocator(num_blocks=2, block_size=4).free(bad)


@pytest.mark.parametrize("kwargs", [dict(num_blocks=0), dict(num_blocks=2, block_size=0), dict(num_blocks=2.0)])
def test_sizes_are_checked(kwargs):
    with pytest.raises(ValueError):
        BlockAllocator(**kwargs)


def _register_chain(alloc, tokens):
    """Allocate and register one block per full block of ``tokens``; return the block ids."""
    bs, blocks = alloc.block_size, []
    for i in range(len(tokens) // bs):
        b = alloc.allocate()
        alloc.register(b, blocks[-1] if blocks else None, tokens[i * bs:(i + 1) * bs])
        blocks.append(b)
    return blocks


def test_find_prefix_returns_the_longest_cached_chain_of_full_blocks():
    alloc = BlockAllocator(num_blocks=8, block_size=4)
    prompt = list(range(10, 22))  # 3 full blocks
    blocks = _register_chain(alloc, prompt)
    assert alloc.find_prefix(prompt) == blocks
    assert alloc.find_prefix(prompt + [99, 98]) == blocks  # a partial last block is never matched
    assert alloc.find_prefix(prompt[:8] + [0, 0, 0, 0]) == blocks[:2]  # diverges in the third block
    assert alloc.find_prefix([0] + prompt[1:]) == []  # diverges in the first block
    assert alloc.find_prefix(prompt[:3]) == []  # shorter than a block


def test_the_same_tokens_after_a_different_prefix_do_not_match():
    alloc = BlockAllocator(num_blocks=8, block_size=2)
    _register_chain(alloc, [1, 2, 3, 4])
    # block [3, 4] exists, but after [1, 2]; after [5, 6] it is another block of keys and values
    assert alloc.find_prefix([5, 6, 3, 4]) == []
    assert len(alloc.find_prefix([1, 2, 3, 4])) == 2


def test_freed_blocks_stay_findable_until_reallocated_oldest_first():
    alloc = BlockAllocator(num_blocks=3, block_size=2)
    a = _register_chain(alloc, [1, 2])
    b = _register_chain(alloc, [7, 8])
    alloc.free_all(a)
    alloc.free_all(b)
    assert alloc.num_free == 3 and alloc.num_cached == 2
    assert alloc.find_prefix([1, 2]) == a and alloc.find_prefix([7, 8]) == b
    alloc.allocate()  # the blank block goes first
    assert alloc.num_cached == 2
    alloc.allocate()  # then the oldest cached one: [1, 2]
    assert alloc.find_prefix([1, 2]) == [] and alloc.find_prefix([7, 8]) == b
    # a cached block is revived by share(), and leaves the free pool
    alloc.share(b[0])
    assert alloc.refcount(b[0]) == 1 and alloc.num_free == 0


def test_evicting_a_prefix_makes_its_continuations_unfindable():
    alloc = BlockAllocator(num_blocks=3, block_size=2)
    first, second = _register_chain(alloc, [1, 2, 3, 4])
    alloc.free(first)  # cached first: the oldest
    alloc.free(second)
    alloc.allocate()  # the blank block
    evicted = alloc.allocate()  # evicts [1, 2]; [3, 4] (after it) is still cached
    assert evicted == first and alloc.num_cached == 1
    assert alloc.find_prefix([1, 2, 3, 4]) == []
    # [1, 2] computed again in the same block id: its old continuation must not be trusted blindly,
    # the new block has a new content id, so [3, 4] is found only once registered after it
    alloc.register(evicted, None, [1, 2])
    assert alloc.find_prefix([1, 2, 3, 4]) == [evicted]


def test_copy_on_write_gives_a_shared_block_a_private_copy():
    alloc = BlockAllocator(num_blocks=3, block_size=2)
    b = alloc.allocate()
    alloc.share(b)
    new, old = alloc.ensure_writable(b)
    assert old == b and new != b
    assert alloc.refcount(b) == 1 and alloc.refcount(new) == 1 and alloc.copies_on_write == 1
    same, none = alloc.ensure_writable(new)  # sole owner: write in place
    assert (same, none) == (new, None)


def test_writing_a_cached_block_copies_it_so_the_cache_stays_true():
    alloc = BlockAllocator(num_blocks=3, block_size=2)
    (b,) = _register_chain(alloc, [5, 6])
    new, old = alloc.ensure_writable(b)  # sole owner, but the block is in the prefix cache
    assert old == b and new != b and alloc.find_prefix([5, 6]) == [b] and alloc.num_cached == 1


def test_with_no_block_to_copy_into_a_cached_block_is_written_in_place_and_uncached():
    alloc = BlockAllocator(num_blocks=2, block_size=2)
    (b,) = _register_chain(alloc, [5, 6])
    alloc.allocate()
    assert alloc.ensure_writable(b) == (b, None) and alloc.find_prefix([5, 6]) == []
    shared = alloc.share(b)
    with pytest.raises(OutOfBlocks):  # shared and nowhere to copy: the caller must make room
        alloc.ensure_writable(shared)


def test_duplicate_content_chains_through_either_block():
    alloc = BlockAllocator(num_blocks=6, block_size=2)
    first = _register_chain(alloc, [1, 2, 3, 4])
    # a second sequence computed the same first block on its own, then diverged
    dup = alloc.allocate()
    alloc.register(dup, None, [1, 2])
    tail = alloc.allocate()
    alloc.register(tail, dup, [9, 9])
    assert alloc.find_prefix([1, 2, 9, 9]) == [first[0], tail]  # found through the canonical block
    alloc.free(dup)  # a duplicate is not kept in the cache when freed
    assert alloc.num_cached == 0 and alloc.refcount(dup) == 0


def test_without_prefix_caching_nothing_is_found():
    alloc = BlockAllocator(num_blocks=4, block_size=2, prefix_caching=False)
    _register_chain(alloc, [1, 2, 3, 4])
    assert alloc.find_prefix([1, 2, 3, 4]) == []
