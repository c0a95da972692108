#!/bin/bash
# Providers the runtime cannot use correctly are refused at init with one
# line naming what they lack (#32): SHMEM_OFI_PROVIDER=udp (udp;ofi_rxd)
# crashed with SIGSEGV inside fi_cq_read during a 256 KiB get, on one node
# too (SHMEM_FORCE_NETWORK=1 here). Now: status 1 at once, the line, no
# signal, nothing left. (A node-local provider in a job over several nodes
# is refused the same way: test/cluster/cluster.sh.)
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

grep -q '^#define DSM_HAVE_OFI 1' "$top_builddir/config/dsm_config.h" 2>/dev/null || {
    echo "SKIP: this build has no libfabric path"
    exit 77
}
PROG=$top_builddir/test/cluster/cluster_prog
[ -x "$PROG" ] || fail "$PROG not built"
# Is udp;ofi_rxd here at all? (libfabric1 ships it; a build may not.)
run env SHMEM_FORCE_NETWORK=1 SHMEM_OFI_PROVIDER=udp "$LAUNCHER" --timeout 60 -n 2 "$PROG" check "$MARK"
if printf '%s\n' "$ERR" | grep -q "no libfabric provider 'udp'"; then
    echo "SKIP: libfabric has no udp provider here"
    exit 77
fi
expect_rc 1 "SHMEM_OFI_PROVIDER=udp"
expect_err "shmem_init: libfabric provider udp;ofi_rxd is refused: it lacks reliable RMA reads of any size (its 256 KiB gets crash inside fi_cq_read); set SHMEM_OFI_PROVIDER to another (here: .*tcp;ofi_rxm" \
    "SHMEM_OFI_PROVIDER=udp"
printf '%s\n' "$ERR" | grep -qi 'signal\|segmentation' && fail "SHMEM_OFI_PROVIDER=udp: a PE died of a signal"
printf '%s\n' "$OUT" | grep -q '^hosts:' && fail "SHMEM_OFI_PROVIDER=udp: the program got past shmem_init and its first puts"
expect_faster 30000 "SHMEM_OFI_PROVIDER=udp"
expect_clean "SHMEM_OFI_PROVIDER=udp"

# The same program over the default provider passes its 256 KiB gets.
run env SHMEM_FORCE_NETWORK=1 "$LAUNCHER" --timeout 120 -n 2 "$PROG" check "$MARK"
expect_rc 0 "the default provider"
expect_clean "the default provider"
echo "PASS: udp;ofi_rxd refused with its line; the default provider runs the 256 KiB gets"
