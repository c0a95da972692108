#!/bin/bash
# A team split with a config and config_mask 0 is valid and gives the
# defaults (sos2_config_mask checks the values). SOS's unit test
# shmem_team_get_config expects the config's num_contexts anyway and fails
# with its own line; under SHMEM_DEBUG=1 each new member says in one line
# why the field was not used, without SHMEM_DEBUG nothing is printed.
# (There was no line before: docs/CONFORMANCE.md, issue #14.)
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
PROG=$top_builddir/test/mp/sos2_config_mask

for n in 1 2 4; do
    members=$(( (n + 1) / 2 ))
    run env SHMEM_DEBUG=1 "$LAUNCHER" -n $n --timeout 60 "$PROG" "$MARK"
    expect_rc 0 "config_mask 0 with SHMEM_DEBUG=1 ($n PEs)"
    lines=$(printf '%s\n' "$ERR" | grep -c "shmem_team_split_strided: config given with config_mask 0x0: its num_contexts is not used, the team has the default 0")
    [ "$lines" -eq "$members" ] ||
        fail "$n PEs: $lines config_mask lines, expected one per member ($members)"
    for pe in $(seq 0 2 $((n - 1))); do
        printf '%s\n' "$ERR" | grep "config_mask 0x0" | grep -q "PE $pe" ||
            fail "$n PEs: no config_mask line names PE $pe"
    done
    printf '%s\n' "$ERR" | grep -q "config_mask 0x1" &&
        fail "$n PEs: a line for the split whose mask is set"

    run "$LAUNCHER" -n $n --timeout 60 "$PROG" "$MARK"
    expect_rc 0 "config_mask 0 ($n PEs)"
    [ -z "$ERR" ] || fail "$n PEs: printed without SHMEM_DEBUG: $ERR"
done
echo "PASS: $TEST_NAME"
