"""ember.utils.data against torch.utils.data: datasets, random_split, samplers,
default_collate/default_convert, DataLoader in one process and with worker processes.

Random streams differ between ember and torch, so shuffled results are checked for
their properties (a permutation, reproducible from a seed) rather than for torch's order."""
import collections
import os
import pickle
import random
import time
import warnings

import numpy as np
import pytest

import ember
from helpers import assert_same, torch

import ember.utils.data as edata
import torch.utils.data as tdata

Point = collections.namedtuple("Point", "x y")


def data(lib):
    return edata if lib is ember else tdata


def same(e, t):
    """ember value e has torch value t's structure, types and tensors."""
    if isinstance(t, torch.Tensor):
        assert_same(e, t)
    elif isinstance(t, dict):
        assert type(e).__name__ == type(t).__name__ and list(e) == list(t), f"{e!r} vs {t!r}"
        for k in t:
            same(e[k], t[k])
    elif isinstance(t, (list, tuple, collections.deque)):
        assert type(e) is type(t) and len(e) == len(t), f"{e!r} vs {t!r}"
        for x, y in zip(e, t):
            same(x, y)
    else:
        assert type(e) is type(t) and e == t, f"{e!r} vs {t!r}"


def both(fn, same_message=True):
    """fn(lib) on torch and ember: same result structure, or the same exception type
    (and message, unless same_message=False)."""
    try:
        expected = fn(torch)
    except Exception as exc:
        with pytest.raises(type(exc)) as info:
            fn(ember)
        if same_message:
            assert str(info.value).replace("ember", "torch") == str(exc), f"{info.value} vs torch's {exc}"
        return None
    got = fn(ember)
    same(got, expected)
    return got


