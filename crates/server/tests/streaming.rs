//! Large results go to the client as they are made (select.rs S6) and ORDER BY ... LIMIT
//! keeps only the rows that can still make it: the server's peak memory does not grow with
//! the result, in the text and the binary protocol; OFFSET, LIMIT and
//! sql_select_limit still hold; joins go row by row; a whole ORDER BY beyond sort_buffer_size
//! sorts in runs on disk; GROUP BY and DISTINCT beyond the temporary-table budget
//! (tmp_table_size) go on in a sort on disk and give the same results.

mod common;

use common::{connect, global_status as status, start};
use mysql::prelude::*;

/// Sort_merge_passes so far.
fn passes(c: &mut mysql::Conn) -> u64 {
    status(c, "Sort_merge_passes")
}

/// The server's peak resident memory (VmHWM), kB.
fn peak_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[test]
fn large_results_stream_without_holding_them() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, k INT, pad VARCHAR(200))")
        .unwrap();
    const ROWS: i64 = 150_000;
    let pad = "x".repeat(200);
    for chunk in 0..ROWS / 1000 {
        let mut q = String::from("INSERT INTO t VALUES ");
        for i in 0..1000 {
            let id = chunk * 1000 + i + 1;
            if i > 0 {
                q.push(',');
            }
            q.push_str(&format!("({id}, {}, '{pad}')", id % 10));
        }
        c.query_drop(q).unwrap();
    }
    let before = peak_kb(s.pid());
    // Text protocol, read row by row on the client side.
    let mut n = 0i64;
    let mut sum = 0i64;
    for row in c.query_iter("SELECT id, pad FROM t").unwrap() {
        let (id, p): (i64, String) = mysql::from_row(row.unwrap());
        assert_eq!(p.len(), 200);
        n += 1;
        sum += id;
    }
    assert_eq!((n, sum), (ROWS, ROWS * (ROWS + 1) / 2));
    // Binary protocol.
    let st = c.prep("SELECT id, pad FROM t WHERE k = ?").unwrap();
    let mut m = 0;
    for row in c.exec_iter(&st, (3,)).unwrap() {
        let (id, _): (i64, String) = mysql::from_row(row.unwrap());
        assert_eq!(id % 10, 3);
        m += 1;
    }
    assert_eq!(m, ROWS / 10);
    // ORDER BY ... LIMIT keeps only the rows that can still make it.
    let ids: Vec<i64> = c
        .query("SELECT id FROM t ORDER BY k DESC, pad, id DESC LIMIT 3 OFFSET 1")
        .unwrap();
    assert_eq!(ids, vec![ROWS - 11, ROWS - 21, ROWS - 31]);
    // A join goes row by row too (select.rs S9): the big table first, each of its rows
    // looked up in the small one, the joined rows streamed.
    c.query_drop("CREATE TABLE kk (k INT PRIMARY KEY, name VARCHAR(10))")
        .unwrap();
    c.query_drop(
        "INSERT INTO kk VALUES (0,'zero'),(1,'one'),(2,'two'),(3,'three'),(4,'four'),\
         (5,'five'),(6,'six'),(7,'seven'),(8,'eight')",
    )
    .unwrap();
    let (mut n, mut sum, mut nulls) = (0i64, 0i64, 0i64);
    let mut prev = 0;
    for row in c
        .query_iter("SELECT t.id, t.pad, kk.name FROM t STRAIGHT_JOIN kk ON kk.k = t.k")
        .unwrap()
    {
        let (id, p, name): (i64, String, String) = mysql::from_row(row.unwrap());
        assert_eq!(p.len(), 200);
        assert!(id > prev && !name.is_empty(), "{id} after {prev}: {name}");
        prev = id;
        n += 1;
        sum += id;
    }
    // k = 9 has no row in kk: left out by the inner join, NULL-extended by the left one.
    let nines: i64 = (1..=ROWS).filter(|i| i % 10 == 9).sum();
    assert_eq!((n, sum), (ROWS - ROWS / 10, ROWS * (ROWS + 1) / 2 - nines));
    n = 0;
    for row in c
        .query_iter("SELECT t.id, kk.name FROM t LEFT JOIN kk ON kk.k = t.k")
        .unwrap()
    {
        let (id, name): (i64, Option<String>) = mysql::from_row(row.unwrap());
        if name.is_none() {
            assert_eq!(id % 10, 9);
            nulls += 1;
        }
        n += 1;
    }
    assert_eq!((n, nulls), (ROWS, ROWS / 10));
    // A whole sort beyond sort_buffer_size (256 KiB): sorted runs in tmpdir, merged as the
    // rows go out (select.rs S8, sort.rs), in the same order as ever.
    let passes_before = passes(&mut c);
    let mut last: Option<(i64, i64)> = None;
    let mut n = 0;
    for row in c
        .query_iter("SELECT k, id, pad FROM t ORDER BY k DESC, id")
        .unwrap()
    {
        let (k, id, p): (i64, i64, String) = mysql::from_row(row.unwrap());
        assert_eq!((k, p.len()), (id % 10, 200));
        if let Some((lk, lid)) = last {
            assert!(
                lk > k || (lk == k && lid < id),
                "({lk}, {lid}) before ({k}, {id})"
            );
        }
        last = Some((k, id));
        n += 1;
    }
    assert_eq!(n, ROWS);
    assert!(passes(&mut c) > passes_before, "the sort spilled");
    // 150,000 groups and 150,000 distinct rows of over 200 bytes, beyond a 2 MB temporary
    // table: the rest of the groups go on in a sort on disk (group.rs, finish.rs).
    c.query_drop("SET SESSION tmp_table_size = 2 * 1024 * 1024")
        .unwrap();
    let disk_before = status(&mut c, "Created_tmp_disk_tables");
    let (mut n, mut sum) = (0i64, 0i64);
    for row in c
        .query_iter("SELECT id, pad, COUNT(*), SUM(k) FROM t GROUP BY id, pad")
        .unwrap()
    {
        let (id, p, count, k): (i64, String, i64, i64) = mysql::from_row(row.unwrap());
        assert_eq!((p.len(), count, k), (200, 1, id % 10));
        n += 1;
        sum += id;
    }
    assert_eq!((n, sum), (ROWS, ROWS * (ROWS + 1) / 2));
    let (mut n, mut sum) = (0i64, 0i64);
    for row in c.query_iter("SELECT DISTINCT pad, id FROM t").unwrap() {
        let (p, id): (String, i64) = mysql::from_row(row.unwrap());
        assert_eq!(p.len(), 200);
        n += 1;
        sum += id;
    }
    assert_eq!((n, sum), (ROWS, ROWS * (ROWS + 1) / 2));
    assert!(status(&mut c, "Created_tmp_disk_tables") >= disk_before + 2);
    // COUNT(DISTINCT) of 150,000 values of over 200 bytes: the keys beyond the 2 MB go to a
    // sort (group.rs G6).
    let distinct: i64 = c
        .query_first("SELECT COUNT(DISTINCT CONCAT(pad, id)) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(distinct, ROWS);
    // GROUP_CONCAT of 150,000 rows: cut at group_concat_max_len with warning 1260, the parts
    // past it never kept.
    let len: i64 = c
        .query_first("SELECT LENGTH(GROUP_CONCAT(pad)) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(len, 1024);
    let warns: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(warns.iter().map(|w| w.1).collect::<Vec<_>>(), vec![1260]);
    // With ORDER BY: only the parts that can still make the first 1,024 bytes are kept.
    let (len, head): (i64, String) = c
        .query_first(
            "SELECT LENGTH(GROUP_CONCAT(pad ORDER BY id DESC)), \
             LEFT(GROUP_CONCAT(id ORDER BY k, id DESC SEPARATOR '-'), 25) FROM t",
        )
        .unwrap()
        .unwrap();
    assert_eq!((len, head.as_str()), (1024, "150000-149990-149980-1499"));
    let warns: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        warns.iter().map(|w| w.1).collect::<Vec<_>>(),
        vec![1260, 1260]
    );
    // A correlated subquery in WHERE and one in the select list: the rows go on a batch at a
    // time as the scan reads on (select.rs S10), not collected whole first.
    let (mut n, mut sum) = (0i64, 0i64);
    for row in c
        .query_iter(
            "SELECT id, pad, (SELECT name FROM kk WHERE kk.k = t.k) FROM t \
             WHERE EXISTS (SELECT 1 FROM kk WHERE kk.k = t.k AND kk.k < 5)",
        )
        .unwrap()
    {
        let (id, p, name): (i64, String, String) = mysql::from_row(row.unwrap());
        assert!(
            id % 10 < 5 && p.len() == 200 && !name.is_empty(),
            "{id} {name}"
        );
        n += 1;
        sum += id;
    }
    let low: i64 = (1..=ROWS).filter(|i| i % 10 < 5).sum();
    assert_eq!((n, sum), (ROWS / 2, low));
    // A correlated subquery run for 150,000 different outer values: its cache of results is
    // emptied whenever it would pass the 2 MB (mod.rs `sub_rows`).
    let (n, pads): (i64, i64) = c
        .query_first(
            "SELECT COUNT(*), SUM(LENGTH((SELECT t2.pad FROM t AS t2 WHERE t2.id = t.id))) FROM t",
        )
        .unwrap()
        .unwrap();
    assert_eq!((n, pads), (ROWS, ROWS * 200));
    // A recursive CTE of 150,000 rows in 150 rounds: its result in a row buffer (recursive.rs
    // R4).
    let (n, sum, pads): (i64, i64, i64) = c
        .query_first(
            "WITH RECURSIVE r (n, p) AS (SELECT id, pad FROM t WHERE id <= 1000 \
             UNION ALL SELECT n + 1000, p FROM r WHERE n + 1000 <= 150000) \
             SELECT COUNT(*), SUM(n), SUM(LENGTH(p)) FROM r",
        )
        .unwrap()
        .unwrap();
    assert_eq!((n, sum, pads), (ROWS, ROWS * (ROWS + 1) / 2, ROWS * 200));
    // The same with UNION DISTINCT, going round: the 150,000 keys seen (30 MB) are kept in
    // sorted runs in tmpdir beyond the 2 MB (keyset.rs K4); round 151 finds only rows seen,
    // and that ends the recursion.
    let (n, sum, pads): (i64, i64, i64) = c
        .query_first(
            "WITH RECURSIVE r (n, p) AS (SELECT id, pad FROM t WHERE id <= 1000 \
             UNION SELECT (n + 999) % 150000 + 1, p FROM r) \
             SELECT COUNT(*), SUM(n), SUM(LENGTH(p)) FROM r",
        )
        .unwrap()
        .unwrap();
    assert_eq!((n, sum, pads), (ROWS, ROWS * (ROWS + 1) / 2, ROWS * 200));
    // A derived table, and a RIGHT JOIN's right table, beyond the 2 MB: gathered in a row
    // buffer that goes on in tmpdir (rowbuf.rs), read back for each row joined with them.
    let (n, sum, pads): (i64, i64, i64) = c
        .query_first("SELECT COUNT(*), SUM(id), SUM(LENGTH(pad)) FROM (SELECT id, pad FROM t) AS d")
        .unwrap()
        .unwrap();
    assert_eq!((n, sum, pads), (ROWS, ROWS * (ROWS + 1) / 2, ROWS * 200));
    let (n, names): (i64, i64) = c
        .query_first(
            "SELECT COUNT(*), COUNT(kk.name) FROM kk JOIN (SELECT id, k, pad FROM t) AS d \
             ON d.k = kk.k AND d.id % 3 = 0",
        )
        .unwrap()
        .unwrap();
    let want = (1..=ROWS).filter(|i| i % 3 == 0 && i % 10 != 9).count() as i64;
    assert_eq!((n, names), (want, want));
    let (n, nulls): (i64, i64) = c
        .query_first("SELECT COUNT(*), SUM(kk.name IS NULL) FROM kk RIGHT JOIN t ON t.k = kk.k")
        .unwrap()
        .unwrap();
    assert_eq!((n, nulls), (ROWS, ROWS / 10));
    // Window functions over every row, one partition of 150,000 for two of them: each window
    // sorts through runs and reads its partitions through a row buffer on disk beyond the
    // 2 MB (window.rs W5, rowbuf.rs), and the rows come back in their order (W1).
    let disk_before = status(&mut c, "Created_tmp_disk_tables");
    let mut n = 0i64;
    let mut ks = Vec::new();
    for row in c
        .query_iter(
            "SELECT id, pad, ROW_NUMBER() OVER (ORDER BY k DESC, id), \
             LAG(id) OVER (PARTITION BY k ORDER BY id), \
             SUM(k) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t",
        )
        .unwrap()
    {
        let (id, p, rn, lag, sum): (i64, String, i64, Option<i64>, i64) =
            mysql::from_row(row.unwrap());
        n += 1;
        let k = id % 10;
        // In the last window's order: by id.
        assert_eq!(id, n);
        ks.push(k);
        let window_sum: i64 = ks.iter().rev().take(3).sum();
        assert_eq!(p.len(), 200);
        assert_eq!(rn, (9 - k) * (ROWS / 10) + (id - 1) / 10 + 1, "row {id}");
        assert_eq!(lag, (id > 10).then_some(id - 10), "row {id}");
        assert_eq!(sum, window_sum, "row {id}");
    }
    assert_eq!(n, ROWS);
    assert!(status(&mut c, "Created_tmp_disk_tables") > disk_before);
    // UNION ALL: each part's rows go out as they are made, under one header, in the text
    // and the binary protocol.
    // (rows, sum of id) of a query's (id, pad) rows, each pad 200 bytes, read as they come.
    let count_sum = |c: &mut mysql::Conn, q: &str| {
        let (mut n, mut sum) = (0i64, 0i64);
        for row in c.query_iter(q).unwrap() {
            let (id, p): (i64, String) = mysql::from_row(row.unwrap());
            assert_eq!(p.len(), 200);
            n += 1;
            sum += id;
        }
        (n, sum)
    };
    let ones: i64 = (1..=ROWS).filter(|i| i % 10 == 1).sum();
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT id, pad FROM t UNION ALL SELECT id, pad FROM t WHERE k = 1"
        ),
        (ROWS + ROWS / 10, ROWS * (ROWS + 1) / 2 + ones)
    );
    // UNION (DISTINCT): the parts through a derived table's row buffer, the duplicates
    // removed within tmp_table_size and a sort beyond it.
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT id, pad FROM t UNION SELECT id, pad FROM t WHERE k = 1"
        ),
        (ROWS, ROWS * (ROWS + 1) / 2)
    );
    let st = c
        .prep("SELECT id FROM t WHERE k = ? UNION ALL SELECT id FROM t WHERE k = ?")
        .unwrap();
    let ids: Vec<i64> = c.exec(&st, (2, 3)).unwrap();
    assert_eq!(ids.len() as i64, ROWS / 5);
    assert!(ids[..ids.len() / 2].iter().all(|i| i % 10 == 2));
    c.query_drop("SET SESSION tmp_table_size = DEFAULT")
        .unwrap();
    let grown = peak_kb(s.pid()).saturating_sub(before);
    // 150,000 rows of over 200 bytes: held whole they take well over 30 MB.
    assert!(grown < 20_000, "peak memory grew by {grown} kB");
    // OFFSET, LIMIT and sql_select_limit on a streamed result.
    let ids: Vec<i64> = c.query("SELECT id FROM t LIMIT 3 OFFSET 10").unwrap();
    assert_eq!(ids, vec![11, 12, 13]);
    c.query_drop("SET SESSION sql_select_limit = 4").unwrap();
    let ids: Vec<i64> = c.query("SELECT id FROM t WHERE k = 1").unwrap();
    assert_eq!(ids, vec![1, 11, 21, 31]);
    c.query_drop("SET SESSION sql_select_limit = DEFAULT")
        .unwrap();
    // Several statements in one query, the first streamed, then one that sorts.
    let mut results = c
        .query_iter("SELECT id FROM t WHERE id < 3; SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY k DESC LIMIT 2")
        .unwrap();
    let first: Vec<i64> = results
        .iter()
        .unwrap()
        .map(|r| mysql::from_row(r.unwrap()))
        .collect();
    assert_eq!(first, vec![1, 2]);
    let second: Vec<(i64, i64)> = results
        .iter()
        .unwrap()
        .map(|r| mysql::from_row(r.unwrap()))
        .collect();
    assert_eq!(second, vec![(9, ROWS / 10), (8, ROWS / 10)]);
    drop(results);
    // Status counters saw the rows go out.
    let sent: (String, u64) = c
        .query_first("SHOW SESSION STATUS LIKE 'Bytes_sent'")
        .unwrap()
        .unwrap();
    assert!(sent.1 > (ROWS as u64) * 200, "{sent:?}");
    assert!(s.panics().is_empty());
}

