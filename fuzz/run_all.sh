#!/bin/sh
# Run fuzz targets one after another, each for $SECS seconds (default 600) in one process at
# the lowest priority, logging to fuzz/logs/<target>.log. Needs cargo-fuzz; on a stable
# toolchain set RUSTC_BOOTSTRAP=1. Usage: fuzz/run_all.sh [target ...]
set -u
cd "$(dirname "$0")"
SECS=${SECS:-600}
TARGETS=${*:-"gqr_readers route_config rag_json trec_eval crb_bank rag_cases predictions parse_eval pyre"}
mkdir -p logs
for t in $TARGETS; do
    mkdir -p "corpus/$t" "artifacts/$t"
    echo "== $t start $(date -u +%H:%M:%S)" >> logs/summary.txt
    nice -n 19 cargo fuzz run -O ${FUZZ_SANITIZER:+--sanitizer "$FUZZ_SANITIZER"} "$t" "corpus/$t" -- \
        -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/" > "logs/$t.log" 2>&1
    echo "== $t exit $? $(date -u +%H:%M:%S)" >> logs/summary.txt
done
