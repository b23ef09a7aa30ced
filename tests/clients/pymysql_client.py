#!/usr/bin/python3
"""End-to-end check of innoxide with PyMySQL (pure Python): the DB-API scenario of
dbapi_scenario.py (connect, interpolated parameters, a transaction that commits and one that
rolls back, warnings, a duplicate key).

Usage: pymysql_client.py --host 127.0.0.1 --port 3306 [--socket /path/to.sock]
Prints "pymysql: OK" and exits 0, or prints what differed and exits 1.
"""

import os
import sys

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dbapi_scenario import Driver, args, run  # noqa: E402


def main():
    a = args()
    kw = dict(user="root", password="", connect_timeout=10, read_timeout=60)
    if a.socket:
        kw["unix_socket"] = a.socket
    else:
        kw.update(host=a.host, port=a.port)

    def connect(db, autocommit):
        return pymysql.connect(database=db, autocommit=autocommit, **kw)

    run(
        Driver(
            name="pymysql",
            db="pyclient",
            connect=connect,
            # The OK (or EOF) packet's warning count of the last result.
            warning_count=lambda c: c._result.warning_count,
            integrity_error=pymysql.err.IntegrityError,
            ping=lambda c: c.ping(reconnect=False),
        )
    )


if __name__ == "__main__":
    main()
