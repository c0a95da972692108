#!/bin/sh
# Command line, program lookup, and programs started without the launcher.
. "$(dirname "$0")/common.sh"

run "$LAUNCHER" --help
expect_rc 0 "--help"
printf '%s\n' "$OUT" | grep -q -- '--tag-output' || fail "--help lacks options"
run "$LAUNCHER" --version
expect_rc 0 "--version"
printf '%s\n' "$OUT" | grep -q '^shmem_launcher (dmashmem) ' || fail "--version: $OUT"

for args in "" "-n" "-n 0" "-n x true" "-n 2" "--bogus -n 2 true" "-n 2 --timeout" \
    "-n 2 --timeout -1 true"; do
    run "$LAUNCHER" $args
    expect_rc 2 "usage '$args'"
    expect_err 'shmem_launcher: ' "usage '$args'"
done

# Found through PATH like execvp; 127 when it cannot be executed.
run env PATH="$(dirname "$BOOT_CLIENT"):$PATH" "$LAUNCHER" -n 2 boot_client "$MARK" info
expect_rc 0 "program found through PATH"
run "$LAUNCHER" -n 4 no-such-program-dmashmem
expect_rc 127 "program not found"
expect_err "^shmem_launcher: cannot execute 'no-such-program-dmashmem': No such file or directory\$" "program not found"
[ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail "program not found: not one line: $ERR"
expect_clean "program not found"

# Installed as oshrun too: same behaviour under both names.
ln -s "$(cd "$(dirname "$LAUNCHER")" && pwd)/$(basename "$LAUNCHER")" "$TEST_TMP/oshrun"
run "$TEST_TMP/oshrun" -n 2 "$BOOT_CLIENT" "$MARK" kv 1
expect_rc 0 "oshrun"

# Without the launcher: the single backend, rank 0 of 1.
run "$BOOT_CLIENT" "$MARK" info
expect_rc 0 "single"
[ "$OUT" = "backend single rank 0 size 1 node_rank 0 node_size 1 node_id 0 num_nodes 1 watch no" ] ||
    fail "single: $OUT"
run "$BOOT_CLIENT" "$MARK" kv 2
expect_rc 0 "single kv"
run "$BOOT_CLIENT" "$MARK" fd
expect_rc 0 "single fd"
SHMEM_BOOTSTRAP=single run "$LAUNCHER" -n 2 "$BOOT_CLIENT" "$MARK" info
expect_rc 0 "forced single under the launcher"
[ "$(printf '%s\n' "$OUT" | grep -c 'backend single rank 0 size 1')" -eq 2 ] || fail "forced single: $OUT"
SHMEM_BOOTSTRAP=bogus run "$BOOT_CLIENT" "$MARK" info
[ "$RC" -ne 0 ] || fail "SHMEM_BOOTSTRAP=bogus accepted"
expect_err 'SHMEM_BOOTSTRAP=bogus' "SHMEM_BOOTSTRAP=bogus"
SHMEM_BOOTSTRAP=launcher run "$BOOT_CLIENT" "$MARK" info
[ "$RC" -ne 0 ] || fail "SHMEM_BOOTSTRAP=launcher without the launcher accepted"
exit 0
