#!/usr/bin/python3
"""End-to-end check of innoxide with mysqlclient (MySQLdb, on libmariadb): the DB-API scenario
of dbapi_scenario.py (connect, parameters escaped with mysql_real_escape_string and
interpolated, a transaction that commits and one that rolls back, warnings read with
mysql_warning_count and SHOW WARNINGS, a duplicate key).

Usage: mysqldb_client.py --host 127.0.0.1 --port 3306 [--socket /path/to.sock]
Prints "mysqlclient: OK" and exits 0, or prints what differed and exits 1.
"""

import os
import sys

import MySQLdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dbapi_scenario import Driver, args, run  # noqa: E402


def main():
    a = args()
    kw = dict(user="root", passwd="", connect_timeout=10, charset="utf8mb4")
    if a.socket:
        kw["unix_socket"] = a.socket
    else:
        kw.update(host=a.host, port=a.port)

    def connect(db, autocommit):
        c = MySQLdb.connect(db=db, **kw) if db else MySQLdb.connect(**kw)
        c.autocommit(autocommit)
        return c

    run(
        Driver(
            name="mysqlclient",
            db="dbclient",
            connect=connect,
            warning_count=lambda c: c.warning_count(),
            integrity_error=MySQLdb.IntegrityError,
            ping=lambda c: c.ping(),
        )
    )


if __name__ == "__main__":
    main()
