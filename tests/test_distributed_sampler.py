"""ember.utils.data.distributed.DistributedSampler against torch's: the same indices for
every rank, size, epoch, seed and drop_last."""
import pytest
import torch
import torch.utils.data.distributed as tdist

import ember
from ember.utils.data import DistributedSampler
from ember.utils.data.distributed import DistributedSampler as DistributedSampler2

SIZES = [0, 1, 2, 3, 5, 7, 10, 16, 17, 31, 100, 257]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("replicas", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_indices_match_torch(n, replicas, drop_last, shuffle):
    data = list(range(n))
    for rank in range(replicas):
        e = DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=3, drop_last=drop_last)
        t = tdist.DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=3,
                                     drop_last=drop_last)
        for epoch in (0, 1, 5):
            e.set_epoch(epoch)
            t.set_epoch(epoch)
            assert list(e) == list(t)
            assert len(e) == len(t)
            assert e.num_samples == t.num_samples and e.total_size == t.total_size


@pytest.mark.parametrize("seed", [0, 1, -1, 12345, 2**32 + 7, 2**63 - 1])
def test_seeds_match_torch(seed):
    data = list(range(1000))
    e = DistributedSampler(data, num_replicas=3, rank=2, seed=seed)
    t = tdist.DistributedSampler(data, num_replicas=3, rank=2, seed=seed)
    assert list(e) == list(t)


def test_ranks_partition_and_epochs_differ():
    data = list(range(20))
    shares = [list(DistributedSampler(data, num_replicas=4, rank=r, seed=1)) for r in range(4)]
    assert sorted(sum(shares, [])) == data
    s = DistributedSampler(data, num_replicas=4, rank=0, seed=1)
    s.set_epoch(1)
    assert list(s) != shares[0]
    assert DistributedSampler2 is DistributedSampler


def test_with_dataloader_and_tensor_dataset():
    ds = ember.utils.data.TensorDataset(ember.arange(10.0))
    s = DistributedSampler(ds, num_replicas=3, rank=1, shuffle=False)
    batches = [b[0].tolist() for b in ember.utils.data.DataLoader(ds, batch_size=2, sampler=s)]
    assert batches == [[1.0, 4.0], [7.0, 0.0]]


@pytest.mark.parametrize("rank", [-1, 2, 5])
def test_bad_rank(rank):
    with pytest.raises(ValueError) as e:
        DistributedSampler(range(4), num_replicas=2, rank=rank)
    with pytest.raises(ValueError) as t:
        tdist.DistributedSampler(range(4), num_replicas=2, rank=rank)
    assert str(e.value) == str(t.value)


def test_without_a_process_group_is_torchs_error():
    with pytest.raises(ValueError) as e:
        DistributedSampler(range(4))
    with pytest.raises(ValueError) as t:
        tdist.DistributedSampler(range(4))
    assert str(e.value) == str(t.value)
    assert len(DistributedSampler(range(4), num_replicas=3, rank=0)) == 2  # given both: no group needed
