#!/usr/bin/env bash
# Fake hosts on one machine, for running MPI jobs "across hosts" in tests
# and benchmarks.
#
# Each fake host is a network namespace (ioc-h1, ioc-h2, ...) with one veth
# whose other end is on a bridge in the root namespace, on a private subnet
# that exists only between them. Open MPI reaches a fake host through an rsh
# agent (`--mca plm_rsh_agent STATE/agent`) instead of ssh: the agent runs
# the daemon Open MPI asks for inside the host's network namespace, in a UTS
# namespace of its own whose hostname is the fake host's name, and in a time
# namespace of its own whose CLOCK_MONOTONIC is shifted by the host's offset.
# The daemon's children (the ranks) inherit all three, so each rank sees its
# host's name and a clock that disagrees with the other hosts' by thousands
# of seconds, as two real machines' monotonic clocks do.
#
# A time namespace made by unshare(CLONE_NEWTIME) applies to the children of
# the process that made it, not to that process; hence `unshare --fork`
# (`--kill-child`, so that killing the agent, as mpirun does on abort, also
# ends the daemon).
#
# The hostfile lists the hosts by address (an address every process can
# reach without a resolver), so nothing on the machine (/etc/hosts, DNS)
# is changed; the agent maps an address back to its host.
#
# Usage:
#   fakehosts.sh up H STATE     make H hosts; writes in the directory STATE:
#                                 hostfile   one line "ADDRESS slots=S" per host
#                                 hosts      one line "NAME ADDRESS OFFSET_S" per host
#                                 agent      the rsh agent for Open MPI
#                                 mca        mpirun options, one per line
#   fakehosts.sh down STATE     remove every host `up` made (also a partial `up`)
#   fakehosts.sh agent STATE ADDRESS COMMAND...   (what STATE/agent runs)
#
# Environment (for `up`):
#   FAKEHOSTS_SLOTS    slots per host in the hostfile (default 2)
#   FAKEHOSTS_NET      the first three octets of the /24 (default 10.227.27)
#   FAKEHOSTS_OFFSETS  CLOCK_MONOTONIC offsets in seconds, one per host,
#                      space-separated (default: host k gets k*1000 + 111*k)
#
# Exit status: 0 done; 77 this machine cannot make the hosts (not root, no
# `ip`, `unshare` without time namespaces, or namespaces refused): callers
# skip; 1 anything else.
set -euo pipefail

PREFIX=ioc-h
BRIDGE=ioc-br

die() { echo "fakehosts.sh: $*" >&2; exit 1; }
cannot() { echo "fakehosts.sh: cannot make fake hosts here: $*" >&2; exit 77; }

# The root namespace's end of host k's veth pair.
veth_of() { echo "ioc-v$1"; }

check_tools() {
    [[ $(id -u) -eq 0 ]] || cannot "not root (network namespaces need root)"
    command -v ip >/dev/null || cannot "no ip (iproute2)"
    command -v unshare >/dev/null || cannot "no unshare (util-linux)"
    unshare --help 2>&1 | grep -q -- --monotonic ||
        cannot "this unshare has no --monotonic (util-linux 2.36 or later)"
    [[ -e /proc/self/ns/time ]] || cannot "the kernel has no time namespaces (Linux 5.6 or later)"
}

