# SPDX-License-Identifier: GPL-2.0
#
# vcpuperf top-level Makefile.
#   make            build the module (against KDIR) and vcpuperf-cat
#   make demo       set up, build, boot a VM, attach to a workload, print JSONL
#   make demo-arm64 the same on the arm64 bed: a real PMU, QEMU with KVM
#   make check      set up, build and run every test
#   make check-host [T="GLOB ..."]  the tests that need no VM (builds,
#                   checkpatch, tool tests, a short fuzz); T: only the tool
#                   tests named (Class.test_name or test_name), no fuzz
#   make check-vm T="NAME ..." [PROFILE=6.1|6.12|sid|debug|arm64] [SMP=N]
#                   chosen integration tests in one boot of one kernel
#   make fresh-test the first make demo in a minimal Debian 12 root
#   make install    install the module (for KVER), vcpuperf-cat, the man
#                   pages, the modprobe.d example and the systemd units
#   make uninstall  remove what make install added
#   make kunit [T="SUITE ..."]  the KUnit suites in the debug kernel
#                   (tests/kunit/SUITE_kunit.c; T: only those)
#   make stress [T="PHASE ..."]  the long stress run in the debug kernel
#                   (its phases: tests/stress/stress.py; T: only those)
#   make arm64-check  the real-PMU and real-KVM tests on the arm64 bed
#                   (Debian's arm64 kernel under qemu-system-aarch64;
#                   in make check)
#   make bench-arm64  the benchmark on the arm64 bed: every collector's
#                   cost in instructions and VM exits (bench/README.md)
#   make bench-lab-arm64  the same in the lab's shape: 16 and 64 VMs of
#                   4 vCPUs, recorded per VM and host-wide
#
# KDIR defaults to the running kernel's build tree; on a machine without a
# module-capable running kernel (CI, this project's build hosts) it falls
# back to Debian's default headers (scripts/kver.sh).

# Nothing that depends on installed packages is evaluated when make parses
# this file: `make demo` and `make check` install the packages first (their
# `setup` prerequisite), and only the recipes that run after it look for a
# kernel.  $(kver) and $(kdir) are expanded when a recipe runs; a KVER or
# KDIR given on the command line or in the environment wins (scripts/kver.sh
# says how the default is chosen).  Nothing is exported from here: a value
# given by the user reaches sub-makes and scripts by itself, and scripts ask
# `make -s print-kver` after setup.
kver = $(if $(KVER),$(KVER),$(shell scripts/kver.sh))
kdir = $(if $(KDIR),$(KDIR),$(if $(kver),/lib/modules/$(kver)/build))

.PHONY: print-kver all module tool setup setup-demo check fresh-test demo clean fuzz kunit bench bench-smoke matrix dkms-test \
	install install-module install-files uninstall uninstall-module uninstall-files install-test \
	stress arm64-check bench-arm64 bench-lab-arm64 demo-arm64 setup-demo-arm64 check-host check-vm

all: module tool

print-kver:
	@scripts/kver.sh

module:
	@k='$(kdir)'; test -n "$$k" && test -d "$$k" || \
		{ echo "no kernel build tree at KDIR=$$k: run scripts/setup.sh (installs linux-headers-amd64) or give KDIR="; exit 1; }
	$(MAKE) -C $(kdir) M=$(CURDIR) modules

tool:
	$(MAKE) -C tools

setup:
	scripts/setup.sh check

setup-demo:
	scripts/setup.sh demo

check: setup
	scripts/check.sh

# The tests without a VM; chosen integration tests in one boot of one
# kernel profile: make check-vm T="NAME ..." [PROFILE=...].
check-host: setup
	VP_TESTS="$(T)" scripts/check-host.sh

check-vm: setup
	scripts/check-vm.sh --profile "$(PROFILE)" --smp "$(SMP)" -- $(T)

demo: setup-demo
	scripts/demo.sh

