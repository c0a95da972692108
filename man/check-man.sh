#!/bin/bash
# Every routine the library exports must have a man page: a hand-written
# family page in man/ or a generated .so alias in man/gen/man3 (built from
# man/aliases.c). Also checks that aliases point at real family pages, that
# every hand page is installed, that intro_shmem(3) lists every TYPENAME of
# the type tables, and that the hand pages format without groff warnings.
set -u

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
man=$top_srcdir/man
gen=$top_builddir/man/gen
lib=$top_builddir/src/.libs/libdmashmem.so

command -v nm > /dev/null || { echo "SKIP: nm not found"; exit 77; }
[ -f "$lib" ] || { echo "SKIP: $lib not built (static-only build?)"; exit 77; }
[ -f "$gen/aliases.list" ] || { echo "FAIL: $gen/aliases.list missing (run make)"; exit 1; }

fail=0
bad() { echo "FAIL: $*"; fail=1; }

has_page() { [ -f "$man/$1.3" ] || [ -f "$gen/man3/$1.3" ]; }

# 1. exported routines (functions only: T, W, i) have pages.
n=0 missing=0
while read -r name; do
    n=$((n + 1))
    has_page "$name" && continue
    missing=$((missing + 1))
    [ $missing -le 20 ] && echo "FAIL: $name is exported by libdmashmem.so but has no man page"
done < <(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWi]$/ { print $3 }' |
    grep -E '^(shmemx?_|start_pes$|_my_pe$|_num_pes$|shmalloc$|shfree$|shrealloc$|shmemalign$)' |
    sort -u)
[ "$n" -gt 0 ] || bad "no routines found in $lib"
[ $missing = 0 ] ||
    bad "$missing of $n exported routines have no man page: write man/FAMILY.3" \
        "(and list it in man/Makefile.inc) and add ALIAS lines for its typed" \
        "names to man/aliases.c"

# 2. aliases point at hand pages and never shadow one.
while read -r name page; do
    [ -f "$man/$page.3" ] || bad "alias $name -> $page: man/$page.3 does not exist"
    [ "$name" = "$page" ] || [ ! -f "$man/$name.3" ] ||
        bad "alias $name would overwrite the hand page man/$name.3"
done < "$gen/aliases.list"

# 3. every hand page is installed.
for f in "$man"/*.[13]; do
    b=${f##*/}
    grep -q "man/$b\\b" "$man/Makefile.inc" ||
        bad "man/$b is not listed in man/Makefile.inc"
done

# 4. intro_shmem(3) lists every TYPENAME of the tables: a tbl row
#    "C type<TAB>TYPENAME<TAB>tables" whose third field names the table.
while read -r table tn; do
    awk -F '\t' -v tn="$tn" -v t="$(echo "$table" | tr a-z A-Z)" \
        '$2 == tn && index($3, t) { ok = 1 } END { exit !ok }' "$man/intro_shmem.3" ||
        bad "TYPENAME $tn ($table table) is missing from intro_shmem(3)"
done < "$gen/typenames.list"

# 5. intro_shmem(3) documents every variable of DSM_ENV_LIST.
env_h=$top_srcdir/src/runtime/env.h
if [ -f "$env_h" ]; then
    for v in $(sed -n 's/^.*X(\(SHMEM_[A-Z0-9_]*\),.*$/\1/p' "$env_h"); do
        grep -q "^\.BR $v " "$man/intro_shmem.3" ||
            bad "environment variable $v (src/runtime/env.h) is not in intro_shmem(3)"
    done
fi

# 6. hand pages format cleanly.
if command -v groff > /dev/null; then
    for f in "$man"/*.[13]; do
        [ "$(head -c 4 "$f")" = ".so " ] && continue
        out=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
        [ -z "$out" ] || bad "${f##*/}: groff: $out"
        if command -v man > /dev/null; then
            out=$(MANWIDTH=80 man -l "$f" 2>&1 > /dev/null)
            [ -z "$out" ] || bad "${f##*/}: man: $out"
        fi
    done
fi

[ $fail = 0 ] && echo "PASS: $n exported routines, $(wc -l < "$gen/aliases.list") aliases"
exit $fail
