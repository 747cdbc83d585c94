# SPDX-License-Identifier: GPL-2.0
#
# vcpuperf top-level Makefile.
#   make            build the module (against KDIR) and vcpuperf-cat
#   make demo       set up, build, boot a VM, attach to a workload, print JSONL
#   make check      set up, build and run every test
#   make stress     the long stress run in the debug kernel (30-45 min)
#
# KDIR defaults to the running kernel's build tree; on a machine without a
# module-capable running kernel (CI, this project's build hosts) it falls
# back to the newest installed Debian headers.

# Without a running module-capable kernel, use the kernel Debian's
# linux-headers-amd64 points at (Debian 12's own, even when other kernels of
# the test matrix are installed beside it), else the newest headers.
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
DEBIAN_KVER := $(shell dpkg-query -W -f='$${Depends}' linux-headers-amd64 \
		 2>/dev/null | sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p')
NEWEST_KVER := $(shell ls -d /lib/modules/*/build 2>/dev/null | \
		 sed 's|/lib/modules/||;s|/build||' | sort -V | tail -n1)
ifneq ($(wildcard $(RUNNING_KDIR)),)
KVER ?= $(shell uname -r)
else ifneq ($(DEBIAN_KVER),)
KVER ?= $(DEBIAN_KVER)
else
KVER ?= $(NEWEST_KVER)
endif
KDIR ?= /lib/modules/$(KVER)/build

export KVER KDIR

.PHONY: print-kver all module tool setup check demo clean fuzz kunit bench bench-smoke matrix dkms-test stress

all: module tool

print-kver:
	@echo $(KVER)

module:
	@test -d "$(KDIR)" || { echo "no kernel build tree at KDIR=$(KDIR): run scripts/setup.sh (installs linux-headers-amd64)"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

tool:
	$(MAKE) -C tools

setup:
	scripts/setup.sh

check: setup
	scripts/check.sh

demo: setup
	scripts/demo.sh

kunit: setup
	scripts/kunit.sh

stress: setup
	scripts/stress.sh --long

bench: setup
	scripts/bench.sh

matrix: setup
	scripts/matrix.sh

dkms-test: setup
	scripts/dkms-test.sh

bench-smoke: setup
	scripts/bench.sh --smoke

FUZZ_SECONDS ?= 60
fuzz: setup
	scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools clean
	$(MAKE) -C fuzz clean
	$(MAKE) -C tests/stress clean