demo-arm64: setup-demo-arm64
	scripts/demo.sh --arm64

setup-demo-arm64:
	scripts/setup.sh demo-arm64

fresh-test: setup
	scripts/fresh-test.sh

kunit: setup
	scripts/kunit.sh $(foreach s,$(T),--suite '$(s)')

stress: setup
	scripts/stress.sh --long $(if $(T),-- --only $(shell echo $(T) | tr ' ' ','))

bench: setup
	scripts/bench.sh

matrix: setup
	scripts/matrix.sh

arm64-check: setup
	scripts/arm64-check.sh

bench-arm64: setup
	scripts/bench-arm64.sh

bench-lab-arm64: setup
	scripts/bench-arm64.sh --lab

dkms-test: setup
	scripts/dkms-test.sh

bench-smoke: setup
	scripts/bench.sh --smoke

FUZZ_SECONDS ?= 60
fuzz: setup
	scripts/fuzz.sh $(FUZZ_SECONDS)

install-test: setup
	scripts/install-test.sh

# ---------------------------------------------------------------- install ---
# make install [KVER=VER | KDIR=DIR] [PREFIX=/usr/local] [DESTDIR=]
#
# The module is built for KVER in out/install/KVER (a symlink mirror of the
# sources, so builds for different kernels never mix with each other or
# with the tree's own build), installed by the kernel's modules_install to
# /lib/modules/KVER/$(INSTALL_MOD_DIR) (compressed and signed if that
# kernel's config says so and its key is there), then depmod -a KVER.
# Run it once per kernel.  `make uninstall KVER=VER` removes that kernel's
# module and every other file install added, and the directories install
# created (listed in $(HELPERDIR)/installed-dirs) once they are empty, and
# /lib/modules/KVER/$(INSTALL_MOD_DIR) if empty.  With DESTDIR set, depmod
# and systemctl are not run.
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
HELPERDIR ?= $(PREFIX)/lib/vcpuperf
UNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL_MOD_DIR ?= extra
MODBUILD ?= $(CURDIR)/out/install/$(kver)
MODDEST = $(DESTDIR)/lib/modules/$(kver)/$(INSTALL_MOD_DIR)
INSTALL ?= install

install: install-module install-files

install-module:
	@test -d "$(kdir)" || { echo "no kernel build tree at KDIR=$(kdir): install linux-headers-$(kver)"; exit 1; }
	@r=$$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$$/\1/p' $(kdir)/include/generated/utsrelease.h 2>/dev/null); \
	test "$$r" = "$(kver)" || { echo "KDIR=$(kdir) is kernel '$$r', not KVER=$(kver): give KVER=$$r"; exit 1; }
	scripts/stage-kmod.sh $(MODBUILD)
	$(MAKE) -C $(kdir) M=$(MODBUILD) modules
	$(MAKE) -C $(kdir) M=$(MODBUILD) INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	@ls $(MODDEST)/vcpuperf.ko* >/dev/null
	$(if $(DESTDIR),,depmod -a $(kver))