/// sort_buffer_size is a session variable with MySQL's default and minimum; a small sort stays
/// in memory (no merge pass), and one through a derived table or INSERT ... SELECT (rows
/// collected, not sent) is still in order.
#[test]
fn sort_buffer_size_bounds_the_sort_in_memory() {
    let s = start();
    let mut c = connect(&s);
    let def: u64 = c
        .query_first("SELECT @@global.sort_buffer_size")
        .unwrap()
        .unwrap();
    assert_eq!(def, 262_144);
    c.query_drop("SET SESSION sort_buffer_size = 100").unwrap();
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].1, 1292, "{w:?}");
    let v: u64 = c.query_first("SELECT @@sort_buffer_size").unwrap().unwrap();
    assert_eq!(v, 32_768);
    let tmp: String = c.query_first("SELECT @@tmpdir").unwrap().unwrap();
    assert!(!tmp.is_empty());

    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, k INT, pad VARCHAR(100))")
        .unwrap();
    c.query_drop("CREATE TABLE s (seq INT AUTO_INCREMENT PRIMARY KEY, id INT)")
        .unwrap();
    let rows: Vec<String> = (1..=5000)
        .map(|i| format!("({i}, {}, REPEAT('p', 100))", (i * 7919) % 1000))
        .collect();
    c.query_drop(format!("INSERT INTO t VALUES {}", rows.join(",")))
        .unwrap();
    let mut want: Vec<(i64, i64)> = (1..=5000).map(|i| ((i * 7919) % 1000, i)).collect();
    want.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let want_ids: Vec<i64> = want.iter().map(|r| r.1).collect();

    // 5,000 rows of 100 bytes in 32 KiB: runs.
    let p0 = passes(&mut c);
    let ids: Vec<i64> = c.query("SELECT id FROM t ORDER BY k DESC, pad").unwrap();
    assert_eq!(ids, want_ids);
    let p1 = passes(&mut c);
    assert!(p1 > p0);
    // Collected rather than sent: an IN subquery's table, INSERT ... SELECT.
    c.query_drop("INSERT INTO s (id) SELECT id FROM t ORDER BY k DESC, pad")
        .unwrap();
    let ids: Vec<i64> = c.query("SELECT id FROM s ORDER BY seq").unwrap();
    assert_eq!(ids, want_ids);
    // A large buffer: the same sort in memory, no pass.
    c.query_drop("SET SESSION sort_buffer_size = 64 * 1024 * 1024")
        .unwrap();
    let p2 = passes(&mut c);
    let ids: Vec<i64> = c.query("SELECT id FROM t ORDER BY k DESC, pad").unwrap();
    assert_eq!(ids, want_ids);
    assert_eq!(passes(&mut c), p2);
    assert!(s.panics().is_empty());
}

