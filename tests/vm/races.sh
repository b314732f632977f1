#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Control operations raced against each other and against readers, with a
# UDP flood over the veth pair and CPU 1 going offline and online all the
# time (when it can):
#  1. snapshot vs delete: snapshots, freezes and resumes of a flight
#     recorder while it is deleted;
#  2. enable/disable vs rmmod of a probe module (magnet_example);
#  3. libaio and io_uring reads in flight while their stream is deleted
#     (all complete), and in a process killed with them in flight (it
#     dies, its file closes);
#  4. load/unload cycles of magnet.ko and magnet_net.ko under traffic with
#     readers blocked (magnetctl record, libaio, io_uring) and a kretprobe
#     (udp_send_fail) on the flood's send path: each cycle deletes the
#     stream, which must release every reader, and unloads.
# Every control operation gets 30 s: a deadlock fails it instead of
# hanging the test.  (Open vs delete is t_magnetfs.sh's.)  scripts/test.sh
# runs it without hotplug (tests/vm/README.md, "Fuzzing and races");
# by hand:
#	MAGNET_VM_QEMU_OPTS="-accel tcg,thread=single" \
#		scripts/vm-run.sh -t 1500 KVER tests/vm/races.sh
# (single-threaded TCG: the cycles patch udp_sendmsg while the other vCPU
# runs it; tests/vm/README.md, "Text patching under TCG")
#
#	MAGNET_RACE_ROUNDS  rounds of parts 1 and 2 (default 5)
#	MAGNET_RACE_HOTPLUG_S  seconds CPU 1 stays online, then offline (default 3;
#	                    0: no hotplug, as scripts/test.sh runs it)
#	MAGNET_RACE_CYCLES  load/unload cycles (default 5; 100 by hand:
#	                    MAGNET_RACE_CYCLES=100 scripts/vm-run.sh -t 7200 ...)
#	MAGNET_RACE_OP_S    seconds after which one control operation counts as
#	                    hung (default 30; scripts/debug-tier.sh: 120, where
#	                    a loaded host runs the debug kernel 5x slower)
MAGNET_MODULES="magnet magnet_net"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_tools udp_flood udp_sink
need_magnet
RP=$MAGNET_TOOLS/readpath
[ -x "$RP" ] || skip_all "$RP not built (libaio-dev, liburing-dev)"
[ -f "$MAGNET_MODDIR/magnet_example.ko" ] || skip_all "magnet_example.ko not built"
ROUNDS=${MAGNET_RACE_ROUNDS:-5}
CYCLES=${MAGNET_RACE_CYCLES:-5}
HP=${MAGNET_RACE_HOTPLUG_S:-3}
# the helper scripts below (snapper.sh, toggler.sh) take it from the environment
export OP_S=${MAGNET_RACE_OP_S:-30}
R=$MAGNET_RESULTS
CPU1=/sys/devices/system/cpu/cpu1/online
plan 17
diag "rounds=$ROUNDS cycles=$CYCLES"
dmesg_mark
netns_setup || bail_out "cannot set up the namespaces"
udp_sink_start sink 5002 || diag "udp_sink did not start"
bg flood sh -c "while :; do ip netns exec $NS_A $MAGNET_TOOLS/udp_flood -i 200 $IP_B 5002 2000 200 >/dev/null 2>&1; done"
if [ "$HP" = 0 ]; then
	diag "CPU hotplug off (MAGNET_RACE_HOTPLUG_S=0)"
elif [ -w "$CPU1" ]; then
	on_exit "echo 1 > $CPU1"
	bg hotplug sh -c "n=0; while :; do echo 0 > $CPU1 && n=\$((n + 1)); sleep $HP; echo 1 > $CPU1; sleep $HP; echo \"offline=\$n\"; done"
	diag "CPU 1 goes offline and online throughout"
else
	diag "CPU 1 cannot be taken offline: no hotplug"
fi
magnet_load || bail_out "cannot load the modules"

# --- 1. snapshot vs delete ------------------------------------------------
cat >"$R/snapper.sh" <<'EOF'
# snapper.sh MAGNETCTL FILE: snapshots, freezes, resumes until the stream is gone
m=$1 hang=0 n=0
for i in 1 2 3 4 5 6 7 8; do
	timeout "$OP_S" "$m" stream snapshot ow -o "$2" >/dev/null 2>&1
	r1=$?
	o=$(timeout "$OP_S" "$m" stream freeze ow 2>&1)
	r2=$?
	timeout "$OP_S" "$m" stream resume ow >/dev/null 2>&1
	r3=$?
	for r in $r1 $r2 $r3; do [ $r -eq 124 ] && hang=$((hang + 1)); done
	n=$((n + 1))
	# the stream is gone: the race is over
	case $o in *"no stream named"*) break ;; esac
