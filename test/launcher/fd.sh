#!/bin/sh
# Descriptor passing: every rank publishes a memfd holding its rank, every
# other rank reads it through the descriptor it gets.
. "$(dirname "$0")/common.sh"

for n in 1 2 4 16; do
    run "$LAUNCHER" -n "$n" "$BOOT_CLIENT" "$MARK" fd
    expect_rc 0 "fd with $n PEs"
    got=$(printf '%s\n' "$OUT" | grep -c "^fd ok rank [0-9]* size $n\$")
    [ "$got" -eq "$n" ] || fail "fd with $n PEs: $got of $n ok: $OUT"
    expect_clean "fd with $n PEs"
done
exit 0
