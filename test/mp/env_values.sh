#!/bin/bash
# Environment variables with a fixed set of values: one that is not in the
# set fails the job at init with one line per PE at most, naming the
# variable and the value (no hang, nothing left behind); a good value
# still runs. SHMEM_SYMMETRIC_SIZE has its own test (heap_size.sh), the
# collective algorithms theirs (coll_bad_algo.sh).
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

# check_line VAR BAD GOOD PATTERN "NPES...": BAD fails the job with 1..n
# lines matching PATTERN on n PEs; GOOD runs.
check_line() {
    local var=$1 bad=$2 good=$3 pat=$4 n lines
    for n in $5; do
        run env "$var=$bad" "$LAUNCHER" -n $n --timeout 60 "$EXIT_PROG" ok "$MARK"
        expect_fail "$var=$bad with $n PEs"
        lines=$(printf '%s\n' "$ERR" | grep -c -- "$pat")
        [ "$lines" -ge 1 ] && [ "$lines" -le "$n" ] ||
            fail "$var=$bad: expected 1..$n lines naming the variable and the value, got $lines"
        expect_faster 20000 "$var=$bad with $n PEs"
        expect_clean "$var=$bad with $n PEs"
    done
    run env "$var=$good" "$LAUNCHER" -n 2 --timeout 60 "$EXIT_PROG" ok "$MARK"
    expect_rc 0 "$var=$good with 2 PEs"
}
check() { # VAR BAD GOOD
    check_line "$1" "$2" "$3" "$1=$2" "1 2 4"
}
# INT variables with a range (issue #27: these were accepted).
check_range() { # VAR BAD GOOD
    check_line "$1" "$2" "$3" "invalid value '$2' for $1" "1 2"
}
check_range SHMEM_PRELAUNCH_DEPTH -5 0
check_range SHMEM_PRELAUNCH_DEPTH 100000000 64
check_range SHMEM_PRELAUNCH_DEPTH 1e8 4
check_range SHMEM_OFI_PROGRESS_US 1000000000 100000
check_range SHMEM_OFI_PROGRESS_US -7 -1
check_range SHMEM_CHECK 3 2
check_range SHMEM_CHECK -1 0
# STR variables with a fixed set (same line as a range): hready was a
# value until #29 removed it.
check_range SHMEM_PERSISTENT_SYNC hready dev

check SHMEM_WAIT_MODE busy spin
check SHMEM_SDMA_PROXY 2 1
check SHMEM_DEV_REQ_TRIGGER_WORD gpu host
echo "PASS: env_values"
