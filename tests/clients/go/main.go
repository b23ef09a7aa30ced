// End-to-end check of innoxide with go-sql-driver/mysql: connect as root without a password,
// DDL, server-side prepared statements (the driver's default: COM_STMT_PREPARE / EXECUTE /
// CLOSE for every query with arguments), a transaction that commits and one that rolls back,
// an INSERT that warns and SHOW WARNINGS, and a duplicate key error.
//
// Usage: go run . -host 127.0.0.1 -port 3306 [-socket /path/to.sock]
// Exits 0 after printing "go-sql-driver: OK"; on any wrong result prints what differed to
// stderr and exits 1.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"time"

	"github.com/go-sql-driver/mysql"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go-sql-driver: FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func check(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

func expect(what string, got, want any) {
	if !reflect.DeepEqual(got, want) {
		fail("%s: got %#v, want %#v", what, got, want)
	}
}

type warning struct {
	Level   string
	Code    int
	Message string
}

func warnings(ctx context.Context, c *sql.Conn) []warning {
	rows, err := c.QueryContext(ctx, "SHOW WARNINGS")
	check(err, "SHOW WARNINGS")
	defer rows.Close()
	var ws []warning
	for rows.Next() {
		var w warning
		check(rows.Scan(&w.Level, &w.Code, &w.Message), "scan SHOW WARNINGS")
		ws = append(ws, w)
	}
	check(rows.Err(), "SHOW WARNINGS rows")
	return ws
}

func ids(ctx context.Context, c *sql.Conn) []int {
	rows, err := c.QueryContext(ctx, "SELECT id FROM t ORDER BY id")
	check(err, "SELECT id")
	defer rows.Close()
	var out []int
	for rows.Next() {
		var id int
		check(rows.Scan(&id), "scan id")
		out = append(out, id)
	}
	check(rows.Err(), "SELECT id rows")
	return out
}

func main() {
	host := flag.String("host", "127.0.0.1", "server host")
	port := flag.Int("port", 3306, "server TCP port")
	socket := flag.String("socket", "", "Unix socket (used instead of TCP when set)")
	flag.Parse()

	cfg := mysql.NewConfig()
	cfg.User = "root"
	if *socket != "" {
		cfg.Net = "unix"
		cfg.Addr = *socket
	} else {
		cfg.Net = "tcp"
		cfg.Addr = fmt.Sprintf("%s:%d", *host, *port)
	}
	cfg.Timeout = 10 * time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	check(err, "open")
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	check(db.PingContext(ctx), "ping")

	// One connection for everything that depends on session state (USE, sql_mode).
	c, err := db.Conn(ctx)
	check(err, "conn")
	defer c.Close()
	exec := func(q string, args ...any) sql.Result {
		r, err := c.ExecContext(ctx, q, args...)
		check(err, q)
		return r
	}
	exec("DROP DATABASE IF EXISTS goclient")
	exec("CREATE DATABASE goclient")
	exec("USE goclient")
	exec("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10), n INT)")

	// Server-side prepared statements, each executed several times.
	ins, err := c.PrepareContext(ctx, "INSERT INTO t (id, name, n) VALUES (?, ?, ?)")
	check(err, "prepare INSERT")
	for i, name := range []string{"one", "two", "three"} {
		r, err := ins.ExecContext(ctx, i+1, name, (i+1)*10)
		check(err, "execute INSERT")
		n, err := r.RowsAffected()
		check(err, "RowsAffected")
		expect("rows affected by a prepared INSERT", n, int64(1))
	}
	_, err = ins.ExecContext(ctx, 4, nil, nil)
	check(err, "execute INSERT with NULLs")
	check(ins.Close(), "close INSERT")
	sel, err := c.PrepareContext(ctx, "SELECT name, n FROM t WHERE id = ?")
	check(err, "prepare SELECT")
	var name sql.NullString
	var n sql.NullInt64
	check(sel.QueryRowContext(ctx, 2).Scan(&name, &n), "execute SELECT id=2")
	expect("row 2", []any{name, n}, []any{sql.NullString{String: "two", Valid: true}, sql.NullInt64{Int64: 20, Valid: true}})
	check(sel.QueryRowContext(ctx, 4).Scan(&name, &n), "execute SELECT id=4")
	expect("row 4 (NULLs)", []any{name.Valid, n.Valid}, []any{false, false})
	err = sel.QueryRowContext(ctx, 99).Scan(&name, &n)
	expect("SELECT of a missing row", err, sql.ErrNoRows)
	check(sel.Close(), "close SELECT")
	// A query with arguments outside an explicit Prepare is prepared by the driver too.
	var sum int64
	check(c.QueryRowContext(ctx, "SELECT SUM(n) FROM t WHERE id BETWEEN ? AND ?", 1, 3).Scan(&sum), "SUM")
	expect("SUM(n)", sum, int64(60))

	// A transaction that commits and one that rolls back.
	tx, err := c.BeginTx(ctx, nil)
	check(err, "BEGIN (commit)")
	_, err = tx.ExecContext(ctx, "INSERT INTO t (id, name, n) VALUES (?, ?, ?)", 10, "ten", 100)
	check(err, "INSERT in transaction")
	_, err = tx.ExecContext(ctx, "UPDATE t SET n = n + 1 WHERE id = 1")
	check(err, "UPDATE in transaction")
	check(tx.Commit(), "COMMIT")
	expect("ids after COMMIT", ids(ctx, c), []int{1, 2, 3, 4, 10})

	tx, err = c.BeginTx(ctx, nil)
	check(err, "BEGIN (rollback)")
	_, err = tx.ExecContext(ctx, "INSERT INTO t (id, name, n) VALUES (11, 'eleven', 110)")
	check(err, "INSERT in rolled-back transaction")
	_, err = tx.ExecContext(ctx, "DELETE FROM t WHERE id = 2")
	check(err, "DELETE in rolled-back transaction")
	_, err = tx.ExecContext(ctx, "UPDATE t SET n = 0 WHERE id = 1")
	check(err, "UPDATE in rolled-back transaction")
	check(tx.Rollback(), "ROLLBACK")
	expect("ids after ROLLBACK", ids(ctx, c), []int{1, 2, 3, 4, 10})
	var n1 int64
	check(c.QueryRowContext(ctx, "SELECT n FROM t WHERE id = 1").Scan(&n1), "n of row 1")
	expect("n of row 1 (committed update kept, rolled-back one undone)", n1, int64(11))

	// Warnings: outside strict mode 'abc' into an INT column is stored as 0 with warning 1366,
	// and a string too long for VARCHAR(10) is cut with warning 1265.
	exec("SET sql_mode = ''")
	exec("INSERT INTO t (id, name, n) VALUES (20, 'w', 'abc')")
	expect("warnings after 'abc' into INT", warnings(ctx, c), []warning{
		{"Warning", 1366, "Incorrect integer value: 'abc' for column 'n' at row 1"},
	})
	var wc int
	check(c.QueryRowContext(ctx, "SHOW COUNT(*) WARNINGS").Scan(&wc), "SHOW COUNT(*) WARNINGS")
	expect("SHOW COUNT(*) WARNINGS", wc, 1)
	exec("INSERT INTO t (id, name) VALUES (21, 'abcdefghijklmno')")
	expect("warnings after a too-long string", warnings(ctx, c), []warning{
		{"Warning", 1265, "Data truncated for column 'name' at row 1"},
	})
	check(c.QueryRowContext(ctx, "SELECT name, n FROM t WHERE id = ?", 21).Scan(&name, &n), "row 21")
	expect("row 21 (truncated)", name.String, "abcdefghij")
	check(c.QueryRowContext(ctx, "SELECT n FROM t WHERE id = ?", 20).Scan(&n), "row 20")
	expect("row 20 ('abc' stored as 0)", n.Int64, int64(0))

	// A duplicate key is error 1062 (SQLSTATE 23000), and the connection stays usable.
	_, err = c.ExecContext(ctx, "INSERT INTO t (id) VALUES (?)", 1)
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		fail("duplicate key: want a server error, got %v", err)
	}
	expect("duplicate key error number", me.Number, uint16(1062))
	expect("duplicate key SQLSTATE", string(me.SQLState[:]), "23000")
	exec("DROP DATABASE goclient")
	fmt.Println("go-sql-driver: OK")
}
