"""DistributedSampler: each of num_replicas processes reads its own share of a dataset,
as torch.utils.data.distributed."""
from __future__ import annotations

import math
import random
from array import array

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _torch_randperm(n: int, seed: int) -> list:
    """The permutation torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    gives, so that every rank (and a torch program beside an ember one) agrees on the
    shuffle. ember's own generator is xoshiro (DESIGN.md: streams are ember's), so this
    runs torch's documented stream: a Mersenne Twister seeded with the seed's low 32 bits
    and a forward Fisher-Yates drawing `draw % (n - i)`. Python's random.Random is the
    same Mersenne Twister, given the state that seeding leaves."""
    if n >= 0xFFFFFFFF // 20:  # torch draws 64-bit numbers there; nobody shuffles 214M indices by rank
        raise NotImplementedError(f"DistributedSampler: a dataset of {n} samples is too large to shuffle")
    state = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        prev = state[-1]
        state.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    mt = random.Random()
    mt.setstate((3, tuple(state) + (624,), None))
    perm = list(range(n))
    if n > 1:
        # getrandbits(32 * k) packs k successive draws, the first in the lowest word
        draws = array("I", mt.getrandbits(32 * (n - 1)).to_bytes(4 * (n - 1), "little"))
        for i, d in enumerate(draws):
            j = i + d % (n - i)
            perm[i], perm[j] = perm[j], perm[i]
    return perm


class DistributedSampler(Sampler):
    """Indices of the dataset for one of num_replicas processes (rank `rank`): the whole
    index list (shuffled by seed + epoch when shuffle=True, as torch shuffles it) padded
    by repeating its start to a multiple of num_replicas (or, with drop_last=True, cut to
    one), then every num_replicas-th index from `rank`. num_replicas and rank default to
    the process group's world size and rank. Call set_epoch at each epoch for a new order.

    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        indices = _torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - n
            if padding > 0:
                indices += (indices * math.ceil(padding / n))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch, which with the seed decides the shuffle: call it before each
        epoch's iteration so that every epoch has a new order (the same on all ranks)."""
        self.epoch = epoch
