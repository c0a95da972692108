#!/bin/sh
# Self-test of test/layers/check-layers.py on a tiny fake tree: a forbidden
# include (common -> boot), a cycle across two folders (common/a <-> boot/b,
# through includes and calls), a backend used past its folder's public
# header (runtime -> sdma/cuda), the device API room used from below (coll ->
# devapi) and using coll past its interface headers, an ALLOW file that
# covers them, stale ALLOW entries; then the same tree without them, which
# must pass.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
CHECK="$top_srcdir/test/layers/check-layers.py"
CC=${CC:-cc}

if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not installed"
    exit 77
fi
if ! command -v "$CC" >/dev/null 2>&1 || ! command -v nm >/dev/null 2>&1; then
    echo "SKIP: no $CC or nm"
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/layers-selftest.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; [ -f "$T/out" ] && cat "$T/out"; exit 1; }

# make_tree DIR dirty|clean: sources under DIR/src, objects as libtool puts
# them (DIR/build/src/<folder>/.libs/libdmashmem_la-<name>.o).
make_tree() {
    d=$1
    mkdir -p "$d/src/common" "$d/src/boot" "$d/src/runtime" "$d/src/sdma/cuda" \
        "$d/src/coll" "$d/src/devapi" "$d/include" "$d/build/config"
    echo 'int a_fn(void);' > "$d/src/common/a.h"
    echo 'int b_fn(void);' > "$d/src/boot/b.h"
    echo 'int s_fn(void);' > "$d/src/sdma/sdma.h"
    echo 'int x_fn(void);' > "$d/src/sdma/cuda/x.h"
    echo 'int r_fn(void);' > "$d/src/runtime/r.h"
    echo 'int coll_fn(void);' > "$d/src/coll/coll.h"
    echo 'int chain_fn(void);' > "$d/src/coll/chain.h"
    echo 'int d_fn(void);' > "$d/src/devapi/d.h"
    cat > "$d/src/coll/coll.c" <<'C'
#include "coll/coll.h"
int coll_fn(void) { return 3; }
C
    cat > "$d/src/coll/chain.c" <<'C'
#include "coll/chain.h"
int chain_fn(void) { return 4; }
C
    cat > "$d/src/boot/b.c" <<'C'
#include "common/a.h"
#include "b.h"
int b_fn(void) { return a_fn() + 1; }
C
    cat > "$d/src/sdma/sdma.c" <<'C'
#include "sdma/sdma.h"
int s_fn(void) { return 2; }
C
    cat > "$d/src/sdma/cuda/x.c" <<'C'
#include "sdma/cuda/x.h"
#include "sdma/sdma.h"
int x_fn(void) { return s_fn(); }
C
    if [ "$2" = dirty ]; then
        cat > "$d/src/common/a.c" <<'C'
#include "a.h"
#include "boot/b.h"   /* forbidden: common uses nothing */
static int depth;
int a_fn(void) { return depth++ ? 0 : b_fn(); }
C
        cat > "$d/src/runtime/r.c" <<'C'
/* #include "sdma/cuda/x.h" in a comment is no edge */
#include <r.h>
#include "sdma/sdma.h"
#include "sdma/cuda/x.h"
int r_fn(void) { return s_fn() + x_fn(); }
C
        cat > "$d/src/coll/c.c" <<'C'
#include "devapi/d.h"   /* forbidden: nothing may use devapi */
int c_fn(void) { return d_fn(); }
C
        cat > "$d/src/devapi/d.c" <<'C'
#include "devapi/d.h"
#include "coll/chain.h" /* not one of coll's headers for devapi */
int d_fn(void) { return chain_fn(); }
C
    else
        cat > "$d/src/common/a.c" <<'C'
#include "a.h"
int a_fn(void) { return 0; }
C
        cat > "$d/src/runtime/r.c" <<'C'
/* #include "sdma/cuda/x.h" in a comment is no edge */
#include <r.h>
#include "sdma/sdma.h"
#include "common/a.h"
int r_fn(void) { return s_fn() + a_fn(); }
C
        cat > "$d/src/coll/c.c" <<'C'
#include "coll/chain.h"
int c_fn(void) { return chain_fn(); }
C
        cat > "$d/src/devapi/d.c" <<'C'
#include "devapi/d.h"
#include "coll/coll.h"
int d_fn(void) { return coll_fn(); }
C
    fi
    for c in common/a boot/b runtime/r sdma/sdma sdma/cuda/x coll/coll \
            coll/chain coll/c devapi/d; do
        o="$d/build/src/$(dirname $c)/.libs/libdmashmem_la-$(basename $c).o"
        mkdir -p "$(dirname "$o")"
        "$CC" -c -I"$d/include" -I"$d/src/runtime" -I"$d/src" \
            "$d/src/$c.c" -o "$o" || fail "cc $c.c"
    done
}

