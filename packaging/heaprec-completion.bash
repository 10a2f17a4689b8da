# bash completion for heaprec: commands, each command's options, file paths.
#
# The commands and options are read from heaprec's own help pages as it completes (`heaprec help`,
# `heaprec help COMMAND`), from the heaprec being completed, so a command or option added to the CLI
# completes without a change here. Option values and arguments are completed as paths; after
# `heaprec run ... --`, the program and its arguments are completed as a command line of their own.

# The rows of SECTION ("Commands", "Options") of `$heaprec ARGS...`'s help page: lines that start
# with two spaces and a name (continuation lines of a description are indented further).
_heaprec_help_rows() {
  local heaprec=$1 section=$2
  shift 2
  "$heaprec" "$@" 2>/dev/null | awk -v title="$section:" '
    $0 == title { on = 1; next }
    on && /^$/ { exit }
    on && /^  [^ ]/ { print }'
}

# The option names (-o --output ...) of COMMAND's help page, or of heaprec's own with no COMMAND.
_heaprec_options() {
  local heaprec=$1 command=$2 row label name
  local -a help_args=(--help)
  [[ -n $command ]] && help_args=(help "$command")
  while IFS= read -r row; do
    label=${row#  }
    label=${label%%  *} # the label ends where the description's column starts
    for name in ${label//,/ }; do
      [[ $name == -* ]] && printf '%s\n' "$name"
    done
  done < <(_heaprec_help_rows "$heaprec" Options "${help_args[@]}")
}

_heaprec() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local heaprec=${COMP_WORDS[0]}
  heaprec=${heaprec/#\~/$HOME}
  COMPREPLY=()

  # The command: the first word after heaprec that is not an option.
  local command='' i
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} != -* ]]; then
      command=${COMP_WORDS[i]}
      break
    fi
  done

  if [[ -z $command || $command == help ]]; then
    if [[ -z $command && $cur == -* ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$(_heaprec_options "$heaprec" "")" -- "$cur")
    elif [[ -z $command || $i -eq $((COMP_CWORD - 1)) ]]; then
      local commands
      commands=$(_heaprec_help_rows "$heaprec" Commands --help | awk '{ print $1 }')
      [[ -z $command ]] && commands+=$'\nhelp'
      mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    fi
    return 0
  fi

  # `heaprec run [OPTIONS] -- PROGRAM ARGS...`: the program's own command line.
  if [[ $command == run ]]; then
    local j
    for ((j = i + 1; j < COMP_CWORD; j++)); do
      if [[ ${COMP_WORDS[j]} == -- ]]; then
        if declare -F _command_offset >/dev/null; then # from the bash-completion package
          _command_offset $((j + 1))
        elif ((j + 1 == COMP_CWORD)); then
          mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
        else
          compopt -o filenames 2>/dev/null
          mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return 0
      fi
    done
  fi

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_heaprec_options "$heaprec" "$command")" -- "$cur")
    return 0
  fi
  # An option's value, or an argument: a path (profiles, output files, directories).
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  return 0
}

complete -F _heaprec heaprec