/// Row `id` of the table the grouping and window tests share: (id, g, s, v), g spread over
/// 5,000 values, s one of 300 words written in two cases (one group under
/// utf8mb4_0900_ai_ci), v over 97.
fn gsv_row(id: i64) -> (i64, i64, String, i64) {
    let g = (id * 7919) % 5000;
    let word = format!("w{}", id % 300);
    let word = if id % 2 == 0 {
        word.to_uppercase()
    } else {
        word
    };
    (id, g, word, id % 97)
}

/// Database d with table t of `n` (a multiple of 1,000) `gsv_row`s, sql_mode ''.
fn load_gsv(c: &mut mysql::Conn, n: i64) {
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("SET SESSION sql_mode = ''").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, g INT, s VARCHAR(20), v INT)")
        .unwrap();
    for chunk in 0..n / 1000 {
        let rows: Vec<String> = (1..=1000)
            .map(|i| {
                let (id, g, s, v) = gsv_row(chunk * 1000 + i);
                format!("({id}, {g}, '{s}', {v})")
            })
            .collect();
        c.query_drop(format!("INSERT INTO t VALUES {}", rows.join(",")))
            .unwrap();
    }
}

/// A result's rows as text.
type TextRow = Vec<Option<String>>;

fn text_rows(c: &mut mysql::Conn, q: &str) -> Vec<TextRow> {
    c.query_map(q, |r: mysql::Row| {
        (0..r.len())
            .map(|i| r.get_opt::<Option<String>, _>(i).unwrap().unwrap())
            .collect::<TextRow>()
    })
    .unwrap()
}

