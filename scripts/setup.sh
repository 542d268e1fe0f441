#!/usr/bin/env bash
# Install what the project needs, once. Idempotent and quiet when everything is present.
#   scripts/setup.sh            install missing Debian packages, check QEMU, build newlib
# Needs root (or sudo) only when a package is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(qemu-system-misc gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf
          gdb-multiarch newlib-source patch python3 xz-utils
          vde2 vde-wirefilter
          clang libclang-rt-14-dev)   # libFuzzer and the sanitizers' runtimes (make fuzz)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm run a trace viewer's own parser on dpm export's JSON (scripts/traceviewer.py,
# which has npm fetch the viewer); any Node from 18 on with its npm will do, Debian's or not.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    missing+=(nodejs npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# QEMU 7.2 is what the project is tested with; older ones lack options we use.
qemu_version=$(qemu-system-riscv64 --version | sed -n 's/.*version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r qemu_major qemu_minor <<<"$qemu_version"
if [ "$qemu_major" -lt 7 ] || { [ "$qemu_major" -eq 7 ] && [ "$qemu_minor" -lt 2 ]; }; then
    echo "setup: qemu-system-riscv64 $qemu_major.$qemu_minor is too old; 7.2 or newer is needed" >&2
    exit 1
fi

scripts/build-newlib.sh
