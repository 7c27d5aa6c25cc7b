"""ember.multiprocessing: Python's multiprocessing (everything it exports is here too), with
ember's tensors and storages sent by their shared memory instead of by copy: a tensor put
on a Queue, sent through a Pipe or passed to a spawned Process moves its storage into
shared memory (share_memory_()) and travels as a file descriptor, so the receiver maps the
same bytes (see reductions.py). Plus torch's spawn/start_processes and sharing strategies."""
import multiprocessing
import sys

from multiprocessing import *  # noqa: F401,F403 (the namespace is multiprocessing's, as torch's)

from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException,
                    SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
           "ProcessExitedException", "SpawnContext", "init_reductions"]
__all__ += multiprocessing.__all__

# Only file descriptors: a storage's memory is an anonymous memory file (memfd) whose
# descriptor the receiver dups and maps, so nothing is ever named in /dev/shm and nothing
# outlives the processes. torch's "file_system" (named files and a manager daemon) is not
# offered.
_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor"}


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors: one of get_all_sharing_strategies()."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The strategies this system supports."""
    return set(_all_sharing_strategies)


init_reductions()
del sys