class Squares:
    """A map-style dataset that is not a Dataset subclass (DataLoader takes any)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i

    def __len__(self):
        return self.n


def counting(lib, n, length=False, shard=True):
    """An IterableDataset of 0..n-1 that each worker shards by its id (with shard)."""

    class Counting(data(lib).IterableDataset):
        def __iter__(self):
            info = data(lib).get_worker_info()
            if info is None or not shard:
                return iter(range(n))
            return iter(range(info.id, n, info.num_workers))

    if length:
        Counting.__len__ = lambda self: n
    return Counting()


# ---------------------------------------------------------------- datasets
def test_tensor_dataset():
    both(lambda lib: (len(data(lib).TensorDataset(lib.arange(4), lib.zeros(4, 2))),
                      data(lib).TensorDataset(lib.arange(4), lib.ones(4, 2))[1],
                      data(lib).TensorDataset(lib.arange(4))[1:3]))
    both(lambda lib: data(lib).TensorDataset(lib.zeros(2), lib.zeros(3)))
    both(lambda lib: len(data(lib).TensorDataset(lib.zeros(0, 3))))


def test_concat_dataset():
    def make(lib):
        return data(lib).ConcatDataset([data(lib).TensorDataset(lib.arange(3)), data(lib).TensorDataset(lib.arange(3, 5))])

    both(lambda lib: (len(make(lib)), make(lib)[3], make(lib)[-1], make(lib)[0], make(lib).cumulative_sizes))
    both(lambda lib: make(lib)[-6])  # ValueError
    both(lambda lib: make(lib)[5])  # IndexError
    both(lambda lib: data(lib).ConcatDataset([]))
    both(lambda lib: data(lib).ConcatDataset([counting(lib, 3)]))
    both(lambda lib: type(data(lib).TensorDataset(lib.arange(2)) + data(lib).TensorDataset(lib.arange(2))).__name__)
    both(lambda lib: (len(data(lib).ConcatDataset([[], [1, 2], []])), data(lib).ConcatDataset([[], [1, 2], []])[1]))


def test_chain_and_iterable_datasets():
    both(lambda lib: (type(counting(lib, 2) + counting(lib, 3)).__name__, list(counting(lib, 2) + counting(lib, 3))))
    both(lambda lib: list(data(lib).ChainDataset([counting(lib, 2), counting(lib, 3)])))
    both(lambda lib: len(data(lib).ChainDataset([counting(lib, 2, length=True), counting(lib, 3, length=True)])))
    both(lambda lib: [x for x in data(lib).ChainDataset([range(2), range(3)])])  # iterable datasets only
    both(lambda lib: next(iter(data(lib).IterableDataset())))
    both(lambda lib: data(lib).Dataset()[0])
    both(lambda lib: len(data(lib).Dataset()))


def test_subset_and_stack_dataset():
    both(lambda lib: (len(data(lib).Subset([10, 11, 12], [2, 0])), data(lib).Subset([10, 11, 12], [2, 0])[1],
                      data(lib).Subset(data(lib).Subset(list(range(10)), [5, 6, 7]), [2])[0]))
    both(lambda lib: data(lib).Subset(data(lib).TensorDataset(lib.arange(5)), [4, 0])[[0, 1]])
    both(lambda lib: (data(lib).StackDataset([1, 2], "ab")[1], data(lib).StackDataset(x=[1, 2], y="ab")[0],
                      len(data(lib).StackDataset([1, 2], "ab"))))
    both(lambda lib: data(lib).StackDataset([1, 2], "abc"))
    both(lambda lib: data(lib).StackDataset())


@pytest.mark.parametrize("n,lengths", [(10, [3, 7]), (10, [0.3, 0.3, 0.4]), (10, [0.33, 0.33, 0.34]),
                                       (5, [0.1, 0.9]), (7, [0.5, 0.5]), (3, [1 / 3] * 3), (0, [0, 0]),
                                       (10, [3, 3]), (10, [1.5, -0.5]), (10, [0.5, 0.6]), (4, [0.2, 0.8])])
def test_random_split_lengths(n, lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-length splits warn; checked below
        both(lambda lib: [len(s) for s in data(lib).random_split(range(n), lengths,
                                                                 generator=lib.Generator().manual_seed(0))])


def test_random_split_is_a_reproducible_partition():
    parts = edata.random_split(range(20), [0.5, 0.25, 0.25], generator=ember.Generator().manual_seed(3))
    assert sorted(i for p in parts for i in p) == list(range(20))
    again = edata.random_split(range(20), [0.5, 0.25, 0.25], generator=ember.Generator().manual_seed(3))
    assert [list(p) for p in parts] == [list(p) for p in again]
    other = edata.random_split(range(20), [0.5, 0.25, 0.25], generator=ember.Generator().manual_seed(4))
    assert [list(p) for p in parts] != [list(p) for p in other]
    ember.manual_seed(7)  # no generator: the default one
    first = [list(p) for p in edata.random_split(range(20), [10, 10])]
    ember.manual_seed(7)
    assert [list(p) for p in edata.random_split(range(20), [10, 10])] == first
    assert isinstance(parts[0], edata.Subset) and parts[0].dataset == range(20)


def test_random_split_warns_on_an_empty_split():
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        edata.random_split(range(3), [1.0, 0.0])


# ---------------------------------------------------------------- samplers
def test_sequential_and_batch_samplers():
    both(lambda lib: list(data(lib).SequentialSampler(range(4))))
    both(lambda lib: (list(data(lib).BatchSampler(range(5), 2, False)), list(data(lib).BatchSampler(range(5), 2, True)),
                      len(data(lib).BatchSampler(range(5), 2, False)), len(data(lib).BatchSampler(range(5), 2, True)),
                      list(data(lib).BatchSampler(range(4), 2, True)), list(data(lib).BatchSampler([], 3, False))))
    for bad in (0, -1, True, 2.0):
        both(lambda lib: data(lib).BatchSampler(range(3), bad, False))
    both(lambda lib: data(lib).BatchSampler(range(3), 2, 0))
    both(lambda lib: iter(data(lib).Sampler()).__next__())
    both(lambda lib: len(data(lib).Sampler()))


def test_random_sampler():
    g = ember.Generator().manual_seed(0)
    order = list(edata.RandomSampler(range(10), generator=g))
    assert sorted(order) == list(range(10)) and order != list(range(10))
    assert list(edata.RandomSampler(range(10), generator=ember.Generator().manual_seed(0))) == order
    ember.manual_seed(5)
    unseeded = list(edata.RandomSampler(range(10)))
    ember.manual_seed(5)
    assert list(edata.RandomSampler(range(10))) == unseeded
    # num_samples longer than the data: whole permutations, then part of one
    long = list(edata.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(long) == 10 and sorted(long[:4]) == sorted(long[4:8]) == [0, 1, 2, 3] and len(set(long[8:])) == 2
    drawn = list(edata.RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(drawn) == 70 and set(drawn) == {0, 1, 2}
    both(lambda lib: (len(data(lib).RandomSampler(range(4), num_samples=25)), data(lib).RandomSampler(range(4)).num_samples,
                      len(list(data(lib).RandomSampler(range(4), num_samples=3)))))
    both(lambda lib: data(lib).RandomSampler(range(3), replacement=1))
    both(lambda lib: data(lib).RandomSampler(range(3), num_samples=0))
    both(lambda lib: data(lib).RandomSampler([]))


def test_subset_and_weighted_samplers():
    g = ember.Generator().manual_seed(1)
    picked = list(edata.SubsetRandomSampler([5, 7, 9, 11], generator=g))
    assert sorted(picked) == [5, 7, 9, 11] and len(edata.SubsetRandomSampler([5, 7])) == 2
    assert list(edata.SubsetRandomSampler([5, 7, 9, 11], generator=ember.Generator().manual_seed(1))) == picked
    weighted = list(edata.WeightedRandomSampler([0.0, 3.0, 1.0, 0.0], 50, generator=g))
    assert len(weighted) == 50 and set(weighted) == {1, 2} and weighted.count(1) > weighted.count(2)
    assert sorted(edata.WeightedRandomSampler([1, 1, 1], 3, replacement=False, generator=g)) == [0, 1, 2]
    assert list(edata.WeightedRandomSampler([0.2, 0.8], 6, generator=ember.Generator().manual_seed(2))) == \
        list(edata.WeightedRandomSampler([0.2, 0.8], 6, generator=ember.Generator().manual_seed(2)))
    both(lambda lib: (len(data(lib).WeightedRandomSampler([0.1, 0.9], 7)),
                      data(lib).WeightedRandomSampler([1, 2], 2).weights))
    for args in (([0.1, 0.9], 0), ([0.1, 0.9], True), ([[0.1, 0.9]], 2)):
        both(lambda lib: data(lib).WeightedRandomSampler(*args))
    both(lambda lib: data(lib).WeightedRandomSampler([0.1, 0.9], 2, replacement=1))
    both(lambda lib: list(data(lib).WeightedRandomSampler([0.1, 0.9], 3, replacement=False)))


# ---------------------------------------------------------------- collate
COLLATE_CASES = {
    "ints": lambda lib: [1, 2, 3],
    "floats": lambda lib: [1.5, 2.0],
    "bools": lambda lib: [True, False],
    "strings": lambda lib: ["a", "b"],
    "bytes": lambda lib: [b"a", b"b"],
    "tensors": lambda lib: [lib.tensor([1, 2], dtype=lib.int32), lib.tensor([3, 4], dtype=lib.int32)],
    "0-dim tensors": lambda lib: [lib.tensor(1.5), lib.tensor(2.5)],
    "empty tensors": lambda lib: [lib.zeros(0, 2), lib.zeros(0, 2)],
    "tuples": lambda lib: [(1, 2.0, "x"), (3, 4.0, "y")],
    "lists": lambda lib: [[1, 2], [3, 4]],
    "dicts": lambda lib: [{"a": 1, "b": lib.ones(2)}, {"a": 2, "b": lib.zeros(2)}],
    "ordered dicts": lambda lib: [collections.OrderedDict(x=1.0), collections.OrderedDict(x=2.0)],
    "namedtuples": lambda lib: [Point(1, lib.tensor(1.0)), Point(2, lib.tensor(2.0))],
    "nested": lambda lib: [{"p": (lib.ones(1), [1, 2])}, {"p": (lib.zeros(1), [3, 4])}],
    "numpy arrays": lambda lib: [np.zeros(2, dtype=np.float32), np.ones(2, dtype=np.float32)],
    "numpy int arrays": lambda lib: [np.arange(3), np.arange(3)],
    "numpy scalars": lambda lib: [np.float32(1), np.float32(2)],
    "numpy int scalars": lambda lib: [np.int64(1), np.int64(2)],
    "numpy bools": lambda lib: [np.bool_(True), np.bool_(False)],
    "deques": lambda lib: [collections.deque([1, 2]), collections.deque([3, 4])],
    # errors
    "stack mismatch": lambda lib: [lib.zeros(2), lib.zeros(3)],
    "sequence mismatch": lambda lib: [[1, 2], [3]],
    "None": lambda lib: [None, None],
    "complex": lambda lib: [1j, 2j],
    "numpy strings": lambda lib: [np.array(["a"]), np.array(["b"])],
    "numpy objects": lambda lib: [np.array([None]), np.array([None])],
    "empty batch": lambda lib: [],
}


@pytest.mark.parametrize("case", list(COLLATE_CASES))
def test_default_collate(case):
    both(lambda lib: data(lib).default_collate(COLLATE_CASES[case](lib)))


CONVERT_CASES = {
    "numpy array": lambda lib: np.arange(3.0),
    "numpy scalar": lambda lib: np.float64(2.5),
    "tuple": lambda lib: (np.zeros(2), 3, "s"),
    "namedtuple": lambda lib: Point(np.zeros(1), 3),
    "dict": lambda lib: {"a": np.ones(1), "b": [np.int32(4)]},
    "tensor": lambda lib: lib.ones(2),
    "plain": lambda lib: 3,
    "string": lambda lib: "text",
}


@pytest.mark.parametrize("case", list(CONVERT_CASES))
def test_default_convert(case):
    both(lambda lib: data(lib).default_convert(CONVERT_CASES[case](lib)))


def test_default_convert_keeps_numpy_strings():
    array = np.array(["a", "b"])
    assert edata.default_convert(array) is array


def test_default_collate_of_numpy_shares_nothing_with_the_samples():
    samples = [np.zeros(2, dtype=np.float32), np.ones(2, dtype=np.float32)]
    batch = edata.default_collate(samples)
    samples[0][0] = 5
    assert batch[0, 0].item() == 0


# ---------------------------------------------------------------- DataLoader, one process
def loaded(lib, dataset, **kwargs):
    return list(data(lib).DataLoader(dataset, **kwargs))


def tensors(lib, n=10):
    return data(lib).TensorDataset(lib.arange(n), lib.arange(n) * 2.0)


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                    {"batch_size": 5, "drop_last": True}, {"batch_size": 20},
                                    {"batch_size": 20, "drop_last": True}, {"batch_size": None},
                                    {"batch_size": 4, "shuffle": False}])
def test_dataloader_batches(kwargs):
    both(lambda lib: (loaded(lib, tensors(lib), **kwargs), len(data(lib).DataLoader(tensors(lib), **kwargs))))


def test_dataloader_samplers_and_collate_fn():
    both(lambda lib: loaded(lib, tensors(lib), sampler=[3, 1, 2], batch_size=2))
    both(lambda lib: loaded(lib, tensors(lib), batch_sampler=[[3, 1], [0], [9, 8, 7]]))
    both(lambda lib: len(data(lib).DataLoader(tensors(lib), batch_sampler=[[3, 1], [0]])))
    both(lambda lib: loaded(lib, Squares(5), batch_size=2, collate_fn=lambda batch: sum(batch)))
    both(lambda lib: loaded(lib, Squares(5), batch_size=2))
    both(lambda lib: loaded(lib, Squares(3), batch_size=None))
    both(lambda lib: loaded(lib, [{"x": 1, "y": "a"}, {"x": 2, "y": "b"}, {"x": 3, "y": "c"}], batch_size=2))
    both(lambda lib: loaded(lib, [np.ones(2), np.zeros(2)], batch_size=None))
    both(lambda lib: loaded(lib, data(lib).Subset(tensors(lib), [7, 2, 5]), batch_size=2))


def test_dataloader_attributes():
    def attributes(lib, **kwargs):
        dl = data(lib).DataLoader(tensors(lib), **kwargs)
        return (dl.batch_size, dl.drop_last, type(dl.sampler).__name__, type(dl.batch_sampler).__name__,
                dl.collate_fn.__name__, dl.num_workers, dl.prefetch_factor, dl.timeout, dl.persistent_workers)

    both(lambda lib: attributes(lib, batch_size=4))
    both(lambda lib: attributes(lib, batch_size=None))
    both(lambda lib: attributes(lib, shuffle=True))
    both(lambda lib: attributes(lib, num_workers=2))
    both(lambda lib: attributes(lib, batch_sampler=[[0]]))


def test_dataloader_iterable_dataset():
    both(lambda lib: loaded(lib, counting(lib, 5), batch_size=2))
    both(lambda lib: loaded(lib, counting(lib, 5), batch_size=2, drop_last=True))
    both(lambda lib: loaded(lib, counting(lib, 4), batch_size=2, drop_last=True))
    both(lambda lib: loaded(lib, counting(lib, 3), batch_size=None))
    both(lambda lib: loaded(lib, counting(lib, 0), batch_size=2))
    both(lambda lib: len(data(lib).DataLoader(counting(lib, 3))))
    both(lambda lib: [len(data(lib).DataLoader(counting(lib, 5, length=True), **kw))
                      for kw in ({"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": None})])


def test_dataloader_empty_dataset():
    both(lambda lib: (loaded(lib, tensors(lib, 0)), len(data(lib).DataLoader(tensors(lib, 0)))))
    both(lambda lib: (loaded(lib, tensors(lib, 0), batch_size=None, shuffle=False)))
    both(lambda lib: loaded(lib, tensors(lib, 0), shuffle=True))  # RandomSampler of nothing: ValueError


def test_dataloader_shuffle_is_reproducible():
    def order(seed, **kwargs):
        g = ember.Generator().manual_seed(seed)
        return [b[0].tolist() for b in edata.DataLoader(tensors(ember, 12), batch_size=5, shuffle=True, generator=g,
                                                        **kwargs)]

    first = order(0)
    assert sorted(sum(first, [])) == list(range(12)) and [len(b) for b in first] == [5, 5, 2]
    assert order(0) == first and order(1) != first
    assert [len(b) for b in order(0, drop_last=True)] == [5, 5]
    loader = edata.DataLoader(tensors(ember, 12), batch_size=12, shuffle=True, generator=ember.Generator().manual_seed(0))
    assert [b[0].tolist() for b in loader] != [b[0].tolist() for b in loader]  # a new order every epoch
    ember.manual_seed(3)
    unseeded = [b[0].tolist() for b in edata.DataLoader(tensors(ember, 12), batch_size=4, shuffle=True)]
    ember.manual_seed(3)
    assert [b[0].tolist() for b in edata.DataLoader(tensors(ember, 12), batch_size=4, shuffle=True)] == unseeded


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2}, {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True}, {"sampler": [0], "shuffle": True}, {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "drop_last": True}, {"batch_sampler": [[0]], "shuffle": True},
    {"batch_size": None, "drop_last": True}, {"batch_size": 0}, {"batch_size": True},
    {"multiprocessing_context": "spawn"}, {"num_workers": 1, "multiprocessing_context": "bogus"},
    {"num_workers": 1, "multiprocessing_context": 3}, {"drop_last": 1}])
def test_dataloader_argument_errors(kwargs):
    # torch's prefetch_factor message has a typo ("multiprocessing.let") that ember's lacks
    both(lambda lib: data(lib).DataLoader(tensors(lib), **kwargs), same_message="prefetch_factor" not in kwargs)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_dataloader_iterable_dataset_errors(kwargs):
    both(lambda lib: data(lib).DataLoader(counting(lib, 3), **kwargs))


def test_dataloader_fixed_attributes_and_single_process_timeout():
    for name in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
        both(lambda lib: setattr(data(lib).DataLoader(tensors(lib)), name, None))
    loader = edata.DataLoader(tensors(ember))
    loader.collate_fn = edata.default_convert  # not fixed
    assert loader.collate_fn is edata.default_convert
    both(lambda lib: list(data(lib).DataLoader(tensors(lib), timeout=1)))  # AssertionError, as torch


def test_dataloader_pin_memory_is_accepted_with_torch_warning():
    with pytest.warns(UserWarning, match="pin_memory"):
        loader = edata.DataLoader(tensors(ember), batch_size=5, pin_memory=True)
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


def test_dataloader_uses_getitems_when_the_dataset_has_it():
    class Batched(edata.Dataset):
        calls = []

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [i * 10 for i in indices]

        def __len__(self):
            return 5

    assert [b.tolist() for b in edata.DataLoader(Batched(), batch_size=2)] == [[0, 10], [20, 30], [40]]
    assert Batched.calls == [[0, 1], [2, 3], [4]]


def test_worker_info_in_the_main_process():
    assert edata.get_worker_info() is None
    info = edata.WorkerInfo(id=1, num_workers=2, seed=3, dataset=None)
    assert repr(info) == "WorkerInfo(id=1, num_workers=2, seed=3, dataset=None)"
    with pytest.raises(AttributeError):
        info.id = 2


# ---------------------------------------------------------------- DataLoader, worker processes
class Probe(edata.Dataset):
    """Each sample runs ember ops in the worker and reports where it ran."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        info = edata.get_worker_info()
        value = (ember.ones(300_000) * i).sum()  # large enough to run on the thread pool
        return {"i": i, "sum": value, "worker": info.id, "pid": os.getpid(), "seed": info.seed,
                "ember_seed": ember.initial_seed(), "threads_added": _threads_added}

    def __len__(self):
        return self.n


