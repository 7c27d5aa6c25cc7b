"""Puts the smoke test first, so a broken build fails in seconds, then the slowest file.

Under tests/sanitizer/run.sh (ASAN_OPTIONS with a log_path), the processes the tests start
exit 0 after a sanitizer fault (exitcode=0): run.sh judges every process by its log, so a
real report still fails CI, while LeakSanitizer's own tracer crash at a child's exit (a
runtime fault, no report; run.sh names it) no longer turns that child's status into a
failed test. This process keeps the runtime's exit status: its options were read at start.

Tests marked `cuda` need a GPU: they skip where ember.cuda.is_available() is False.
"""
import os

import pytest

if "log_path=" in os.environ.get("ASAN_OPTIONS", ""):
    os.environ["ASAN_OPTIONS"] += ":exitcode=0"


# The longest file next (its harnesses run ~10 min under ASan): in CI's sanitizer pass, two
# pytest-xdist workers take whole files in this order, so one runs it while the other runs the rest.
FIRST = {"test_smoke.py": 0, "test_fuzz.py": 1}


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: FIRST.get(item.fspath.basename, 2))
    skip_cuda_tests_without_a_gpu(items)


def skip_cuda_tests_without_a_gpu(items):
    marked = [item for item in items if item.get_closest_marker("cuda")]
    if not marked:
        return  # ember.cuda is not even imported
    import ember.cuda

    if ember.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a GPU: ember.cuda.is_available() is False")
    for item in marked:
        item.add_marker(skip)


def pytest_sessionfinish(session, exitstatus):
    """run.sh reads pytest's own status here: a tracer crash at exit would replace it."""
    path = os.environ.get("EMBER_PYTEST_STATUS")
    if path and not os.environ.get("PYTEST_XDIST_WORKER"):  # the controller's status, not a worker's
        with open(path, "w") as f:
            f.write(str(int(exitstatus)))


@pytest.fixture(params=[1, 2])
def threads(request):
    """The test on 1, then 2 intra-op threads, in ember and in torch where it is imported."""
    import sys

    import ember

    torch = sys.modules.get("torch")
    old = ember.get_num_threads(), torch.get_num_threads() if torch else None
    ember.set_num_threads(request.param)
    if torch:
        torch.set_num_threads(request.param)
    yield request.param
    ember.set_num_threads(old[0])
    if torch:
        torch.set_num_threads(old[1])
