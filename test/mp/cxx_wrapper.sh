#!/bin/bash
# The C++ wrapper of this build (src/launcher/oshc++): -show names the C++
# compiler, the aliases oshCC and oshcxx (links, as installed) behave the
# same, the headers compile as C++98 (no generic names there) and as C++11,
# 17 and 20 with -Wall -Wextra -Werror, and test/mp/cxx_prog.cpp, built with
# the wrapper, runs under the launcher on 1, 2 and 4 PEs (run-mp.sh). The
# wrapper is pointed at the build tree's headers and library
# (OSHCC_INCLUDEDIR, OSHCC_LIBDIR). Skipped (77) only without a C++
# compiler.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
wrapper=$top_builddir/src/launcher/oshc++
[ -x "$wrapper" ] || { echo "FAIL: $wrapper not built"; exit 1; }

export OSHCC_INCLUDEDIR=$(cd "$top_srcdir/include" && pwd)
export OSHCC_LIBDIR=$(cd "$top_builddir/src/.libs" && pwd) || exit 1

# The compiler is the first word -show prints.
cxx=$("$wrapper" -show | sed "s/^'\{0,1\}\([^' ]*\).*/\1/")
command -v "$cxx" > /dev/null || { echo "SKIP: no C++ compiler ($cxx)"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsm-cxx.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# -show: the C++ compiler, the include directory, the library.
show=$("$wrapper" -show -O2 prog.cpp -o prog)
echo "oshc++ -show: $show"
case "$show" in
"$cxx -I$OSHCC_INCLUDEDIR -O2 prog.cpp -o prog -L$OSHCC_LIBDIR "*-ldmashmem*) ;;
*) bad "oshc++ -show printed: $show" ;;
esac
[ -z "$("$wrapper" -show -c prog.cpp | grep -e -ldmashmem)" ] ||
    bad "oshc++ -show -c links"
for alias in oshCC oshcxx; do
    ln -s "$(cd "$(dirname "$wrapper")" && pwd)/oshc++" "$tmp/$alias"
    [ "$("$tmp/$alias" -show x.cpp)" = "$("$wrapper" -show x.cpp)" ] ||
        bad "$alias -show differs from oshc++ -show"
done
# oshcc stays C.
"$top_builddir/src/launcher/oshcc" -show x.c | grep -q "^$cxx " &&
    bad "oshcc runs the C++ compiler"
"$wrapper" > /dev/null 2>&1 && bad "oshc++ without arguments succeeded"

# Every public header as C++: the standards before and after the generic
# names exist.
cat > "$tmp/headers.cpp" << 'EOF'
#include <shmem.h>
#include <shmemx.h>
#include <pshmem.h>
#include <pshmemx.h>
#include <mpp/shmem.h>
int main() { return shmem_my_pe() < 0; }
EOF
for std in c++98 c++11 c++17 c++20; do
    if "$cxx" -std=$std -fsyntax-only -x c++ /dev/null 2> /dev/null; then
        "$wrapper" -std=$std -Wall -Wextra -Werror -c "$tmp/headers.cpp" \
            -o "$tmp/headers.o" || bad "the headers do not compile as $std"
    else
        echo "($cxx has no -std=$std)"
    fi
done

# The program, built with the wrapper, run on 1, 2 and 4 PEs. A library
# built with the sanitizers (configure --enable-sanitizers) needs a program
# built with them too: ASan's runtime has to come first.
san=
if ldd "$OSHCC_LIBDIR/libdmashmem.so" 2> /dev/null | grep -q libasan; then
    san="-fsanitize=address,undefined"
fi
"$wrapper" -std=c++11 -O1 -Wall -Wextra -Werror $san "$top_srcdir/test/mp/cxx_prog.cpp" \
    -o "$tmp/cxx_prog" || { bad "oshc++ could not build cxx_prog.cpp"; exit 1; }
mkdir -p "$tmp/test/mp" && mv "$tmp/cxx_prog" "$tmp/test/mp/cxx_prog"
"$top_srcdir/test/mp/run-mp.sh" "$tmp/test/mp/cxx_prog" || bad "cxx_prog failed"

[ $fail = 0 ] && echo "PASS: oshc++ builds and runs a C++ program"
exit $fail
