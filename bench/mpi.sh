#!/usr/bin/env bash
# MPI benchmark (issue 27, point 9): what running under mpirun costs, and how
# well iocurve knows the ranks' clocks.
#
#   1. coordination: `mpirun -n 1 iocurve run` against a plain `iocurve run`
#      of the same workload on the same target, alternating, median of
#      rounds (target: within 2%);
#   2. start skew: `mpirun -n 4 --oversubscribe` on this host, the spread of
#      the ranks' starts over every repetition, on rank 0's clock;
#   3. clocks: three fake hosts (tests/support/fakehosts.sh: network, UTS
#      and time namespaces) whose CLOCK_MONOTONICs are shifted by offsets
#      that are set, against the offsets iocurve recovers, with their bounds.
#
# The target is a zram RAM disk filled with random data (as overhead.sh
# does), so that the device is nearly free and steady and what differs is
# iocurve's own work; BENCH_TARGET names another target instead.
#
# Usage: sudo bench/mpi.sh
# Environment:
#   BENCH_SECONDS  counted seconds per run (default 5)
#   BENCH_ROUNDS   rounds of (plain, mpirun -n 1) (default 5)
#   BENCH_RANKS    ranks for the start skew (default 4)
#   BENCH_TARGET   target for every run (default: a 512 MiB zram disk)
#   IOCURVE        an iocurve binary built with `--features mpi`; skips
#                  `cargo build --release --features mpi`
set -euo pipefail

SECONDS_PER_RUN=${BENCH_SECONDS:-5}
ROUNDS=${BENCH_ROUNDS:-5}
RANKS=${BENCH_RANKS:-4}
RAMP=1

die() { echo "mpi.sh: $*" >&2; exit 1; }
log() { echo "# $*" >&2; }

[[ $(id -u) -eq 0 ]] || die "must run as root (a zram disk, and network namespaces for the fake hosts): sudo bench/mpi.sh"
[[ $SECONDS_PER_RUN =~ ^[0-9]+$ && $SECONDS_PER_RUN -ge 1 ]] || die "BENCH_SECONDS must be a whole number >= 1"
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 ]] || die "BENCH_ROUNDS must be a whole number >= 1"
[[ $RANKS =~ ^[0-9]+$ && $RANKS -ge 2 ]] || die "BENCH_RANKS must be a whole number >= 2"

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
FAKEHOSTS=$REPO_ROOT/tests/support/fakehosts.sh

