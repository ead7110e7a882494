#!/bin/sh
# A check hook for `modelstub matrix run --check-hook`: fails the plan when a tool ran twice,
# that is when a line of $MODELSTUB_WORKDIR/side-effects.log (ID NAME ARGUMENTS, one per tool
# run, written by every executor here) appears more than once.
log="$MODELSTUB_WORKDIR/side-effects.log"
[ -f "$log" ] || exit 0
twice="$(sort "$log" | uniq -d)"
[ -z "$twice" ] && exit 0
echo "a tool ran twice: $twice"
exit 1
