# Sourced by the shell scripts: their --help prints the comment block at the top of the
# script (after the #! line), so usage is written once, where the code is read.
script_help() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"; }
# For scripts whose arguments are positional: `help_if_asked "$0" "$@"` prints the help and
# exits when the first argument is -h or --help.
help_if_asked() {
  local script=$1
  shift
  case ${1:-} in -h | --help) script_help "$script"; exit 0 ;; esac
}
