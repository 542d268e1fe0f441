# DEMOS/MP + DPM — one build for the kernel, the system processes and the
# user programs. `make` builds; `make run` boots; `make test` tests;
# `make bench` measures; `make run GDB=K` starts node K waiting for GDB
# and `make gdb-attach NODE=K` attaches to it; `make grade LAB=NAME` grades
# a lab; `make prog SRC=FILE.c` puts a program of your own on the system disk.

CROSS   := riscv64-unknown-elf-
CC      := $(CROSS)gcc
OBJDUMP := $(CROSS)objdump
B       := build
NEWLIB  := $(B)/newlib/riscv64-unknown-elf
ARCH    := -march=rv64gc -mabi=lp64d -mcmodel=medany
WARN    := -Wall -Wextra -Werror -std=gnu11
HOSTCC  := cc -std=c11 -Wall -Wextra -Werror -O2 -g

KERNEL_CFLAGS := $(ARCH) $(WARN) -O3 -flto -g -ffreestanding -fno-builtin -nostdlib -mno-relax \
                 -fno-stack-protector -Ikernel -MMD -MP
# User programs see newlib's headers, then the compiler's own (stddef.h,
# stdarg.h, float.h, ...) and its include-fixed directory, where newlib's
# limits.h finds gcc's (#include_next). newlib has <threads.h> but no
# threads on this system: __STDC_NO_THREADS__ says so, as C11 provides.
USER_CPPFLAGS  = -D__STDC_NO_THREADS__=1 -nostdinc -isystem $(NEWLIB)/include -isystem $(shell $(CC) -print-file-name=include 2>/dev/null) \
                 -isystem $(shell $(CC) -print-file-name=include-fixed 2>/dev/null) \
                 -Ikernel -Ifs -Iuser/lib -Imeter
USER_CFLAGS    = $(ARCH) $(WARN) -O2 -g -fno-omit-frame-pointer $(USER_CPPFLAGS) -MMD -MP