done
echo "rounds=$n hang=$hang"
EOF
done1=0 hangs=0
for i in $(seq 1 "$ROUNDS"); do
	magnetctl stream create ow overwrite subbuf-size 4K subbuf-count 4 >/dev/null || break
	magnetctl probe enable udp_send ip_send stream ow >/dev/null || break
	bg snap1 sh "$R/snapper.sh" "$MAGNETCTL" "$R/ow1.trace"
	bg snap2 sh "$R/snapper.sh" "$MAGNETCTL" "$R/ow2.trace"
	sleep "0.$((RANDOM % 8))"
	timeout "$OP_S" "$MAGNETCTL" stream delete ow >/dev/null 2>&1 || { diag "round $i: delete: $?"; break; }
	bg_wait snap1 200 || true
	bg_wait snap2 200 || true
	h1=$(kv "$(out snap1)" hang)
	h2=$(kv "$(out snap2)" hang)
	h=$((${h1:-1} + ${h2:-1}))
	hangs=$((hangs + h))
	[ "$h" -eq 0 ] || { diag "round $i: snapshot/freeze/resume hung"; break; }
	done1=$i
done
check_eq "snapshot vs delete: $ROUNDS rounds, no operation hung" "$ROUNDS/0" "$done1/$hangs"
check "control answers after snapshot vs delete" timeout "$OP_S" "$MAGNETCTL" status

# --- 2. enable/disable vs rmmod of a probe module --------------------------
magnetctl stream create ex subbuf-size 16K >/dev/null
bg recex "$MAGNETCTL" record ex -o "$R/ex.trace"
record_started recex || diag "record ex: $(cat "$(out recex)")"
cat >"$R/toggler.sh" <<'EOF'
m=$1 hang=0
for i in $(seq 1 30); do
	o=$(timeout "$OP_S" "$m" probe enable example_switch stream ex 2>&1)
	r1=$?
	timeout "$OP_S" "$m" probe disable example_switch >/dev/null 2>&1
	r2=$?
	for r in $r1 $r2; do [ $r -eq 124 ] && hang=$((hang + 1)); done
	# the module is gone: the race is over
	case $o in *"no probe named"*) break ;; esac
done
echo "hang=$hang"
EOF
done2=0 hangs=0
for i in $(seq 1 "$ROUNDS"); do
	insmod "$MAGNET_MODDIR/magnet_example.ko" || { diag "round $i: insmod"; break; }
	bg tog sh "$R/toggler.sh" "$MAGNETCTL"
	sleep "0.$((RANDOM % 8))"
	gone=0
	for t in $(seq 1 60); do
		if timeout "$OP_S" rmmod magnet_example 2>/dev/null; then
			gone=1
			break
		fi
		sleep 0.5
	done
	bg_wait tog 200 || true
	h=$(kv "$(out tog)" hang)
	hangs=$((hangs + ${h:-1}))
	[ $gone -eq 1 ] || { diag "round $i: rmmod magnet_example never succeeded"; rmmod magnet_example; break; }
	[ "${h:-1}" -eq 0 ] || { diag "round $i: enable/disable hung"; break; }
	done2=$i
done
check_eq "enable/disable vs rmmod magnet_example: $ROUNDS rounds, no hang" "$ROUNDS/0" "$done2/$hangs"
check "the stream ex lives on" timeout "$OP_S" "$MAGNETCTL" stream show ex
check "stream delete ex" timeout "$OP_S" "$MAGNETCTL" stream delete ex
bg_wait recex 30
check_eq "its reader ends cleanly" 0 $?

# --- 3. libaio and io_uring reads in flight --------------------------------
magnetctl stream create rp >/dev/null
magnetctl probe enable udp_send stream rp >/dev/null
# readpath sets a 32 KiB watermark: the reads wait; the flood is in other
# namespaces, readpath's own datagrams are not sent in these subtests
bg aeof "$RP" aio-eof /sys/kernel/magnet/rp
bg ueof "$RP" uring-eof /sys/kernel/magnet/rp
wait_line "$(out aeof)" '^submitted=4' 20 || diag "aio-eof: $(cat "$(out aeof)")"
wait_line "$(out ueof)" '^submitted=4' 20 || diag "uring-eof: $(cat "$(out ueof)")"
sleep 0.5
check "stream delete rp with libaio and io_uring reads in flight" timeout "$OP_S" "$MAGNETCTL" stream delete rp
bg_wait aeof 40
check_eq "every libaio read completes after the deletion" "0 4" "$? $(kv "$(out aeof)" completed)"
bg_wait ueof 40
check_eq "every io_uring read completes after the deletion" "0 4" "$? $(kv "$(out ueof)" completed)"

