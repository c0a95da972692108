# Sourced by the test/pmix scripts: test/mp/common.sh (private TMPDIR,
# marker, run/expect helpers, cleanup), then skip (77) unless this build has
# the PMIx bootstrap and Open MPI's mpirun is installed. Every job runs under
# `timeout`, so a hang fails the test instead of make check.

. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

: "${BOOT_CLIENT:=$top_builddir/test/launcher/boot_client}"
if ! grep -q '^#define DSM_HAVE_PMIX 1' "$top_builddir/config/dsm_config.h" 2>/dev/null; then
    echo "SKIP: this build has no PMIx bootstrap (configure found no libpmix)"
    exit 77
fi
MPIRUN_BIN=$(command -v mpirun) || {
    echo "SKIP: mpirun not installed (Debian: openmpi-bin)"
    exit 77
}
if ! "$MPIRUN_BIN" --version 2>/dev/null | grep -q 'Open MPI'; then
    echo "SKIP: $MPIRUN_BIN is not Open MPI's mpirun"
    exit 77
fi
# Not inherited from a job that runs make check.
unset PMIX_RANK PMIX_NAMESPACE PMIX_SERVER_URI2 PMIX_SERVER_URI21 \
    PMIX_SERVER_URI3 PMIX_SERVER_URI4 OMPI_ALLOW_RUN_AS_ROOT \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
JOB_LIMIT=${DSM_PMIX_TEST_TIMEOUT:-60}
# Open MPI refuses root unless told; shmem_launcher adds the flag itself.
ROOT_FLAG=
[ "$(id -u)" -eq 0 ] && ROOT_FLAG=--allow-run-as-root
MPIRUN=(timeout -k 5 "$JOB_LIMIT" "$MPIRUN_BIN" --oversubscribe $ROOT_FLAG)

shm_list() {
    ls -A /dev/shm 2>/dev/null | sort
}