/// GROUP BY and DISTINCT give the same results whether their temporary table stays in memory
/// or outgrows tmp_table_size and goes on in a sort on disk (group.rs G1-G3, finish.rs F3):
/// aggregates, each group's first row, GROUP_CONCAT order, HAVING, ORDER BY and LIMIT after
/// grouping, case-insensitive grouping, COUNT(DISTINCT).
#[test]
fn group_by_and_distinct_beyond_tmp_table_size() {
    let s = start();
    let mut c = connect(&s);
    load_gsv(&mut c, 20_000);
    // (query, whether its row order is defined)
    let queries = [
        (
            "SELECT g, COUNT(*), SUM(v), MIN(s), MAX(v), GROUP_CONCAT(id ORDER BY id), \
             COUNT(DISTINCT v % 7), AVG(v) FROM t GROUP BY g",
            false,
        ),
        ("SELECT g, id, s, GROUP_CONCAT(v) FROM t GROUP BY g", false),
        ("SELECT s, COUNT(*), MIN(id) FROM t GROUP BY s", false),
        (
            "SELECT g, COUNT(*) AS n, SUM(v) FROM t GROUP BY g HAVING n > 3 AND SUM(v) > 200 \
             ORDER BY SUM(v) DESC, g LIMIT 20 OFFSET 3",
            true,
        ),
        ("SELECT DISTINCT g % 1000, s FROM t", false),
        (
            "SELECT DISTINCT v, s FROM t ORDER BY s DESC, v LIMIT 7 OFFSET 2",
            true,
        ),
        ("SELECT COUNT(*) FROM (SELECT DISTINCT g FROM t) AS x", true),
        ("SELECT g FROM t GROUP BY g ORDER BY g DESC LIMIT 3", true),
        // DISTINCT aggregates over one group: their keys beyond the budget go to a sort (G6).
        (
            "SELECT COUNT(DISTINCT id % 7000), SUM(DISTINCT g), AVG(DISTINCT v), \
             GROUP_CONCAT(DISTINCT s ORDER BY s DESC SEPARATOR ''), COUNT(DISTINCT s) FROM t",
            true,
        ),
    ];
    type Row = TextRow;
    let run = text_rows;
    let mut in_memory = Vec::new();
    let disk0 = status(&mut c, "Created_tmp_disk_tables");
    let tmp0 = status(&mut c, "Created_tmp_tables");
    for (q, _) in queries {
        in_memory.push(run(&mut c, q));
    }
    assert_eq!(status(&mut c, "Created_tmp_disk_tables"), disk0);
    // (The single group of the last query needs no table.)
    assert!(status(&mut c, "Created_tmp_tables") >= tmp0 + queries.len() as u64 - 1);
    c.query_drop("SET SESSION tmp_table_size = 1024").unwrap();
    for ((q, ordered), want) in queries.iter().zip(&in_memory) {
        let got = run(&mut c, q);
        let (mut a, mut b) = (got.clone(), want.clone());
        if !*ordered {
            a.sort();
            b.sort();
        }
        assert_eq!(a, b, "{q}");
        assert!(!got.is_empty(), "{q}");
    }
    // Every query but the one-row count and the single group spilled a table.
    let spilled = status(&mut c, "Created_tmp_disk_tables") - disk0;
    assert!(spilled >= queries.len() as u64 - 2, "{spilled} spilled");
    // Checks of the in-memory results themselves.
    let g: &Row = in_memory[0]
        .iter()
        .find(|r| r[0].as_deref() == Some("0"))
        .unwrap();
    let ids: Vec<i64> = (1..=20_000).filter(|i| (i * 7919) % 5000 == 0).collect();
    assert_eq!(g[1].as_deref(), Some(ids.len().to_string().as_str()));
    let concat: Vec<String> = ids.iter().map(i64::to_string).collect();
    assert_eq!(g[5].as_deref(), Some(concat.join(",").as_str()));
    assert_eq!(in_memory[2].len(), 300, "w0..w299 in either case");
    assert_eq!(in_memory[3].len(), 20);
    assert_eq!(in_memory[5].len(), 7);
    assert_eq!(in_memory[6], vec![vec![Some("5000".to_string())]]);
    assert_eq!(in_memory[7][0][0].as_deref(), Some("4999"));
    let sum_g: i64 = (0..5000)
        .filter(|g| (1..=20_000).any(|i| i * 7919 % 5000 == *g))
        .sum();
    assert_eq!(
        in_memory[8][0][..2],
        [Some("7000".to_string()), Some(sum_g.to_string())]
    );
    assert_eq!(in_memory[8][0][4].as_deref(), Some("300"));
    assert!(s.panics().is_empty());
}

