#!/bin/bash
# Times the same statements on the dbSTRESS tables of several servers, alternating between
# them round by round, through the mariadb client (-vvv reports each statement's time).
#
# Usage: tools/bench/statement_times.sh label=socket [label=socket ...]
# Each server must hold freshly loaded dbSTRESS data, e.g.
#   target/release/innoxide-bench dbstress load -S <socket> --objects 50000
# Prints one line per statement: label, statement, seconds. The statements change the data
# (UPDATE, DELETE, two ADD COLUMNs): load again before another run.
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,10p "$0"; exit 2; }
run() { # socket label sql
  local t
  t=$(mariadb -S "$1" -u root dbstress -vvv -e "$3" 2>&1 | grep -oE "\(([0-9.]+) sec\)" | tail -1 | tr -d '()sec ')
  printf "%-10s %-78s %s\n" "$2" "$3" "$t"
}
for round in 1 2; do
  for s in "$@"; do
    label=${s%%=*} sock=${s#*=}
    run "$sock" "$label" "UPDATE HISTORY SET VALUE = VALUE + 1 WHERE HORDER = $((round + 2))"
    run "$sock" "$label" "SELECT COUNT(*) FROM HISTORY WHERE HORDER = 4 FOR UPDATE"
    run "$sock" "$label" "SELECT SUM(VALUE) FROM HISTORY"
    run "$sock" "$label" "DELETE FROM HISTORY WHERE HORDER = $((round + 16))"
  done
done
for s in "$@"; do
  label=${s%%=*} sock=${s#*=}
  run "$sock" "$label" "ALTER TABLE HISTORY ADD COLUMN X1 INT DEFAULT 7"
  run "$sock" "$label" "ALTER TABLE HISTORY ADD COLUMN X2 VARCHAR(20) NOT NULL DEFAULT 'abc'"
  run "$sock" "$label" "SELECT SUM(X1), COUNT(*), SUM(X2 = 'abc') FROM HISTORY"
  run "$sock" "$label" "UPDATE HISTORY SET X1 = 8 WHERE HORDER = 5"
  run "$sock" "$label" "SELECT SUM(X1) FROM HISTORY"
done
