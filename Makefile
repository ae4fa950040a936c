# schedext — build, test, run, bench.
#   make            build build/schedext (release, -O2)
#   make run        install deps, build, serve the demo cluster and its pending pods on $(LISTEN)
#   make test       install deps, build, run every unit and integration test
#   make test SANITIZE=address,undefined | SANITIZE=thread
#   make bench [QUICK=1], make perf-check [UPDATE=1], make format, make clean,
#   make install-deps
#   make test-real [SCHEDULER=PATH]   (needs KUBEBUILDER_ASSETS; README)
#   make soak [SOAK_MINUTES=N] [BUILD=build-soak]   (test/soak/soak.py)
#   make fuzz [FUZZ_SECONDS=N] [FUZZ_TARGETS="a b"]   (test/fuzz/README.md)

CC       ?= cc
LISTEN   ?= 127.0.0.1:8888
SANITIZE ?=
comma    := ,
PKGS     := libmicrohttpd libcjson libcurl yaml-0.1
DEB_PKGS := build-essential pkg-config libmicrohttpd-dev libcjson-dev libcurl4-openssl-dev \
            libyaml-dev python3 curl openssl ca-certificates jq

ifeq ($(SANITIZE),)
  BUILD  ?= build
  OPT    := -O2 -g
  SANFLAGS :=
else
  BUILD  ?= build-$(subst $(comma),-,$(SANITIZE))
  OPT    := -O1 -g -fno-omit-frame-pointer
  SANFLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all
endif
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# FUZZ_ENGINE=1 (set by make fuzz): objects get libFuzzer's coverage hooks
# and fuzz targets link libFuzzer's main instead of test/fuzz/replay.c.
ifeq ($(FUZZ_ENGINE),1)
  SANFLAGS += -fsanitize=fuzzer-no-link
  FUZZ_MAIN :=
  FUZZ_LINK := -fsanitize=fuzzer
else
  FUZZ_MAIN := test/fuzz/replay.c
  FUZZ_LINK :=
endif

CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter \
           $(OPT) $(SANFLAGS) -Iinclude $(PKG_CFLAGS) -MMD -MP -pthread
LDFLAGS += $(SANFLAGS) -pthread
LDLIBS  += $(PKG_LIBS) -lm

