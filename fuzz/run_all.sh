#!/bin/sh
# Runs every fuzz target for SECS seconds (default 600), two at a time, from the
# committed seeds plus the local corpus; logs go to fuzz/logs/<target>.log.
# Usage (from fuzz/): RUSTC_BOOTSTRAP=1 cargo fuzz build -O && ./run_all.sh [SECS]
set -u
SECS=${1:-600}
mkdir -p logs
run() {
  t=$1
  [ -n "$t" ] || return 0
  mkdir -p corpus/$t seeds/$t
  RUSTC_BOOTSTRAP=1 cargo fuzz run -O $t corpus/$t seeds/$t -- \
    -max_total_time=$SECS -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    > logs/$t.log 2>&1
  echo "$t exit $?" >> logs/summary.txt
}
for pair in "json_sidecar tsv" "nifti gzip_header" "tiff filename" "schema parse_eval" "hed_string"; do
  set -- $pair
  run $1 & run ${2:-} & wait
done
