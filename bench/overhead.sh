#!/usr/bin/env bash
# Overhead benchmark: iocurve against fio and a minimal C pread loop, all on
# the same RAM-backed zram block device, so that the device is (nearly) free
# and what differs between the tools is their own per-I/O cost.
#
# Usage: sudo bench/overhead.sh
# Environment:
#   BENCH_SECONDS  counted seconds per measurement (default 10)
#   BENCH_ROUNDS   rounds of (iocurve, fio, C loop) per workload; the table
#                  shows the median over rounds (default 3)
#   BENCH_CPU      CPU number to pin every tool to with taskset (default:
#                  no pinning); BENCH_CPU=1 runs each under `taskset -c 1`
#   IOCURVE        path to an iocurve binary; skips `cargo build --release`
#   IOCURVE_BEFORE path to a second (older) iocurve binary, measured in the
#                  same rounds and shown beside the first
#   FIO_EXTRA      extra options appended to every fio command line
#   BENCH_ZRAM_SIZE  zram disk size (default 2G); the whole disk is filled
set -euo pipefail

SECONDS_PER_RUN=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
ZRAM_SIZE=${BENCH_ZRAM_SIZE:-2G}
RAMP=1

die() { echo "overhead.sh: $*" >&2; exit 1; }
log() { echo "# $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
    cat >&2 <<'EOF'
overhead.sh must run as root: it creates a zram block device
(/sys/class/zram-control), fills it, and reads it with O_DIRECT.
Run it as:  sudo bench/overhead.sh
EOF
    exit 1
fi

[[ $SECONDS_PER_RUN =~ ^[0-9]+$ && $SECONDS_PER_RUN -ge 1 ]] || die "BENCH_SECONDS must be a whole number >= 1"
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "BENCH_ROUNDS must be a whole number >= 1"

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)

