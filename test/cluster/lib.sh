# shellcheck shell=bash
# Sourced by test/cluster/*.sh: a cluster of NODES "nodes" simulated on
# this machine, and the helpers to run jobs on it.
#
# Each node is a network namespace with a UTS namespace of its own per
# command (its host name n1, n2, ...), one veth pair whose inner end is
# called cl0 and holds 10.251.0.<i>/24, and whose outer end is on a
# private bridge. Nothing is attached to a real interface and the bridge
# has no address: the nodes reach each other and nothing else (no route,
# no NAT), and this machine's own stack sees none of their traffic.
#
# mpirun runs on n1 and starts its daemons on the other nodes through
# $CL_AGENT (--mca plm_rsh_agent) instead of ssh: the agent runs the
# command in the node's namespaces and, like an ssh session, hangs it up
# when mpirun is gone (a daemon cut off from mpirun would otherwise stay).
#
# In each node TCP gives up on a connection after ~13 s of unanswered
# retransmissions (net.ipv4.tcp_retries2=5, a per-namespace setting): Open
# MPI's mpirun learns that a node is cut off only that way.
#
# Teardown (cl_down) kills every process in the namespaces, deletes them,
# the veths and the bridge; the caller's EXIT trap runs it on every path.
#
# Needs: root, ip (iproute2) with netns, unshare and setsid (util-linux).

: "${NODES:=3}"
CL_PFX=dsc$$            # unique to this run: interface names <= 15 chars
CL_BR=${CL_PFX}br
CL_NET=10.251.0
CL_UP=0

cl_skip_unless_possible() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP: the simulated cluster needs root (network namespaces)"
        exit 77
    fi
    local t
    for t in ip unshare setsid nsenter; do
        command -v "$t" >/dev/null || {
            echo "SKIP: $t not installed (iproute2, util-linux)"
            exit 77
        }
    done
    if ! ip netns add "${CL_PFX}probe" 2>/dev/null; then
        echo "SKIP: cannot create network namespaces here"
        exit 77
    fi
    ip netns del "${CL_PFX}probe"
}

# cl_ns I: the namespace of node nI.
cl_ns() {
    echo "${CL_PFX}n$1"
}

cl_up() {
    local i ns
    CL_UP=1
    ip link add "$CL_BR" type bridge || return 1
    ip link set "$CL_BR" up || return 1
    for i in $(seq "$NODES"); do
        ns=$(cl_ns "$i")
        ip netns add "$ns" || return 1
        ip link add "${CL_PFX}v$i" type veth peer name "${CL_PFX}p$i" || return 1
        ip link set "${CL_PFX}v$i" netns "$ns" || return 1
        ip -n "$ns" link set "${CL_PFX}v$i" name cl0 || return 1
        ip link set "${CL_PFX}p$i" master "$CL_BR" up || return 1
        ip -n "$ns" addr add "$CL_NET.$i/24" dev cl0 || return 1
        ip -n "$ns" link set cl0 up || return 1
        ip -n "$ns" link set lo up || return 1
        # The site setting that lets Open MPI's mpirun notice a node it
        # cannot reach: its daemons' TCP connections give up after ~13 s of
        # unanswered retransmissions instead of ~15 min (docs/CLUSTER.md).
        ip netns exec "$ns" sysctl -qw net.ipv4.tcp_retries2=5 || return 1
    done
    CL_AGENT=$TEST_TMP/cl-agent
    cat >"$CL_AGENT" <<EOF
#!/bin/bash
# mpirun's rsh agent on the simulated cluster: agent [ssh options] HOST CMD
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1
shift
parent=\$PPID
setsid ip netns exec "${CL_PFX}\$host" unshare --uts /bin/sh -c \\
    'hostname "\$0" && exec /bin/sh -c "\$*"' "\$host" "\$@" &
child=\$!
# Like an ssh session: when mpirun is gone, the command is hung up.
while kill -0 "\$child" 2>/dev/null; do
    if ! kill -0 "\$parent" 2>/dev/null; then
        kill -TERM -- -"\$child" 2>/dev/null
        sleep 2
        kill -KILL -- -"\$child" 2>/dev/null
        break
    fi
    sleep 0.3
done
wait "\$child"
EOF
    chmod +x "$CL_AGENT"
    # Every node can reach every other before a job starts.
    for i in $(seq 2 "$NODES"); do
        cl_wait_reach 1 "$i" || return 1
    done
}

# cl_wait_reach I J: node nI reaches nJ over TCP (bash's /dev/tcp to a
# closed port answers "refused" as soon as the link works).
cl_wait_reach() {
    local _
    for _ in $(seq 50); do
        if ip netns exec "$(cl_ns "$1")" timeout 1 bash -c \
            "exec 3<>/dev/tcp/$CL_NET.$2/9" 2>&1 | grep -q refused; then
            return 0
        fi
        sleep 0.1
    done
    echo "node n$1 cannot reach n$2" >&2
    return 1
}

# cl_on I CMD...: CMD on node nI (its namespaces, host name nI).
cl_on() {
    local i=$1
    shift
    ip netns exec "$(cl_ns "$i")" unshare --uts /bin/sh -c \
        'hostname "$0" && exec "$@"' "n$i" "$@"
}

# cl_pids I: every process in node nI's network namespace.
cl_pids() {
    ip netns pids "$(cl_ns "$1")" 2>/dev/null
}

cl_all_pids() {
    local i
    for i in $(seq "$NODES"); do
        cl_pids "$i"
    done
}

# cl_link I down|up: node nI's interface.
cl_link() {
    ip -n "$(cl_ns "$1")" link set cl0 "$2"
}

cl_down() {
    local i p
    [ "$CL_UP" = 1 ] || return 0
    for i in $(seq "$NODES"); do
        for p in $(cl_pids "$i"); do
            kill -KILL "$p" 2>/dev/null
        done
    done
    for i in $(seq "$NODES"); do
        ip netns del "$(cl_ns "$i")" 2>/dev/null
        ip link del "${CL_PFX}p$i" 2>/dev/null
    done
    ip link del "$CL_BR" 2>/dev/null
    CL_UP=0
}