/// Window functions give the same results whether each window's sort and partition stay in
/// memory or go to tmpdir (window.rs W5, rowbuf.rs): ranking, LAG/LEAD, running and sliding
/// aggregates, RANGE frames with offsets, NTILE, CUME_DIST, windows over groups after HAVING;
/// and the in-memory results are the ones computed here.
#[test]
fn window_functions_beyond_tmp_table_size() {
    let s = start();
    let mut c = connect(&s);
    const N: i64 = 20_000;
    load_gsv(&mut c, N);
    let queries = [
        "SELECT id, ROW_NUMBER() OVER (ORDER BY g, id), \
         RANK() OVER (PARTITION BY g % 10 ORDER BY v), \
         DENSE_RANK() OVER (PARTITION BY g % 10 ORDER BY v), \
         SUM(v) OVER (PARTITION BY g % 10 ORDER BY v), \
         LAG(s, 2) OVER (ORDER BY id), LEAD(id, 3, -1) OVER (ORDER BY id) FROM t ORDER BY id",
        "SELECT id, AVG(v) OVER (ORDER BY id ROWS BETWEEN 5 PRECEDING AND 5 FOLLOWING), \
         COUNT(*) OVER (ORDER BY v RANGE BETWEEN 3 PRECEDING AND 2 FOLLOWING), \
         FIRST_VALUE(id) OVER (PARTITION BY v ORDER BY id DESC), \
         LAST_VALUE(id) OVER (PARTITION BY s), NTILE(7) OVER (ORDER BY g, id), \
         CUME_DIST() OVER (ORDER BY v), PERCENT_RANK() OVER (PARTITION BY s ORDER BY v), \
         NTH_VALUE(g, 3) OVER (PARTITION BY v ORDER BY id) FROM t ORDER BY id",
        "SELECT g % 100 AS b, COUNT(*), SUM(SUM(v)) OVER (ORDER BY g % 100), \
         RANK() OVER (ORDER BY COUNT(*) DESC) FROM t GROUP BY g % 100 \
         HAVING COUNT(*) > 150 AND b % 3 = 0 ORDER BY b",
        // No ORDER BY: the rows in the window's order (W1), as in MySQL and MariaDB.
        "SELECT id, ROW_NUMBER() OVER (ORDER BY v DESC, id) FROM t",
    ];
    type Row = TextRow;
    let run = text_rows;
    // Sorts in memory too: no merge pass, no temporary table on disk.
    c.query_drop("SET SESSION sort_buffer_size = 64 * 1024 * 1024")
        .unwrap();
    let (disk0, passes0) = (status(&mut c, "Created_tmp_disk_tables"), passes(&mut c));
    let in_memory: Vec<Vec<Row>> = queries.iter().map(|q| run(&mut c, q)).collect();
    assert_eq!(status(&mut c, "Created_tmp_disk_tables"), disk0);
    assert_eq!(passes(&mut c), passes0);
    c.query_drop("SET SESSION tmp_table_size = 1024").unwrap();
    c.query_drop("SET SESSION sort_buffer_size = 32768")
        .unwrap();
    for (q, want) in queries.iter().zip(&in_memory) {
        assert_eq!(&run(&mut c, q), want, "{q}");
    }
    assert!(status(&mut c, "Created_tmp_disk_tables") >= disk0 + 3);
    assert!(passes(&mut c) > passes0);
    // The in-memory results themselves.
    let rows: Vec<(i64, i64, String, i64)> = (1..=N).map(gsv_row).collect();
    let int = |r: &Row, i: usize| -> i64 { r[i].as_deref().unwrap().parse().unwrap() };
    let mut by_g: Vec<&(i64, i64, String, i64)> = rows.iter().collect();
    by_g.sort_by_key(|r| (r.1, r.0));
    for (pos, r) in by_g.iter().enumerate() {
        let got = &in_memory[0][(r.0 - 1) as usize];
        assert_eq!(int(got, 1), pos as i64 + 1, "ROW_NUMBER of {}", r.0);
        // NTILE(7) over the same order: 20,000 = 7 * 2857 + 1, so the first bucket has 2858.
        let tile = if pos < 2858 {
            1
        } else {
            2 + (pos - 2858) / 2857
        };
        assert_eq!(int(&in_memory[1][(r.0 - 1) as usize], 5), tile as i64);
    }
    for (i, r) in rows.iter().enumerate() {
        let got = &in_memory[0][i];
        assert_eq!(int(got, 0), r.0);
        // RANK and running SUM within g % 10 by v, peers included.
        let part = rows.iter().filter(|x| x.1 % 10 == r.1 % 10);
        let (below, upto): (i64, i64) = part.fold((0, 0), |(b, u), x| {
            (
                b + i64::from(x.3 < r.3),
                u + if x.3 <= r.3 { x.3 } else { 0 },
            )
        });
        if i % 97 == 0 {
            assert_eq!(int(got, 2), below + 1, "RANK of {}", r.0);
            assert_eq!(int(got, 4), upto, "SUM of {}", r.0);
        }
        let lag = (i >= 2).then(|| rows[i - 2].2.clone());
        assert_eq!(got[5], lag);
        assert_eq!(int(got, 6), if r.0 + 3 <= N { r.0 + 3 } else { -1 });
        // AVG over the five rows before and after (a frame that slides: W3).
        let near = &rows[i.saturating_sub(5)..(i + 6).min(rows.len())];
        let avg = near.iter().map(|x| x.3).sum::<i64>() as f64 / near.len() as f64;
        let got_avg: f64 = in_memory[1][i][1].as_deref().unwrap().parse().unwrap();
        assert!((got_avg - avg).abs() < 0.0001, "AVG of {}: {got_avg}", r.0);
        // COUNT(*) over v - 3 .. v + 2.
        if i % 89 == 0 {
            let in_range = rows
                .iter()
                .filter(|x| x.3 >= r.3 - 3 && x.3 <= r.3 + 2)
                .count();
            assert_eq!(
                int(&in_memory[1][i], 2),
                in_range as i64,
                "COUNT of {}",
                r.0
            );
        }
    }
    // 100 groups of 200 rows, a third kept by HAVING before the windows: running sums of
    // 200 rows' v per group, all of one rank.
    assert_eq!(in_memory[2].len(), 34);
    let mut running = 0;
    for r in &in_memory[2] {
        let b = int(r, 0);
        running += rows
            .iter()
            .filter(|x| x.1 % 100 == b)
            .map(|x| x.3)
            .sum::<i64>();
        assert_eq!((int(r, 1), int(r, 2), int(r, 3)), (200, running, 1));
    }
    let order: Vec<(i64, i64)> = in_memory[3]
        .iter()
        .map(|r| (int(r, 0), int(r, 1)))
        .collect();
    let mut want: Vec<&(i64, i64, String, i64)> = rows.iter().collect();
    want.sort_by_key(|r| (-r.3, r.0));
    let want: Vec<(i64, i64)> = want.iter().zip(1..).map(|(r, n)| (r.0, n)).collect();
    assert_eq!(order, want);
    assert!(s.panics().is_empty());
}

