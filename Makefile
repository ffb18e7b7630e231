# pmucanary build. `make` builds build/pmucanary and the guest agent;
# `make check` builds with -Werror and runs the unit and integration suites;
# `make check SANITIZE=1` does the same under ASan+UBSan.
CC      ?= cc
PKGS    := libvirt glib-2.0 jansson libarchive libguestfs yaml-0.1 zlib
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter \
           -D_GNU_SOURCE $(LIB_INC) $(shell pkg-config --cflags $(PKGS))
LDLIBS  += $(shell pkg-config --libs $(PKGS)) -lpthread
ifeq ($(SANITIZE),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
BUILD   ?= build-san
endif
ifeq ($(WERROR),1)
CFLAGS  += -Werror
endif
BUILD   ?= build

# lib/ is in folders by layer (lib/README.md); every folder is on the
# include path, so a header is included by its name alone.
LIB_DIRS := base abi model host report guests run lab
LIB_INC  := $(addprefix -Ilib/,$(LIB_DIRS))
LIB_HDR  := $(wildcard lib/*/*.h)
LIB_SRC  := $(sort $(wildcard lib/*/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_SRC  := $(sort $(wildcard harness/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(sort $(wildcard tests/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/%.c=$(BUILD)/tests/%)
IT_SRC   := $(sort $(wildcard tests/it_*.c))
IT_BIN   := $(IT_SRC:tests/%.c=$(BUILD)/tests/%)
# Programs the integration suites run (tests/helper_*.c): not suites.
HELPER_SRC := $(sort $(wildcard tests/helper_*.c))
HELPER_BIN := $(HELPER_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC:= $(sort $(wildcard bench/*.c))
BENCH_BIN:= $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

# The guest agent is static and depends only on lib/guests/hbproto.h.
AGENT    := $(BUILD)/guest-images/pmucanary-agent

# `kernel = small` runs kernel-build.sh on the fragment beside the binary.
SMALLK   := $(BUILD)/guest-images/kernel-build.sh $(BUILD)/guest-images/kconfig/guest-small.config
# `lab --kernel replay:NAME` runs it on the lab-host fragment with the
# replay patches beside the binary.
REPLAY   := $(BUILD)/guest-images/kconfig/lab-host.config \
            $(patsubst %,$(BUILD)/%,$(sort $(wildcard guest-images/replay/*.patch)))

all: $(BUILD)/pmucanary $(AGENT) $(SMALLK) $(REPLAY)

$(BUILD)/guest-images/%: guest-images/%
	@mkdir -p $(dir $@)
	cp -p $< $@

$(BUILD)/%.o: %.c $(LIB_HDR) $(wildcard harness/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/libpmucanary.a: $(LIB_OBJ)
	ar rcs $@ $^

$(BUILD)/pmucanary: $(CLI_OBJ) $(BUILD)/libpmucanary.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libpmucanary.a $(LDLIBS)

AGENT_SRC := guest-images/agent.c guest-images/agent_lab.c
$(AGENT): $(AGENT_SRC) guest-images/agent.h lib/guests/hbproto.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -Ilib/guests -static -o $@ $(AGENT_SRC) -lpthread

$(BUILD)/tests/%: tests/%.c $(BUILD)/libpmucanary.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libpmucanary.a $(LDLIBS) $(shell pkg-config --libs cmocka)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libpmucanary.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libpmucanary.a $(LDLIBS)

unit: all $(UNIT_BIN)
	@tests/run-tests $(BUILD) unit

integration: all $(IT_BIN) $(HELPER_BIN)
	@tests/run-tests $(BUILD) integration

# The sanitizer pass repeats the unit and integration suites but these:
# the lab suites boot kernels under test for minutes, and the code they add
# over the integration suites runs in the outer harness only; it_perfbin
# and it_resume (4 min each under TCG) add guest time, not code: the runner's
# resume and HOST_CRASH paths and perfbin's tracing run under ASan in
# test_runner, test_perfbin and cli_probe.sh. cli_perf_debian.sh (1-2 min
# under ASan): what it adds over cli_inputs.sh and test_spec is Debian's
# real perf beside our encoder; the spec grammar it drives is fuzzed under
# ASan+UBSan by cli_fuzz.sh. it_restore (2 min of guests): the fleet's
# save, restore and failed restore run under ASan in it_fleet
# (test_restore); what it adds is the same run three ways. cli_fuzz.sh
# builds its own ASan+UBSan targets with clang: once is enough. it_faults
# (5-12 min of guests, and it kills libvirtd twice): what it runs beyond
# it_resume is the journal's undo of a failed line (under ASan in
# test_journal) and the cleanup after a lost libvirt connection (a few
# libvirt calls). it_inject (3-8 min of libguestfs appliance boots
# under TCG): inject's own logic runs under ASan in test_inject. The two
# full-sweep suites (cli_matrix_scale.sh, cli_matrix_text_scale.sh: 1 and
# 2 min under ASan) run the same reader and writers as cli_matrix.sh and
# cli_diff.sh, only on 140,000 cells; the reader is fuzzed under ASan.
# it_lava (3-4 min of lava-run booting TCG devices, one with a nested
# guest): the job writer and the log collector run under ASan in
# test_lava; what it adds is LAVA's engine.
# it_signal (2-3 min of guests): the runner's paths for a signal during a
# batch run under ASan in test_runner (its two signal tests); what it adds
# is the real heartbeat wait and dwell cut short.
# it_smallkernel (3-5 min of guests, and a kernel build on a cold cache):
# beyond it_run it adds the small kernel's spawn of kernel-build.sh and one
# JSON object; its config check runs under ASan in test_image.
# it_distro (3-5 min: mmdebstrap, a libguestfs appliance, a systemd guest
# through grub, twice harmed): inject's grub edit runs under ASan in
# test_inject, the heartbeat's boot grace in test_heartbeat; what it adds is
# a real distribution's boot beside a CPU load.
# it_repro (1-2 min: a run and three guests under plain QEMU): the
# reproducer writer and guest.sh's generator run under ASan in test_repro
# and test_runner; what it adds is the shell script against real QEMU.
, := ,
CHECK_MODES := $(if $(filter 1,$(SANITIZE)),unit$(,)integration,all)
CHECK_SUITES := $(if $(filter 1,$(SANITIZE)),!it_perfbin.sh !it_resume.sh !cli_fuzz.sh !it_faults.sh !it_inject.sh \
		!cli_perf_debian.sh !it_restore.sh \
		!cli_matrix_scale.sh !cli_matrix_text_scale.sh !it_lava.sh \
		!it_smallkernel.sh !it_signal.sh !it_distro.sh !it_repro.sh)

# Everything `check` compiles, with -Werror: `make SANITIZE=1 check-build`
# shows in seconds what the sanitizer pass's compiler says.
check-build:
	$(MAKE) WERROR=1 all $(UNIT_BIN) $(IT_BIN) $(HELPER_BIN)

check: check-build
	@tests/run-tests $(BUILD) $(CHECK_MODES) $(CHECK_SUITES)

lab-check: all
	@tests/run-tests $(BUILD) lab

# The suites that take tens of minutes each (tests/slow_*.sh: bisect over
# real kernel builds): not in `check`, so not in CI.
slow-check: all
	@tests/run-tests $(BUILD) slow

# Plants each bug of tests/mutants.list in a copy of the tree and runs the
# suites that should catch it; MUTANTS_ARGS=--integration adds the ones only
# real guests catch. Not part of `make check`: it rebuilds once per mutant.
mutants:
	@tests/mutants.sh $(MUTANTS_ARGS)

# Generated mutants: tests/mutants_gen.py derives them from lib/ and
# harness/ (comparisons flipped and moved by one, && and || swapped or a
# term dropped, literals changed), draws MUTANTS_PER_MODULE per file with
# MUTANTS_SEED and runs them like the list; prints a kill score per file.
MUTANTS_SEED ?= 1
MUTANTS_PER_MODULE ?= 5
mutants-gen:
	@mkdir -p $(BUILD)
	@python3 tests/mutants_gen.py --seed $(MUTANTS_SEED) --per-module $(MUTANTS_PER_MODULE) \
		>$(BUILD)/mutants-gen.list
	@tests/mutants.sh --list-file=$(BUILD)/mutants-gen.list $(MUTANTS_ARGS)

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang against a copy of
# lib/ compiled with the same sanitizers, in $(BUILD)/fuzz/. Run by
# tests/cli_fuzz.sh (a few seconds each) and bench/fuzz.sh (10^7 runs each).
FUZZ_CC   ?= clang
FUZZ_DIR  := $(BUILD)/fuzz
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
             -fno-omit-frame-pointer
FUZZ_CFLAGS := $(filter-out -fsanitize=%,$(CFLAGS))
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_DIR)/%)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_DIR)/%.o)

$(FUZZ_DIR)/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_DIR)/libpmucanary.a: $(FUZZ_LIB_OBJ)
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_DIR)/libpmucanary.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -DFUZZ_TOP='"$(CURDIR)"' \
		-o $@ $< $(FUZZ_DIR)/libpmucanary.a $(LDLIBS)

fuzz: $(FUZZ_BIN)

bench: all $(BENCH_BIN)

clean:
	rm -rf build build-san

.PHONY: all unit integration check check-build lab-check slow-check mutants fuzz bench clean mutants-gen