# ---------------------------------------------------------------- tools
need_pkgs=()
command -v fio >/dev/null || need_pkgs+=(fio)
command -v gcc >/dev/null || need_pkgs+=(gcc libc6-dev)
command -v jq  >/dev/null || need_pkgs+=(jq)
if ((${#need_pkgs[@]})); then
    log "installing ${need_pkgs[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
[[ -w /sys/class/zram-control/hot_add ]] || die "no zram support (/sys/class/zram-control/hot_add missing)"

PIN=()
if [[ -n ${BENCH_CPU:-} ]]; then
    if command -v taskset >/dev/null; then
        PIN=(taskset -c "$BENCH_CPU")
    else
        log "BENCH_CPU set but taskset is missing: not pinning"
    fi
fi

WORK=$(mktemp -d /tmp/iocurve-overhead.XXXXXX)
ZRAM_ID=""
cleanup() {
    if [[ -n $ZRAM_ID ]]; then
        echo 1 >"/sys/block/zram$ZRAM_ID/reset" 2>/dev/null || true
        echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove 2>/dev/null ||
            echo "overhead.sh: could not remove /dev/zram$ZRAM_ID" >&2
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "building pread_loop"
gcc -O2 -Wall -o "$WORK/pread_loop" "$SCRIPT_DIR/pread_loop.c"

IOCURVE_OK=1
if [[ -n ${IOCURVE:-} ]]; then
    [[ -x $IOCURVE ]] || { log "IOCURVE=$IOCURVE is not executable: iocurve lines will be n/a"; IOCURVE_OK=0; }
else
    IOCURVE=$REPO_ROOT/target/release/iocurve
    log "building iocurve (cargo build --release)"
    build=(cargo build --release --quiet)
    if [[ -n ${SUDO_USER:-} && $SUDO_USER != root ]]; then
        # Build as the invoking user: their toolchain, their target/ ownership.
        build=(sudo -u "$SUDO_USER" -H bash -lc 'cargo build --release --quiet')
    fi
    if ! command -v cargo >/dev/null && [[ -z ${SUDO_USER:-} ]]; then
        log "cargo not found: iocurve lines will be n/a"
        IOCURVE_OK=0
    elif ! (cd "$REPO_ROOT" && "${build[@]}") >"$WORK/cargo.log" 2>&1; then
        log "cargo build --release failed: iocurve lines will be n/a; last lines:"
        tail -n 15 "$WORK/cargo.log" | sed 's/^/#   /' >&2
        IOCURVE_OK=0
    fi
    [[ $IOCURVE_OK == 1 && ! -x $IOCURVE ]] && { log "$IOCURVE missing after build"; IOCURVE_OK=0; }
fi

# ---------------------------------------------------------------- device
ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
DEV=/dev/zram$ZRAM_ID
SYS=/sys/block/zram$ZRAM_ID
for _ in $(seq 50); do [[ -b $DEV ]] && break; sleep 0.1; done
[[ -b $DEV ]] || die "$DEV did not appear"
if grep -qw lz4 "$SYS/comp_algorithm"; then
    echo lz4 >"$SYS/comp_algorithm"
fi
echo "$ZRAM_SIZE" >"$SYS/disksize"
DEV_BYTES=$(cat "$SYS/disksize")
# Fill every block with random data: zram keeps incompressible pages as they
# are, and a read of a never-written or zero-filled page is a shortcut that
# would not exercise the read path.
log "filling $DEV ($((DEV_BYTES >> 20)) MiB) with random data"
dd if=/dev/urandom of="$DEV" bs=1M count=$((DEV_BYTES >> 20)) oflag=direct status=none
ALG=$(grep -o '\[[^]]*\]' "$SYS/comp_algorithm" | tr -d '[]')

# ---------------------------------------------------------------- runners
# Each prints "IOPS MBPS" on stdout, or "n/a n/a" when the tool failed.
TIMEOUT=$((SECONDS_PER_RUN + RAMP + 60))

run_iocurve() { # rw bs qd engine
    local out=$WORK/iocurve.json err=$WORK/iocurve.err
    if [[ $IOCURVE_OK != 1 ]]; then echo "n/a n/a"; return; fi
    if timeout "$TIMEOUT" "${PIN[@]}" "$IOCURVE" run "$DEV" --rw "$1" --bs "$2" --qd "$3" \
        --engine "$4" --time "${SECONDS_PER_RUN}s" --ramp "${RAMP}s" --json >"$out" 2>"$err" &&
        jq -er '[.tests[0].repetitions[0].iops, .tests[0].repetitions[0].mb_per_s] | map(tostring) | join(" ")' \
            "$out" 2>/dev/null; then
        return
    fi
    log "iocurve run $1 bs=$2 qd=$3 engine=$4 failed; stderr / output:"
    { tail -n 5 "$err"; head -c 400 "$out"; echo; } | sed 's/^/#   /' >&2
    echo "n/a n/a"
}

run_fio() { # fio options...
    local out=$WORK/fio.json err=$WORK/fio.err
    # shellcheck disable=SC2086
    if timeout "$TIMEOUT" "${PIN[@]}" fio --name=overhead --filename="$DEV" --direct=1 \
        --time_based --runtime="$SECONDS_PER_RUN" --ramp_time="$RAMP" \
        --output-format=json --output="$out" "$@" ${FIO_EXTRA:-} >/dev/null 2>"$err" &&
        jq -er '[.jobs[0].read.iops, .jobs[0].read.bw_bytes / 1e6] | map(tostring) | join(" ")' \
            "$out" 2>/dev/null; then
        return
    fi
    log "fio $* failed:"
    tail -n 5 "$err" | sed 's/^/#   /' >&2
    echo "n/a n/a"
}

run_c() { # bs mode
    local line
    if line=$(timeout "$TIMEOUT" "${PIN[@]}" "$WORK/pread_loop" "$DEV" "$1" "$SECONDS_PER_RUN" "$2" 2>"$WORK/c.err"); then
        sed -E 's/^iops=([0-9.]+) mbps=([0-9.]+)$/\1 \2/' <<<"$line"
        return
    fi
    log "pread_loop $1 $2 failed:"
    tail -n 5 "$WORK/c.err" | sed 's/^/#   /' >&2
    echo "n/a n/a"
}

median() { # values... ("n/a" ignored) -> median or n/a
    printf '%s\n' "$@" | awk '$1 != "n/a"' | sort -g |
        awk '{v[NR]=$1} END {if (NR==0) print "n/a";
             else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}

ratio() { # a b -> a/b with 2 decimals, or n/a
    if [[ $1 == n/a || $2 == n/a ]]; then echo n/a; return; fi
    awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a/b; else print "n/a" }'
}

fmt() { # number -> rounded, or n/a
    if [[ $1 == n/a ]]; then echo n/a; else awk -v x="$1" 'BEGIN { printf "%.0f", x }'; fi
}

# ---------------------------------------------------------------- measure
declare -A RES # RES[workload,tool,metric] = median

measure() { # key c_bs c_mode iocurve-args(4) -- fio-args...
    local key=$1 cbs=$2 cmode=$3 i_rw=$4 i_bs=$5 i_qd=$6 i_eng=$7
    shift 8
    local fio_args=("$@") r tool v
    declare -A I M
    for ((r = 1; r <= ROUNDS; r++)); do
        for tool in iocurve before fio c; do
            case $tool in
                iocurve) v=$(run_iocurve "$i_rw" "$i_bs" "$i_qd" "$i_eng") ;;
                before) if [[ -z ${IOCURVE_BEFORE:-} ]]; then continue; fi
                   v=$(IOCURVE=$IOCURVE_BEFORE run_iocurve "$i_rw" "$i_bs" "$i_qd" "$i_eng") ;;
                fio) v=$(run_fio "${fio_args[@]}") ;;
                c) if [[ $cbs == - ]]; then continue; fi
                   v=$(run_c "$cbs" "$cmode") ;;
            esac
            I[$tool]+="${v% *} "
            M[$tool]+="${v#* } "
            log "round $r/$ROUNDS  $key  $tool: $(fmt "${v% *}") IOPS, $(fmt "${v#* }") MB/s"
        done
    done
    for tool in iocurve before fio c; do
        # shellcheck disable=SC2086
        RES[$key,$tool,iops]=$(median ${I[$tool]:-n/a})
        # shellcheck disable=SC2086
        RES[$key,$tool,mbps]=$(median ${M[$tool]:-n/a})
    done
}

