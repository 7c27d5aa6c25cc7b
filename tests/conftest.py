"""Puts the smoke test first, so a broken build fails in seconds."""


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: 0 if item.fspath.basename == "test_smoke.py" else 1)