_threads_added = None


def _count_pool_threads(worker_id):
    """worker_init_fn: how many threads the worker's first parallel op starts, once the
    worker asks for 2 (a forked child has only the thread that forked: the pool must
    start anew)."""
    global _threads_added
    ember.set_num_threads(2)
    tasks = "/proc/self/task"
    before = len(os.listdir(tasks)) if os.path.isdir(tasks) else None
    ember.ones(4_000_000).sum()
    _threads_added = None if before is None else len(os.listdir(tasks)) - before


def test_workers_run_ember_ops_after_the_parent_used_threads():
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        assert ember.ones(4_000_000).sum().item() == 4_000_000  # the parent's pool is running now
        loader = edata.DataLoader(Probe(6), batch_size=2, num_workers=2, worker_init_fn=_count_pool_threads,
                                  generator=ember.Generator().manual_seed(0))
        batches = list(loader)
    finally:
        ember.set_num_threads(threads)
    assert [b["i"].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5]]
    assert [b["sum"].tolist() for b in batches] == [[0.0, 300_000.0], [600_000.0, 900_000.0],
                                                    [1_200_000.0, 1_500_000.0]]
    assert [b["worker"].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0]]  # round-robin
    assert len({b["pid"][0].item() for b in batches} | {os.getpid()}) == 3
    # seeds: base_seed + worker id, and ember's default generator seeded with it
    seeds = {b["worker"][0].item(): b["seed"][0].item() for b in batches}
    assert seeds[1] == seeds[0] + 1 and all((b["seed"] == b["ember_seed"]).all() for b in batches)
    again = list(edata.DataLoader(Probe(2), batch_size=1, num_workers=2, worker_init_fn=_count_pool_threads,
                                  generator=ember.Generator().manual_seed(0)))
    assert again[0]["seed"].item() == seeds[0]
    if batches[0]["threads_added"][0].item() is not None:
        assert all(t == 1 for b in batches for t in b["threads_added"].tolist())


