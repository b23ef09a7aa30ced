#!/bin/bash
# Times LOAD DATA LOCAL INFILE of the same generated file (ROWS rows of id, a short string
# and a number, tab-separated) into a fresh table on several servers, alternating between
# them round by round, through the mariadb client (-vvv reports the time), and checks that
# every server holds the same rows afterwards (count and sums; a mismatch exits 1).
#
# Usage: ROWS=200000 tools/bench/load_data.sh label=socket [label=socket ...]
# innoxide must run with --local-infile=ON (MySQL 8.0's default is OFF).
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,8p "$0"; exit 2; }
rows=${ROWS:-200000}
file=$(mktemp /tmp/load_data.XXXXXX.tsv)
trap 'rm -f "$file"' EXIT
python3 -c "
import random
random.seed(7)
with open('$file', 'w') as f:
    for i in range(1, $rows + 1):
        f.write(f'{i}\tvalue-{random.randint(0, 10**6)}\t{random.randint(0, 1000)}\n')
"
status=0
for round in 1 2 3; do
  ref=""
  for s in "$@"; do
    label=${s%%=*} sock=${s#*=}
    mariadb -S "$sock" -u root -e "DROP DATABASE IF EXISTS load_bench; CREATE DATABASE load_bench;
      CREATE TABLE load_bench.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)"
    t=$(mariadb --local-infile=1 -S "$sock" -u root load_bench -vvv \
      -e "LOAD DATA LOCAL INFILE '$file' INTO TABLE t" 2>&1 | grep -oE "\(([0-9.]+) sec\)" | tr -d '()sec ')
    sum=$(mariadb -S "$sock" -u root load_bench -N -e "SELECT COUNT(*), SUM(n), SUM(LENGTH(v)) FROM t")
    if [ -z "$ref" ]; then ref=$sum; elif [ "$sum" != "$ref" ]; then
      echo "DIFFERENT rows on $label: $sum (expected $ref)"; status=1
    fi
    printf "round %d  %-10s %8s s  %s\n" "$round" "$label" "$t" "$sum"
  done
done
exit $status
