#!/usr/bin/env bash
# Build newlib 3.3.0 for riscv64 from Debian's newlib-source, once, into build/newlib.
# The result: build/newlib/riscv64-unknown-elf/{include,lib/libc.a,lib/libm.a}.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(pwd)/build/newlib
[ -f "$out/riscv64-unknown-elf/lib/libc.a" ] && exit 0

tarball=/usr/src/newlib/newlib-3.3.0.tar.xz
[ -f "$tarball" ] || { echo "build-newlib: $tarball missing (apt-get install newlib-source)" >&2; exit 1; }
work=$(pwd)/build/newlib-build
rm -rf "$work" && mkdir -p "$work/src" "$work/obj"
echo "build-newlib: building newlib 3.3.0 for riscv64 (about a minute, once)"
tar -C "$work/src" -xf "$tarball"
src=$(echo "$work"/src/*/)
cd "$work/obj"
"$src/configure" --target=riscv64-unknown-elf --prefix="$out" --disable-multilib \
    --disable-newlib-supplied-syscalls \
    CFLAGS_FOR_TARGET="-O2 -g -march=rv64gc -mabi=lp64d -mcmodel=medany" > configure.log 2>&1 \
    || { echo "build-newlib: configure failed, see $work/obj/configure.log" >&2; exit 1; }
make -j"$(nproc)" all-target-newlib > make.log 2>&1 \
    || { echo "build-newlib: make failed, see $work/obj/make.log" >&2; exit 1; }
make install-target-newlib > install.log 2>&1
rm -rf "$work"
echo "build-newlib: done"
