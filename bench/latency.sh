#!/usr/bin/env bash
# Latency at depth: iocurve's completion-latency percentiles against fio's,
# 4 KiB random reads through io_uring at one queue depth (default 32) on a
# zram disk, each tool pinned to one CPU, in alternating rounds.
#
# Two fio rows: fio as it comes, and fio told to batch as iocurve does
# (submit and reap a quarter of the depth at a time). Both tools stamp an
# I/O when they reap it, so at a fixed depth a tool's mean latency is the
# depth over its rate (Little's law); latencies compare only between runs
# of equal rate, which the batched fio row comes near; the last row scales
# iocurve's latencies to that row's rate. The "in flight" column (IOPS ×
# mean latency) checks the law for each row.
#
# Usage: sudo bench/latency.sh
# Environment:
#   IOCURVE        the iocurve binary (default: target/release/iocurve,
#                  built first)
#   BENCH_QD       queue depth (default 32)
#   BENCH_SECONDS  counted seconds per run (default 4), after 1 s warm-up
#   BENCH_ROUNDS   rounds of (iocurve, fio, batched fio); medians (default 5)
#   BENCH_CPU      CPU to pin every tool to (default 1)
set -euo pipefail

QD=${BENCH_QD:-32}
SECS=${BENCH_SECONDS:-4}
ROUNDS=${BENCH_ROUNDS:-5}
CPU=${BENCH_CPU:-1}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

[[ $(id -u) -eq 0 ]] || { echo "latency.sh must run as root (it makes a zram disk)" >&2; exit 1; }
for tool in fio jq taskset awk; do
    command -v "$tool" >/dev/null || { echo "latency.sh needs $tool" >&2; exit 1; }
done
[[ $QD =~ ^[0-9]+$ && $QD -ge 1 ]] || { echo "BENCH_QD must be a whole number >= 1" >&2; exit 1; }
if [[ -z ${IOCURVE:-} ]]; then
    (cd "$ROOT" && cargo build --release --quiet)
    IOCURVE=$ROOT/target/release/iocurve
fi
BATCH=$((QD / 4 > 0 ? QD / 4 : 1))

ID=$(cat /sys/class/zram-control/hot_add)
DEV=/dev/zram$ID
SYS=/sys/block/zram$ID
WORK=$(mktemp -d)
cleanup() {
    echo 1 >"$SYS/reset" 2>/dev/null || true
    echo "$ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 50); do [[ -b $DEV ]] && break; sleep 0.1; done
grep -qw lz4 "$SYS/comp_algorithm" && echo lz4 >"$SYS/comp_algorithm"
echo 1G >"$SYS/disksize"
# Random bytes everywhere: a never-written zram page reads as a shortcut.
dd if=/dev/urandom of="$DEV" bs=1M count=1024 oflag=direct status=none

# Each run prints one line: IOPS p50 p90 p99 p99.9 mean (latencies in µs).
iocurve_row() {
    taskset -c "$CPU" "$IOCURVE" run "$DEV" --rw randread --bs 4k --qd "$QD" --engine uring \
        --time "${SECS}s" --ramp 1s --json --no-save 2>/dev/null |
        jq -r '.tests[0].repetitions[0] | [.iops] + ([.latency | .p50_ns, .p90_ns, .p99_ns, .p99_9_ns, .mean_ns] | map(. / 1000)) | @tsv'
}

fio_row() { # extra fio options...
    taskset -c "$CPU" fio --name=lat --filename="$DEV" --direct=1 --time_based \
        --runtime="$SECS" --ramp_time=1 --ioengine=io_uring --rw=randread --bs=4k \
        --iodepth="$QD" --fixedbufs --registerfiles --output-format=json "$@" 2>/dev/null |
        jq -r '.jobs[0].read | [.iops] + ([.clat_ns.percentile["50.000000", "90.000000", "99.000000", "99.900000"], .clat_ns.mean] | map(. / 1000)) | @tsv'
}

for round in $(seq "$ROUNDS"); do
    echo "# round $round of $ROUNDS" >&2
    iocurve_row >>"$WORK/iocurve"
    fio_row >>"$WORK/fio"
    fio_row --iodepth_batch_submit="$BATCH" --iodepth_batch_complete_min="$BATCH" >>"$WORK/fio_batched"
done

# The median of each column over the rounds.
medians() {
    awk -F'\t' '{ for (c = 1; c <= NF; c++) v[c, NR] = $c; n = NR; cols = NF }
        END {
            for (c = 1; c <= cols; c++) {
                for (i = 1; i <= n; i++) a[i] = v[c, i]
                for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
                m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
                printf "%s%s", m, (c < cols ? "\t" : "\n")
            }
        }' "$1"
}

read -r i_iops i_50 i_90 i_99 i_999 i_mean < <(medians "$WORK/iocurve")
read -r f_iops f_50 f_90 f_99 f_999 f_mean < <(medians "$WORK/fio")
read -r b_iops b_50 b_90 b_99 b_999 b_mean < <(medians "$WORK/fio_batched")

echo "4 KiB random reads, io_uring, QD $QD, $DEV (zram, 1 GiB), CPU $CPU, ${SECS} s after 1 s, medians of $ROUNDS rounds, kernel $(uname -r), $(fio --version)"
echo
echo "| tool | IOPS | p50 µs | p90 µs | p99 µs | p99.9 µs | mean µs | in flight (IOPS × mean) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
row() { # name iops p50 p90 p99 p99.9 mean
    awk -v n="$1" -v i="$2" -v a="$3" -v b="$4" -v c="$5" -v d="$6" -v m="$7" \
        'BEGIN { printf "| %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", n, i, a, b, c, d, m, i * m / 1e6 }'
}
row "iocurve" "$i_iops" "$i_50" "$i_90" "$i_99" "$i_999" "$i_mean"
row "fio" "$f_iops" "$f_50" "$f_90" "$f_99" "$f_999" "$f_mean"
row "fio, batched by $BATCH" "$b_iops" "$b_50" "$b_90" "$b_99" "$b_999" "$b_mean"
echo
echo "| iocurve / batched fio | IOPS | p50 | p90 | p99 | p99.9 | mean |"
echo "|---|---:|---:|---:|---:|---:|---:|"
# Second row: iocurve's latencies scaled to batched fio's rate (× its IOPS
# over fio's), what Little's law says they would be at equal rates.
awk -v i="$i_iops" -v b="$b_iops" -v a1="$i_50" -v a2="$i_90" -v a3="$i_99" -v a4="$i_999" -v a5="$i_mean" \
    -v b1="$b_50" -v b2="$b_90" -v b3="$b_99" -v b4="$b_999" -v b5="$b_mean" '
    function cell(x, y) { r = x / y; return sprintf("%.3f %s", r, (r >= 0.9 && r <= 1.1) ? "(within 10%)" : "(outside 10%)") }
    BEGIN {
        printf "| as measured | %.3f | %s | %s | %s | %s | %s |\n", i / b, cell(a1, b1), cell(a2, b2), cell(a3, b3), cell(a4, b4), cell(a5, b5)
        k = i / b
        printf "| at equal rates | 1 | %s | %s | %s | %s | %s |\n", cell(a1 * k, b1), cell(a2 * k, b2), cell(a3 * k, b3), cell(a4 * k, b4), cell(a5 * k, b5)
    }'