magnetctl stream create rk >/dev/null
magnetctl probe enable udp_send stream rk >/dev/null
bg ahang "$RP" aio-hang /sys/kernel/magnet/rk
bg uhang "$RP" uring-hang /sys/kernel/magnet/rk
wait_line "$(out ahang)" '^submitted=' 20 || diag "aio-hang: $(cat "$(out ahang)")"
wait_line "$(out uhang)" '^submitted=' 20 || diag "uring-hang: $(cat "$(out uhang)")"
sleep 0.5
kill -9 "${BG_PID[ahang]}" "${BG_PID[uhang]}"
bg_wait ahang 30
a=$?
bg_wait uhang 30
check_eq "processes killed with libaio and io_uring reads in flight die" "137 137" "$a $?"
readers=
for t in $(seq 1 40); do
	readers=$(magnetctl -j stream show rk | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["readers"])')
	[ "$readers" = 0 ] && break
	sleep 0.5
done
check_eq "their files are closed" 0 "$readers"
check "stream delete rk" timeout "$OP_S" "$MAGNETCTL" stream delete rk
check "unload after part 3" magnet_unload

# --- 4. load/unload cycles under traffic with readers blocked ------------
cycles=0
t0=$(date +%s)
for c in $(seq 1 "$CYCLES"); do
	insmod "$MAGNET_MODDIR/magnet.ko" || { diag "cycle $c: insmod magnet"; break; }
	_magnet_loaded=(magnet)
	magnetfs_mount || { diag "cycle $c: mount magnetfs"; break; }
	insmod "$MAGNET_MODDIR/magnet_net.ko" || { diag "cycle $c: insmod magnet_net"; break; }
	_magnet_loaded=(magnet magnet_net)
	magnetctl stream create cy subbuf-size 16K subbuf-count 4 >/dev/null || { diag "cycle $c: create"; break; }
	magnetctl probe enable udp_send ip_send dev_send udp_send_fail stream cy >/dev/null ||
		{ diag "cycle $c: enable"; break; }
	bg crec "$MAGNETCTL" record cy -o "$R/cy.trace" --watermark 60000
	bg caio "$RP" aio-eof /sys/kernel/magnet/cy
	bg curing "$RP" uring-eof /sys/kernel/magnet/cy
	record_started crec 20 || { diag "cycle $c: record: $(cat "$(out crec)")"; break; }
	wait_line "$(out caio)" '^submitted=' 20 || { diag "cycle $c: aio: $(cat "$(out caio)")"; break; }
	wait_line "$(out curing)" '^submitted=' 20 || { diag "cycle $c: uring: $(cat "$(out curing)")"; break; }
	timeout "$OP_S" "$MAGNETCTL" stream delete cy >/dev/null 2>&1 ||
		{ diag "cycle $c: delete: $?"; break; }
	bg_wait crec 30 || { diag "cycle $c: record: $? $(cat "$(out crec)")"; break; }
	bg_wait caio 40 || { diag "cycle $c: aio: $? $(cat "$(out caio)")"; break; }
	bg_wait curing 40 || { diag "cycle $c: uring: $? $(cat "$(out curing)")"; break; }
	magnetfs_umount_all || { diag "cycle $c: umount"; break; }
	timeout "$OP_S" rmmod magnet_net || { diag "cycle $c: rmmod magnet_net: $?"; break; }
	_magnet_loaded=(magnet)
	timeout "$OP_S" rmmod magnet || { diag "cycle $c: rmmod magnet: $?"; break; }
	_magnet_loaded=()
	cycles=$c
done
diag "$cycles cycles in $(($(date +%s) - t0)) s"
check_eq "$CYCLES load/unload cycles with blocked readers under traffic" "$CYCLES" "$cycles"
check "the modules are gone" sh -c "! grep -qE '^magnet(_net)? ' /proc/modules"

if [ -n "${BG_PID[hotplug]:-}" ]; then
	kill "${BG_PID[hotplug]}" 2>/dev/null
	wait "${BG_PID[hotplug]}" 2>/dev/null
	echo 1 >"$CPU1"
	check_eq "CPU 1 back online" 1 "$(cat $CPU1)"
	diag "CPU 1 went offline $(kv "$(out hotplug)" offline) times"
else
	skip "CPU 1 back online" "no hotplug"
fi
kill "${BG_PID[flood]}" 2>/dev/null
check_dmesg_clean
done_testing