def test_workers_use_one_thread_as_in_torch():
    class Threads(edata.Dataset):
        def __getitem__(self, i):
            return ember.get_num_threads()

        def __len__(self):
            return 2

    assert list(edata.DataLoader(Threads(), batch_size=None, num_workers=2)) == [1, 1]


def test_workers_iterable_dataset_sharding_matches_torch():
    both(lambda lib: loaded(lib, counting(lib, 11), batch_size=2, num_workers=2))
    both(lambda lib: loaded(lib, counting(lib, 7), batch_size=3, num_workers=2, drop_last=True))


def test_workers_iterable_dataset_without_sharding_repeats_per_worker():
    both(lambda lib: loaded(lib, data(lib).ChainDataset([counting(lib, 3, shard=False)]), batch_size=None,
                            num_workers=2))


def _random_draws(worker_id):
    global _draws
    _draws = (random.random(), np.random.rand())


_draws = None


class Draws(edata.Dataset):
    def __getitem__(self, i):
        return ember.tensor(_draws, dtype=ember.float64)

    def __len__(self):
        return 2


def test_workers_seed_python_and_numpy_per_worker():
    rows = [b.tolist() for b in edata.DataLoader(Draws(), batch_size=None, num_workers=2,
                                                  worker_init_fn=_random_draws)]
    assert rows[0][0] != rows[1][0] and rows[0][1] != rows[1][1]


