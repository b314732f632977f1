#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_completion.sh REPO MAGNETCTL: magnetctl's bash completion
# (magnetctl/completion/magnetctl.bash) completes what magnetctl accepts:
# every object of `magnetctl help`, each object's commands, keywords and
# option values, options anywhere before the object.  Names of live
# objects need the kernel: tests/vm/t_control.sh checks those.
set -u
repo=$1
_MAGNETCTL=$2
export _MAGNETCTL
. "$repo/magnetctl/completion/magnetctl.bash"
n=0 fails=0

# comp "WORDS..." WANT: complete the last word of WORDS ("" for a new one)
comp() {
	local want=$2 got
	read -ra COMP_WORDS <<<"$1"
	[ "${1: -1}" = " " ] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_magnetctl
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
	got=${got% }
	n=$((n + 1))
	if [ "$got" = "$want" ]; then
		echo "ok $n - '$1' -> $want"
	else
		echo "not ok $n - '$1' -> $want"
		echo "#   got: $got"
		fails=$((fails + 1))
	fi
}

# the objects are those of magnetctl's own help
objs=$("$_MAGNETCTL" help | sed -nE 's/^(Usage: )? *magnetctl (\[OPTIONS\] )?([a-z]+).*/\3/p' | sort -u | tr '\n' ' ')
comp "magnetctl " "$(printf '%s\n' $objs help | sort -u | tr '\n' ' ' | sed 's/ $//')"
comp "magnetctl st" "status stream"
comp "magnetctl --" "--help --json --pretty --version"
comp "magnetctl -j fil" "filter"
comp "magnetctl stream " "create delete flush freeze help list resume show snapshot"
comp "magnetctl -j stream cr" "create"
comp "magnetctl stream create s " "app-write clock global overwrite subbuf-count subbuf-size"
comp "magnetctl stream create s clock " "local monotonic"
comp "magnetctl probe " "add del disable enable help list"
comp "magnetctl probe add kp " "args kprobe kretprobe"
comp "magnetctl filter add f " "cgroup cpu drop event every id period pid priority stream tgid"
comp "magnetctl synth add s value " "field interval size"
comp "magnetctl correlate add c " "chain stream window"
comp "magnetctl record s --" "--duration --help --min-events --switch-timer --timeout --watermark"
comp "magnetctl dump --time " "delta raw rel wall"
comp "magnetctl dump --format " "csv text"
comp "magnetctl dump --h" "--help"
comp "magnetctl convert --to " "ctf pcapng perfetto"
comp "magnetctl export --" "--corr-stream --help --listen --max-keys"
comp "magnetctl plot " "latency layers rate tcp"
comp "magnetctl plot tcp --format " "png svg"
comp "magnetctl plot tcp --" "--format --help --id --output"
comp "magnetctl plot --" "--format --help --id --output"
# options before the figure: still the figure, then files
comp "magnetctl plot --format svg --output x.svg " "latency layers rate tcp"
comp "magnetctl plot -o x.png --id 7 l" "latency layers"
comp "magnetctl -j plot --format=svg --output png " "latency layers rate tcp"
# every object of the help has commands or arguments completed, none is unknown
for o in $objs; do
	case $o in status | help) continue ;; esac
	COMP_WORDS=(magnetctl "$o" "")
	COMP_CWORD=2
	COMPREPLY=()
	_magnetctl
	n=$((n + 1))
	if [ ${#COMPREPLY[@]} -gt 0 ] || [ "$o" = record ]; then
		echo "ok $n - '$o' completes (${#COMPREPLY[@]} words)"
	else
		echo "not ok $n - '$o' completes nothing"
		fails=$((fails + 1))
	fi
done
# without MAGNET loaded, names complete to nothing and print nothing
out=$(COMP_WORDS=(magnetctl stream delete ""); COMP_CWORD=3; COMPREPLY=(); _magnetctl 2>&1; echo "${#COMPREPLY[@]}")
n=$((n + 1))
if [ "$out" = 0 ]; then echo "ok $n - no names and no noise when MAGNET is not loaded"; else echo "not ok $n - names without MAGNET: $out"; fails=$((fails + 1)); fi
echo "1..$n"
exit $((fails > 0))
