# movebench — GNU Makefile (no autotools).
#   make                 build programs into $(BUILD)/bin, libraries into $(BUILD)/lib
#   make check           build and run the tests (last line: N passed, N failed)
#   make run [NP=2]      the main job: a small mb-coll sweep on a local mpirun
#   make reproduce       every reproduce/ study at tiny scale (minutes); lists the figures
#   make reproduce STUDY=collectives SCALE=full   one study at full scale
#   make deps            install the Debian packages (as root), else list them
#   make install PREFIX=/opt/movebench
#   make clean
# Knobs: CUDA=0|1 (default: 1 when nvcc is found), SAN=address,undefined or
#        SAN=thread, BUILD=dir (default build, build-san with SAN,
#        build-san-thread with SAN=thread).

SHELL := /bin/bash
.DEFAULT_GOAL := all

SAN ?=
# ThreadSanitizer gets its own folder: its objects cannot mix with ASan's.
BUILD ?= build$(if $(SAN),-san)$(if $(findstring thread,$(SAN)),-thread)
ifneq ($(and $(findstring thread,$(SAN)),$(findstring address,$(SAN))),)
  $(error SAN=$(SAN): ThreadSanitizer cannot be combined with AddressSanitizer; use SAN=thread alone)
endif
PREFIX ?= /usr/local
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc; })
CUDA ?= $(if $(NVCC),1,0)

# Packages found through pkg-config; tools/deps.sh maps them to Debian names.
PKGS := ompi-c hdf5-openmpi papi hwloc ucx liburing openblas jansson

CC := mpicc

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
SANFLAGS := $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer,)
MB_CFLAGS := -std=c11 $(CFLAGS) $(WARN) $(SANFLAGS) -fopenmp -pthread -D_GNU_SOURCE -MMD -MP $(PKG_CFLAGS)
MB_LDFLAGS := $(SANFLAGS) -fopenmp -pthread $(LDFLAGS)
# TSan: link only the libraries a program uses; UCX's libucm, linked into
# everything otherwise, hooks madvise and crashes TSan's thread exit.
AS_NEEDED := -Wl,--as-needed
MB_LDFLAGS += $(if $(findstring thread,$(SAN)),$(AS_NEEDED))
LIBS := $(PKG_LIBS) -lm

NVCCFLAGS ?= -O2 -g
ifeq ($(CUDA),1)
  ifeq ($(NVCC),)
    $(error CUDA=1 but nvcc is not on PATH nor in CUDA_HOME=$(CUDA_HOME))
  endif
  CUDA_LIB := $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib))
  MB_CFLAGS += -DMB_HAVE_CUDA=1
  LIBS += -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -lcublas -lcudart -lstdc++
  # NCCL is optional within the CUDA variant.
  NCCL_H := $(firstword $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h))
  ifneq ($(NCCL_H),)
    MB_CFLAGS += -DMB_HAVE_NCCL=1
    NVCCFLAGS += -DMB_HAVE_NCCL=1
    LIBS += -lnccl
  endif
endif

# ---- libraries: a folder is a library ------------------------------------
# Each folder in LIB_DIRS that exists becomes build/lib/libmb<folder>.a from
# its *.c files; *_cuda.cu files join it in the CUDA variant, *_nocuda.c
# files (the CPU build's answers to "is CUDA there?") in the CPU variant.
# Listed top-down, so the link order satisfies "depends only downwards".
LIB_DIRS := $(wildcard zero gnn ratel nn offload polybench collectives common)