class Failing(edata.Dataset):
    def __init__(self, error):
        self.error = error

    def __getitem__(self, i):
        if i == 1:
            raise self.error
        return i

    def __len__(self):
        return 4


class TwoArgError(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


@pytest.mark.parametrize("error,expected", [(ValueError("bad sample"), ValueError), (KeyError("k"), KeyError),
                                            (TwoArgError(1, 2), RuntimeError)])
def test_workers_reraise_errors_in_the_main_process(error, expected):
    loader = iter(edata.DataLoader(Failing(error), batch_size=None, num_workers=2))
    assert next(loader) == 0
    with pytest.raises(expected, match=f"Caught {type(error).__name__} in DataLoader worker process 1") as info:
        next(loader)
    assert "Original Traceback" in str(info.value)
    assert [next(loader), next(loader)] == [2, 3]  # the loader goes on, as torch's


def test_workers_report_unpicklable_batches():
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError), match="DataLoader worker process 0"):
        list(edata.DataLoader(Squares(2), batch_size=None, num_workers=1, collate_fn=lambda x: lambda: x))


class Slow(edata.Dataset):
    def __init__(self, delay):
        self.delay = delay

    def __getitem__(self, i):
        time.sleep(self.delay if i != 2 else 0)  # sample 2 overtakes the others
        return i

    def __len__(self):
        return 3


