#!/usr/bin/env bash
# Runs the tests against ember._C built with AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   tests/sanitizer/run.sh [pytest arguments]       (default: the whole suite, -q)
#
# The sources are mirrored into build/sanitize/ (EMBER_SANITIZE_TREE overrides) and built
# there with EMBER_SANITIZE=1, so the normal in-place build is left alone; rebuilds there are
# incremental. The sanitizer runtimes are preloaded into python, leak detection is on (CPython's
# own allocations are suppressed by tests/sanitizer/lsan.supp), and every report is written to a
# log that this script checks: it fails on any report, even when pytest passed.
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
tree="${EMBER_SANITIZE_TREE:-$repo/build/sanitize}"
mkdir -p "$tree"

# Mirror the tracked (and new, not ignored) files afresh, keeping their mtimes, so the build
# there stays incremental and a file deleted here is gone there too.
(cd "$tree" && find . -mindepth 1 -maxdepth 1 ! -name build ! -name build-sanitize.log -exec rm -rf {} +)
(cd "$repo" && git ls-files --cached --others --exclude-standard -z | xargs -0 ls -d 2> /dev/null |
  tar -cf - -T -) | tar -xf - -C "$tree"

lock=()
command -v flock > /dev/null && lock=(flock /tmp/ember-build.lock)
echo "sanitize: building in $tree"
if ! (cd "$tree" && EMBER_SANITIZE=1 "${lock[@]}" python setup.py build_ext --inplace > build-sanitize.log 2>&1); then
  tail -n 40 "$tree/build-sanitize.log"
  echo "sanitize: build failed (log: $tree/build-sanitize.log)"
  exit 1
fi

# The interpreter itself, not a wrapper script (pyenv's shim breaks under the preloaded runtime).
py="$(python -c 'import sys; print(sys.executable)')"
logs="$(mktemp -d)"
export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
# Python objects through malloc, so ASan sees them and LSan can follow pointers held in them.
export PYTHONMALLOC=malloc
# max_allocation_size_mb: a single allocation past 3 GiB fails (ember's RuntimeError) instead of
# filling gigabytes under ASan, as the address-space cap of the fuzz harnesses and test_leaks does
# without it (tests/test_hostile.py's largest tensor is 2 GiB).
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:log_path=$logs/asan:detect_stack_use_after_return=0:allocator_may_return_null=1:max_allocation_size_mb=3072${EMBER_ASAN_OPTIONS:+:$EMBER_ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$repo/tests/sanitizer/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"

cd "$tree"
"$py" -c "import ember._C as C, sys; f = C._build_config()['compiler_flags']; sys.exit(0 if '-fsanitize=address' in f else 'not a sanitizer build: ' + f)" || exit 1
if [ $# -eq 0 ]; then set -- -q; fi
# pytest writes its own exit status (tests/conftest.py), so that a tracer crash at its exit
# (below) is told apart from a failed run
export EMBER_PYTEST_STATUS="$logs.pytest-status"
"$py" -m pytest -p no:cacheprovider "$@" &
pytest_pid=$!
wait "$pytest_pid"
status=$?

# A log holding only allocator warnings is no report: tests ask for impossible sizes on purpose
# (allocator_may_return_null=1 turns those into ember's RuntimeError, with this warning).
# Nor is a log holding only LeakSanitizer's own crash at a process's exit ("Tracer caught
# signal 11", then "LeakSanitizer has encountered a fatal error" and its two hints): its
# stop-the-world tracer faulted, so that process's leak check did not run, which says nothing
# about ember (a known intermittent fault of the runtime, google/sanitizers#1353; seen here in a
# spawned child of the multi-process tests and in a fuzz harness run by test_fuzz.py, whose exit
# status it made 1). It is counted and named below, not failed on; tests/conftest.py gives the
# processes the tests start exitcode=0, so that only these logs judge them.
tool_failure='Tracer caught signal|LeakSanitizer has encountered a fatal error|HINT: For debugging, try setting environment variable LSAN_OPTIONS|HINT: LeakSanitizer does not work under ptrace'
reports=""
skipped=""
for f in $(find "$logs" -type f | sort); do
  # (grep -c reads to the end: `grep -q` would stop early, and under pipefail the first grep's
  # SIGPIPE made a long report read as no report)
  body="$(grep -v "WARNING: AddressSanitizer failed to allocate" "$f" | grep -c .)"
  rest="$(grep -v "WARNING: AddressSanitizer failed to allocate" "$f" | grep -Ev "$tool_failure" | grep -c .)"
  if [ "$rest" -gt 0 ]; then reports="$reports $f"; elif [ "$body" -gt 0 ]; then skipped="$skipped $f"; fi
done
if [ -n "$skipped" ]; then
  echo "sanitize: LeakSanitizer's tracer crashed at exit in $(echo $skipped | wc -w) process(es), whose leak check did not run:$skipped"
fi
reports="${reports# }"
if [ -n "$reports" ]; then
  for f in $reports; do echo "=== $f"; grep -v "failed to allocate" "$f" | head -n 80; done
  echo "sanitize: $(echo "$reports" | wc -w) sanitizer report(s); see above"
  exit 1
fi
echo "sanitize: no sanitizer report"
if [ "$status" -ne 0 ] && [ "$(cat "$EMBER_PYTEST_STATUS" 2> /dev/null)" = "0" ] &&
   [[ " $skipped " == *" $logs/asan.$pytest_pid "* ]]; then
  echo "sanitize: pytest itself passed; its status $status is LeakSanitizer's tracer crash at its exit"
  status=0
fi
exit $status