CORE_SRC   := $(filter-out src/cmd/main.c,$(wildcard src/*/*.c))
PLUGIN_SRC := $(wildcard plugins/*.c)
LIB_OBJ    := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRC) $(PLUGIN_SRC))
MAIN_OBJ   := $(BUILD)/obj/src/cmd/main.o
LIB        := $(BUILD)/libschedext.a
BIN        := $(BUILD)/schedext

TEST_SRC   := $(wildcard test/unit/test_*.c test/plugins/test_*.c)
TEST_BINS  := $(patsubst test/%.c,$(BUILD)/test/%,$(TEST_SRC))
TEST_HARNESS := $(BUILD)/obj/test/harness.o

# Fuzz targets: one file test/fuzz/fuzz_<name>.c each (plus seeds in
# test/fuzz/corpus/<name>/). make test runs them over their corpus and
# regressions; make fuzz runs them under libFuzzer.
FUZZ_SRC     := $(wildcard test/fuzz/fuzz_*.c)
FUZZ_BINS    := $(patsubst test/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build-fuzz

PREFIX   ?= /usr/local
KUBECTL_PLUGIN := $(BUILD)/kubectl-schedext

.PHONY: all run test test-real unit integration bench bench-perf perf-check format-check clean format \
	install install-deps install-test-deps check-deps tools fuzz fuzz-bins install-fuzz-deps soak
all: $(BIN) $(KUBECTL_PLUGIN)

# kubectl finds plugins by name (kubectl-<name> on PATH): the same binary,
# dispatching on the name it was started by.
$(KUBECTL_PLUGIN): $(BIN)
	ln -sf schedext $@

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/schedext
	ln -sf schedext $(DESTDIR)$(PREFIX)/bin/kubectl-schedext

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(MAIN_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(MAIN_OBJ) $(LIB) $(LDLIBS)

$(BUILD)/test/%: test/%.c $(LIB) $(TEST_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest -o $@ $< $(TEST_HARNESS) $(LIB) $(LDFLAGS) $(LDLIBS)

$(BUILD)/fuzz/fuzz_%: test/fuzz/fuzz_%.c $(FUZZ_MAIN) $(LIB) $(wildcard test/fuzz/*.h) test/recount.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itest -Itest/fuzz -DFUZZ_NAME='"$*"' -o $@ $< $(FUZZ_MAIN) $(LIB) \
	  $(LDFLAGS) $(FUZZ_LINK) $(LDLIBS)
fuzz-bins: $(FUZZ_BINS)

# The User-Agent names the commit schedext was built from
# (src/api/user_agent.c); HEAD's reflog changes at every commit and
# checkout, so the object is rebuilt then. Outside git: "unknown".
GIT_COMMIT   := $(shell git rev-parse --short=7 HEAD 2>/dev/null)
GIT_HEAD_LOG := $(wildcard $(shell git rev-parse --git-path logs/HEAD 2>/dev/null))
$(BUILD)/obj/src/api/user_agent.o: CFLAGS += -DSX_GIT_COMMIT='"$(GIT_COMMIT)"'
$(BUILD)/obj/src/api/user_agent.o: $(GIT_HEAD_LOG)

# The page is linked in with .incbin (src/cmd/ui.c), which -MMD cannot see.
$(BUILD)/obj/src/cmd/ui.o: src/cmd/ui.html

# The allocation-failure sweep wraps the allocator of everything linked
# statically (test/unit/test_failalloc.c).
FAILALLOC_WRAP := $(foreach f,malloc calloc realloc strdup strndup asprintf vasprintf,-Wl,--wrap=$(f))
$(BUILD)/test/unit/test_failalloc: LDFLAGS += $(FAILALLOC_WRAP)
$(BUILD)/test/unit/test_cel_failalloc: LDFLAGS += $(FAILALLOC_WRAP)
# test/unit/test_hmap.c and test_vec.c fail one allocation at a time.
$(BUILD)/test/unit/test_hmap: LDFLAGS += -Wl,--wrap=malloc -Wl,--wrap=calloc
$(BUILD)/test/unit/test_vec: LDFLAGS += -Wl,--wrap=realloc

# Tools used by tests and bench (the synthetic cluster generator, the C load driver).
BENCH_SRC  := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)
tools: $(BENCH_BINS)
# perf_check counts the allocations of schedext's own code (bench/perf_check.c).
PERFCHECK_WRAP := $(foreach f,malloc calloc realloc strdup strndup,-Wl,--wrap=$(f))
$(BUILD)/bench/perf_check: LDFLAGS += $(PERFCHECK_WRAP)

# Installs missing Debian packages; a no-op when pkg-config finds everything.
install-deps:
	@if command -v cc >/dev/null && pkg-config --exists $(PKGS) 2>/dev/null \
	    && command -v python3 >/dev/null \
	    && command -v curl >/dev/null && command -v openssl >/dev/null \
	    && command -v jq >/dev/null; then \
	  :; \
	else \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "installing: $(DEB_PKGS)"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(DEB_PKGS); \
	fi

# make fuzz only: Debian's clang and its libFuzzer runtime.
FUZZ_RT = $(shell clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a
install-fuzz-deps: install-deps
	@if command -v clang >/dev/null && [ -e "$(FUZZ_RT)" ]; then :; else \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "installing: clang libclang-rt-14-dev"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq clang libclang-rt-14-dev; \
	fi

# Builds every target with clang + libFuzzer + ASan/UBSan in build-fuzz and
# runs each for FUZZ_SECONDS (test/fuzz/run.sh); fails on any finding.
fuzz: install-fuzz-deps
	@$(MAKE) --no-print-directory CC=clang SANITIZE=address,undefined BUILD=$(FUZZ_BUILD) \
	  FUZZ_ENGINE=1 fuzz-bins
	@FUZZ_SECONDS="$(FUZZ_SECONDS)" ./test/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_TARGETS)

# Extender load + watch churn under every fake-API fault + standalone
# scheduling for SOAK_MINUTES; prints RSS/fds/threads/cache every minute and
# the final convergence check; fails on a crash, divergence or growth.
SOAK_MINUTES ?= 10
soak: install-deps
	@$(MAKE) --no-print-directory all
	nice -n 10 python3 test/soak/soak.py --bin $(BIN) --minutes $(SOAK_MINUTES)


# What only the tests need: headless Chromium for the operators' page test,
# a font for its screenshot where apt is set to skip Recommends, and PyYAML
# for the scheduler_perf runner's smoke test.
TEST_DEB_PKGS := chromium fonts-liberation python3-yaml
install-test-deps: install-deps
	@if command -v chromium >/dev/null && { python3 -c 'import yaml' 2>/dev/null || \
	    /usr/bin/python3 -c 'import yaml' 2>/dev/null; }; then :; else \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "installing: $(TEST_DEB_PKGS)"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(TEST_DEB_PKGS); \
	fi

check-deps:
	@pkg-config --exists $(PKGS) || { echo "missing libraries: run make install-deps"; exit 1; }

run: install-deps
	@$(MAKE) --no-print-directory all
	$(BIN) serve --state extender-config/demo-cluster.yaml \
		--state extender-config/demo-pending.yaml --listen $(LISTEN)

test: install-test-deps
	@./test/check_layers.py
	@./test/check_state.py
	@./test/check_plugins.py
	@$(MAKE) --no-print-directory all tools $(TEST_BINS) $(FUZZ_BINS)
	@SANITIZE="$(SANITIZE)" BUILD="$(BUILD)" ./test/run.sh $(TEST_BINS) $(FUZZ_BINS)

# The suite against a real control plane (README "Tests against a real
# control plane"): KUBEBUILDER_ASSETS must name a directory with etcd and
# kube-apiserver; SCHEDULER=PATH names the kube-scheduler of the
# differential test. Skips with one line without them.
test-real: install-deps
	@$(MAKE) --no-print-directory all
	@SCHEDEXT_BIN="$(abspath $(BIN))" python3 test/integration/test_real_control_plane.py \
	  $(if $(SCHEDULER),--scheduler "$(SCHEDULER)")

bench: install-deps
	@$(MAKE) --no-print-directory all tools
	@BUILD="$(BUILD)" QUICK="$(QUICK)" ./bench/run.sh

# Upstream's scheduler_perf workloads (bench/scheduler_perf.py, configs in
# bench/scheduler_perf/): MODE=inprocess (default; 5,000 nodes), fake (the
# fake API server; SCALE defaults to 0.1, 500 nodes) or real
# ($$KUBEBUILDER_ASSETS); WORKLOADS=TestCase[/workload],... ; SCALE=F
# multiplies every count; SCHEDULER=PATH drives a kube-scheduler binary
# instead of schedext (fake/real). Figures also go to $(BUILD)/perf/.
MODE ?= inprocess
bench-perf: install-deps
	@python3 -c 'import yaml' 2>/dev/null || /usr/bin/python3 -c 'import yaml' 2>/dev/null || { \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; echo "installing: python3-yaml"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3-yaml; }
	@$(MAKE) --no-print-directory all $(BUILD)/bench/perf_workload
	@mkdir -p $(BUILD)/perf
	python3 bench/scheduler_perf.py --mode $(MODE) --bin $(BIN) --driver $(BUILD)/bench/perf_workload \
	  $(if $(WORKLOADS),--workloads $(WORKLOADS)) \
	  --scale $(or $(SCALE),$(if $(filter fake,$(MODE)),0.1,1)) \
	  $(if $(SCHEDULER),--scheduler $(SCHEDULER)) --json $(BUILD)/perf/$(MODE).json

# Deterministic counters of the hot paths against bench/perf-baseline.txt
# (bench/perf_check.sh): instructions (callgrind), minor faults and heap
# allocations per request, per cycle and per ingest. UPDATE=1 rewrites the
# baseline; PERF_TOLERANCE=N sets the allowed growth in percent (25).
perf-check: install-deps
	@command -v valgrind >/dev/null && [ -e /usr/include/valgrind/callgrind.h ] || { \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; echo "installing: valgrind"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq valgrind; }
	@$(MAKE) --no-print-directory $(BUILD)/bench/perf_check
	@BUILD="$(BUILD)" UPDATE="$(UPDATE)" ./bench/perf_check.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Fails, listing the files, when a C source is not as `make format` leaves it
# (Debian 12's clang-format 14, .clang-format); CI runs it.
format-check:
	@command -v clang-format >/dev/null || { SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq clang-format; }
	@bad=$$(for f in $$(git ls-files '*.c' '*.h'); do \
	  clang-format "$$f" | cmp -s - "$$f" || echo "$$f"; done); \
	if [ -n "$$bad" ]; then echo "not formatted (run make format):"; echo "$$bad"; exit 1; fi; \
	echo "format-check: every C file as make format leaves it"

clean:
	rm -rf build build-*

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
