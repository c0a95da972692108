#!/usr/bin/env bash
# Release check: build and run every program of one directory of a public
# OpenSHMEM test suite (Sandia OpenSHMEM's test/unit, test/spec-example)
# against an installed dmashmem, and print a PASS/FAIL/SKIP table.
#
#   test/release/run-sos-suite.sh SOS_TEST_DIR [NPES...]     (default: 2 4)
#
# Each *.c is built with oshcc, each *.cpp/*.cc/*.cxx with oshc++ (SKIP
# when no C++ wrapper is installed); Fortran files are ignored. A program
# that includes mpi.h is SKIPped (hybrid MPI examples need an MPI this
# check does not set up). Programs with "#pragma omp" get -fopenmp, all get
# -pthread -lm (the suites' Makefiles add them the same way). Every build
# and run is under `timeout`, so a hang shows as FAIL (timeout), never as
# a stuck release check. A program that fails to build counts as a FAIL
# for every PE count (a missing routine or macro is our problem to report).
#
# Environment:
#   DSM_PREFIX     install prefix holding bin/oshcc, bin/oshrun (default:
#                  the directory of the first oshcc in PATH, ..)
#   OSHCC, OSHCXX, OSHRUN   override the individual tools
#   SOS_TIMEOUT    seconds per run (default 60); builds get 120
#   SOS_ONLY       space-separated program names (no extension) to run
#   SOS_LOG_DIR    keep logs here (default: a temporary directory, kept
#                  only when something failed; its path is printed)
#   SOS_CFLAGS     extra compiler flags
#
# Also checks that no run left a dmashmem file in /dev/shm (a leak counts
# as a FAIL of that run), and notes on a program's line when a run that
# exited 0 printed something like an error or a mismatch (the first such
# line; the result stays PASS, as in SOS's own harness). Exit status: 0 when nothing FAILed, 1 otherwise,
# 2 on usage errors. This is a release check, not part of `make check`: it
# needs the suite's sources, which CI (no network) does not have.
set -uo pipefail

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
    echo "usage: $0 SOS_TEST_DIR [NPES...]" >&2
    exit 2