up() {
    local count=$1 state=$2
    [[ $count =~ ^[1-9][0-9]?$ && $count -le 200 ]] || die "H must be 1..200, not $count"
    check_tools
    local net=${FAKEHOSTS_NET:-10.227.27} slots=${FAKEHOSTS_SLOTS:-2}
    local -a offsets
    read -r -a offsets <<<"${FAKEHOSTS_OFFSETS:-}"
    if ip netns list | grep -q "^${PREFIX}1\b"; then
        die "fake hosts already exist (${PREFIX}1): another run holds them, or a crashed one left them (fakehosts.sh down STATE, or ip netns del)"
    fi
    mkdir -p "$state"
    state=$(cd "$state" && pwd)
    : >"$state/hosts"
    : >"$state/hostfile"
    echo "$count" >"$state/count"
    # From here on a failure leaves a partial set: `down` removes it.
    if ! ip link add "$BRIDGE" type bridge stp_state 0 forward_delay 0 2>"$state/err"; then
        cannot "ip link add $BRIDGE type bridge: $(cat "$state/err")"
    fi
    ip addr add "$net.254/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    local k name addr offset
    for ((k = 1; k <= count; k++)); do
        name=$PREFIX$k
        addr=$net.$k
        offset=${offsets[k - 1]:-$((k * 1000 + 111 * k))}
        [[ $offset =~ ^-?[0-9]+$ ]] || die "offset '$offset' is not whole seconds"
        ip netns add "$name" 2>"$state/err" || cannot "ip netns add $name: $(cat "$state/err")"
        ip -n "$name" link set lo up
        ip link add "$(veth_of "$k")" type veth peer name eth0 netns "$name"
        ip link set "$(veth_of "$k")" master "$BRIDGE" up
        ip -n "$name" addr add "$addr/24" dev eth0
        ip -n "$name" link set eth0 up
        echo "$name $addr $offset" >>"$state/hosts"
        echo "$addr slots=$slots" >>"$state/hostfile"
    done
    rm -f "$state/err"
    local self
    self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
    printf '#!/bin/sh\nexec %q agent %q "$@"\n' "$self" "$state" >"$state/agent"
    chmod +x "$state/agent"
    # The daemons are started one by one from mpirun (no tree spawn: a
    # daemon inside one fake host must not start another's); TCP only, on
    # the fake subnet (named by address: the interface is ioc-br in the root
    # namespace and eth0 inside a host).
    cat >"$state/mca" <<EOF
--mca
plm_rsh_agent
$state/agent
--mca
plm_rsh_no_tree_spawn
1
--mca
oob_tcp_if_include
$net.0/24
--mca
btl_tcp_if_include
$net.0/24
--mca
btl
self,tcp
--hostfile
$state/hostfile
EOF
}

down() {
    local state=$1 count k name
    count=$(cat "$state/count" 2>/dev/null || echo 0)
    # Kill whatever still runs inside a host (a daemon an aborted job left):
    # its processes would otherwise keep the namespace's interfaces alive.
    for ((k = 1; k <= count; k++)); do
        name=$PREFIX$k
        if ip netns list | grep -q "^$name\b"; then
            local pids
            pids=$(ip netns pids "$name" 2>/dev/null || true)
            [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
            ip netns del "$name" 2>/dev/null || echo "fakehosts.sh: could not remove namespace $name" >&2
        fi
        ip link del "$(veth_of "$k")" 2>/dev/null || true
    done
    ip link del "$BRIDGE" 2>/dev/null || true
    rm -f "$state/agent" "$state/hostfile" "$state/hosts" "$state/mca" "$state/count"
}

# Open MPI runs the agent as `AGENT HOST COMMAND...` (like ssh), HOST as the
# hostfile names it (here its address); the command is one shell string.
agent() {
    local state=$1 host=$2
    shift 2
    local name addr offset found=""
    while read -r name addr offset; do
        if [[ $host == "$addr" || $host == "$name" ]]; then
            found=1
            break
        fi
    done <"$state/hosts"
    [[ -n $found ]] || die "agent: no fake host '$host' in $state/hosts"
    exec ip netns exec "$name" \
        unshare --uts --time --monotonic "$offset" --kill-child \
        /bin/sh -c 'hostname "$1"; shift; exec /bin/sh -c "$*"' fakehost "$name" "$@"
}

case ${1:-} in
    up) [[ $# -eq 3 ]] || die "usage: fakehosts.sh up H STATE"; up "$2" "$3" ;;
    down) [[ $# -eq 2 ]] || die "usage: fakehosts.sh down STATE"; down "$2" ;;
    agent) [[ $# -ge 4 ]] || die "usage: fakehosts.sh agent STATE HOST COMMAND..."; shift; agent "$@" ;;
    *) die "usage: fakehosts.sh up H STATE | down STATE | agent STATE HOST COMMAND..." ;;
esac
