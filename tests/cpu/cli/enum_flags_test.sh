#!/usr/bin/env bash
# Enumerated flags are validated by name, for every experiment of the registry (`dissect list`)
# and for `dissect report` and `dissect doctor`: each flag whose --help shows {a|b|...} is given a value outside that
# set, and the run must exit 2 with one line naming the flag and every allowed value.
# usage: enum_flags_test.sh path/to/dissect
set -u
dissect=$1
failures=0 checked=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

commands=$("$dissect" list) || { echo "FAIL: dissect list"; exit 1; }
[ -n "$commands" ] || { echo "FAIL: dissect list is empty"; exit 1; }
for command in $commands report doctor; do
  help=$("$dissect" "$command" --help) || { fail "$command --help exits non-zero"; continue; }
  # "  --handoff {baseline|tuned}=tuned" and "  --probe-ring {shared|private},...=shared,private"
  flags=$(grep -oE -- '--[a-z0-9-]+ \{[^}]+\}' <<<"$help" | sort -u)
  [[ "$flags" == *"--provider {"* ]] || fail "$command: --provider is not listed with its allowed values"
  # The README's claim: every experiment takes these.
  if [ "$command" != report ] && [ "$command" != doctor ]; then
    for common in --runs --quick --output --csv --raw --progress --quiet; do
      grep -qE -- "^ +$common( |$)" <<<"$help" || fail "$command --help does not list $common"
    done
  fi
  while read -r flag set; do
    [ -n "$flag" ] || continue
    values=${set#\{}; values=${values%\}}
    stderr=$("$dissect" "$command" "$flag" not-a-value 2>&1 >/dev/null); status=$?
    checked=$((checked + 1))
    [ "$status" -eq 2 ] || fail "$command $flag not-a-value: exit $status, expected 2 ($stderr)"
    [ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "$command $flag not-a-value: more than one line: $stderr"
    [[ "$stderr" == *"$flag = 'not-a-value'"* ]] || fail "$command $flag: the message does not name the flag and value: $stderr"
    IFS='|' read -ra allowed <<<"$values"
    for value in "${allowed[@]}"; do
      [[ "$stderr" == *"$value"* ]] || fail "$command $flag: allowed value '$value' missing from: $stderr"
    done
  done <<<"$flags"
done

# fit-clock: the same parser, its result files as positionals.
help=$("$dissect" fit-clock --help) || fail "fit-clock --help exits non-zero"
[[ "$help" == *"RESULTS.json"* ]] || fail "fit-clock --help does not name its result files: $help"
"$dissect" fit-clock --bogus a.json b.json >/dev/null 2>&1; status=$?
[ "$status" -eq 2 ] || fail "fit-clock --bogus: exit $status, expected 2"

# The flags the issue named, where this build has them.
for pair in "proxy-load --probe-ring" "proxy-load --handoff" "goodput --handoff" "proxy-rate --handoff" \
            "proxy-clock --handoff" "latency --provider"; do
  set -- $pair
  if [[ " $commands " == *" $1 "* ]]; then
    "$dissect" "$1" --help | grep -qE -- "$2 \{" || fail "$1: $2 is not an enumerated flag"
  fi
done
if [[ " $commands " == *" gpu-latency "* ]]; then
  for flag in --engine --placement --layout; do
    "$dissect" gpu-latency --help | grep -qE -- "$flag \{" || fail "gpu-latency: $flag is not an enumerated flag"
  done
fi
# A list of enumerated values: each item checked, and a good list accepted up to the run.
stderr=$("$dissect" proxy-load --probe-ring shared,bogus 2>&1 >/dev/null)
[[ "$stderr" == *"--probe-ring = 'bogus' is not one of the allowed values: shared, private"* ]] || fail "probe-ring list: $stderr"
stderr=$("$dissect" proxy-load --probe-ring shared,shared 2>&1 >/dev/null)
[[ "$stderr" == *"names 'shared' twice"* ]] || fail "probe-ring twice: $stderr"

echo "$checked enumerated flags checked"
[ "$checked" -gt 0 ] || fail "no enumerated flag found in any --help"
if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "enum_flags_test: ok"
