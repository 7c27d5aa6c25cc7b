#!/usr/bin/env bash
# A long fuzzing campaign: every harness (or those named) at once, for SECONDS each, niced,
# each growing its corpus in $EMBER_FUZZ_DIR/corpus/<harness> (default /tmp/ember-fuzz) so a
# later campaign starts where this one stopped. Crashing inputs land in
# $EMBER_FUZZ_DIR/<harness>/crash-*; prints the inputs each harness ran.
#
#   tests/fuzz/campaign.sh 3600                   # an hour of every harness
#   tests/fuzz/campaign.sh 600 fuzz_views         # ten minutes of one
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-600}"
shift || true
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for f in "$here"/fuzz_*.py; do harnesses+=("$(basename "$f" .py)"); done
fi
out="${EMBER_FUZZ_DIR:-/tmp/ember-fuzz}"
pids=()
for h in "${harnesses[@]}"; do
  mkdir -p "$out/corpus/$h" "$out/$h"
  nice -n 10 python "$here/$h.py" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$out/$h/" \
    "$out/corpus/$h" "$here/corpus/$h" > "$out/$h.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || status=1
  h="${harnesses[$i]}"
  runs=$(grep -o "stat::number_of_executed_units: *[0-9]*" "$out/$h.log" | grep -o "[0-9]*$")
  crashes=$(find "$out/$h" -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' | wc -l)
  echo "$h: ${runs:-?} inputs in ${seconds} s, $crashes crashing input(s) in $out/$h (log: $out/$h.log)"
done
exit $status