run() { # expected-status args...
    want=$1; shift
    python3 "$CHECK" "$@" > "$T/out" 2>&1
    rc=$?
    [ "$rc" -eq "$want" ] || fail "check-layers.py $* exited $rc, not $want"
}
expect() { grep -qF -- "$1" "$T/out" || fail "no line with: $1"; }
expect_not() { ! grep -qF -- "$1" "$T/out" || fail "unexpected: $1"; }

make_tree "$T/dirty" dirty
make_tree "$T/clean" clean
empty="$T/empty.allow"
: > "$empty"

# The dirty tree: every violation reported, exit 1.
run 1 --allow-file "$empty" "$T/dirty" "$T/dirty/build"
expect 'layers: common/a.c -> boot/b.h (include) not allowed: common may not use boot'
expect 'layers: common/a.c -> boot/b.c (call b_fn) not allowed: common may not use boot'
expect 'layers: runtime/r.c -> sdma/cuda/x.h (include) not allowed: runtime may use sdma only through sdma/sdma.h'
expect 'layers: runtime/r.c -> sdma/cuda/x.c (call x_fn) not allowed: runtime may use sdma only through sdma/sdma.h'
expect_not 'runtime/r.c -> sdma/sdma'
expect 'layers: coll/c.c -> devapi/d.h (include) not allowed: coll may not use devapi'
expect 'layers: coll/c.c -> devapi/d.c (call d_fn) not allowed: coll may not use devapi'
expect 'layers: devapi/d.c -> coll/chain.h (include) not allowed: devapi may use coll only through coll/coll.h, coll/persistent_int.h'
expect 'layers: devapi/d.c -> coll/chain.c (call chain_fn) not allowed: devapi may use coll only through coll/coll.h, coll/persistent_int.h'
expect 'layers: cycle across folders: '
grep -Eq 'cycle across folders: (common/a -> boot/b -> common/a|boot/b -> common/a -> boot/b)$' \
    "$T/out" || fail "no cycle path"
expect 'common/a -> boot/b: include, b_fn'
expect 'boot/b -> common/a: include, a_fn'

# The same, every violation in the ALLOW file: exit 0.
grep '^layers: .* not allowed: ' "$T/out" |
    sed -e 's/^layers: //' -e 's/ not allowed: .*$/  # selftest/' > "$T/all.allow"
echo 'cycle edge: common/a -> boot/b  # selftest' >> "$T/all.allow"
run 0 --allow-file "$T/all.allow" "$T/dirty" "$T/dirty/build"
expect '9 known violations allowed, 0 errors'

# Without the cycle edge: the cycle is reported again, with its path.
grep -v '^cycle edge' "$T/all.allow" > "$T/nocycle.allow"
run 1 --allow-file "$T/nocycle.allow" "$T/dirty" "$T/dirty/build"
expect 'layers: cycle across folders: '
expect '8 known violations allowed, 1 errors'

# An entry expected only where a macro of config/dsm_config.h is defined
# (code built in some configurations only): not stale without it, stale
# with it.
cp "$T/all.allow" "$T/when.allow"
echo 'runtime/r.c -> sdma/cuda/y.c (call y_fn)  # selftest  # when: DSM_BUILD_Y' >> "$T/when.allow"
run 0 --allow-file "$T/when.allow" "$T/dirty" "$T/dirty/build"
echo '#define DSM_BUILD_Y 1' > "$T/dirty/build/config/dsm_config.h"
run 1 --allow-file "$T/when.allow" "$T/dirty" "$T/dirty/build"
expect 'layers: stale ALLOW entry (no longer occurs, remove it): runtime/r.c -> sdma/cuda/y.c (call y_fn)'
rm "$T/dirty/build/config/dsm_config.h"

# A cycle edge that exists but closes no cycle across folders is stale.
cp "$T/all.allow" "$T/edge.allow"
echo 'cycle edge: runtime/r -> sdma/sdma  # selftest' >> "$T/edge.allow"
run 1 --allow-file "$T/edge.allow" "$T/dirty" "$T/dirty/build"
expect 'layers: stale ALLOW entry (no longer occurs, remove it): cycle edge: runtime/r -> sdma/sdma'

# An ALLOW entry that no longer occurs: exit 1.
cp "$T/all.allow" "$T/stale.allow"
echo 'common/a.c -> boot/gone.h (include)  # fixed already' >> "$T/stale.allow"
run 1 --allow-file "$T/stale.allow" "$T/dirty" "$T/dirty/build"
expect 'layers: stale ALLOW entry (no longer occurs, remove it): common/a.c -> boot/gone.h (include)'

# The clean tree (runtime -> common, boot -> common, runtime -> sdma/sdma.h
# and devapi -> coll/coll.h are allowed): exit 0,
# and the dirty tree's ALLOW file is stale there.
run 0 --allow-file "$empty" "$T/clean" "$T/clean/build"
expect '0 errors'
run 1 --allow-file "$T/all.allow" "$T/clean" "$T/clean/build"
expect 'layers: stale ALLOW entry (no longer occurs, remove it): cycle edge: common/a -> boot/b'

echo "PASS: check-layers.py self-test"
exit 0
