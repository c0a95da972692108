#!/bin/bash
# Placement (#15): --bind-to / SHMEM_BIND_TO. Every PE reports the CPUs of
# all its threads (bind_report); they must be its share of the node under
# the policy: the contiguous block [r*U/n, (r+1)*U/n) of the U cores (or
# NUMA nodes) the launcher was allowed, one unit when PEs outnumber them;
# none leaves the inherited mask alone; auto is core when n <= U, else none.
# The expected shares come from sysfs (SMT siblings, node cpulists), which is
# what hwloc reports on Linux too. 1, 2 and 4 PEs.
. "$(dirname "$0")/common.sh"
REPORT=${BIND_REPORT:-$top_builddir/test/launcher/bind_report}
[ -x "$REPORT" ] || { echo "SKIP: $REPORT not built"; exit 77; }

# CPU list <-> one CPU per line.
expand() {
    local part a b
    for part in ${1//,/ }; do
        a=${part%-*}; b=${part#*-}
        seq "$a" "$b"
    done
}
compress() { # stdin: sorted CPUs, one per line
    awk 'NR == 1 { a = b = $1; next }
         $1 == b + 1 { b = $1; next }
         { printf "%s%s,", a, (a == b ? "" : "-" b); a = b = $1 }
         END { if (NR) printf "%s%s\n", a, (a == b ? "" : "-" b) }' | sed 's/,$//'
}
# The units (one CPU list per line) inside mask $1: cores or numa.
units() {
    local mask=$1 kind=$2 c f l seen=" "
    if [ "$kind" = numa ]; then
        for f in /sys/devices/system/node/node*/cpulist; do
            [ -e "$f" ] || continue
            l=$(comm -12 <(expand "$(cat "$f")" | sort) <(expand "$mask" | sort) |
                sort -n | compress)
            [ -n "$l" ] && echo "$l"
        done | sort -t- -k1,1n | awk 'NF' | { grep . || echo "$mask"; }
        return
    fi
    for c in $(expand "$mask"); do
        f=/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list
        l=$( (if [ -e "$f" ]; then expand "$(cat "$f")"; else echo "$c"; fi) |
            sort >"$TEST_TMP/u"; expand "$mask" | sort | comm -12 "$TEST_TMP/u" - |
            sort -n | compress)
        case "$seen" in *" $l "*) continue ;; esac
        seen="$seen$l "
        echo "$l"
    done
}
# expected MASK POLICY N RANK -> the CPU list PE RANK must report.
expected() {
    local mask=$1 pol=$2 n=$3 r=$4 u lo hi
    mapfile -t u < <(units "$mask" "$([ "$pol" = numa ] && echo numa || echo core)")
    [ "$pol" = auto ] && { [ "$n" -le "${#u[@]}" ] && pol=core || pol=none; }
    [ "$pol" = none ] && { echo "$mask"; return; }
    lo=$(( r * ${#u[@]} / n )); hi=$(( (r + 1) * ${#u[@]} / n ))
    [ "$hi" -le "$lo" ] && hi=$((lo + 1))
    for ((i = lo; i < hi; i++)); do expand "${u[i]}"; done | sort -n | compress
}

# check LABEL MASK POLICY N [launcher args...]: run and compare every PE.
check() {
    local label=$1 mask=$2 pol=$3 n=$4 r want got
    shift 4
    run "$@" "$REPORT" "$MARK"
    expect_rc 0 "$label"
    [ "$(printf '%s\n' "$OUT" | grep -c '^bind PE')" -eq "$n" ] || fail "$label: $OUT"
    for ((r = 0; r < n; r++)); do
        got=$(printf '%s\n' "$OUT" | awk -v r=$r '$3 == r { print $7 " " $11 }')
        want=$(expected "$mask" "$pol" "$n" "$r")
        [ "$got" = "$want 1" ] ||
            fail "$label: PE $r reports '$got', expected CPUs '$want' on every thread ($ERR)"
    done
    expect_clean "$label"
}

all=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)
first=$(expand "$all" | head -1)
last=$(expand "$all" | tail -1)
unset SHMEM_BIND_TO
for n in 1 2 4; do
    for pol in core numa none; do
        check "--bind-to $pol, $n PEs" "$all" "$pol" "$n" "$LAUNCHER" -n "$n" --bind-to "$pol"
    done
    check "default, $n PEs" "$all" auto "$n" "$LAUNCHER" -n "$n"
    check "SHMEM_BIND_TO=core, $n PEs" "$all" core "$n" env SHMEM_BIND_TO=core "$LAUNCHER" -n "$n"
done
# The option wins over the environment.
check "--bind-to none over SHMEM_BIND_TO=core" "$all" none 2 \
    env SHMEM_BIND_TO=core "$LAUNCHER" -n 2 --bind-to none
# The share is taken from what the launcher was allowed; none keeps it.
check "taskset $last, core" "$last" core 2 taskset -c "$last" "$LAUNCHER" -n 2 --bind-to core
check "taskset $first, none" "$first" none 4 taskset -c "$first" "$LAUNCHER" -n 4 --bind-to none

# SHMEM_INFO: one placement line per PE; the table shows the launcher's
# own variables too (#29), with the value the PEs inherited.
SHMEM_INFO=1 SHMEM_LAUNCHER_TIMEOUT=120 run "$LAUNCHER" -n 2 --bind-to core "$REPORT" "$MARK"
expect_rc 0 "SHMEM_INFO"
[ "$(printf '%s\n' "$OUT" | grep -c '^placement: PE [01] (local [01] of 2): bind core, CPUs [0-9,-]*, GPU [-0-9]*, NIC ')" -eq 2 ] ||
    fail "SHMEM_INFO: no placement line per PE: $OUT"
printf '%s\n' "$OUT" | grep -q '^  SHMEM_BIND_TO  *core  *(default auto, set)' || fail "SHMEM_INFO lacks SHMEM_BIND_TO: $OUT"
printf '%s\n' "$OUT" | grep -q '^  SHMEM_LAUNCHER_TIMEOUT  *120  *(default "", set)' ||
    fail "SHMEM_INFO lacks SHMEM_LAUNCHER_TIMEOUT: $OUT"
printf '%s\n' "$OUT" | grep -q '^  SHMEM_MPS_CONTROL  *nvidia-cuda-mps-control  *(default nvidia-cuda-mps-control)' ||
    fail "SHMEM_INFO lacks SHMEM_MPS_CONTROL: $OUT"

# Bad values: one line naming the option or variable and the value.
run "$LAUNCHER" -n 2 --bind-to socket "$REPORT" "$MARK"
expect_rc 2 "--bind-to socket"
expect_err "^shmem_launcher: invalid --bind-to 'socket' (none, core or numa)\$" "--bind-to socket"
run "$LAUNCHER" -n 2 --bind-to "$REPORT" "$MARK"
expect_rc 2 "--bind-to without a value"
SHMEM_BIND_TO=sockets run "$LAUNCHER" -n 2 "$REPORT" "$MARK"
[ "$RC" -ne 0 ] || fail "SHMEM_BIND_TO=sockets accepted"
expect_err "invalid value 'sockets' for SHMEM_BIND_TO (one of auto|none|core|numa)" "SHMEM_BIND_TO=sockets"
[ "$(printf '%s\n' "$ERR" | grep -c 'SHMEM_BIND_TO')" -ge 1 ] || fail "SHMEM_BIND_TO=sockets: $ERR"
expect_clean "SHMEM_BIND_TO=sockets"
exit 0
