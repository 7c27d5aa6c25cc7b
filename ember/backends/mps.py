"""ember.backends.mps: there is no MPS device."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
