#!/usr/bin/env bash
# MAGNET's full test run, from a fresh machine: installs what it needs,
# builds user space and runs the unit tests (ASan/UBSan), builds the
# modules without warnings for every installed kernel (6.1, 6.12 and their
# PREEMPT_RT flavours), then boots each kernel scripts/kernels.sh lists (6.1
# and 6.12; MAGNET_RT_KERNELS=newest|all adds RT ones, MAGNET_KERNELS picks)
# with virtme-ng and runs the integration tests, the bounded fuzzer, the
# races, a part of the suite in the newest PREEMPT_RT kernel and the demo
# (scripts/vm-suite.sh: two guests side by side; each VM step only if it
# fits in the time budget, MAGNET_CI_BUDGET_MIN; a step left out is named
# and counted).
# Prints each step's wall time, slowest first, and writes the table to
# build/suite/times.md.  Ends with one line "N passed, M failed, K
# skipped"; exits non-zero on any failure (a skip alone does not fail
# the run: tests/vm/README.md says why).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/suite-lib.sh

# The VM tests run some of their checks as the user nobody (what an
# unprivileged user may and may not do), from the build tree: refuse at
# once a tree nobody cannot reach, rather than fail those checks an hour on
unreachable() {
	local d=$top

	[ $(($(umask) & 8#005)) -eq 0 ] ||
		{ echo "the umask $(umask) makes the build tree unreadable to others"; return; }
	while :; do
		case $(stat -c %A "$d") in
		d????????[xt]) ;;
		*) echo "$d is mode $(stat -c %a "$d"): others cannot enter it"; return ;;
		esac
		[ "$d" = / ] && break
		d=$(dirname "$d")
	done
	[ -r tests/tools/genl_req.py ] && case $(stat -c %A tests/tools/genl_req.py) in
		???????r??) ;;
		*) echo "tests/tools/genl_req.py is mode $(stat -c %a tests/tools/genl_req.py): others cannot read the clone's files" ;;
	esac
}
why=$(unreachable)
if [ -n "$why" ]; then
	echo "test.sh: the VM tests run checks as the user nobody, who cannot reach $top: $why." >&2
	echo "test.sh: clone where others may read (e.g. /srv or /opt), or let them (chmod o+rx on it; umask 022)." >&2
	exit 1
fi

mkdir -p build
suite_init "$top/build/suite"
timed "install-deps.sh (what is missing)" ./scripts/install-deps.sh ||
	{ echo "install-deps failed"; exit 1; }

echo "== user space: build and unit tests"
# -Werror here (MAGNET_WERROR), not in a user's build
build_user() {	# DIR CMAKE-ARGS...
	local dir=$1
	shift
	mkdir -p "$dir"
	cmake -S . -B "$dir" "$@" -DMAGNET_WERROR=ON >"$dir/cmake-configure.log" 2>&1 &&
		cmake --build "$dir" -j"$(nproc)" 2>&1 | tail -n 20
	return "${PIPESTATUS[0]}"
}
timed "user space build (Debug)" build_user build -DCMAKE_BUILD_TYPE=Debug
result "user space builds" $?
# the demo and the benchmarks build optimized: -O2 finds warnings -O0 does not
timed "user space build (Release)" build_user build/release -DCMAKE_BUILD_TYPE=Release \
	-DBUILD_TESTING=OFF
result "user space builds optimized (Release)" $?
run_ctest() {
	ctest --test-dir build --output-on-failure -j"$(nproc)" 2>&1 | tee build/ctest.log |
		tail -n 25
	return "${PIPESTATUS[0]}"
}
timed "unit tests (ctest)" run_ctest
result "unit tests (ctest)" $?
timed "check_trace.py self-test" python3 tests/tools/selftest_check_trace.py >build/selftest_check_trace.log 2>&1
result "check_trace.py self-test" $?
timed "selftest_seq.py self-test" python3 tests/tools/selftest_seq.py --self-test \
	>build/selftest_seq.log 2>&1
result "selftest_seq.py self-test" $?

kernels=$(./scripts/kernels.sh)
[ -n "$kernels" ] || { echo "no kernel with headers installed"; exit 1; }
# the kernel's YNL CLI for tests/vm/t_ynl.sh (from linux-source-6.12)
timed "YNL tools from linux-source-6.12" ./scripts/ynl-tools.sh >build/ynl-tools.log 2>&1
result "YNL tools from linux-source-6.12" $?
# include/uapi/magnet_genl.h is what ynl-gen-c makes of docs/magnet.yaml
./scripts/ynl-regen.sh --check >build/ynl-regen.log 2>&1
result "include/uapi/magnet_genl.h generated from docs/magnet.yaml (ynl-gen-c)" $?
# modules KVER: built with W=1, no warning allowed
modules() {
	local k=$1 log=build/modules-$1.log rc
	timed "modules build on $k (W=1)" ./scripts/build-modules.sh "$k" W=1 >"$log" 2>&1
	rc=$?
	if grep -E "warning:|error:" "$log"; then rc=1; fi
	result "modules build without warnings on $k" $rc
	return $rc
}
# PREEMPT_RT kernels not in the list (MAGNET_RT_KERNELS): their modules
# must still build without warnings (vm-suite.sh boots the newest for
# the tests of the paths PREEMPT_RT changes)
for k in $(MAGNET_RT_KERNELS=all ./scripts/kernels.sh); do
	grep -qx -- "$k" <<<"$kernels" && continue
	modules "$k"
done
built=()
for k in $kernels; do
	echo "== kernel $k: modules"
	modules "$k" || continue
	built+=("$k")
	# the DKMS package, built as `dkms install` would (tests/vm/t_dkms.sh
	# installs it in the VM and loads it with modprobe)
	timed "DKMS package build on $k" ./scripts/dkms-build.sh "$k" >"build/dkms-$k.log" 2>&1
	result "DKMS package builds on $k" $?
done
# the budget counts the whole run's minutes: SECONDS goes on in vm-suite.sh
export SECONDS
if [ ${#built[@]} -gt 0 ]; then
	# `make` and `make modules_install` as docs/INSTALL.md gives them,
	# into a directory of their own (this machine's /lib/modules is every
	# VM's), for the newest kernel, beside the VM suite's first steps
	k=${built[${#built[@]} - 1]}
	(
		timed "make, make modules_install on $k" tests/install/test_modules_install.sh \
			"$top" "$k" >build/modules-install.log 2>&1
		result "make and make modules_install on $k (build/modules-install.log)" $?
	) &
	mi=$!
	./scripts/vm-suite.sh "${built[@]}"
	wait "$mi"
fi
suite_report "$SECONDS"
