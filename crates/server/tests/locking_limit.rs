//! `UPDATE/DELETE ... [ORDER BY key] LIMIT n` lock only the rows they change, as InnoDB's
//! scans stop at the limit: another transaction can change the next rows of the same key
//! prefix at once (dbSTRESS's DEL deletes the oldest HISTORY row of an object while other
//! sessions touch the same object). (An ORDER BY the forward scan cannot follow, such as
//! DESC, still reads and locks the whole range before sorting: InnoDB would scan backwards.)

mod common;

use common::{connect, start};
use mysql::prelude::Queryable;

#[test]
fn limit_stops_the_locking_scan() {
    let s = start();
    let mut a = connect(&s);
    let mut b = connect(&s);
    a.query_drop("CREATE DATABASE d").unwrap();
    a.query_drop("CREATE TABLE d.h (obj INT, horder INT, v INT, PRIMARY KEY (obj, horder))")
        .unwrap();
    a.query_drop("INSERT INTO d.h VALUES (1,1,0),(1,2,0),(1,3,0),(2,1,0),(2,2,0)")
        .unwrap();
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    for (stmt, free) in [
        // Only (obj, 1) is locked.
        ("DELETE FROM d.h WHERE obj = 1 ORDER BY horder LIMIT 1", 2),
        (
            "UPDATE d.h SET v = 5 WHERE obj = 1 ORDER BY horder LIMIT 1",
            2,
        ),
        ("UPDATE d.h SET v = 6 WHERE obj = 2 LIMIT 1", 2),
        ("DELETE FROM d.h WHERE obj = 1 ORDER BY horder LIMIT 2", 3),
    ] {
        a.query_drop("BEGIN").unwrap();
        a.query_drop(stmt).unwrap();
        assert_eq!(a.affected_rows(), free - 1, "{stmt}");
        let obj = if stmt.contains("obj = 2") { 2 } else { 1 };
        b.query_drop(format!(
            "UPDATE d.h SET v = v + 1 WHERE obj = {obj} AND horder = {free}"
        ))
        .unwrap_or_else(|e| panic!("after `{stmt}`, row ({obj},{free}) is locked: {e}"));
        a.query_drop("ROLLBACK").unwrap();
    }
    let n: u64 = a.query_first("SELECT COUNT(*) FROM d.h").unwrap().unwrap();
    assert_eq!(n, 5, "every change was rolled back");
    assert_eq!(s.panics(), Vec::<String>::new());
}
