"""spawn and start_processes: run fn(i, *args) in nprocs processes and join them, turning
the first failure into an exception in the parent (torch.multiprocessing's contract: the
others are terminated, the child's traceback or its exit code/signal is in the message)."""
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process failed because fn raised: the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A process failed because it exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent terminated us (SIGINT): nothing to report
    except Exception:
        import traceback

        with open(error_file, "wb") as f:  # read by ProcessContext.join in the parent
            pickle.dump(traceback.format_exc(), f)
        sys.exit(1)


class ProcessContext:
    """The processes start_processes(join=False) started; join() them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        return [int(process.pid) for process in self.processes]

    def _cleanup(self):
        for path in self.error_files:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def join(self, timeout=None, grace_period=None):
        """Waits (up to timeout seconds) for the processes. True once all exited cleanly,
        False while some still run; on the first failure, terminates the others (SIGTERM,
        then SIGKILL after grace_period seconds when given) and raises
        ProcessRaisedException or ProcessExitedException."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                failed = index
                break
        if failed is None:
            if not self.sentinels:
                self._cleanup()
                return True
            return False
        self._terminate_others(grace_period)
        try:
            self._raise_for(failed)
        finally:
            self._cleanup()

    def _terminate_others(self, grace_period):
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        deadline = time.monotonic() + grace_period if grace_period is not None else None
        for process in self.processes:
            if deadline is not None:
                process.join(max(0.0, deadline - time.monotonic()))
                if process.is_alive():
                    process.kill()
            process.join()

    def _raise_for(self, index):
        process = self.processes[index]
        path = self.error_files[index]
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            code = process.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {index:d} terminated with signal {name}",
                                             error_index=index, error_pid=process.pid, exit_code=code,
                                             signal_name=name)
            raise ProcessExitedException(f"process {index:d} terminated with exit code {code:d}",
                                         error_index=index, error_pid=process.pid, exit_code=code)
        with open(path, "rb") as f:
            trace = pickle.load(f)
        msg = f"\n\n-- Process {index:d} terminated with the following error:\n" + trace
        raise ProcessRaisedException(msg, index, process.pid)


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.")
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts nprocs processes running fn(i, *args) (i = 0 .. nprocs-1) with start_method;
    joins them when join (raising on the first failure), else returns their ProcessContext."""
    context = multiprocessing.get_context(start_method)
    error_files = []
    processes = []
    for i in range(nprocs):
        handle, path = tempfile.mkstemp(prefix="ember-errorfile-", suffix=".pickle")
        os.close(handle)  # empty: the child writes its traceback only when fn raises
        error_files.append(path)
        process = context.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        process.start()
        processes.append(process)
    process_context = ProcessContext(processes, error_files)
    if not join:
        return process_context
    while not process_context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """start_processes with the spawn start method (fn must be importable by the children)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t torch.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
