#!/usr/bin/env bash
# Build newlib 3.3.0 for riscv64 from Debian's newlib-source into build/newlib.
# The result: build/newlib/riscv64-unknown-elf/{include,lib/libc.a,lib/libm.a}.
#
# The configure options are recorded in build/newlib/build-options; a build
# whose record differs from the options below (or that has none: an older
# build) is thrown away and made again, so that changing an option here
# reaches every machine that has a build/newlib already. The Makefile runs
# this script whenever it is newer than the record, and scripts/setup.sh at
# every make; when the record matches, the script only touches it and
# libc.a, and only if it is older than the script (the Makefile's reason to
# run it): every user object depends on the record, so a touch at every
# make would rebuild every program each time.
#
# Options: printf and scanf with every C99 conversion and length modifier
# (%zu %jd %td %hhd %a %F ...), with long long and with long double at its
# full precision (on riscv64, a 128-bit IEEE quad); multibyte characters,
# which printf's %ls needs (without them it prints a wide string's first
# byte); no system calls of newlib's own (user/lib/syscalls.c defines them).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(pwd)/build/newlib
libc=$out/riscv64-unknown-elf/lib/libc.a
record=$out/build-options

options=(--target=riscv64-unknown-elf --disable-multilib --disable-newlib-supplied-syscalls
         --enable-newlib-io-c99-formats --enable-newlib-io-long-long --enable-newlib-io-long-double
         --enable-newlib-mb)
cflags="-O2 -g -march=rv64gc -mabi=lp64d -mcmodel=medany"
wanted="newlib-3.3.0 ${options[*]} CFLAGS_FOR_TARGET=$cflags"

if [ -f "$libc" ] && [ -f "$record" ] && [ "$(cat "$record")" = "$wanted" ]; then
    [ "$record" -nt scripts/build-newlib.sh ] || touch "$record" "$libc"
    exit 0
fi
if [ -d "$out" ]; then
    echo "build-newlib: build/newlib was built with other options; building it again"
    rm -rf "$out"
fi

tarball=/usr/src/newlib/newlib-3.3.0.tar.xz
[ -f "$tarball" ] || { echo "build-newlib: $tarball missing (apt-get install newlib-source)" >&2; exit 1; }
work=$(pwd)/build/newlib-build
rm -rf "$work" && mkdir -p "$work/src" "$work/obj"
echo "build-newlib: building newlib 3.3.0 for riscv64 (a minute or two, once)"
tar -C "$work/src" -xf "$tarball"
src=$(echo "$work"/src/*/)
cd "$work/obj"
"$src/configure" "${options[@]}" --prefix="$out" CFLAGS_FOR_TARGET="$cflags" > configure.log 2>&1 \
    || { echo "build-newlib: configure failed, see $work/obj/configure.log" >&2; exit 1; }
make -j"$(nproc)" all-target-newlib > make.log 2>&1 \
    || { echo "build-newlib: make failed, see $work/obj/make.log" >&2; exit 1; }
make install-target-newlib > install.log 2>&1 \
    || { echo "build-newlib: install failed, see $work/obj/install.log" >&2; exit 1; }
echo "$wanted" > "$record"
rm -rf "$work"
echo "build-newlib: done"
