#!/bin/sh
# The allowed folder order of the library (#11): test/layers/check-layers.py
# over this source tree and this build's objects. Its top comment says what
# it checks; known violations being fixed are in its ALLOW list.
: "${top_builddir:=.}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"

if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not installed"
    exit 77
fi
if [ ! -f "$top_builddir/src/libdmashmem.la" ]; then
    echo "SKIP: $top_builddir/src/libdmashmem.la not built"
    exit 77
fi
exec python3 "$top_srcdir/test/layers/check-layers.py" -v "$top_srcdir" "$top_builddir"
