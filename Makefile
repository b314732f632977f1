# SPDX-License-Identifier: GPL-2.0
# MAGNET's kernel modules, the way out-of-tree modules are built (the user
# space tools build with CMake, see README.md):
#
#	make [KVER=RELEASE]		magnet.ko and the probe modules
#	make modules_install		into /lib/modules/KVER/updates, then depmod
#	make clean
#
# KVER defaults to the running kernel, KDIR to its /lib/modules/KVER/build.
# MAGNET_TEST_MODULES=y also builds the test and benchmark modules
# (tests/kmod, bench/kmod; scripts/build-modules.sh sets it).  dkms.conf
# builds and installs through this file.  INSTALL_MOD_PATH and
# INSTALL_MOD_DIR are kbuild's.
KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
INSTALL_MOD_DIR ?= updates
MAGNET_TEST_MODULES ?=

kmake = $(MAKE) -C $(KDIR) M=$(CURDIR) MAGNET_TEST_MODULES=$(MAGNET_TEST_MODULES)

all: modules

modules:
	$(kmake) modules

# kbuild skips depmod when the headers have no System.map (Debian's): run it
modules_install:
	$(kmake) INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) modules_install
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) -a $(KVER)

clean:
	$(kmake) clean

.PHONY: all modules modules_install clean