# ---------------------------------------------------------------- tools
need_pkgs=()
command -v mpirun >/dev/null || need_pkgs+=(openmpi-bin libopenmpi-dev)
command -v jq >/dev/null || need_pkgs+=(jq)
command -v ip >/dev/null || need_pkgs+=(iproute2)
if ((${#need_pkgs[@]})); then
    log "installing ${need_pkgs[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [[ -z ${IOCURVE:-} ]]; then
    IOCURVE=$REPO_ROOT/target/release/iocurve
    log "building iocurve (cargo build --release --features mpi)"
    build=(cargo build --release --features mpi --quiet)
    if [[ -n ${SUDO_USER:-} && $SUDO_USER != root ]]; then
        build=(sudo -u "$SUDO_USER" -H bash -lc 'cargo build --release --features mpi --quiet')
    fi
    (cd "$REPO_ROOT" && "${build[@]}") || die "cargo build --release --features mpi failed"
fi
[[ -x $IOCURVE ]] || die "$IOCURVE is not executable"

WORK=$(mktemp -d /tmp/iocurve-mpi-bench.XXXXXX)
ZRAM_ID=""
HOSTS_UP=""
cleanup() {
    [[ -n $HOSTS_UP ]] && "$FAKEHOSTS" down "$WORK/hosts" || true
    if [[ -n $ZRAM_ID ]]; then
        echo 1 >"/sys/block/zram$ZRAM_ID/reset" 2>/dev/null || true
        echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove 2>/dev/null ||
            echo "mpi.sh: could not remove /dev/zram$ZRAM_ID" >&2
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- target
if [[ -n ${BENCH_TARGET:-} ]]; then
    TARGET=$BENCH_TARGET
else
    [[ -w /sys/class/zram-control/hot_add ]] || die "no zram (set BENCH_TARGET to a device, file or directory)"
    ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
    TARGET=/dev/zram$ZRAM_ID
    for _ in $(seq 50); do [[ -b $TARGET ]] && break; sleep 0.1; done
    [[ -b $TARGET ]] || die "$TARGET did not appear"
    echo 512M >"/sys/block/zram$ZRAM_ID/disksize"
    # Random data: zram answers a read of an untouched or zero page by a
    # shortcut that skips the read path.
    dd if=/dev/urandom of="$TARGET" bs=1M count=512 oflag=direct status=none
fi
# An iocurve built without the feature runs one independent job per rank
# (one document each on stdout): say so rather than print nonsense.
if ! mpirun -n 2 --oversubscribe "$IOCURVE" run "$TARGET" --rw read --bs 64k --time 100ms --ramp 0 \
    --json --no-save 2>"$WORK/check.err" | jq -se 'length == 1 and .[0].mpi.size == 2' >/dev/null 2>&1; then
    tail -n 5 "$WORK/check.err" >&2
    die "$IOCURVE under mpirun -n 2 gives no single result with an mpi section: build it with --features mpi"
fi
WORKLOAD=(--rw randread --bs 4k --qd 1 --engine sync --ramp "${RAMP}s" --json --no-save)

median() { # values -> median, or n/a
    printf '%s\n' "$@" | awk '$1 != "n/a"' | sort -g |
        awk '{v[NR]=$1} END {if (NR==0) print "n/a";
             else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}

# ---------------------------------------------------------------- 1. coordination
iops_of() { jq -er '.tests[0].repetitions[0].iops' "$1" 2>/dev/null || echo n/a; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# One run: "IOPS WALL_MS" (IOPS n/a when it failed); $1 names the output.
timed() {
    local name=$1 t0 t1
    shift
    t0=$(now_ms)
    "$@" >"$WORK/$name.json" 2>"$WORK/$name.err" || tail -n 3 "$WORK/$name.err" >&2
    t1=$(now_ms)
    echo "$(iops_of "$WORK/$name.json") $((t1 - t0))"
}
plain=() mpi1=() plain_ms=() mpi1_ms=()
for ((r = 1; r <= ROUNDS; r++)); do
    read -r iops ms < <(timed plain "$IOCURVE" run "$TARGET" "${WORKLOAD[@]}" --time "${SECONDS_PER_RUN}s")
    plain+=("$iops") plain_ms+=("$ms")
    read -r iops ms < <(timed mpi1 mpirun -n 1 "$IOCURVE" run "$TARGET" "${WORKLOAD[@]}" --time "${SECONDS_PER_RUN}s")
    mpi1+=("$iops") mpi1_ms+=("$ms")
    log "round $r/$ROUNDS: plain ${plain[-1]} IOPS in ${plain_ms[-1]} ms, mpirun -n 1 ${mpi1[-1]} IOPS in ${mpi1_ms[-1]} ms"
done
P=$(median "${plain[@]}")
M=$(median "${mpi1[@]}")
P_MS=$(median "${plain_ms[@]}")
M_MS=$(median "${mpi1_ms[@]}")
COST=$(awk -v p="$P" -v m="$M" 'BEGIN { if (p+0 > 0 && m != "n/a") printf "%.2f", (1 - m/p) * 100; else print "n/a" }')
VERDICT=$(awk -v c="$COST" 'BEGIN { if (c == "n/a") print "n/a"; else if (c <= 2) print "PASS"; else print "MISS" }')

# ---------------------------------------------------------------- 2. start skew
log "start skew: mpirun -n $RANKS --oversubscribe, 5 repetitions"
SKEW_MED=n/a SKEW_MAX=n/a
if mpirun -n "$RANKS" --oversubscribe "$IOCURVE" run "$TARGET" "${WORKLOAD[@]}" --time 1s --repeat 5 \
    >"$WORK/skew.json" 2>"$WORK/skew.err"; then
    mapfile -t skews < <(jq -r '.mpi.tests[].repetitions[] | (.last_start_ns - .first_start_ns) / 1000' "$WORK/skew.json")
    SKEW_MED=$(median "${skews[@]}")
    SKEW_MAX=$(printf '%s\n' "${skews[@]}" | sort -g | tail -n1)
else
    log "the $RANKS-rank run failed:"; tail -n 5 "$WORK/skew.err" | sed 's/^/#   /' >&2
fi

# ---------------------------------------------------------------- 3. clocks
log "clocks: three fake hosts, two ranks each"
CLOCKS_OK=0
if "$FAKEHOSTS" up 3 "$WORK/hosts" 2>"$WORK/hosts.err"; then
    HOSTS_UP=1
    mapfile -t MCA <"$WORK/hosts/mca"
    if mpirun "${MCA[@]}" -n 6 "$IOCURVE" run "$TARGET" "${WORKLOAD[@]}" --time 1s \
        >"$WORK/clocks.json" 2>"$WORK/clocks.err"; then
        CLOCKS_OK=1
    else
        log "the fake-host run failed:"; tail -n 5 "$WORK/clocks.err" | sed 's/^/#   /' >&2
    fi
else
    log "no fake hosts: $(tail -n 1 "$WORK/hosts.err")"
fi

# ---------------------------------------------------------------- report
echo
echo "iocurve under MPI: $TARGET, kernel $(uname -r), $(nproc) CPUs, $(mpirun --version | head -n1)"
echo "4 KiB random read QD1 sync, ${SECONDS_PER_RUN}s after ${RAMP}s warm-up, median of $ROUNDS alternating round(s)"
echo "load average before measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-34s %14s\n' "measure" "value"
printf '%-34s %14s\n' "$(printf '%.0s-' {1..34})" --------------
printf '%-34s %14s\n' "plain run, IOPS" "$P"
printf '%-34s %14s\n' "mpirun -n 1, IOPS" "$M"
printf '%-34s %14s  %s\n' "coordination cost, % of IOPS" "$COST" "(target <= 2: $VERDICT)"
printf '%-34s %14s\n' "plain run, wall ms" "$P_MS"
printf '%-34s %14s  %s\n' "mpirun -n 1, wall ms" "$M_MS" "(launch, clock exchange, merge)"
printf '%-34s %14s\n' "start skew, $RANKS ranks, median µs" "$SKEW_MED"
printf '%-34s %14s\n' "start skew, $RANKS ranks, max µs" "$SKEW_MAX"
echo
if [[ $CLOCKS_OK == 1 ]]; then
    # Offsets set per host (seconds), relative to rank 0's host.
    declare -A SET
    while read -r name _ offset; do SET[$name]=$offset; done <"$WORK/hosts/hosts"
    base_host=$(jq -r '.mpi.ranks[0].host' "$WORK/clocks.json")
    base=${SET[$base_host]}
    printf '%4s %-8s %18s %18s %12s %12s %10s\n' rank host "set ns" "recovered ns" "error ns" "bound ns" "drift ns/s"
    jq -r '.mpi.ranks[] | [.rank, .host, .clock_offset_ns, .clock_offset_bound_ns, .clock_drift_ns_per_s] | @tsv' \
        "$WORK/clocks.json" |
        while IFS=$'\t' read -r rank host got bound drift; do
            set_ns=$(((${SET[$host]:-0} - base) * 1000000000))
            printf '%4s %-8s %18s %18s %12s %12s %10s\n' "$rank" "$host" "$set_ns" "$got" \
                "$((got - set_ns))" "$bound" "$drift"
        done
else
    echo "clocks: n/a (see the log above)"
fi
