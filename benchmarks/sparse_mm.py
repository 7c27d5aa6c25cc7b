"""Sparse (1% density, 10k x 10k, float32, coalesced) @ dense (10k x 64): ember against
torch in the same process, forward and forward+backward into the dense operand. Prints
the median milliseconds of each.

    python -m benchmarks.sparse_mm [--n 10000] [--k 64] [--density 0.01] [--repeats 7]
"""
from __future__ import annotations

import argparse
import statistics
import time


def median_ms(fn, repeats):
    fn()  # warm up: caches (the CSR order and its transpose) are made once, as in training
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    import torch
    import ember

    n, k = args.n, args.k
    g = torch.Generator().manual_seed(0)
    keys = torch.randint(0, n * n, (int(n * n * args.density),), generator=g).unique()
    indices = torch.stack([keys // n, keys % n])
    values = torch.rand(keys.numel(), generator=g)
    dense = torch.randn(n, k, generator=g)
    libs = {
        "torch": (torch, torch.sparse_coo_tensor(indices, values, (n, n)).coalesce(), dense),
        "ember": (ember, ember.sparse_coo_tensor(ember.from_numpy(indices.numpy()), ember.from_numpy(values.numpy()),
                                                 (n, n)).coalesce(), ember.from_numpy(dense.numpy())),
    }
    print(f"sparse {n}x{n} (nnz {keys.numel()}, float32) @ dense {n}x{k}; threads: torch {torch.get_num_threads()}, "
          f"ember {ember.get_num_threads()}")
    for name, (lib, s, d) in libs.items():
        x = d.clone().requires_grad_()

        def fwd():
            lib.sparse.mm(s, d)

        def fwd_bwd():
            x.grad = None
            lib.sparse.mm(s, x).sum().backward()

        print(f"{name:6s} forward {median_ms(fwd, args.repeats):8.2f} ms   forward+backward "
              f"{median_ms(fwd_bwd, args.repeats):8.2f} ms")


if __name__ == "__main__":
    main()