/// INSERT ... SELECT and CREATE TABLE ... SELECT gather the selected rows within
/// tmp_table_size in memory and in tmpdir beyond it (rowbuf.rs) before inserting them: the
/// server's peak memory does not grow with the rows copied; a SELECT of the table being filled
/// sees none of the rows the statement inserts.
const PADDED_ROWS: i64 = 100_000;

/// A server whose buffer pool is smaller than table `d.t` (id, k = id's place in its thousand
/// mod 7, pad of 200 bytes; PADDED_ROWS rows), with tmp_table_size 2 MiB in the session.
fn padded_table() -> (common::Server, mysql::Conn) {
    let s = common::start_with(true, &["--innodb-buffer-pool-size=8M"]);
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, k INT, pad VARCHAR(200))")
        .unwrap();
    let pad = "y".repeat(200);
    for chunk in 0..PADDED_ROWS / 1000 {
        let rows: Vec<String> = (1..=1000)
            .map(|i| format!("({}, {}, '{pad}')", chunk * 1000 + i, i % 7))
            .collect();
        c.query_drop(format!("INSERT INTO t VALUES {}", rows.join(",")))
            .unwrap();
    }
    c.query_drop("SET SESSION tmp_table_size = 2 * 1024 * 1024")
        .unwrap();
    (s, c)
}

