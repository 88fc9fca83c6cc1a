#!/usr/bin/env bash
# gpu-connection-scaling's Figure 10b flags, parsed on the host (no GPU needed: the refusals come
# before the device is looked for): --dcis without --transport dc, and the RC rig's knobs with
# --transport dc alone, are refused with exit 2 and one line naming the flag; --help lists --dcis
# and the transport's values.
# usage: connection_scaling_cli_test.sh path/to/dissect
set -u
dissect=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

refused() {  # refused FLAG ARGS...: exit 2, one line, naming FLAG
  local flag=$1; shift
  local stderr status
  stderr=$("$dissect" gpu-connection-scaling "$@" 2>&1 >/dev/null); status=$?
  [ "$status" -eq 2 ] || fail "$*: exit $status, expected 2 ($stderr)"
  [ "$(wc -l <<<"$stderr")" -eq 1 ] || fail "$*: more than one line: $stderr"
  [[ "$stderr" == *"$flag"* ]] || fail "$*: the refusal does not name $flag: $stderr"
}
refused --dcis --dcis 8
refused --dcis --transport rc --dcis 8
refused --direction --transport dc --direction both
refused --submitters --transport dc --submitters 4
refused --senders --transport dc --senders 2
refused --peer-engine-ctas --transport dc --peer-engine-ctas 4
refused --transport --transport ud

help=$("$dissect" gpu-connection-scaling --help) || fail "--help exits non-zero"
grep -qE -- '--dcis' <<<"$help" || fail "--help does not list --dcis"
grep -qE -- '--transport \{rc\|dc\}' <<<"$help" || fail "--help does not list --transport {rc|dc}: $(grep -- --transport <<<"$help")"

[ "$failures" -eq 0 ] || exit 1
echo "ok: gpu-connection-scaling's Figure 10b flags"
