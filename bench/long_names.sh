#!/usr/bin/env bash
# Long-name benchmark: how long the commands that show stored names take
# when an imported fio job is named with 50 MB. Names are cut to 200
# columns and every wrapper is linear, so each command should take well
# under a second; before that, `history` took over a minute.
#
# Usage: bench/long_names.sh
# Environment:
#   IOCURVE     path to an iocurve binary; skips `cargo build --release`
#   NAME_BYTES  length of the job name (default 50000000)
set -euo pipefail

NAME_BYTES=${NAME_BYTES:-50000000}
FIXTURE=tests/fixtures/fio-3.33-seqread-randwrite.json

die() { echo "long_names.sh: $*" >&2; exit 1; }

cd "$(dirname "$0")/.."
command -v jq >/dev/null || die "needs jq (apt-get install jq)"
if [[ -z ${IOCURVE:-} ]]; then
    cargo build --release >&2
    IOCURVE=target/release/iocurve
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

head -c "$NAME_BYTES" /dev/zero | tr '\0' w >"$work/name"
jq --rawfile n "$work/name" '.jobs[0].jobname = $n | .jobs[1].jobname = ("x " * 1000000 + $n)' \
    "$FIXTURE" >"$work/fio.json"
db=$work/results.db
"$IOCURVE" import "$work/fio.json" --db "$db" >/dev/null
"$IOCURVE" import "$work/fio.json" --db "$db" >/dev/null

printf '%-28s %8s %10s\n' command seconds "bytes out"
for cmd in "history" "list" "compare 1 2" "export 1 --format markdown" \
    "export 1 --format csv" "report 1 -o $work/report.html"; do
    # shellcheck disable=SC2086
    start=$(date +%s%N)
    bytes=$("$IOCURVE" --db "$db" $cmd | wc -c)
    end=$(date +%s%N)
    ms=$(((end - start) / 1000000))
    printf '%-28s %4d.%03d %10s\n' "${cmd%% -o*}" $((ms / 1000)) $((ms % 1000)) "$bytes"
done
