# SPDX-License-Identifier: GPL-2.0
# bash completion for magnetctl(8): objects, commands, keywords and options
# from the command's grammar (magnetctl help), and the names of streams,
# probes, filters, synthesizers and correlators from the running system
# (magnetctl -j ... list; nothing when MAGNET is not loaded or the caller
# may not list them).  Installed as
# share/bash-completion/completions/magnetctl.

# _magnetctl_names OBJECT: the names in OBJECT's list (the "name" members
# of magnetctl's JSON, whose values are MAGNET names: no quotes inside)
_magnetctl_names()
{
	"${_MAGNETCTL:-magnetctl}" -j "$1" list 2>/dev/null |
		grep -oE '"name": *"[^"]*"' | sed -E 's/^"name": *"(.*)"$/\1/' | tr '\n' ' '
}

_magnetctl()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi

	local opts="-j --json -p --pretty -h --help -V --version"
	local objects="status probe stream record dump convert export plot filter synth correlate sock help"
	# the object and its command: the first two words that are not options
	local i obj="" sub="" oi=0
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*)
			if [ -z "$obj" ]; then
				obj=${words[i]} oi=$i
			elif [ -z "$sub" ]; then
				sub=${words[i]}
				break
			fi ;;
		esac
	done

	if [ -z "$obj" ]; then
		case $cur in
		-*) COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "$objects" -- "$cur")) ;;
		esac
		return
	fi

	case $obj in
	record)
		case $prev in
		-o) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--duration | --watermark | --timeout | --switch-timer | --min-events) return ;;
		esac
		if [ "$cword" -eq $((oi + 1)) ]; then
			COMPREPLY=($(compgen -W "$(_magnetctl_names stream)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "-o --duration --watermark --timeout --switch-timer --min-events --help" -- "$cur"))
		fi
		return ;;
	dump)
		case $cur in
		-*) COMPREPLY=($(compgen -W "--file-order --time --format --no-header --help" -- "$cur")) ;;
		*)
			case $prev in
			--time) COMPREPLY=($(compgen -W "raw wall rel delta" -- "$cur")) ;;
			--format) COMPREPLY=($(compgen -W "text csv" -- "$cur")) ;;
			*) COMPREPLY=($(compgen -f -- "$cur")) ;;
			esac ;;
		esac
		return ;;
	convert)
		case $prev in
		--to) COMPREPLY=($(compgen -W "ctf pcapng perfetto" -- "$cur")) ;;
		-o) COMPREPLY=($(compgen -f -- "$cur")) ;;
		*)
			case $cur in
			-*) COMPREPLY=($(compgen -W "--to -o --help" -- "$cur")) ;;
			*) COMPREPLY=($(compgen -f -- "$cur")) ;;
			esac ;;
		esac
		return ;;
	plot)
		# the figure: the first word after plot that is neither an option
		# nor an option's value (options come before or after it); after
		# "--" every word is one
		local fig="" end=""
		for ((i = oi + 1; i < cword; i++)); do
			case $end${words[i]} in
			--) end=1 ;;
			-o | --output | --id | --format) ((i++)) ;;
			-*) ;;
			*) fig=${words[i]}; break ;;
			esac
		done
		case $prev in
		--format) COMPREPLY=($(compgen -W "png svg" -- "$cur")); return ;;
		-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--id) return ;;
		esac
		case $end$cur in
		-*) COMPREPLY=($(compgen -W "--id --format -o --output --help" -- "$cur")) ;;
		*)
			if [ -z "$fig" ]; then
				COMPREPLY=($(compgen -W "layers tcp latency rate" -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi ;;
		esac
		return ;;
	export)
		case $prev in
		--corr-stream) COMPREPLY=($(compgen -W "$(_magnetctl_names stream)" -- "$cur")) ;;
		--listen | --max-keys) ;;
		*) COMPREPLY=($(compgen -W "--listen --max-keys --corr-stream --help" -- "$cur")) ;;
		esac
		return ;;
	status | help)
		return ;;
	esac

	local cmds=""
	case $obj in
	probe) cmds="list enable disable add del help" ;;
	stream) cmds="create delete list show flush snapshot freeze resume help" ;;
	filter) cmds="add del list show help" ;;
	synth) cmds="add del list show help" ;;
	correlate) cmds="add del list show help" ;;
	sock) cmds="show help" ;;
	*) return ;;
	esac
	if [ -z "$sub" ]; then
		COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		return
	fi

	# a command's arguments
	case $obj:$sub in
	stream:delete | stream:show | stream:flush | stream:freeze | stream:resume)
		COMPREPLY=($(compgen -W "$(_magnetctl_names stream)" -- "$cur")) ;;
	stream:snapshot)
		case $prev in
		-o) COMPREPLY=($(compgen -f -- "$cur")) ;;
		snapshot) COMPREPLY=($(compgen -W "$(_magnetctl_names stream)" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "-o" -- "$cur")) ;;
		esac ;;
	stream:create)
		case $prev in
		create | subbuf-size | subbuf-count) ;;
		clock) COMPREPLY=($(compgen -W "monotonic local" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "subbuf-size subbuf-count global overwrite app-write clock" -- "$cur")) ;;
		esac ;;
	probe:enable)
		case $prev in
		stream) COMPREPLY=($(compgen -W "$(_magnetctl_names stream)" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "$(_magnetctl_names probe) all stream" -- "$cur")) ;;
		esac ;;
	probe:disable)
		COMPREPLY=($(compgen -W "$(_magnetctl_names probe) all" -- "$cur")) ;;
	probe:del)
		COMPREPLY=($(compgen -W "$(_magnetctl_names probe)" -- "$cur")) ;;
	probe:add)
		case $prev in
		add | kprobe | kretprobe | args) ;;
		*) COMPREPLY=($(compgen -W "kprobe kretprobe args" -- "$cur")) ;;
		esac ;;
	filter:del | filter:show)
		COMPREPLY=($(compgen -W "$(_magnetctl_names filter)" -- "$cur")) ;;
	filter:add)
		case $prev in
		add | cpu | id | pid | tgid | priority | every | period) ;;
		event) COMPREPLY=($(compgen -W "$(_magnetctl_names probe)" -- "$cur")) ;;
		stream) COMPREPLY=($(compgen -W "$(_magnetctl_names stream)" -- "$cur")) ;;
		cgroup) COMPREPLY=($(compgen -d -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "event cpu id pid tgid cgroup priority stream drop every period" -- "$cur")) ;;
		esac ;;
	synth:del | synth:show)
		COMPREPLY=($(compgen -W "$(_magnetctl_names synth) values" -- "$cur")) ;;
	synth:add)
		case $prev in
		add | cpu | id | pid | tgid | period | keys | by) ;;
		probe) COMPREPLY=($(compgen -W "$(_magnetctl_names probe)" -- "$cur")) ;;
		stream) COMPREPLY=($(compgen -W "$(_magnetctl_names stream)" -- "$cur")) ;;
		value) COMPREPLY=($(compgen -W "size interval field" -- "$cur")) ;;
		cgroup) COMPREPLY=($(compgen -d -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "probe cpu id pid tgid cgroup by value period stream keys" -- "$cur")) ;;
		esac ;;
	correlate:del | correlate:show)
		COMPREPLY=($(compgen -W "$(_magnetctl_names correlate)" -- "$cur")) ;;
	correlate:add)
		case $prev in
		add | chain | window) ;;
		stream) COMPREPLY=($(compgen -W "$(_magnetctl_names stream)" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "chain window stream" -- "$cur")) ;;
		esac ;;
	esac
}
complete -F _magnetctl magnetctl
