"""Throw-away database servers for benchmarks: innoxide and MariaDB with equivalent settings.

Each server gets its own temporary data directory, TCP port and Unix socket; nothing touches a
system service. `Settings` holds what must be equal on both sides of a comparison (buffer pool,
redo log capacity, innodb_flush_log_at_trx_commit, doublewrite, page size, sort buffer, and
innodb_flush_method when a comparison sets it), and each server class
turns it into its own command-line options:

    with InnoxideServer("target/release/innoxide", Settings(buffer_pool="1G")) as s:
        s.socket, s.port, s.pid

Both classes only need the Python standard library: readiness is checked with the server's own
client (`mariadb`, which speaks to both) so PyMySQL is not required.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass


@dataclass
class Settings:
    """What both servers of a comparison are given alike."""

    buffer_pool: str = "1G"
    # Total redo capacity: innoxide splits it over innodb_log_files_in_group=2 files, MariaDB
    # 10.11 has one file.
    log_capacity_mb: int = 512
    flush_log_at_trx_commit: int = 1
    doublewrite: bool = True
    page_size: str = "16K"
    max_connections: int = 2000
    # MySQL 8.0's default (MariaDB's is 2M): both sort in the same memory.
    sort_buffer_size: int = 262144
    # innodb_flush_method for both; None leaves each server's default (innoxide and MySQL
    # 8.0: fsync; MariaDB 10.11: O_DIRECT).
    flush_method: str = None


class ServerError(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server:
    name = "server"

    def __init__(self, settings):
        self.settings = settings
        self.tmp = None
        self.proc = None
        self.port = free_port()
        self.socket = None
        self.log = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    @property
    def pid(self):
        return self.proc.pid

    def command(self, datadir):
        raise NotImplementedError

    def prepare_datadir(self, datadir):
        os.makedirs(datadir)

    def start(self):
        self.tmp = tempfile.mkdtemp(prefix="bench-%s-" % self.name)
        datadir = os.path.join(self.tmp, "data")
        self.socket = os.path.join(self.tmp, "sock")
        self.log = os.path.join(self.tmp, "server.log")
        self.prepare_datadir(datadir)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                self.command(datadir), stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                self.dump_log()
                raise ServerError("%s exited with %d at start" % (self.name, self.proc.returncode))
            if self.ping():
                return
            if time.monotonic() > deadline:
                self.dump_log()
                raise ServerError("%s did not accept connections within 120 s" % self.name)
            time.sleep(0.2)

    def restart(self, extra=(), between=None):
        """Clean shutdown (SIGTERM) and a new start on the same data directory, with `extra`
        options added for the new process only; `between` runs while the server is down."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=300)
        if between is not None:
            between()
        datadir = os.path.join(self.tmp, "data")
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                self.command(datadir) + list(extra), stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 300
        while not self.ping():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.dump_log()
                raise ServerError("%s did not come back after a restart" % self.name)
            time.sleep(0.1)

    def ping(self):
        r = subprocess.run(
            ["mariadb", "--no-defaults", "-S", self.socket, "-uroot", "-e", "SELECT 1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return r.returncode == 0

    def sql(self, statement):
        """Runs one statement with the mariadb client and returns its tab-separated output."""
        r = subprocess.run(
            ["mariadb", "--no-defaults", "-S", self.socket, "-uroot", "-N", "-B", "-e", statement],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        if r.returncode != 0:
            raise ServerError("%s: %s: %s" % (self.name, statement, r.stderr.decode(errors="replace")))
        return r.stdout.decode(errors="replace")

    def dump_log(self):
        try:
            with open(self.log, errors="replace") as f:
                sys.stderr.write(f.read()[-4000:])
        except OSError:
            pass

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


def _flush_method(settings):
    if settings.flush_method is None:
        return []
    return ["--innodb-flush-method=" + settings.flush_method]


class InnoxideServer(_Server):
    name = "innoxide"

    def __init__(self, binary, settings, extra=()):
        super().__init__(settings)
        self.binary = binary
        self.extra = list(extra)

    def command(self, datadir):
        s = self.settings
        return [
            self.binary,
            "--no-defaults",
            "--datadir=" + datadir,
            "--port=%d" % self.port,
            "--socket=" + self.socket,
            "--innodb-buffer-pool-size=" + s.buffer_pool,
            "--innodb-log-file-size=%dM" % (s.log_capacity_mb // 2),
            "--innodb-log-files-in-group=2",
            "--innodb-flush-log-at-trx-commit=%d" % s.flush_log_at_trx_commit,
            "--innodb-doublewrite=" + ("ON" if s.doublewrite else "OFF"),
            "--innodb-page-size=" + s.page_size,
            "--max-connections=%d" % s.max_connections,
            "--sort-buffer-size=%d" % s.sort_buffer_size,
        ] + _flush_method(s) + self.extra


class MariadbServer(_Server):
    name = "mariadb"

    def __init__(
        self,
        settings,
        extra=(),
        mariadbd="mariadbd",
        install_db="mariadb-install-db",
        mysql_defaults=True,
    ):
        super().__init__(settings)
        self.extra = list(extra)
        self.mariadbd = mariadbd
        self.install_db = install_db
        # MySQL 8.0's character set and sql_mode where MariaDB's defaults differ.
        self.mysql_defaults = mysql_defaults

    def user(self):
        return ["--user=root"] if os.geteuid() == 0 else []

    def start(self):
        super().start()
        # The comparisons are with MariaDB 10.11 (Debian 12's mariadb-server package).
        self.version = self.sql("SELECT VERSION()").strip()
        if not self.version.startswith("10.11."):
            self.stop()
            raise ServerError(
                "%s is MariaDB %s; the side-by-side runs compare with MariaDB 10.11 "
                "(apt-get install mariadb-server on Debian 12)" % (self.mariadbd, self.version)
            )

    def prepare_datadir(self, datadir):
        cmd = [
            self.install_db,
            "--no-defaults",
            "--datadir=" + datadir,
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--innodb-page-size=" + self.settings.page_size,
        ] + self.user()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            sys.stderr.write(r.stdout.decode(errors="replace"))
            raise ServerError("mariadb-install-db failed (exit %d)" % r.returncode)

    def command(self, datadir):
        s = self.settings
        cmd = [
            self.mariadbd,
            "--no-defaults",
            "--datadir=" + datadir,
            "--socket=" + self.socket,
            "--port=%d" % self.port,
            "--bind-address=127.0.0.1",
            "--pid-file=" + os.path.join(self.tmp, "mariadbd.pid"),
            "--innodb-buffer-pool-size=" + s.buffer_pool,
            "--innodb-log-file-size=%dM" % s.log_capacity_mb,
            "--innodb-flush-log-at-trx-commit=%d" % s.flush_log_at_trx_commit,
            "--innodb-doublewrite=%d" % (1 if s.doublewrite else 0),
            "--innodb-page-size=" + s.page_size,
            "--max-connections=%d" % s.max_connections,
            "--sort-buffer-size=%d" % s.sort_buffer_size,
        ] + _flush_method(s)
        if self.mysql_defaults:
            cmd += [
                "--character-set-server=utf8mb4",
                "--sql-mode=ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
            ]
        return cmd + self.user() + self.extra
