#!/usr/bin/env bash
# Release check: README's two commands on a fresh Debian 12 without CUDA.
#
#   test/release/clean-root.sh [demo|test|all]     (as root; default: all)
#
# Makes a clean Debian 12 root (debootstrap --variant=minbase bookworm) in a
# temporary folder, clones this repository's HEAD into it (commit first:
# uncommitted changes are not in the clone), mounts /proc, /dev and
# /dev/pts, and runs inside it, as root with a bare environment:
#   demo: ./quickstart demo   (installs the packages, builds, runs hello on 4 PEs)
#   test: ./quickstart test   (every test, as CI runs them)
# It checks that the root has no /usr/local/cuda (the configure summary must
# say "CUDA (cuda.h) ... no"), and that the job left nothing in /dev/shm.
# The packages come from the mirror in this machine's apt sources
# (DSM_DEBIAN_MIRROR overrides). DSM_CLEAN_ROOT_KEEP=1 keeps the root for
# inspection; otherwise it is unmounted and removed on every exit path.
# Takes about 3 minutes for demo and 25 for test on 2 cores.
set -euo pipefail

mode=${1:-all}
case "$mode" in demo | test | all) ;; *)
    echo "usage: $0 [demo|test|all]" >&2
    exit 2
    ;;
esac
if [ "$(id -u)" -ne 0 ]; then
    echo "clean-root.sh: must run as root (debootstrap, chroot, mount)" >&2
    exit 2
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
say() { printf '\n==> clean-root: %s\n' "$*"; }

if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
fi

# The Debian mirror this machine already uses.
mirror=${DSM_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk '/^URIs:/ && $2 ~ /debian\/?$/ { print $2; exit }')
fi
if [ -z "$mirror" ]; then
    mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
fi
if [ -z "$mirror" ]; then
    echo "clean-root.sh: no Debian mirror in /etc/apt; set DSM_DEBIAN_MIRROR" >&2
    exit 2
fi

root=$(mktemp -d "${TMPDIR:-/var/tmp}/dsm-clean-root.XXXXXX")
mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[i]}" 2>/dev/null || true
    done
    if [ "${DSM_CLEAN_ROOT_KEEP:-0}" = 1 ]; then
        echo "clean-root: kept $root" >&2
    else
        rm -rf --one-file-system "$root"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "debootstrap bookworm into $root"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 || {
    tail -20 "$root.debootstrap.log" >&2
    rm -f "$root.debootstrap.log"
    exit 1
}
rm -f "$root.debootstrap.log"
# The same sources as this machine (security updates included).
if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
    grep -l -i 'debian' /etc/apt/sources.list.d/*.sources | while read -r f; do
        cp "$f" "$root/etc/apt/sources.list.d/"
    done
    : >"$root/etc/apt/sources.list"
fi

if [ -e "$root/usr/local/cuda" ]; then
    echo "clean-root.sh: the new root has /usr/local/cuda" >&2
    exit 1
fi

say "cloning $(git -C "$top" rev-parse --short HEAD) into the root"
git clone -q --no-hardlinks "$top" "$root/root/dmashmem"

for m in proc dev dev/pts; do
    mkdir -p "$root/$m"
done
mount -t proc proc "$root/proc" && mounted+=("$root/proc")
mount --bind /dev "$root/dev" && mounted+=("$root/dev")
mount -t devpts -o newinstance devpts "$root/dev/pts" 2>/dev/null && mounted+=("$root/dev/pts") || true

run_in_root() {
    chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        bash -c "cd /root/dmashmem && $1"
}

shm_before=$(ls /dev/shm | sort)
rc=0
if [ "$mode" = demo ] || [ "$mode" = all ]; then
    say "./quickstart demo"
    run_in_root "./quickstart demo" || rc=$?
    if [ $rc -eq 0 ] && grep -q '^#define DSM_BUILD_CUDA 1' "$root/root/dmashmem/_build/config/dsm_config.h"; then
        echo "clean-root.sh: the build in the clean root found CUDA" >&2
        rc=1
    fi
fi
if [ $rc -eq 0 ] && { [ "$mode" = test ] || [ "$mode" = all ]; }; then
    say "./quickstart test"
    run_in_root "./quickstart test" || rc=$?
fi
shm_after=$(ls /dev/shm | sort)
if [ "$shm_before" != "$shm_after" ]; then
    echo "clean-root.sh: the job left files in /dev/shm:" >&2
    comm -13 <(echo "$shm_before") <(echo "$shm_after") >&2
    rc=1
fi
if [ $rc -eq 0 ]; then
    say "PASS ($mode) in a clean Debian 12 root without CUDA"
else
    say "FAIL ($mode): exit status $rc"
fi
exit $rc
