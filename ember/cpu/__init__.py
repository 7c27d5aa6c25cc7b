"""ember.cpu: torch.cpu's device-module face of the CPU, the module
ember.get_device_module("cpu") returns. The CPU is always there and runs one stream in
order, so streams and events have nothing to wait for."""
from __future__ import annotations

import contextlib

from . import amp

__all__ = ["Event", "Stream", "StreamContext", "amp", "current_device", "current_stream", "device_count",
           "is_available", "is_initialized", "set_device", "stream", "synchronize"]


class Stream:
    """The CPU's stream: work runs in order when it is called, so waiting is immediate."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream) -> None:
        pass

    def wait_event(self, event) -> None:
        pass

    def record_event(self) -> None:
        pass


class Event:
    """The CPU's event: already complete when recorded."""

    def query(self) -> bool:
        return True

    def record(self, stream=None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass


_current = [Stream()]


def is_available() -> bool:
    """True: ember always runs on the CPU."""
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    """1: ember sees the machine's CPUs as one device."""
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device) -> None:
    """Nothing to set: there is one CPU device."""


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU ops finish before they return."""


def current_stream(device=None) -> Stream:
    return _current[0]


class StreamContext(contextlib.AbstractContextManager):
    """Makes stream the current one inside the block."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def __enter__(self):
        self._saved, _current[0] = _current[0], (self.stream if self.stream is not None else _current[0])

    def __exit__(self, exc_type, exc, tb):
        _current[0] = self._saved
        return False


def stream(stream) -> StreamContext:
    """`with ember.cpu.stream(s):` makes s the current stream in the block."""
    return StreamContext(stream)
