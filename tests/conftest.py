"""Puts the smoke test first, so a broken build fails in seconds.

Under tests/sanitizer/run.sh (ASAN_OPTIONS with a log_path), the processes the tests start
exit 0 after a sanitizer fault (exitcode=0): run.sh judges every process by its log, so a
real report still fails CI, while LeakSanitizer's own tracer crash at a child's exit (a
runtime fault, no report; run.sh names it) no longer turns that child's status into a
failed test. This process keeps the runtime's exit status: its options were read at start.
"""
import os

if "log_path=" in os.environ.get("ASAN_OPTIONS", ""):
    os.environ["ASAN_OPTIONS"] += ":exitcode=0"


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: 0 if item.fspath.basename == "test_smoke.py" else 1)


def pytest_sessionfinish(session, exitstatus):
    """run.sh reads pytest's own status here: a tracer crash at exit would replace it."""
    path = os.environ.get("EMBER_PYTEST_STATUS")
    if path:
        with open(path, "w") as f:
            f.write(str(int(exitstatus)))