NOT_THIS_VARIANT := $(if $(filter 1,$(CUDA)),%_nocuda.c,)
lib_c = $(filter-out $(NOT_THIS_VARIANT),$(wildcard $(1)/*.c))
lib_cu = $(if $(filter 1,$(CUDA)),$(wildcard $(1)/*_cuda.cu),)
obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
cuobj = $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(1))

LIBS_BUILT := $(foreach d,$(LIB_DIRS),$(BUILD)/lib/libmb$(d).a)
define LIB_RULE
$(BUILD)/lib/libmb$(1).a: $(call obj,$(call lib_c,$(1))) $(call cuobj,$(call lib_cu,$(1)))
	@mkdir -p $$(@D)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach d,$(LIB_DIRS),$(eval $(call LIB_RULE,$(d))))

HARNESS_SRC := $(wildcard benchmarks/harness/*.c)
LIB_HARNESS := $(BUILD)/lib/libmbharness.a
BUILDINFO := $(BUILD)/gen/buildinfo.c
ALL_LIBS := $(LIB_HARNESS) $(LIBS_BUILT)

PROGRAMS := $(patsubst benchmarks/%.c,$(BUILD)/bin/%,$(wildcard benchmarks/mb-*.c))
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

.SECONDARY:
.PHONY: all check run docs deps deps-check install clean help FORCE
all: $(PROGRAMS) $(UNIT_TESTS)

# Every compile waits for this (order-only), so a missing package is named
# before the first compiler error.
deps-check:
	@tools/deps.sh check

$(BUILD)/obj/%.o: %.c | deps-check
	@mkdir -p $(@D)
	$(CC) $(MB_CFLAGS) -c $< -o $@

$(BUILD)/obj/%.cu.o: %.cu | deps-check
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -Xcompiler -Wall,-Wextra,-Werror -c $< -o $@

# Build provenance: rewritten only when the commit, dirtiness or flags change.
$(BUILDINFO): FORCE
	@mkdir -p $(@D)
	@tools/buildinfo.sh "$(CC)" "$(MB_CFLAGS)" > $@.new && \
	  { cmp -s $@.new $@ && rm -f $@.new || mv $@.new $@; }

$(LIB_HARNESS): $(call obj,$(HARNESS_SRC)) $(BUILD)/obj/gen/buildinfo.o
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/gen/buildinfo.o: $(BUILDINFO)
	@mkdir -p $(@D)
	$(CC) $(MB_CFLAGS) -c $< -o $@

$(BUILD)/bin/%: $(BUILD)/obj/benchmarks/%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(MB_LDFLAGS) $^ $(LIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(MB_LDFLAGS) $^ $(LIBS) -o $@

# CHECK_ONLY="unit/ cli/" runs only the tests whose names contain one of the words.
check: all
	BUILD=$(BUILD) SAN=$(SAN) tests/run.sh $(CHECK_ONLY)

# The flag tables of docs/ pages, from each program's own --help
# (tests/cli/docs_fresh.sh fails when a committed page is stale).
docs: all
	tools/gen-docs.sh $(BUILD)/bin

# The main job on a local mpirun: a small mb-coll sweep, its table, its result file.
NP ?= 2
run: all
	tools/run-local.sh $(BUILD) $(NP)

# reproduce/: each study measures, plots and writes compare.md. Python runs
# in $(BUILD)/venv, made from reproduce/requirements.txt (reproduce/venv.sh).
SCALE ?= tiny
STUDY ?=
VENV := $(BUILD)/venv
.PHONY: reproduce
$(VENV)/.ok: reproduce/requirements.txt reproduce/venv.sh
	reproduce/venv.sh $(VENV) reproduce/requirements.txt

reproduce: all $(VENV)/.ok
	BUILD=$(BUILD) MB_PYTHON=$(abspath $(VENV))/bin/python reproduce/run-all.sh "$(SCALE)" "$(STUDY)"

deps:
	tools/deps.sh install

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/movebench
	install -m 755 $(PROGRAMS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(ALL_LIBS) $(DESTDIR)$(PREFIX)/lib/
	for d in $(LIB_DIRS) benchmarks/harness; do \
	  install -d $(DESTDIR)$(PREFIX)/include/movebench/$$d && \
	  install -m 644 $$d/*.h $(DESTDIR)$(PREFIX)/include/movebench/$$d/ || exit 1; done

clean:
	rm -rf build build-san build-san-thread build-cpu build-cuda

help:
	@sed -n '2,12p' Makefile

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
