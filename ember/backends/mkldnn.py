"""ember.backends.mkldnn: ember does not use oneDNN; the flag is recorded only."""

enabled = True


def is_available() -> bool:
    return False
