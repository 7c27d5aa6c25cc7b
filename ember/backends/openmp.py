"""ember.backends.openmp: ember's thread pool is its own, not OpenMP."""


def is_available() -> bool:
    return False