#[test]
fn insert_select_does_not_hold_the_rows() {
    let (s, mut c) = padded_table();
    const ROWS: i64 = PADDED_ROWS;
    // Warm: the statements' own structures, and a first copy of a few rows.
    c.query_drop("CREATE TABLE w AS SELECT * FROM t WHERE id < 100")
        .unwrap();
    let before = peak_kb(s.pid());
    c.query_drop("CREATE TABLE t2 LIKE t").unwrap();
    c.query_drop("INSERT INTO t2 SELECT * FROM t").unwrap();
    c.query_drop("CREATE TABLE t3 AS SELECT id, pad, k * 2 AS k2 FROM t WHERE id % 2 = 0")
        .unwrap();
    c.query_drop("INSERT INTO t SELECT id + 1000000, k, pad FROM t")
        .unwrap();
    let grown = peak_kb(s.pid()).saturating_sub(before);
    let sums =
        |c: &mut mysql::Conn, q: &str| -> (i64, i64, i64) { c.query_first(q).unwrap().unwrap() };
    let n = ROWS;
    assert_eq!(
        sums(&mut c, "SELECT COUNT(*), SUM(id), SUM(LENGTH(pad)) FROM t2"),
        (n, n * (n + 1) / 2, n * 200)
    );
    let even = (1..=n).filter(|i| i % 2 == 0);
    assert_eq!(
        sums(&mut c, "SELECT COUNT(*), SUM(id), SUM(k2) FROM t3"),
        (
            n / 2,
            even.clone().sum(),
            even.map(|id| 2 * (((id - 1) % 1000 + 1) % 7)).sum()
        )
    );
    // The copy of t into itself took each row once.
    assert_eq!(
        sums(&mut c, "SELECT COUNT(*), SUM(id), SUM(LENGTH(pad)) FROM t"),
        (2 * n, n * (n + 1) + 1_000_000 * n, 2 * n * 200)
    );
    // 100,000 rows of 200 bytes: held whole they take over 40 MB.
    assert!(grown < 15_000, "peak memory grew by {grown} kB");
    assert!(s.panics().is_empty());
}

#[test]
fn right_join_does_not_hold_the_rows_before_it() {
    let (s, mut c) = padded_table();
    const ROWS: i64 = PADDED_ROWS;
    c.query_drop("CREATE TABLE r (k INT PRIMARY KEY)").unwrap();
    c.query_drop("CREATE TABLE e (k INT)").unwrap();
    // k 0..6 match t's rows; 7 and 8 match none.
    c.query_drop("INSERT INTO r VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8)")
        .unwrap();
    let q =
        |c: &mut mysql::Conn, q: &str| -> (i64, i64, i64) { c.query_first(q).unwrap().unwrap() };
    // Warm: the statements' own structures.
    q(
        &mut c,
        "SELECT COUNT(*), 0, 0 FROM t l RIGHT JOIN r ON l.k = r.k WHERE l.id < 100",
    );
    let before = peak_kb(s.pid());
    // Every row of t comes before the RIGHT JOIN level; r's rows 7 and 8 come out with NULLs.
    let got = q(
        &mut c,
        "SELECT COUNT(*), SUM(l.id), SUM(LENGTH(l.pad)) + SUM(r.k) FROM t l RIGHT JOIN r \
         ON l.k = r.k",
    );
    let grown = peak_kb(s.pid()).saturating_sub(before);
    let n = ROWS;
    let ks: i64 = (1..=n).map(|id| ((id - 1) % 1000 + 1) % 7).sum();
    assert_eq!(got, (n + 2, n * (n + 1) / 2, n * 200 + ks + 7 + 8));
    // Two tables before the RIGHT JOIN, one of them empty: nothing reaches the RIGHT JOIN
    // level, whose rows all come out NULL-extended.
    assert_eq!(
        q(
            &mut c,
            "SELECT COUNT(*), COUNT(l.id), SUM(r.k) FROM t l JOIN e ON e.k = l.k RIGHT JOIN r \
             ON r.k = l.k"
        ),
        (9, 0, 36)
    );
    // 100,000 rows of 200 bytes: held whole they take over 40 MB.
    assert!(grown < 15_000, "peak memory grew by {grown} kB");
    assert!(s.panics().is_empty());
}