FILE_DIRS := $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man4 \
	$(DESTDIR)$(HELPERDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/modprobe.d
# directories install-files created (so that uninstall removes those only)
DIRLIST := $(DESTDIR)$(HELPERDIR)/installed-dirs

# The version (dkms.conf, its one place) in the man pages' footers.
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
MANVER = sed '/^\.TH /s/ vcpuperf / "vcpuperf $(VERSION)" /'

install-files: tool
	@set -e; new=""; for d in $(FILE_DIRS); do \
		while [ ! -d "$$d" ]; do new="$$d $$new"; d=$$(dirname "$$d"); done; \
	done; \
	$(INSTALL) -d $(FILE_DIRS); \
	for d in $$new; do echo "$$d"; done >>$(DIRLIST)
	$(INSTALL) -m 0755 tools/vcpuperf-cat $(DESTDIR)$(BINDIR)/vcpuperf-cat
	$(INSTALL) -m 0755 tools/vcpuperf-plot $(DESTDIR)$(BINDIR)/vcpuperf-plot
	$(MANVER) man/vcpuperf-cat.1 >$(DESTDIR)$(MANDIR)/man1/vcpuperf-cat.1
	$(MANVER) man/vcpuperf-plot.1 >$(DESTDIR)$(MANDIR)/man1/vcpuperf-plot.1
	$(MANVER) man/vcpuperf.4 >$(DESTDIR)$(MANDIR)/man4/vcpuperf.4
	chmod 0644 $(DESTDIR)$(MANDIR)/man1/vcpuperf-cat.1 \
		$(DESTDIR)$(MANDIR)/man1/vcpuperf-plot.1 $(DESTDIR)$(MANDIR)/man4/vcpuperf.4
	$(INSTALL) -m 0644 contrib/modprobe.d/vcpuperf.conf.example \
		$(DESTDIR)$(SYSCONFDIR)/modprobe.d/vcpuperf.conf.example
	sed 's|/usr/local/bin/vcpuperf-cat|$(BINDIR)/vcpuperf-cat|g' contrib/vcpuperf-record \
		>$(DESTDIR)$(HELPERDIR)/vcpuperf-record
	chmod 0755 $(DESTDIR)$(HELPERDIR)/vcpuperf-record
	sed 's|/usr/local/lib/vcpuperf/|$(HELPERDIR)/|g' contrib/systemd/vcpuperf@.service \
		>$(DESTDIR)$(UNITDIR)/vcpuperf@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/vcpuperf@.service
	sed 's|/usr/local/bin/vcpuperf-cat|$(BINDIR)/vcpuperf-cat|g' contrib/systemd/vcpuperf-host.service \
		>$(DESTDIR)$(UNITDIR)/vcpuperf-host.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/vcpuperf-host.service
	$(if $(DESTDIR),,-test ! -d /run/systemd/system || systemctl daemon-reload)

uninstall: uninstall-module uninstall-files

uninstall-module:
	rm -f $(MODDEST)/vcpuperf.ko $(MODDEST)/vcpuperf.ko.xz \
		$(MODDEST)/vcpuperf.ko.gz $(MODDEST)/vcpuperf.ko.zst
	rmdir $(MODDEST) 2>/dev/null || true
	$(if $(DESTDIR),,test ! -d /lib/modules/$(kver)/kernel || depmod -a $(kver))

uninstall-files:
	@set -e; dirs=$$(cat $(DIRLIST) 2>/dev/null || true); set -x; \
	rm -f $(DESTDIR)$(BINDIR)/vcpuperf-cat $(DESTDIR)$(BINDIR)/vcpuperf-plot \
		$(DESTDIR)$(MANDIR)/man1/vcpuperf-cat.1 $(DESTDIR)$(MANDIR)/man1/vcpuperf-plot.1 \
		$(DESTDIR)$(MANDIR)/man4/vcpuperf.4 \
		$(DESTDIR)$(SYSCONFDIR)/modprobe.d/vcpuperf.conf.example \
		$(DESTDIR)$(HELPERDIR)/vcpuperf-record $(DESTDIR)$(UNITDIR)/vcpuperf@.service \
		$(DESTDIR)$(UNITDIR)/vcpuperf-host.service $(DIRLIST); \
	for d in $$(printf '%s\n' $(DESTDIR)$(HELPERDIR) $$dirs | sort -ru); do \
		rmdir "$$d" 2>/dev/null || true; \
	done
	$(if $(DESTDIR),,-test ! -d /run/systemd/system || systemctl daemon-reload)

clean:
	-$(if $(kdir),$(MAKE) -C $(kdir) M=$(CURDIR) clean)
	$(MAKE) -C tools clean
	$(MAKE) -C fuzz clean
	$(MAKE) -C tests/stress clean
