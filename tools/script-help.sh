# Sourced by the shell scripts: their --help prints the comment block at the top of the
# script (after the #! line), so usage is written once, where the code is read.
script_help() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"; }