/// COUNT(*) and a SUM, the row of query `sql`.
fn count_sum(c: &mut mysql::Conn, sql: &str) -> (i64, Option<i64>) {
    c.query_first(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap()
}

#[test]
fn in_subquery_result_past_the_budget_is_searched_on_disk() {
    let (s, mut c) = padded_table();
    let n = PADDED_ROWS;
    // Warm: the statements' own structures.
    count_sum(
        &mut c,
        "SELECT COUNT(*), SUM(id) FROM t WHERE id IN (SELECT id FROM t WHERE id < 10)",
    );
    let before = peak_kb(s.pid());
    // 100,000 strings of over 200 bytes: held as constants they take over 30 MB.
    let half = n / 2;
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT COUNT(*), SUM(id) FROM t WHERE CONCAT(pad, id) IN \
             (SELECT CONCAT(UPPER(pad), id * 2) FROM t)"
        ),
        (half, Some(2 * half * (half + 1) / 2))
    );
    let grown = peak_kb(s.pid()).saturating_sub(before);
    assert!(grown < 12_000, "peak memory grew by {grown} kB");
    // Integers, NOT IN, and a NULL among the values (NOT IN is then never true).
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT COUNT(*), SUM(id) FROM t WHERE id IN (SELECT id + 50000 FROM t)"
        ),
        (n - 50_000, Some((50_001..=n).sum()))
    );
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT COUNT(*), SUM(id) FROM t WHERE id NOT IN (SELECT id * 2 FROM t)"
        ),
        (half, Some(half * half))
    );
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT COUNT(*), SUM(id) FROM t WHERE id NOT IN \
             (SELECT IF(id = 5, NULL, id + 1) FROM t)"
        ),
        (0, None)
    );
    // Values of another kind than the set's: a DECIMAL by its integer part, a string
    // compared with every value.
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT COUNT(*), SUM(id) FROM t WHERE id <= 10 AND id + 0.0 IN (SELECT id FROM t)"
        ),
        (10, Some(55))
    );
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT COUNT(*), SUM(id) FROM t WHERE id <= 10 AND id + 0.5 IN (SELECT id FROM t)"
        ),
        (0, None)
    );
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT COUNT(*), SUM(id) FROM t WHERE id <= 3 AND CAST(id AS CHAR) IN \
             (SELECT id + 1 FROM t)"
        ),
        (2, Some(5))
    );
    assert!(s.panics().is_empty());
}

#[test]
fn hash_join_index_past_the_budget_goes_to_disk() {
    let (s, mut c) = padded_table();
    let n = PADDED_ROWS;
    let q = |c: &mut mysql::Conn, q: &str| -> (i64, Option<i64>, Option<i64>) {
        c.query_first(q)
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .unwrap()
    };
    // 100,000 derived rows of 200 bytes joined on their id: the rows and their index both
    // pass the 2 MB budget. Paired with every derived row, each row before them took 10^10
    // comparisons in all.
    let started = std::time::Instant::now();
    assert_eq!(
        q(
            &mut c,
            "SELECT COUNT(*), SUM(d.id), SUM(LENGTH(d.pad)) FROM t \
             JOIN (SELECT id + 1 AS id, pad FROM t) d ON d.id = t.id"
        ),
        (n - 1, Some((2..=n).sum()), Some((n - 1) * 200))
    );
    // Many held rows per key (k takes 7 values), and a LEFT JOIN's rows without a match.
    c.query_drop("CREATE TABLE few (id INT PRIMARY KEY, k INT)")
        .unwrap();
    c.query_drop("INSERT INTO few VALUES (1, 3), (2, 9), (3, 0)")
        .unwrap();
    let per_k: i64 = (1..=n).filter(|id| ((id - 1) % 1000 + 1) % 7 == 3).count() as i64;
    let zeros: i64 = (1..=n).filter(|id| ((id - 1) % 1000 + 1) % 7 == 0).count() as i64;
    assert_eq!(
        q(
            &mut c,
            "SELECT COUNT(*), COUNT(d.k), SUM(f.id) FROM few f \
             LEFT JOIN (SELECT k, pad FROM t) d ON d.k = f.k"
        ),
        (
            per_k + 1 + zeros,
            Some(per_k + zeros),
            Some(per_k + 2 + 3 * zeros)
        )
    );
    let took = started.elapsed();
    assert!(took.as_secs() < 60, "{took:?}");
    assert!(s.panics().is_empty());
}

#[test]
fn intersect_and_except_do_not_hold_their_sides() {
    let (s, mut c) = padded_table();
    let n = PADDED_ROWS;
    // Warm: the statements' own structures.
    count_sum(
        &mut c,
        "SELECT COUNT(*), SUM(id) FROM (SELECT id FROM t WHERE id < 10 INTERSECT \
         SELECT id FROM t WHERE id < 5) x",
    );
    let before = peak_kb(s.pid());
    // Two sides of 100,000 rows of 200 bytes: held whole they take over 40 MB.
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT COUNT(*), SUM(id) FROM (SELECT id, pad FROM t INTERSECT \
             SELECT id + 1, pad FROM t) x"
        ),
        (n - 1, Some((2..=n).sum()))
    );
    assert_eq!(
        count_sum(
            &mut c,
            "SELECT COUNT(*), SUM(id) FROM (SELECT id, pad FROM t EXCEPT ALL \
             SELECT id + 1, pad FROM t) x"
        ),
        (1, Some(1))
    );
    let grown = peak_kb(s.pid()).saturating_sub(before);
    assert!(grown < 15_000, "peak memory grew by {grown} kB");
    assert!(s.panics().is_empty());
}