KERNEL_SRCS := $(wildcard kernel/*.c kernel/dev/*.c kernel/net/*.c)
KERNEL_ASMS := kernel/entry.S
KERNEL_OBJS := $(KERNEL_SRCS:%.c=$(B)/%.o) $(KERNEL_ASMS:%.S=$(B)/%.o) $(B)/kernel/bootimage.o

ULIB_OBJS := $(B)/user/lib/kcall.o $(B)/user/lib/dmlib.o $(B)/user/lib/syscalls.o $(B)/user/lib/unsupported.o \
             $(B)/user/lib/strtold.o $(B)/user/lib/fsclient.o
CRT0      := $(B)/user/lib/crt0.o

# The boot image holds only what starts the file system: the system
# processes (servers/) and the file system's four (fs/). Every other
# program is loaded by the process manager from /bin on the system disk.
SERVERS  := pm switchboard console timer
FS_PROCS := di bm dm ri
PROGRAMS := shell hello ping pong fsstat sync ls cat cp mv rm mkdir
# The workloads of the thesis's measurements (README, Workloads).
WORKLOADS := fsseq fsrand tsp tspserver
TESTS    := ktest libctest disktest bmtest dmtest fstest filetest fswriter nettest metertest filtertest kfuzz isotest migtest
BENCHES  := callbench fsbench netbench meterbench migbench
FILTERS  := filter
# The feedback scheduler (balance/: docs/migration.md, "The scheduler").
BALANCE  := balance
# The course's labs (docs/labs/): each lab's programs, in user/labs/LAB/,
# go into /bin like the system's.
LABS     := links/linkclient links/linkserver readahead/readfile
LABS     += timeout/timedrecv
LABS     += event/spin
LABS     += questions/census questions/counter questions/ledger
LABS     += bottleneck/render bottleneck/shade
# Other files of the labs the system disk holds: user/labs/F as /labs/F.
LAB_FILES := questions/questions.rules
# The labs whose part is in the kernel have a kernel of their own, built
# with the student's file (below): `make grade LAB=forwarding`, `make run
# LAB=forwarding` and `make gdb-attach LAB=forwarding` use it (LAB_KERNEL).
LAB_KERNELS := $(B)/labs/forwarding/kernel.elf
# The filter server is in the boot image too: with meter.fs=K (make run
# METER_FS=K) the process manager starts it before the file system, to meter
# the file system's processes from their first instruction.
BOOT_ELVES := $(SERVERS:%=$(B)/servers/%.elf) $(FS_PROCS:%=$(B)/fs/%.elf) $(FILTERS:%=$(B)/filter/%.elf)
DISK_ELVES := $(PROGRAMS:%=$(B)/user/programs/%.elf) $(WORKLOADS:%=$(B)/user/workloads/%.elf)
DISK_ELVES += $(TESTS:%=$(B)/user/tests/%.elf) $(BENCHES:%=$(B)/user/bench/%.elf)
DISK_ELVES += $(FILTERS:%=$(B)/filter/%.elf) $(LABS:%=$(B)/user/labs/%.elf) $(BALANCE:%=$(B)/balance/%.elf)
# The system disk's programs, without their debugging information (GDB
# reads that from the ELF files in build/).
BIN := $(foreach e,$(DISK_ELVES),$(B)/bin/$(basename $(notdir $(e))))
SYSTEM_DISK := $(B)/disk.img
SYSTEM_DISK_MB := 32
DISK ?= $(SYSTEM_DISK)
NODES ?= 4
FAULTS ?=
PLACE ?=
TRACE ?=
METER_FS ?=
DISK_SERVICE_US ?=
GDB ?=
NODE ?= 0
LAB ?=
LAB_KERNEL := $(filter $(B)/labs/$(LAB)/kernel.elf,$(LAB_KERNELS))
KEY ?=

# Nodes are started by the cluster launcher, which holds the one QEMU command
# line (scripts/harness.py, qemu_command) that the tests use too.
CLUSTER = python3 scripts/cluster.py --disk $(DISK) $(if $(LAB_KERNEL),--kernel $(LAB_KERNEL))

.PHONY: all build prog prog-library prog-install run test test-faults test-large test-hostile test-chaos bench experiments \
        gdb gdb-attach grade setup clean fuzz
.SECONDARY:

# Every command first makes sure the tools are installed (scripts/setup.sh:
# quiet when they are), then builds in a second make that sees them.
all: setup
	@$(MAKE) --no-print-directory build

build: $(B)/kernel.elf $(B)/tools/dmfs $(B)/tools/siphash_test $(B)/tools/netframe_test $(B)/tools/transport_test $(B)/tools/meter_test $(B)/tools/rules_test \
       $(B)/tools/strtold_test $(B)/tools/balance_test \
       $(B)/tools/dmtrace $(B)/tools/tracegen $(B)/tools/dpm $(B)/tools/dpm-sanitized $(B)/tools/dpm_graph_test \
       $(SYSTEM_DISK) $(LAB_KERNELS)

setup:
	@scripts/setup.sh

# newlib is built again when scripts/build-newlib.sh changes (its options
# are in it), or a change it makes to newlib's source (scripts/newlib/,
# user/lib/float_subject.h): the script compares them with the build's record,
# build/newlib/build-options, and touches it when they agree. Every user
# object depends on that record, so a newlib built again (other options,
# another newlib.h) recompiles and relinks every program.
NEWLIB_BUILT := $(B)/newlib/build-options
$(NEWLIB_BUILT) $(NEWLIB)/lib/libc.a &: scripts/build-newlib.sh $(wildcard scripts/newlib/*.patch) user/lib/float_subject.h
	@scripts/setup.sh

# SipHash (the frames' MAC) is built with RISC-V's bit-manipulation
# extension Zbb, which QEMU's default riscv64 CPU has: its rotations are then
# one instruction each (about a third of its cost; make bench, frame_auth_instr).
# It is left out of link-time optimization, so that the rest of the kernel
# stays plain RV64GC.
SIPHASH_CFLAGS := -march=rv64gc_zbb -fno-lto
$(B)/kernel/net/siphash.o $(B)/nometer/kernel/net/siphash.o: KERNEL_CFLAGS += $(SIPHASH_CFLAGS)

$(B)/kernel/%.o: kernel/%.c | $(NEWLIB)/lib/libc.a
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KERNEL_CFLAGS) -c $< -o $@
$(B)/kernel/%.o: kernel/%.S
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KERNEL_CFLAGS) -c $< -o $@
$(B)/kernel/bootimage.S: $(BOOT_ELVES) scripts/mkbootimage.sh
	@scripts/mkbootimage.sh $@ $(BOOT_ELVES)
$(B)/kernel/bootimage.o: $(B)/kernel/bootimage.S
	@echo "  AS      $<"
	@$(CC) $(KERNEL_CFLAGS) -c $< -o $@
$(B)/kernel.elf: $(KERNEL_OBJS) kernel/kernel.ld
	@echo "  LD      $@"
	@$(CC) $(KERNEL_CFLAGS) -T kernel/kernel.ld -o $@ $(KERNEL_OBJS) -lgcc

# The same kernel with every meter probe compiled out (METER_PROBES=0): the
# benchmark of an unmetered probe's cost compares the two (make bench).
NOMETER_OBJS := $(KERNEL_SRCS:%.c=$(B)/nometer/%.o) $(KERNEL_ASMS:%.S=$(B)/%.o) $(B)/kernel/bootimage.o
$(B)/nometer/kernel/%.o: kernel/%.c | $(NEWLIB)/lib/libc.a
	@mkdir -p $(dir $@)
	@echo "  CC      $< (no meter probes)"
	@$(CC) $(KERNEL_CFLAGS) -DMETER_PROBES=0 -c $< -o $@
$(B)/kernel-nometer.elf: $(NOMETER_OBJS) kernel/kernel.ld
	@echo "  LD      $@"
	@$(CC) $(KERNEL_CFLAGS) -DMETER_PROBES=0 -T kernel/kernel.ld -o $@ $(NOMETER_OBJS) -lgcc

# The forwarding lab's kernel (docs/labs/forwarding.md): the system's, but
# for kernel/net/remote.c, built with LAB_FORWARDING so that it takes
# receive_location and forward from the lab's kernel/labs/forwarding.c,
# which a student writes (LAB_KERNELS, above).
FORWARDING_OBJS := $(filter-out $(B)/kernel/net/remote.o,$(KERNEL_OBJS)) $(B)/labs/forwarding/remote.o
$(B)/labs/forwarding/remote.o: kernel/net/remote.c kernel/labs/forwarding.c | $(NEWLIB)/lib/libc.a
	@mkdir -p $(dir $@)
	@echo "  CC      kernel/labs/forwarding.c (in kernel/net/remote.c)"
	@$(CC) $(KERNEL_CFLAGS) -DLAB_FORWARDING -c $< -o $@
$(B)/labs/forwarding/kernel.elf: $(FORWARDING_OBJS) kernel/kernel.ld
	@echo "  LD      $@"
	@$(CC) $(KERNEL_CFLAGS) -T kernel/kernel.ld -o $@ $(FORWARDING_OBJS) -lgcc

$(B)/%.o: %.c $(NEWLIB_BUILT)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(USER_CFLAGS) -c $< -o $@
$(B)/%.o: %.S $(NEWLIB_BUILT)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(USER_CFLAGS) -c $< -o $@
$(B)/%.elf: $(B)/%.o $(CRT0) $(ULIB_OBJS) user/user.ld
	@echo "  LD      $@"
	@$(CC) $(ARCH) -nostdlib -static -T user/user.ld -o $@ $(CRT0) $< $(EXTRA_OBJS) $(SERVER_OBJS) $(ULIB_OBJS) \
	    -Wl,--start-group $(NEWLIB)/lib/libc.a $(NEWLIB)/lib/libm.a -lgcc -Wl,--end-group

# A program for /bin.
STRIP = @mkdir -p $(dir $@) && $(CROSS)strip -o $@ $<
$(PROGRAMS:%=$(B)/bin/%): $(B)/bin/%: $(B)/user/programs/%.elf
	$(STRIP)
$(WORKLOADS:%=$(B)/bin/%): $(B)/bin/%: $(B)/user/workloads/%.elf
	$(STRIP)
$(TESTS:%=$(B)/bin/%): $(B)/bin/%: $(B)/user/tests/%.elf
	$(STRIP)
$(BENCHES:%=$(B)/bin/%): $(B)/bin/%: $(B)/user/bench/%.elf
	$(STRIP)
$(FILTERS:%=$(B)/bin/%): $(B)/bin/%: $(B)/filter/%.elf
	$(STRIP)
$(BALANCE:%=$(B)/bin/%): $(B)/bin/%: $(B)/balance/%.elf
	$(STRIP)
$(foreach p,$(LABS),$(eval $(B)/bin/$(notdir $(p)): $(B)/user/labs/$(p).elf))
$(foreach p,$(LABS),$(B)/bin/$(notdir $(p))):
	$(STRIP)

# Programs of your own (docs/programs.md): `make prog SRC=path/to/NAME.c`
# (or several .c files, the first naming it) builds $(B)/prog/NAME.elf with
# the user library and newlib, with the system's flags (warnings are
# errors), and $(B)/prog/NAME without its debugging information; the system
# disk holds every program in $(B)/prog/ as /bin/NAME from then on (the
# tests' images hold only $(B)/bin/'s, the system's). With DISK=IMAGE it goes into that image instead
# (dmfs put; the image must not be in use by a running node).
PROG_NAME  = $(basename $(notdir $(firstword $(SRC))))
PROG_BIN  := $(patsubst %.elf,%,$(wildcard $(B)/prog/*.elf))
$(PROG_BIN): $(B)/prog/%: $(B)/prog/%.elf
	$(STRIP)

prog: setup
	@test -n "$(SRC)" || { echo "make prog: say which program: make prog SRC=path/to/NAME.c" >&2; exit 2; }
	@test -z "$(filter $(PROG_NAME),$(basename $(notdir $(DISK_ELVES))))" || \
	    { echo "make prog: $(PROG_NAME) is the name of a system program; rename $(firstword $(SRC))" >&2; exit 2; }
	@$(MAKE) --no-print-directory prog-library
	@mkdir -p $(B)/prog
	@echo "  CC      $(SRC) -> $(B)/prog/$(PROG_NAME).elf"
	@$(CC) $(ARCH) $(WARN) -O2 -g $(USER_CPPFLAGS) -nostdlib -static -T user/user.ld -o $(B)/prog/$(PROG_NAME).elf \
	    $(CRT0) $(SRC) $(ULIB_OBJS) -Wl,--start-group $(NEWLIB)/lib/libc.a $(NEWLIB)/lib/libm.a -lgcc -Wl,--end-group
	@$(MAKE) --no-print-directory prog-install
prog-library: $(CRT0) $(ULIB_OBJS)
	@:
prog-install: $(B)/prog/$(PROG_NAME) $(B)/tools/dmfs $(if $(filter $(SYSTEM_DISK),$(DISK)),$(SYSTEM_DISK))
	@if [ "$(DISK)" = "$(SYSTEM_DISK)" ]; then \
	    echo "  /bin/$(PROG_NAME) is on the system disk: make run; then, in the shell: run $(PROG_NAME)"; \
	else \
	    $(B)/tools/dmfs put $(DISK) $(B)/prog/$(PROG_NAME) /bin/$(PROG_NAME) && echo "  DMFS    $(DISK): /bin/$(PROG_NAME)"; \
	fi

# The system disk: a fresh file system holding /bin (the system's programs
# and yours) and /labs (LAB_FILES). Made again whenever a program changes, so files written on it
# earlier are lost; `make run DISK=IMAGE` boots with an image of your own
# instead.
$(SYSTEM_DISK): $(BIN) $(PROG_BIN) $(LAB_FILES:%=user/labs/%) $(B)/tools/dmfs
	@echo "  DMFS    $@ (/bin: $(words $(BIN) $(PROG_BIN)) programs)"
	@$(B)/tools/dmfs mkfs --force $@ $(SYSTEM_DISK_MB) $(foreach p,$(BIN) $(PROG_BIN),$(p)=/bin/$(notdir $(p))) \
	    $(foreach f,$(LAB_FILES),user/labs/$(f)=/labs/$(f)) >/dev/null

# The servers' own library (user/lib/server.c): registering, answering
# requests, requests to a kernel.
SERVER_LIB := $(B)/user/lib/server.o
$(BOOT_ELVES): $(SERVER_LIB)
$(BOOT_ELVES): SERVER_OBJS := $(SERVER_LIB)

# The disk interface checks the file system at mount with the host tool's
# checker (fs/fsck.c over fs/fsimage.c), compiled for both.
FSCK_OBJS := $(B)/fs/fsimage.o $(B)/fs/fsck.o
$(B)/fs/di.elf: $(FSCK_OBJS)
$(B)/fs/di.elf: EXTRA_OBJS := $(FSCK_OBJS)

# libctest checks newlib's printf and scanf against the host's C library:
# tests/libc_expected.c, built with the host's compiler, writes what the
# host prints for each case of user/tests/libc_formats.h into a header
# that libctest compiles in.
LIBC_EXPECTED := $(B)/user/tests/libc_expected.h
$(B)/tools/libc_expected: tests/libc_expected.c user/tests/libc_formats.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -Iuser/tests -o $@ $<
$(LIBC_EXPECTED): $(B)/tools/libc_expected
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	@$< > $@.tmp && mv $@.tmp $@
$(B)/user/tests/libctest.o: $(LIBC_EXPECTED)
$(B)/user/tests/libctest.o: USER_CFLAGS += -I$(B)/user/tests

# The workloads share their random numbers and argument parsing; the
# travelling salesman's controller and servers share its search
# (user/workloads/tsp/).
WORKLOAD_OBJS := $(B)/user/lib/workload.o
TSP_OBJS      := $(WORKLOAD_OBJS) $(B)/user/workloads/tsp/search.o
$(B)/user/workloads/fsseq.elf $(B)/user/workloads/fsrand.elf $(B)/user/tests/kfuzz.elf: $(WORKLOAD_OBJS)
$(B)/user/workloads/fsseq.elf $(B)/user/workloads/fsrand.elf $(B)/user/tests/kfuzz.elf: EXTRA_OBJS := $(WORKLOAD_OBJS)
# filtertest reads the summaries a filter forwards.
$(B)/user/tests/filtertest.elf: $(B)/meter/summary.o
$(B)/user/tests/filtertest.elf: EXTRA_OBJS := $(B)/meter/summary.o
$(B)/user/workloads/tsp.elf: $(TSP_OBJS) $(B)/user/workloads/tsp/heldkarp.o
$(B)/user/workloads/tsp.elf: EXTRA_OBJS := $(TSP_OBJS) $(B)/user/workloads/tsp/heldkarp.o
$(B)/user/workloads/tspserver.elf: $(TSP_OBJS)
$(B)/user/workloads/tspserver.elf: EXTRA_OBJS := $(TSP_OBJS)

# The filter server selects records with meter/'s rule engine, writes
# meter/'s trace-log container and forwards meter/'s summaries: the same C
# as the host tools', compiled for the guest.
METER_GUEST_OBJS := $(B)/meter/tracelog.o $(B)/meter/rules.o $(B)/meter/summary.o
$(B)/filter/filter.elf: $(METER_GUEST_OBJS)
$(B)/filter/filter.elf: EXTRA_OBJS := $(METER_GUEST_OBJS)

# The feedback scheduler: its rule (balance/policy.c, which the host tests
# too) and the filter's summaries it reads.
BALANCE_OBJS := $(B)/balance/policy.o $(B)/meter/summary.o
$(B)/balance/balance.elf: $(BALANCE_OBJS)
$(B)/balance/balance.elf: EXTRA_OBJS := $(BALANCE_OBJS)

# Host tools (tools/): built with the host's compiler; dmfs and dmtrace
# end on errors through tools/cli.c. They and dpm ask tools/output_check.c
# before they write a file.
CLI := tools/cli.c tools/cli.h tools/output_check.c tools/output_check.h
$(B)/tools/dmfs: tools/dmfs.c $(CLI) fs/fsimage.c fs/fsck.c fs/fsimage.h fs/fsck.h user/lib/fs_format.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -Ifs -Iuser/lib -o $@ tools/dmfs.c tools/cli.c tools/output_check.c fs/fsimage.c fs/fsck.c

# Trace disks and trace logs on the host (meter/'s container and rule
# engine, compiled for the host); tracegen writes logs of known records
# for its tests (tests/test_dmtrace.py).
METER_HOST := meter/tracelog.c meter/rules.c meter/tracelog.h meter/rules.h meter/record.h meter/print.c meter/print.h
$(B)/tools/dmtrace: tools/dmtrace.c $(CLI) $(METER_HOST)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -Imeter -o $@ tools/dmtrace.c tools/cli.c tools/output_check.c meter/tracelog.c meter/rules.c meter/print.c
$(B)/tools/tracegen: tests/tracegen.c $(METER_HOST)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -Imeter -o $@ tests/tracegen.c meter/tracelog.c meter/rules.c

# The host analyzer: analysis/dpm.c and every analysis/*/*.c (load/ reads
# the logs, models/ analyses them, report/ writes the HTML report's sections,
# commands/ holds each subcommand, cmd_NAME.c for `dpm NAME`), over meter/'s
# container and rule engine; and the same under the sanitizers, which the
# analyzer's tests run on damaged logs (tests/test_dpm.py). Includes within
# analysis/ name a header by its path from there ("models/history.h").
# The networks shipped with dpm (analysis/networks/*.tsv, docs/analyzer.md
# "Networks") are compiled in, as $(B)/analysis/networks.c.
NETWORKS := $(sort $(wildcard analysis/networks/*.tsv))
$(B)/analysis/networks.c: $(NETWORKS) scripts/mknetworks.sh
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	@scripts/mknetworks.sh $@ $(NETWORKS)
DPM_SRCS := $(wildcard analysis/*.c analysis/*/*.c) $(B)/analysis/networks.c
DPM_DEPS := $(DPM_SRCS) $(wildcard analysis/*/*.h) $(METER_HOST) kernel/demos.h tools/output_check.c tools/output_check.h
$(B)/tools/dpm: $(DPM_DEPS)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) -Imeter -Ianalysis -Ikernel -Itools -o $@ $(DPM_SRCS) tools/output_check.c meter/tracelog.c meter/rules.c meter/print.c -lm
$(B)/tools/dpm-sanitized: $(DPM_DEPS)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) -fsanitize=address,undefined -fno-sanitize-recover=all -Imeter -Ianalysis -Ikernel -Itools -o $@ \
	    $(DPM_SRCS) tools/output_check.c meter/tracelog.c meter/rules.c meter/print.c -lm

# SipHash-2-4, the frames' MAC (plain C), against the published test
# vectors under the sanitizers (tests/test_wireauth.py).
$(B)/tools/siphash_test: tests/siphash_test.c tests/host_check.h kernel/net/siphash.c kernel/net/siphash.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -fsanitize=address,undefined -fno-sanitize-recover=all -Ikernel/net -o $@ \
	    tests/siphash_test.c kernel/net/siphash.c

# The kernel's frame parser (plain C) under a host unit test with the
# sanitizers (tests/test_net.py).
$(B)/tools/netframe_test: tests/netframe_test.c tests/host_check.h kernel/net/netframe.c kernel/net/netframe.h \
                          kernel/net/siphash.c kernel/net/siphash.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -fsanitize=address,undefined -fno-sanitize-recover=all -Ikernel/net -o $@ \
	    tests/netframe_test.c kernel/net/netframe.c kernel/net/siphash.c

# DPM's record tables, description and trace-log container (meter/, plain C
# shared by guest and host) under a host unit test with the sanitizers
# (tests/test_meter.py).
$(B)/tools/meter_test: tests/meter_test.c tests/host_check.h meter/tracelog.c meter/tracelog.h meter/record.h \
                      meter/rules.c meter/rules.h meter/summary.c meter/summary.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -fsanitize=address,undefined -fno-sanitize-recover=all -Imeter -o $@ \
	    tests/meter_test.c meter/tracelog.c meter/rules.c meter/summary.c

# The description parser and the rule engine (meter/rules.c), the same
# code the filter and the analyzer use, under the sanitizers (tests/test_meter.py).
$(B)/tools/rules_test: tests/rules_test.c tests/host_check.h meter/rules.c meter/rules.h meter/tracelog.c meter/tracelog.h meter/record.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -fsanitize=address,undefined -fno-sanitize-recover=all -Imeter -o $@ \
	    tests/rules_test.c meter/rules.c meter/tracelog.c

# The user library's strtold (riscv64's binary128) on the host against
# glibc's strtof128, under the sanitizers (tests/test_kernel.py); x86_64's
# long double is made binary128 for it.
$(B)/tools/strtold_test: tests/strtold_test.c tests/host_check.h user/lib/strtold.c user/lib/float_subject.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -fsanitize=address,undefined -fno-sanitize-recover=all \
	    $(if $(filter x86_64,$(shell uname -m)),-mlong-double-128) -o $@ tests/strtold_test.c -lm

# The feedback scheduler's rule (balance/policy.c, plain C) under a host
# unit test with the sanitizers (tests/test_balance.py).
$(B)/tools/balance_test: tests/balance_test.c tests/host_check.h balance/policy.c balance/policy.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -fsanitize=address,undefined -fno-sanitize-recover=all -Ibalance -o $@ \
	    tests/balance_test.c balance/policy.c

# The transport engine (plain C) between simulated kernels on a faulty
# simulated network, under the sanitizers (tests/test_transport.py).
$(B)/tools/transport_test: tests/transport_test.c tests/host_check.h kernel/net/transport.c kernel/net/transport.h \
                           kernel/net/netframe.c kernel/net/netframe.h kernel/net/siphash.c kernel/net/siphash.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -fsanitize=address,undefined -fno-sanitize-recover=all -Ikernel/net -o $@ \
	    tests/transport_test.c kernel/net/transport.c kernel/net/netframe.c kernel/net/siphash.c

# The analyzer's graph analyses (analysis/models/: the history graph,
# parallelism and contention, the critical path, causality, vector
# timestamps and clock offsets; and
# analysis/load/'s ELF symbol reader) on traces built in memory, under the
# sanitizers (tests/test_dpm_graph.py). They are library code over
# analysis/load/event.h's struct dpm_trace, which the test fills itself, so
# the test needs no trace log and no `dpm` main.
DPM_GRAPH_SRCS := analysis/models/history.c analysis/load/table.c analysis/models/delays.c analysis/models/parallel.c \
                  analysis/models/contention.c analysis/models/critpath.c analysis/models/causality.c \
                  analysis/models/tally.c analysis/models/arrivals.c analysis/models/clocks.c \
                  analysis/models/vclock.c analysis/models/timeline.c analysis/models/outside.c \
                  analysis/load/pids.c analysis/load/elfsym.c $(B)/analysis/networks.c
DPM_GRAPH_HDRS := analysis/models/history.h analysis/models/parallel.h analysis/models/critpath.h \
                  analysis/models/causality.h analysis/models/tally.h analysis/models/arrivals.h \
                  analysis/models/clocks.h analysis/models/vclock.h analysis/models/timeline.h \
                  analysis/models/outside.h analysis/load/elfsym.h analysis/load/event.h \
                  analysis/load/table.h meter/record.h
$(B)/tools/dpm_graph_test: tests/dpm_graph_test.c tests/host_check.h $(DPM_GRAPH_SRCS) $(DPM_GRAPH_HDRS)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	@$(HOSTCC) -fsanitize=address,undefined -fno-sanitize-recover=all -Imeter -Ianalysis -Itests -o $@ \
	    tests/dpm_graph_test.c $(DPM_GRAPH_SRCS) -lm

# dmfs and dmtrace under the address and undefined-behaviour sanitizers:
# what their suites run (tests/test_tools.py, tests/test_dmtrace.py).
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all
$(B)/tools/dmfs-sanitized: tools/dmfs.c $(CLI) fs/fsimage.c fs/fsck.c fs/fsimage.h fs/fsck.h user/lib/fs_format.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) $(SANITIZE) -Ifs -Iuser/lib -o $@ tools/dmfs.c tools/cli.c tools/output_check.c fs/fsimage.c fs/fsck.c
$(B)/tools/dmtrace-sanitized: tools/dmtrace.c $(CLI) $(METER_HOST)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) $(SANITIZE) -Imeter -o $@ tools/dmtrace.c tools/cli.c tools/output_check.c meter/tracelog.c meter/rules.c meter/print.c

# The fuzzers (tests/fuzz/, README "Fuzzing"): clang's libFuzzer with the
# sanitizers, one binary per target. `make fuzz` runs each for FUZZ_SECONDS
# (scripts/fuzz.py, which builds them); `make test` runs each briefly
# (tests/test_fuzz.py).
FUZZ_CC := clang -std=c11 -Wall -Wextra -Werror -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := rules tracelog fsimage netframe
FUZZ_rules    := meter/rules.c meter/tracelog.c
FUZZ_tracelog := meter/rules.c meter/tracelog.c analysis/load/stream.c analysis/load/fields.c analysis/load/trace.c \
                 analysis/load/table.c analysis/load/window.c analysis/load/pids.c
FUZZ_fsimage  := fs/fsimage.c fs/fsck.c
FUZZ_netframe := kernel/net/netframe.c kernel/net/transport.c kernel/net/siphash.c
FUZZ_HDRS := $(wildcard meter/*.h analysis/*/*.h fs/*.h user/lib/fs_format.h kernel/net/netframe.h kernel/net/transport.h kernel/net/siphash.h)
$(foreach t,$(FUZZ_TARGETS),$(eval $(B)/fuzz/fuzz_$(t): $(FUZZ_$(t))))
$(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%): $(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	@$(FUZZ_CC) -Imeter -Ianalysis -Ifs -Iuser/lib -Ikernel/net -o $@ $< $(FUZZ_$*)

fuzz: setup
	@python3 scripts/fuzz.py $(FUZZ_SECONDS)

# Boot a cluster of NODES nodes with node 0's shell on this terminal (input
# may be piped); `halt` ends them all. Node 0's disk is the system disk, or
# DISK=IMAGE (it must hold /bin/shell); the other consoles go to build/cluster/.
# FAULTS="loss=10 dup=5 delay=2" puts a wirefilter on the wire into every node;
# PLACE="bm=1 dm=2 ri=1" runs those file-system processes on those machines
# (README, The cluster). TRACE=DIR gives node K the trace disk DIR/traceK.img
# (made blank when missing, kept after: build/tools/dmtrace extract reads it);
# METER_FS=K (with TRACE) meters the file system from boot into a filter on
# machine K's trace disk. DISK_SERVICE_US=N makes every request to the file
# system's disk take at least N us of machine time (for measurements).
# GDB=K (a node, a list such as 0,2, or all) starts those nodes stopped,
# each waiting for GDB on $(B)/gdb/nodeK.sock; the others boot at once.
# KEY=<32 hex digits> is the cluster's key, which seals every frame between
# kernels (docs/cluster.md, The key); without it the launcher makes a fresh one.
# LAB=NAME, for a lab with a kernel of its own (LAB_KERNELS), boots that
# kernel on every node instead of the system's.
run: all
	@$(CLUSTER) --nodes $(NODES) $(if $(FAULTS),--faults "$(FAULTS)") $(if $(PLACE),--place "$(PLACE)") \
	    $(if $(TRACE),--trace-disks "$(TRACE)") $(if $(METER_FS),--meter-fs "$(METER_FS)") \
	    $(if $(DISK_SERVICE_US),--disk-service-us "$(DISK_SERVICE_US)") $(if $(GDB),--gdb "$(GDB)") \
	    $(if $(KEY),--key "$(KEY)")

# One node alone, stopped, waiting for GDB on $(B)/gdb/node0.sock; and GDB
# attached to node NODE of a cluster started with GDB=... (docs/testing.md,
# "Debugging with GDB"), with the kernel's symbols and scripts/gdbinit's
# commands.
gdb: all
	@$(CLUSTER) --nodes 1 --gdb 0
gdb-attach:
	@gdb-multiarch -q -ex 'set $$node = $(NODE)' $(if $(LAB_KERNEL),-ex 'set $$kernel = "$(LAB_KERNEL)"') \
	    -x scripts/gdbinit

test: all
	@python3 scripts/test.py

# The course's labs (docs/labs/): `make grade LAB=links` grades one, `make
# grade` every lab in labs/; each test is printed with its points, then the
# score.
grade: all
	@python3 scripts/grade.py $(LAB)

# The fault-injection run at full size: two clients, each 10,000
# messages and 4 MiB moved there and back, across wirefilters losing 10% and
# duplicating 5% of the frames. A few minutes; `make test` runs a smaller one.
test-faults: all
	@FAULT_MESSAGES=10000 FAULT_MIB=4 python3 scripts/test.py faults

# The largest cluster the launcher allows (40 nodes) booted 5 times, and 5
# times under loss=10 dup=5 on every wire; about 3 minutes. `make test` boots
# it once, without faults (tests/test_large.py).
test-large: all
	@LARGE_ROUNDS=5 python3 scripts/test.py large

# The thesis's experiments at full size (docs/fs-study.md, docs/fs-predict.md,
# docs/tsp.md): each boots its clusters, runs its workloads metered and writes
# build/experiments/NAME/report.html and results.json. About 15 minutes in all;
# `make test` runs them small (tests/test_experiments.py).
experiments: all
	@python3 scripts/fs_study.py
	@python3 scripts/fs_predict.py --repeat 3
	@python3 scripts/tsp_study.py

# The kernel-call fuzzer's long run: 4 processes x 250,000 random
# kernel calls, then ktest; `make test` runs 4 x 25,000.
test-hostile: all
	@KFUZZ_CALLS=250000 python3 scripts/test.py hostile

# The chaos campaign (scripts/chaos.py; docs/testing.md, "The chaos
# campaign"): seeded runs of random commands, node kills and reboots, halts
# and power failures on clusters of 1 to 4 nodes, with and without faults on
# the wires, every invariant checked after every step; a line per run, about
# 15 minutes (CHAOS_MINUTES=M). SEED=N [STEPS=K] replays one run; NODES=N and
# FAULTS=SPEC (or none) override the cluster the seed chooses. `make test`
# runs a few fixed seeds (tests/test_chaos.py).
test-chaos: all
	@python3 scripts/chaos.py $(if $(SEED),--seed $(SEED)) $(if $(STEPS),--steps $(STEPS)) \
	    $(if $(filter command line environment,$(origin NODES)),--nodes $(NODES)) \
	    $(if $(FAULTS),--faults "$(FAULTS)") $(if $(CHAOS_MINUTES),--minutes $(CHAOS_MINUTES))

bench: all
	@python3 scripts/bench.py

clean:
	rm -rf $(B)/kernel $(B)/user $(B)/servers $(B)/fs $(B)/tools $(B)/fuzz $(B)/bin $(B)/prog $(B)/labs $(B)/kernel.elf \
	    $(SYSTEM_DISK)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
