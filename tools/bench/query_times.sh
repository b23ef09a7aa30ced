#!/bin/bash
# Times read-only queries on the dbSTRESS tables of several servers, alternating between them
# round by round (ROUNDS rounds, three by default; the median is printed), through the mariadb client (-vvv
# reports each statement's time), and checks that every server returns the same rows (the
# first server's result is the reference: a mismatch prints DIFFERENT and the exit status is 1).
#
# Usage: [MATCH=text] [ROUNDS=n] tools/bench/query_times.sh label=socket [label=socket ...]
# (MATCH: only the queries containing the text; ROUNDS: rounds per query, default 3, odd.)
# Each server must hold dbSTRESS data loaded the same way, e.g.
#   target/release/innoxide-bench dbstress load -S <socket> --objects 50000
# Prints one line per query and server: label, median seconds, query.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
[ $# -ge 1 ] || { sed -n 2,10p "$0"; exit 2; }
queries=(
  "SELECT MAX(REF_OBJECT) FROM HISTORY"
  "SELECT MIN(REF_STAT), MAX(REF_STAT) FROM HISTORY"
  "SELECT MAX(HORDER) FROM HISTORY WHERE REF_OBJECT = 777"
  "SELECT REF_OBJECT, MIN(HORDER), MAX(HORDER) FROM HISTORY GROUP BY REF_OBJECT"
  "SELECT DISTINCT REF_STAT FROM HISTORY"
  "SELECT COUNT(DISTINCT REF_STAT) FROM HISTORY"
  "SELECT REF_STAT, MAX(REF_OBJECT) FROM HISTORY WHERE REF_STAT > 900 GROUP BY REF_STAT"
  "SELECT REF_STAT, COUNT(*) FROM HISTORY GROUP BY REF_STAT"
  "SELECT COUNT(*) FROM HISTORY"
  "SELECT COUNT(*) FROM HISTORY WHERE REF_STAT + 0 > 5"
  "SELECT REF_OBJECT, MIN(HORDER + 0), MAX(HORDER + 0) FROM HISTORY GROUP BY REF_OBJECT"
  "SELECT COUNT(*), SUM(VALUE), SUM(HORDER) FROM HISTORY"
  "SELECT AVG(VALUE), MIN(VALUE), MAX(VALUE) FROM HISTORY"
  "SELECT COUNT(*), MAX(NOTE), MIN(CREATED) FROM HISTORY WHERE NOTE < 'c'"
  "SELECT COUNT(*) FROM HISTORY WHERE NOTE LIKE '%zz%'"
  "SELECT COUNT(*) FROM HISTORY WHERE CREATED < '2020-01-01'"
  "SELECT COUNT(*) FROM HISTORY WHERE VALUE < 10"
  "SELECT COUNT(*) FROM HISTORY WHERE VALUE > 990"
  "SELECT COUNT(*) FROM HISTORY WHERE HORDER = 7"
  "SELECT REF_STAT, COUNT(*), SUM(VALUE) FROM HISTORY GROUP BY REF_STAT"
  "SELECT MAX(c), MAX(m) FROM (SELECT REF_OBJECT, COUNT(*) c, MAX(CREATED) m FROM HISTORY GROUP BY REF_OBJECT) d"
  "SELECT REF_OBJECT, HORDER, VALUE FROM HISTORY ORDER BY VALUE DESC LIMIT 5"
  "SELECT REF_OBJECT, HORDER, NOTE FROM HISTORY ORDER BY NOTE LIMIT 5"
  "SELECT COUNT(*), SUM(h.VALUE) FROM OBJECT o JOIN HISTORY h ON o.REF_OBJECT = h.REF_OBJECT WHERE o.REF_SECTION = 5"
  "SELECT COUNT(*), SUM(h.VALUE) FROM HISTORY h JOIN OBJECT o ON o.REF_OBJECT = h.REF_OBJECT WHERE o.REF_SECTION = 5"
  "SELECT COUNT(*), SUM(d.c) FROM HISTORY h JOIN (SELECT REF_STAT, COUNT(*) AS c FROM HISTORY WHERE REF_OBJECT <= 1000 GROUP BY REF_STAT) d ON d.REF_STAT = h.REF_STAT"
  "SELECT COUNT(*) FROM OBJECT o WHERE EXISTS (SELECT 1 FROM HISTORY h WHERE h.REF_OBJECT = o.REF_OBJECT AND h.REF_STAT = 7)"
  "SELECT COUNT(*) FROM OBJECT o WHERE (EXISTS (SELECT 1 FROM HISTORY h WHERE h.REF_OBJECT = o.REF_OBJECT AND h.REF_STAT = 7) OR o.REF_OBJECT < 0)"
  "SELECT COUNT(*) FROM OBJECT o WHERE NOT EXISTS (SELECT 1 FROM HISTORY h WHERE h.REF_OBJECT = o.REF_OBJECT AND h.REF_STAT = 7)"
  "SELECT COUNT(*) FROM OBJECT o WHERE o.REF_SECTION < 50 AND (SELECT MAX(h.HORDER) FROM HISTORY h WHERE h.REF_OBJECT = o.REF_OBJECT) > 10"
  "SELECT SUM((SELECT COUNT(*) FROM HISTORY h WHERE h.REF_OBJECT = o.REF_OBJECT)) FROM OBJECT o"
  "SELECT COUNT(*) FROM OBJECT o WHERE o.REF_OBJECT IN (SELECT h.REF_OBJECT FROM HISTORY h WHERE h.REF_STAT = o.REF_SECTION)"
)
time_of() { # socket sql
  mariadb -S "$1" -u root dbstress -vvv -e "$2" 2>&1 | grep -oE "\(([0-9.]+) sec\)" | tail -1 | tr -d '()sec '
}
rows_of() { # socket sql
  mariadb -S "$1" -u root dbstress -e "$2" | sort | md5sum | cut -c1-12
}
status=0
for q in "${queries[@]}"; do
  [[ -z "${MATCH:-}" || "$q" == *"$MATCH"* ]] || continue
  declare -A times=()
  ref=""
  for s in "$@"; do
    sum=$(rows_of "${s#*=}" "$q")
    if [ -z "$ref" ]; then ref=$sum; elif [ "$sum" != "$ref" ]; then
      echo "DIFFERENT rows from ${s%%=*}: $q"; status=1
    fi
  done
  for round in $(seq "$ROUNDS"); do
    for s in "$@"; do
      times[${s%%=*}]+="$(time_of "${s#*=}" "$q") "
    done
  done
  for s in "$@"; do
    label=${s%%=*}
    median=$(echo ${times[$label]} | tr ' ' '\n' | sort -n | sed -n "$(((ROUNDS + 1) / 2))p")
    printf "%-10s %8s  %s\n" "$label" "$median" "$q"
  done
  unset times
done
exit $status
