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
# libc.a, and only if it is older than the script, a patch or the header
# (the Makefile's reasons to run it): every user object depends on the record, so a touch at every
# make would rebuild every program each time.
#
# Options: printf and scanf with every C99 conversion and length modifier
# (%zu %jd %td %hhd %a %F ...), with long long and with long double at its
# full precision (on riscv64, a 128-bit IEEE quad); multibyte characters,
# which printf's %ls needs (without them it prints a wide string's first
# byte); no system calls of newlib's own (user/lib/syscalls.c defines them).
#
# Changes to newlib's source, each patch beginning with why:
#   scripts/newlib/vfscanf.patch   scanf's a, e, f, g conversions read every
#       number strtod reads (hexadecimal ones too, of any length), with
#       user/lib/float_subject.h's recognizer, which is copied in;
#   scripts/newlib/vfprintf.patch  %La prints a binary128's own digits.
# And newlib's strtold.o, which writes the x87 80-bit format, is taken out
# of libc.a: user/lib/strtold.c is riscv64's strtold. The record holds a
# checksum of the patches and the header, so changing one builds again.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(pwd)/build/newlib
libc=$out/riscv64-unknown-elf/lib/libc.a
record=$out/build-options

options=(--target=riscv64-unknown-elf --disable-multilib --disable-newlib-supplied-syscalls
         --enable-newlib-io-c99-formats --enable-newlib-io-long-long --enable-newlib-io-long-double
         --enable-newlib-mb)
cflags="-O2 -g -march=rv64gc -mabi=lp64d -mcmodel=medany"
patches=(scripts/newlib/*.patch)
checksum=$(cat "${patches[@]}" user/lib/float_subject.h | sha256sum | cut -c1-16)
wanted="newlib-3.3.0 ${options[*]} CFLAGS_FOR_TARGET=$cflags changes=$checksum"

if [ -f "$libc" ] && [ -f "$record" ] && [ "$(cat "$record")" = "$wanted" ]; then
    for source in scripts/build-newlib.sh "${patches[@]}" user/lib/float_subject.h; do
        [ "$record" -nt "$source" ] || { touch "$record" "$libc"; break; }
    done
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
for p in "${patches[@]}"; do
    patch -s -d "$src" -p1 < "$p" || { echo "build-newlib: $p does not apply" >&2; exit 1; }
done
cp user/lib/float_subject.h "$src/newlib/libc/stdio/"
cd "$work/obj"
"$src/configure" "${options[@]}" --prefix="$out" CFLAGS_FOR_TARGET="$cflags" > configure.log 2>&1 \
    || { echo "build-newlib: configure failed, see $work/obj/configure.log" >&2; exit 1; }
make -j"$(nproc)" all-target-newlib > make.log 2>&1 \
    || { echo "build-newlib: make failed, see $work/obj/make.log" >&2; exit 1; }
make install-target-newlib > install.log 2>&1 \
    || { echo "build-newlib: install failed, see $work/obj/install.log" >&2; exit 1; }
riscv64-unknown-elf-ar d "$libc" lib_a-strtold.o
echo "$wanted" > "$record"
rm -rf "$work"
echo "build-newlib: done"
