"""The host allocator's caches (csrc/core/allocator.cpp, Note [Mid-size blocks are
cached]): freed blocks from 64 KiB up come back for the next allocation of their rounded
size, hold no stale values where an op promises them, and _release_cached_blocks empties
them. Under AddressSanitizer every block is exact and freed at once: no reuse to see."""
from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import ember

SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "")
pytestmark = pytest.mark.skipif(SANITIZED, reason="ASan builds free every block at once")


@pytest.mark.parametrize("nbytes", [80_000, 300_000, 1024 * 1024 - 4, 3 * 1024 * 1024])
def test_freed_block_serves_the_next_of_its_size(nbytes):
    a = ember.empty(nbytes // 4)
    p = a.data_ptr()
    del a
    b = ember.empty(nbytes // 4)
    assert b.data_ptr() == p
    # within the same 16 KiB (mid) or 2 MiB (large) rounding, another size reuses it too
    del b
    c = ember.empty(nbytes // 4 - 1)
    assert c.data_ptr() == p


def test_reused_blocks_hold_no_stale_values():
    n = 100_000
    a = ember.full((n,), 7.0)
    p = a.data_ptr()
    del a
    z = ember.zeros(n)
    assert z.data_ptr() == p
    assert not z.any().item()
    o = ember.ones(n, dtype=ember.float32)
    np.testing.assert_array_equal(o.numpy(), np.ones(n, dtype=np.float32))


def test_small_blocks_are_not_cached_and_release_empties_the_cache():
    a = ember.empty(1000)  # 4000 bytes: malloc's, never kept by ember
    del a
    b = ember.empty(50_000)  # 200 KB
    p = b.data_ptr()
    del b
    gc.collect()
    ember._C._release_cached_blocks()
    # the cache is empty now: a same-size block comes from malloc, wherever that puts it;
    # allocating and filling many of them still works
    blocks = [ember.full((50_000,), float(i)) for i in range(8)]
    assert [int(t[0].item()) for t in blocks] == list(range(8))
    del blocks
    assert isinstance(p, int)
