#!/usr/bin/env bash
# Queue-depth sweep: 4 KiB random reads through io_uring at QD 1 to 256,
# iocurve (one or two builds) and fio side by side, on a zram disk, each
# tool pinned to one CPU. Prints one Markdown row per depth: IOPS of each
# tool, iocurve / fio, and iocurve's peak resident memory (RSS).
#
# Usage: sudo bench/qd_sweep.sh
# Environment:
#   IOCURVE         the iocurve binary (default: target/release/iocurve,
#                   built first)
#   IOCURVE_BEFORE  a second iocurve binary shown beside it (an older build)
#   BENCH_SECONDS   counted seconds per run (default 3), after 1 s warm-up
#   BENCH_CPU       CPU to pin every tool to (default 1)
#   BENCH_DEPTHS    depths to try (default "1 2 4 8 16 32 64 128 256")
set -euo pipefail

SECS=${BENCH_SECONDS:-3}
CPU=${BENCH_CPU:-1}
DEPTHS=${BENCH_DEPTHS:-"1 2 4 8 16 32 64 128 256"}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

[[ $(id -u) -eq 0 ]] || { echo "qd_sweep.sh must run as root (it makes a zram disk)" >&2; exit 1; }
for tool in fio jq taskset time; do
    command -v "$tool" >/dev/null || { echo "qd_sweep.sh needs $tool" >&2; exit 1; }
done
if [[ -z ${IOCURVE:-} ]]; then
    (cd "$ROOT" && cargo build --release --quiet)
    IOCURVE=$ROOT/target/release/iocurve
fi

ID=$(cat /sys/class/zram-control/hot_add)
DEV=/dev/zram$ID
SYS=/sys/block/zram$ID
cleanup() {
    echo 1 >"$SYS/reset" 2>/dev/null || true
    echo "$ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 50); do [[ -b $DEV ]] && break; sleep 0.1; done
grep -qw lz4 "$SYS/comp_algorithm" && echo lz4 >"$SYS/comp_algorithm"
echo 1G >"$SYS/disksize"
# Random bytes everywhere: a never-written zram page reads as a shortcut.
dd if=/dev/urandom of="$DEV" bs=1M count=1024 oflag=direct status=none

iocurve_at() { # binary qd -> "IOPS RSS_KiB"
    local out rss
    out=$(mktemp)
    rss=$(mktemp)
    # GNU time's %M: the peak resident set, in KiB.
    /usr/bin/env time -f '%M' -o "$rss" taskset -c "$CPU" "$1" run "$DEV" --rw randread --bs 4k \
        --qd "$2" --engine uring --time "${SECS}s" --ramp 1s --json --no-save >"$out" 2>/dev/null
    echo "$(jq -r '.tests[0].repetitions[0].iops' "$out") $(tail -n1 "$rss")"
    rm -f "$out" "$rss"
}

fio_at() { # qd -> IOPS
    taskset -c "$CPU" fio --name=sweep --filename="$DEV" --direct=1 --time_based \
        --runtime="$SECS" --ramp_time=1 --ioengine=io_uring --rw=randread --bs=4k \
        --iodepth="$1" --fixedbufs --registerfiles --output-format=json 2>/dev/null |
        jq -r '.jobs[0].read.iops'
}

echo "4 KiB random reads, io_uring, $DEV (zram, 1 GiB), CPU $CPU, ${SECS} s after 1 s, kernel $(uname -r), $(fio --version)"
echo
if [[ -n ${IOCURVE_BEFORE:-} ]]; then
    echo "| QD | iocurve | iocurve (before) | fio | iocurve / fio | before / fio | iocurve RSS |"
    echo "|---:|---:|---:|---:|---:|---:|---:|"
else
    echo "| QD | iocurve | fio | iocurve / fio | iocurve RSS |"
    echo "|---:|---:|---:|---:|---:|"
fi
for qd in $DEPTHS; do
    read -r now rss < <(iocurve_at "$IOCURVE" "$qd")
    f=$(fio_at "$qd")
    ratio=$(awk -v a="$now" -v b="$f" 'BEGIN { printf "%.2f", a / b }')
    if [[ -n ${IOCURVE_BEFORE:-} ]]; then
        read -r old _ < <(iocurve_at "$IOCURVE_BEFORE" "$qd")
        old_ratio=$(awk -v a="$old" -v b="$f" 'BEGIN { printf "%.2f", a / b }')
        printf '| %s | %.0f | %.0f | %.0f | %s | %s | %.1f MB |\n' "$qd" "$now" "$old" "$f" "$ratio" "$old_ratio" "$(awk -v k="$rss" 'BEGIN { print k * 1024 / 1e6 }')"
    else
        printf '| %s | %.0f | %.0f | %s | %.1f MB |\n' "$qd" "$now" "$f" "$ratio" "$(awk -v k="$rss" 'BEGIN { print k * 1024 / 1e6 }')"
    fi
done