fi
srcdir=$(cd "$1" && pwd)
shift
npes_list=("$@")
[ ${#npes_list[@]} -eq 0 ] && npes_list=(2 4)
for n in "${npes_list[@]}"; do
    case "$n" in
    '' | *[!0-9]*)
        echo "$0: PE count '$n' is not a positive integer" >&2
        exit 2
        ;;
    esac
done

if [ -n "${DSM_PREFIX:-}" ]; then
    bindir=$DSM_PREFIX/bin
else
    bindir=$(dirname "$(command -v oshcc 2>/dev/null || echo ./oshcc)")
fi
oshcc=${OSHCC:-$bindir/oshcc}
oshcxx=${OSHCXX:-$bindir/oshc++}
oshrun=${OSHRUN:-$bindir/oshrun}
if [ ! -x "$oshcc" ] || [ ! -x "$oshrun" ]; then
    echo "$0: no oshcc/oshrun in $bindir (set DSM_PREFIX to the install prefix)" >&2
    exit 2
fi
# Another OpenSHMEM (Open MPI's oshcc in /usr/bin) may come first in PATH:
# run nothing against it by mistake.
if ! "$oshcc" -show 2>/dev/null | grep -q -e '-ldmashmem'; then
    echo "$0: $oshcc is not dmashmem's wrapper (set DSM_PREFIX to dmashmem's install prefix)" >&2
    exit 2
fi
have_cxx=1
[ -x "$oshcxx" ] || have_cxx=0
tmo=${SOS_TIMEOUT:-60}

keep_logs=0
if [ -n "${SOS_LOG_DIR:-}" ]; then
    logdir=$SOS_LOG_DIR
    mkdir -p "$logdir" || exit 2
    keep_logs=1
else
    logdir=$(mktemp -d "${TMPDIR:-/tmp}/sos-suite.XXXXXX") || exit 2
fi
bindir_tmp=$(mktemp -d "${TMPDIR:-/tmp}/sos-bin.XXXXXX") || exit 2
cleanup() { rm -rf "$bindir_tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# dmashmem's shared-memory files; anything new under this pattern after a
# run is a leak.
shm_list() { ls /dev/shm 2>/dev/null | grep -i -e dsm -e dmashmem | sort; }

# Lines that suggest a wrong result in a run that exited 0.
suspect='error|fail|mismatch|incorrect|expected'

declare -A total=([PASS]=0 [FAIL]=0 [SKIP]=0)
failed_names=()

header=$(printf '%-40s %-8s' PROGRAM BUILD)
for n in "${npes_list[@]}"; do header+=$(printf ' %-14s' "np=$n"); done
echo "$header"

shopt -s nullglob
for src in "$srcdir"/*.c "$srcdir"/*.cpp "$srcdir"/*.cc "$srcdir"/*.cxx; do
    file=$(basename "$src")
    name=${file%.*}
    if [ -n "${SOS_ONLY:-}" ] && [[ " $SOS_ONLY " != *" $name "* ]]; then
        continue
    fi
    exe=$bindir_tmp/$name
    blog=$logdir/$name.build.log
    build=ok
    why=
    case "$file" in
    *.c) cc=$oshcc ;;
    *) cc=$oshcxx ;;
    esac
    flags=(-pthread -I"$srcdir")
    grep -q '#[[:space:]]*pragma[[:space:]]\+omp' "$src" && flags+=(-fopenmp)
    if grep -q '#[[:space:]]*include[[:space:]]*<mpi.h>' "$src"; then
        build=skip
        why="needs MPI"
    elif [ "$cc" = "$oshcxx" ] && [ $have_cxx = 0 ]; then
        build=skip
        why="no oshc++"
    elif ! timeout 120 "$cc" "${flags[@]}" ${SOS_CFLAGS:-} -o "$exe" "$src" -lm \
        >"$blog" 2>&1; then
        build=FAIL
        why=$(grep -m1 -e 'error' -e 'undefined reference' "$blog" | cut -c1-160)
    fi

    line=$(printf '%-40s %-8s' "$name" "$build")
    for n in "${npes_list[@]}"; do
        case $build in
        skip)
            res=SKIP
            ;;
        FAIL)
            res=FAIL
            ;;
        *)
            rlog=$logdir/$name.np$n.log
            before=$(shm_list)
            # The group's stderr is closed so that bash's "Killed" note for
            # a run that timeout had to SIGKILL does not tear the table.
            { timeout -k 5 "$tmo" "$oshrun" -n "$n" "$exe" >"$rlog" 2>&1 </dev/null; } 2>/dev/null
            rc=$?
            after=$(shm_list)
            leaked=$(comm -13 <(echo "$before") <(echo "$after") | grep -c .)
            if [ $rc = 0 ] && [ "$leaked" = 0 ]; then
                res=PASS
                # SOS's own harness judges by the exit status only, and some
                # programs print their mismatches and still exit 0: say so.
                if [ -z "$why" ]; then
                    said=$(grep -m1 -i -E "$suspect" "$rlog" | cut -c1-100)
                    [ -n "$said" ] && why="np=$n exit 0 but printed: $said"
                fi
            elif [ $rc = 124 ] || [ $rc = 137 ]; then
                res="FAIL(timeout)"
            elif [ $rc = 0 ]; then
                res="FAIL(shm)"
                echo "run-sos-suite: left in /dev/shm: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')" >>"$rlog"
            else
                res="FAIL(rc=$rc)"
            fi
            ;;
        esac
        case $res in
        PASS) total[PASS]=$((total[PASS] + 1)) ;;
        SKIP) total[SKIP]=$((total[SKIP] + 1)) ;;
        *)
            total[FAIL]=$((total[FAIL] + 1))
            [[ " ${failed_names[*]} " == *" $name "* ]] || failed_names+=("$name")
            ;;
        esac
        line+=$(printf ' %-14s' "$res")
    done
    [ -n "$why" ] && line+="  # $why"
    echo "$line"
done

echo "runs: ${total[PASS]} passed, ${total[FAIL]} failed, ${total[SKIP]} skipped (PE counts: ${npes_list[*]})"
if [ ${total[FAIL]} -gt 0 ]; then
    echo "failed: ${failed_names[*]}"
    echo "logs: $logdir"
    exit 1
fi
if [ $keep_logs = 0 ]; then
    rm -rf "$logdir"
else
    echo "logs: $logdir"
fi
exit 0
