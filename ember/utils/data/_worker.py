"""What runs inside a DataLoader worker process: the loop that turns index batches into
data, the worker's identity (get_worker_info) and the wrapper that carries an exception
back to the main process. Imported in the workers (and by spawn's pickling), so it
imports nothing heavy."""
from __future__ import annotations

import dataclasses
import os
import pickle
import random
import sys
import traceback

# How long a blocked queue read waits before checking that the other side still lives.
STATUS_CHECK_INTERVAL = 1.0


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """Who this DataLoader worker is: id (0..num_workers-1), num_workers, the seed its
    random generators were seeded with, and its own copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info = None


def get_worker_info():
    """The WorkerInfo of this DataLoader worker process, or None in the main process.
    An IterableDataset uses it to give each worker its share of the samples.

    >>> get_worker_info() is None
    True
    """
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process (as its type and
    its formatted traceback) and raised there again with the same type."""

    def __init__(self, where):
        exc_type, exc, _ = sys.exc_info()
        try:  # a type the main process cannot unpickle (a local class) comes back as RuntimeError
            pickle.loads(pickle.dumps(exc_type))
        except Exception:
            exc_type = RuntimeError
        self.exc_type = exc_type
        self.message = f"Caught {type(exc).__name__} {where}.\nOriginal {traceback.format_exc()}"

    def reraise(self):
        message = self.message
        if self.exc_type is KeyError:  # KeyError shows the repr of its argument: keep the text readable
            message = _KeyErrorMessage(message)
        try:
            exception = self.exc_type(message)
        except Exception:  # a type that needs other arguments
            raise RuntimeError(message) from None
        raise exception


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class IterableDatasetStopIteration:
    """A worker's report that its copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """Tells a persistent worker that a new epoch starts: it begins its dataset again."""


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        """The next sample (index is None) or batch (index is a list of Nones, one per
        sample); StopIteration when the dataset is exhausted."""
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    kind = _IterableFetcher if iterable else _MapFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)


def _seed_worker(seed, base_seed, worker_id):
    import ember

    ember.set_num_threads(1)  # the workers are the parallelism: one thread each, as in torch
    random.seed(seed)
    ember.manual_seed(seed)
    numpy = sys.modules.get("numpy")  # seeded when the program uses it; never imported here
    if numpy is not None:
        numpy.random.seed(numpy.random.SeedSequence([worker_id, base_seed]).generate_state(4))


def _send(data_queue, idx, data, worker_id):
    """Pickles here rather than in the queue's feeder thread, so that data that cannot
    be pickled becomes an error in the main process instead of a batch lost forever.
    ForkingPickler applies ember.multiprocessing's reductions: a batch's tensors move to
    shared memory and travel as file descriptors, and the main process maps them."""
    from multiprocessing.reduction import ForkingPickler

    try:
        payload = bytes(ForkingPickler.dumps((idx, data), pickle.HIGHEST_PROTOCOL))
    except Exception:
        payload = pickle.dumps((idx, ExceptionWrapper(f"in DataLoader worker process {worker_id}")))
    data_queue.put(payload)


def worker_loop(iterable, dataset, index_pipe, data_queue, done_event, auto_collation, collate_fn,
                drop_last, base_seed, init_fn, worker_id, num_workers):
    """Receives (task index, sample indices) on index_pipe and answers (task index, data)
    on data_queue until it receives None or the main process dies."""
    global _worker_info
    import ember.multiprocessing  # noqa: F401 (registers the reductions _send pickles with)

    parent = os.getppid()
    try:
        seed = base_seed + worker_id
        _seed_worker(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while os.getppid() == parent:
            if not index_pipe.poll(STATUS_CHECK_INTERVAL):
                continue
            try:
                task = index_pipe.recv()
            except EOFError:  # the main process closed its end
                break
            if isinstance(task, ResumeIteration):
                _send(data_queue, task, None, worker_id)
                iteration_end = False
                if init_error is None:
                    fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if task is None:
                break
            if done_event.is_set() or iteration_end:
                continue  # the main process no longer wants data: drain until None
            idx, index = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
                    else:
                        data = IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
            _send(data_queue, idx, data, worker_id)
            del data, task
    except KeyboardInterrupt:
        pass  # the main process sees the interrupt too and shuts the workers down
    if done_event.is_set():
        data_queue.cancel_join_thread()  # exit now, even with results nobody will read
        data_queue.close()
