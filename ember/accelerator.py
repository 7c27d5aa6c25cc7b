"""ember.accelerator: ember has no accelerator, only the CPU.

>>> ember.accelerator.is_available(), ember.accelerator.current_accelerator()
(False, None)
"""
from __future__ import annotations


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def current_accelerator(check_available: bool = False):
    return None
