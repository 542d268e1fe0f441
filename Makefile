# DEMOS/MP + DPM — one build for the kernel, the system processes and the
# user programs. `make` builds; `make run` boots; `make test` tests;
# `make bench` measures; `make gdb` starts a node waiting for GDB.

CROSS   := riscv64-unknown-elf-
CC      := $(CROSS)gcc
OBJDUMP := $(CROSS)objdump
B       := build
NEWLIB  := $(B)/newlib/riscv64-unknown-elf
ARCH    := -march=rv64gc -mabi=lp64d -mcmodel=medany
WARN    := -Wall -Wextra -Werror -std=gnu11
QEMU    := qemu-system-riscv64
HOSTCC  := cc -std=c11 -Wall -Wextra -Werror -O2 -g

KERNEL_CFLAGS := $(ARCH) $(WARN) -O3 -flto -g -ffreestanding -fno-builtin -nostdlib -mno-relax \
                 -fno-stack-protector -Ikernel -MMD -MP
USER_CFLAGS    = $(ARCH) $(WARN) -O2 -g -fno-omit-frame-pointer -nostdinc \
                 -isystem $(NEWLIB)/include -isystem $(shell $(CC) -print-file-name=include 2>/dev/null) \
                 -Ikernel -Iservers -Ifs -Iuser/lib -MMD -MP

KERNEL_SRCS := $(wildcard kernel/*.c)
KERNEL_ASMS := kernel/entry.S
KERNEL_OBJS := $(KERNEL_SRCS:%.c=$(B)/%.o) $(KERNEL_ASMS:%.S=$(B)/%.o) $(B)/kernel/bootimage.o

ULIB_OBJS := $(B)/user/lib/kcall.o $(B)/user/lib/dmlib.o $(B)/user/lib/syscalls.o $(B)/user/lib/fsclient.o
CRT0      := $(B)/user/lib/crt0.o

# Programs in the boot image: system processes (servers/), the file system's
# processes (fs/), then user programs.
SERVERS  := pm switchboard console timer
FS_PROCS := di bm dm ri
PROGRAMS := shell hello ping pong fsstat sync ls cat rm mkdir
TESTS    := ktest libctest disktest bmtest dmtest fstest fswriter
BENCHES  := callbench
ELVES := $(SERVERS:%=$(B)/servers/%.elf) $(FS_PROCS:%=$(B)/fs/%.elf) $(PROGRAMS:%=$(B)/user/%.elf) \
         $(TESTS:%=$(B)/user/tests/%.elf) $(BENCHES:%=$(B)/user/bench/%.elf)

NODE_QEMU = $(QEMU) -M virt -bios none -m 256M -smp 1 -kernel $(B)/kernel.elf -display none \
            -monitor none -serial stdio -no-reboot -global virtio-mmio.force-legacy=false \
            -icount shift=0,sleep=on \
            $(if $(DISK),$(DISK_QEMU))
DISK_QEMU = -drive file=$(DISK),if=none,format=raw,id=disk0 -device virtio-blk-device,drive=disk0

.PHONY: all build run test bench gdb setup clean
.SECONDARY:

# Every command first makes sure the tools are installed (scripts/setup.sh:
# quiet when they are), then builds in a second make that sees them.
all: setup
	@$(MAKE) --no-print-directory build

build: $(B)/kernel.elf $(B)/tools/dmfs

setup:
	@scripts/setup.sh

$(NEWLIB)/lib/libc.a:
	@scripts/setup.sh

$(B)/kernel/%.o: kernel/%.c | $(NEWLIB)/lib/libc.a
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KERNEL_CFLAGS) -c $< -o $@
$(B)/kernel/%.o: kernel/%.S
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KERNEL_CFLAGS) -c $< -o $@
$(B)/kernel/bootimage.S: $(ELVES) scripts/mkbootimage.sh
	@scripts/mkbootimage.sh $@ $(ELVES)
$(B)/kernel/bootimage.o: $(B)/kernel/bootimage.S
	@echo "  AS      $<"
	@$(CC) $(KERNEL_CFLAGS) -c $< -o $@
$(B)/kernel.elf: $(KERNEL_OBJS) kernel/kernel.ld
	@echo "  LD      $@"
	@$(CC) $(KERNEL_CFLAGS) -T kernel/kernel.ld -o $@ $(KERNEL_OBJS) -lgcc

$(B)/%.o: %.c | $(NEWLIB)/lib/libc.a
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(USER_CFLAGS) -c $< -o $@
$(B)/%.o: %.S
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(USER_CFLAGS) -c $< -o $@
$(B)/%.elf: $(B)/%.o $(CRT0) $(ULIB_OBJS) user/user.ld
	@echo "  LD      $@"
	@$(CC) $(ARCH) -nostdlib -static -T user/user.ld -o $@ $(CRT0) $< $(EXTRA_OBJS) $(ULIB_OBJS) \
	    -Wl,--start-group $(NEWLIB)/lib/libc.a $(NEWLIB)/lib/libm.a -lgcc -Wl,--end-group

# The disk interface checks the file system at mount with the host tool's
# checker (fs/fsck.c over fs/fsimage.c), compiled for both.
FSCK_OBJS := $(B)/fs/fsimage.o $(B)/fs/fsck.o
$(B)/fs/di.elf: $(FSCK_OBJS)
$(B)/fs/di.elf: EXTRA_OBJS := $(FSCK_OBJS)

# Host tools (tools/): built with the host's compiler.
$(B)/tools/dmfs: tools/dmfs.c fs/fsimage.c fs/fsck.c fs/fsimage.h fs/fsck.h fs/fsformat.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -Ifs -o $@ tools/dmfs.c fs/fsimage.c fs/fsck.c

# Boot one node into the shell (input may be piped); `halt` ends it.
# DISK=IMAGE attaches a disk image (its disk interface process starts).
run: all
	@$(NODE_QEMU)

# Start a node stopped, waiting for GDB on $(B)/gdb.sock (see README, Debugging).
gdb: all
	@echo "node waiting for GDB: gdb-multiarch -x scripts/gdbinit"
	@$(NODE_QEMU) -gdb unix:$(B)/gdb.sock,server=on,wait=off -S

test: all
	@python3 scripts/test.py

bench: all
	@python3 scripts/bench.py

clean:
	rm -rf $(B)/kernel $(B)/user $(B)/servers $(B)/fs $(B)/tools $(B)/kernel.elf

-include $(shell find $(B) -name '*.d' 2>/dev/null)
