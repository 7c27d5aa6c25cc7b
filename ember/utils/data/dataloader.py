"""DataLoader: batches from a dataset, in the main process or in worker processes.

One loop serves both: a sampler yields indices (or a batch sampler lists of them), a
fetcher turns them into samples and collate_fn into a batch. With num_workers > 0 the
main process hands index batches to the workers round-robin, keeps prefetch_factor
batches per worker in flight, and returns the batches in order (in_order=True).
Batches cross processes by their memory: a worker's tensors move to shared memory and
travel as file descriptors (ember.multiprocessing's reductions); the main process maps them.

Worker processes are created by the multiprocessing start method (fork on Linux):
ember's thread pool starts afresh in a forked child (see Note [The pool after fork] in
csrc/core/parallel.cpp), so workers may run ember ops after the parent used threads."""
from __future__ import annotations

import itertools
import os
import pickle
import warnings

import ember

from . import _worker
from ._collate import default_collate, default_convert
from ._worker import get_worker_info  # noqa: F401  (re-exported by ember.utils.data)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


class _InfiniteConstantSampler(Sampler):
    """None forever: an IterableDataset needs no indices, only a count per batch."""

    def __iter__(self):
        while True:
            yield None


def _available_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


class DataLoader:
    """Iterates over a dataset in batches.

    batch_size samples per batch (None: no batching, samples go through default_convert),
    shuffle (a RandomSampler drawing from generator), or a sampler / batch_sampler of
    your own; drop_last drops a last, incomplete batch. collate_fn builds a batch from a
    list of samples (default_collate). num_workers > 0 loads in that many worker
    processes (worker_init_fn(worker_id) runs first in each, prefetch_factor batches per
    worker are loaded ahead, persistent_workers keeps them across epochs, timeout bounds
    the wait for a batch in seconds). pin_memory is accepted; ember has no device to pin
    for.

    >>> ds = TensorDataset(ember.arange(5), ember.arange(5) * 10)
    >>> [x.tolist() for x, y in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. Let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)

        if self._iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, "
                                     f"but got {name}={value}")
        elif shuffle not in (None, False) and sampler is not None:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._initialized = True
        if pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.")
        self._check_worker_number()

    _FIXED = frozenset({"batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"})

    def __setattr__(self, name, value):
        if name in self._FIXED and self.__dict__.get("_initialized"):
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            import multiprocessing
            import multiprocessing.context

            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self._multiprocessing_context = context

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _check_worker_number(self):
        cpus = _available_cpus()
        if cpus and self.num_workers > cpus:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total, more than the "
                          f"{cpus} CPUs this process may use: excessive worker creation might make loading slow or "
                          "even freeze; lower the number of workers if needed.")

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        return _MultiProcessIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or self._iterator._shutdown:  # first epoch, or after an error ended it
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._iterable:
            length = len(self.dataset)  # TypeError when the dataset has no length
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(ember.empty((), dtype=ember.int64).random_(generator=loader.generator).item())
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._fetcher = _worker.create_fetcher(self._iterable, self._dataset, self._auto_collation,
                                               self._collate_fn, self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(self._next_index())  # StopIteration ends the loop


class _MultiProcessIter(_BaseIter):
    """Main-process side of the workers. Task idx goes to one worker; _task_info[idx] is
    (worker_id,) while it is out and (worker_id, data) once it arrived out of order."""

    def __init__(self, loader):
        super().__init__(loader)
        import multiprocessing

        if loader.prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._owner_pid = os.getpid()  # a forked copy of this object must not shut the workers down
        self._shutdown = False
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._data_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._index_pipes, self._workers = [], []
        try:
            for worker_id in range(self._num_workers):
                # Tasks go down a pipe, written at once: a queue's feeder thread may be gone
                # when a shutdown runs from the garbage collector, and its last words with it.
                reader, writer = context.Pipe(duplex=False)
                worker = context.Process(
                    target=_worker.worker_loop,
                    args=(self._iterable, self._dataset, reader, self._data_queue, self._workers_done_event,
                          self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                          loader.worker_init_fn, worker_id, self._num_workers))
                worker.daemon = True
                self._index_pipes.append(writer)
                self._workers.append(worker)
                worker.start()
                reader.close()  # the worker's end
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: restart their datasets, drop the last epoch's batches
            for pipe in self._index_pipes:
                pipe.send(_worker.ResumeIteration())
            waiting = self._num_workers
            while waiting:
                idx, _ = self._get_data()
                if isinstance(idx, _worker.ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker's dataset is exhausted
        self._index_pipes[worker_id].send((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout):
        import queue

        try:
            return True, pickle.loads(self._data_queue.get(timeout=timeout))
        except queue.Empty:
            dead = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data(_worker.STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self):
        while True:
            # skip the tasks of workers whose (iterable) dataset ended before answering them
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker.IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)
            if not self._in_order:
                del self._task_info[idx]
                return self._process_data(data)
            self._task_info[idx] += (data,)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_unavailable(self, worker_id):
        self._tell_to_stop(worker_id)
        self._workers_status[worker_id] = False

    def _tell_to_stop(self, worker_id):
        try:
            self._index_pipes[worker_id].send(None)
        except OSError:  # the worker is gone
            pass

    def _shutdown_workers(self):
        if self._shutdown or os.getpid() != self._owner_pid:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._tell_to_stop(worker_id)
            for worker in self._workers:
                if worker.pid is not None:
                    worker.join(timeout=_worker.STATUS_CHECK_INTERVAL)
            for pipe in self._index_pipes:
                pipe.close()
            self._data_queue.cancel_join_thread()
            self._data_queue.close()
        finally:
            for worker in self._workers:
                if worker.pid is not None and worker.is_alive():
                    worker.terminate()

    def __del__(self):
        if getattr(self, "_owner_pid", None) is not None:
            self._shutdown_workers()