LOAD=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$LOAD" 'BEGIN { exit !(l >= 0.5) }'; then
    log "warning: load average is $LOAD before measuring; other work on this machine will make the numbers noisy"
fi
log "device $DEV, $((DEV_BYTES >> 20)) MiB zram ($ALG), ${SECONDS_PER_RUN}s per run, $ROUNDS round(s), pinning: ${PIN[*]:-none}"

measure 4k-qd1 4096 rand  randread 4k 1 sync -- \
    --ioengine=psync --rw=randread --bs=4k --iodepth=1
measure 4k-qd32 - - randread 4k 32 uring -- \
    --ioengine=io_uring --rw=randread --bs=4k --iodepth=32 \
    --fixedbufs --registerfiles --hipri=0 --sqthread_poll=0
measure 1m-seq 1048576 seq read 1M 1 sync -- \
    --ioengine=psync --rw=read --bs=1M --iodepth=1

# ---------------------------------------------------------------- report
row() { # label key metric
    local a=${RES[$2,iocurve,$3]} b=${RES[$2,fio,$3]} c=${RES[$2,c,$3]} o=${RES[$2,before,$3]}
    printf '%-30s %12s %12s %12s %12s %12s' "$1" "$(fmt "$a")" "$(fmt "$b")" "$(fmt "$c")" \
        "$(ratio "$a" "$b")" "$(ratio "$a" "$c")"
    if [[ -n ${IOCURVE_BEFORE:-} ]]; then
        printf ' %12s %12s' "$(fmt "$o")" "$(ratio "$o" "$b")"
    fi
    echo
}
header() { # what the numbers are
    printf '%-30s %12s %12s %12s %12s %12s' workload "iocurve $1" "fio $1" "C loop $1" iocurve/fio iocurve/C
    if [[ -n ${IOCURVE_BEFORE:-} ]]; then
        printf ' %12s %12s' "before $1" before/fio
    fi
    echo
}
verdict() { # ratio threshold
    if [[ $1 == n/a ]]; then echo n/a
    elif awk -v r="$1" -v t="$2" 'BEGIN { exit !(r >= t) }'; then echo PASS
    else echo MISS; fi
}

echo
echo "iocurve overhead: $DEV ($((DEV_BYTES >> 20)) MiB zram, $ALG), kernel $(uname -r), $(nproc) CPUs"
echo "${SECONDS_PER_RUN}s per run after ${RAMP}s warm-up (none for the C loop), median of $ROUNDS round(s), pinning: ${PIN[*]:-none}"
echo "load average before measuring: $LOAD"
echo "$(fio --version), iocurve: $([[ $IOCURVE_OK == 1 ]] && "$IOCURVE" --version 2>/dev/null | head -n1 || echo n/a)"
echo
header IOPS
printf '%-30s %12s %12s %12s %12s %12s' "$(printf '%.0s-' {1..30})" ------------ ------------ ------------ ------------ ------------
[[ -n ${IOCURVE_BEFORE:-} ]] && printf ' %12s %12s' ------------ ------------
echo
row "4 KiB rand read QD1 sync" 4k-qd1 iops
row "4 KiB rand read QD32 io_uring" 4k-qd32 iops
row "1 MiB seq read QD1 sync" 1m-seq iops
header MB/s
row "1 MiB seq read QD1 sync" 1m-seq mbps
echo
r_fio=$(ratio "${RES[4k-qd1,iocurve,iops]}" "${RES[4k-qd1,fio,iops]}")
r_c=$(ratio "${RES[4k-qd1,iocurve,iops]}" "${RES[4k-qd1,c,iops]}")
echo "targets (4 KiB rand read QD1, informational):"
printf '  iocurve >= 1.00 x fio     : %-5s %s\n' "$r_fio" "$(verdict "$r_fio" 1.0)"
printf '  iocurve >= 0.90 x C loop  : %-5s %s\n' "$r_c" "$(verdict "$r_c" 0.9)"