def test_workers_timeout(monkeypatch):
    from ember.utils.data import _worker

    monkeypatch.setattr(_worker, "STATUS_CHECK_INTERVAL", 0.05)  # do not wait long for the sleeping worker to quit
    loader = edata.DataLoader(Slow(5.0), batch_size=None, num_workers=1, timeout=0.2)
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.2 seconds"):
        next(iter(loader))


class Dying(edata.Dataset):
    def __getitem__(self, i):
        os._exit(3)

    def __len__(self):
        return 2


def test_workers_exiting_unexpectedly(monkeypatch):
    from ember.utils.data import _worker

    monkeypatch.setattr(_worker, "STATUS_CHECK_INTERVAL", 0.05)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(edata.DataLoader(Dying(), num_workers=1))
    persistent = edata.DataLoader(Dying(), num_workers=1, persistent_workers=True)
    for _ in range(2):  # the second epoch starts new workers rather than talking to dead ones
        with pytest.raises(RuntimeError, match="exited unexpectedly"):
            list(persistent)


class Pids(edata.Dataset):
    def __getitem__(self, i):
        return os.getpid()

    def __len__(self):
        return 4


def test_persistent_workers_keep_their_processes():
    loader = edata.DataLoader(Pids(), batch_size=1, num_workers=2, persistent_workers=True, prefetch_factor=1)
    first = [b.item() for b in loader]
    partial = iter(loader)
    next(partial)  # leave an epoch unfinished: the next one starts clean
    second = [b.item() for b in loader]
    assert len(first) == len(second) == 4 and set(first) == set(second) and os.getpid() not in first
    sharded = edata.DataLoader(counting(ember, 5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in sharded] == [b.tolist() for b in sharded] == [[0, 2], [1, 3], [4]]


def test_workers_out_of_order_and_prefetch():
    # torch raises AssertionError too (its half-made iterator then fails in __del__: not run here)
    with pytest.raises(AssertionError, match="prefetch_factor must be greater than 0"):
        iter(edata.DataLoader(tensors(ember), num_workers=1, prefetch_factor=0))
    batches = list(edata.DataLoader(Slow(0.1), batch_size=None, num_workers=2, in_order=False))
    assert sorted(batches) == [0, 1, 2]
    assert [b[0].tolist() for b in edata.DataLoader(tensors(ember), batch_size=4, num_workers=2,
                                                    prefetch_factor=5)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_workers_with_the_spawn_start_method():
    loader = edata.DataLoader(tensors(ember, 5), batch_size=2, num_workers=1, multiprocessing_context="spawn")
    assert [b[0].tolist() for b in loader] == [[0, 1], [2, 3], [4]]
