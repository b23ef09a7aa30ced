//! The JSON type and functions with MySQL 8.0's results, through a real client (the `mysql`
//! crate): canonical text in JSON columns, the functions and operators (`->`, `->>`,
//! MEMBER OF), JSON comparisons, JSON_ARRAYAGG/JSON_OBJECTAGG, and MySQL's error numbers and
//! messages for bad documents, bad paths and JSON keys. Expected values are MySQL 8.0's
//! documented results (MariaDB stores JSON as text and differs, so these are not in the
//! conformance suite).

mod common;

use common::{connect, start, text_rows};
use mysql::prelude::*;

fn one(c: &mut mysql::Conn, q: &str) -> Option<String> {
    c.query_first::<Option<String>, _>(q)
        .unwrap_or_else(|e| panic!("{q}: {e}"))
        .flatten()
}

fn err(c: &mut mysql::Conn, q: &str) -> (u16, String) {
    match c.query_drop(q) {
        Err(mysql::Error::MySqlError(e)) => (e.code, e.message),
        other => panic!("{q}: expected an error, got {other:?}"),
    }
}

/// Each statement fails with its error number and message.
fn assert_errors(c: &mut mysql::Conn, cases: &[(&str, u16, &str)]) {
    for (q, code, msg) in cases {
        assert_eq!(err(c, q), (*code, msg.to_string()), "{q}");
    }
}

#[test]
fn json_column_keeps_canonical_text_and_refuses_what_is_not_json() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, j JSON)")
        .unwrap();
    c.query_drop(
        r#"INSERT INTO t VALUES (1, '{"b": 1, "a": [1, 2.5, "x", true, null], "b": 2}'),
           (2, ' [ 3,2 , 1 ] '), (3, NULL), (4, '"text"'), (5, '-12')"#,
    )
    .unwrap();
    let rows: Vec<(i32, Option<String>)> = c.query("SELECT id, j FROM t ORDER BY id").unwrap();
    assert_eq!(
        rows,
        vec![
            (
                1,
                Some(r#"{"a": [1, 2.5, "x", true, null], "b": 2}"#.into())
            ),
            (2, Some("[3, 2, 1]".into())),
            (3, None),
            (4, Some(r#""text""#.into())),
            (5, Some("-12".into())),
        ]
    );
    // A prepared statement's string parameter is JSON text too; binary rows carry it as is.
    c.exec_drop(
        "INSERT INTO t VALUES (?, ?)",
        (6, r#"{"k":{"z":1,"y":[]}}"#),
    )
    .unwrap();
    let got: Option<String> = c.exec_first("SELECT j FROM t WHERE id = ?", (6,)).unwrap();
    assert_eq!(got.as_deref(), Some(r#"{"k": {"y": [], "z": 1}}"#));
    // Not JSON text: 3140 with the parser's message and offset, whatever the sql_mode.
    c.query_drop("SET sql_mode = ''").unwrap();
    assert_eq!(
        err(&mut c, "INSERT INTO t VALUES (7, '{\"a\" 1}')"),
        (
            3140,
            "Invalid JSON text: \"Missing a colon after a name of object member.\" at position \
             5 in value for column 't.j'."
                .into()
        )
    );
    assert_eq!(
        err(&mut c, "INSERT INTO t VALUES (7, 5)"),
        (
            3140,
            "Invalid JSON text: \"not a JSON text, may need CAST\" at position 0 in value for \
             column 't.j'."
                .into()
        )
    );
    assert_eq!(
        err(&mut c, "UPDATE t SET j = '' WHERE id = 1").0,
        3140,
        "the empty string is no JSON document"
    );
    // CAST(5 AS JSON) is JSON, so it may be stored.
    c.query_drop("INSERT INTO t VALUES (7, CAST(5 AS JSON))")
        .unwrap();
    assert_eq!(
        one(&mut c, "SELECT j FROM t WHERE id = 7").as_deref(),
        Some("5")
    );
    // Keys: JSON cannot be indexed (3152); a TEXT key needs a prefix length (1170).
    assert_eq!(
        err(&mut c, "CREATE INDEX ij ON t (j)"),
        (
            3152,
            "JSON column 'j' supports indexing only via generated columns on a specified JSON \
             path."
                .into()
        )
    );
    assert_eq!(err(&mut c, "CREATE TABLE k (j JSON PRIMARY KEY)").0, 3152);
    assert_eq!(
        err(&mut c, "CREATE TABLE k (b TEXT, KEY (b))"),
        (
            1170,
            "BLOB/TEXT column 'b' used in key specification without a key length".into()
        )
    );
    assert_eq!(err(&mut c, "CREATE TABLE k (j JSON DEFAULT '{}')").0, 1101);
    // JSON_SET in an UPDATE, read back through ->, ->> and JSON comparisons.
    c.query_drop(r#"UPDATE t SET j = JSON_SET(j, '$.b', 3, '$.c', 'new') WHERE id = 1"#)
        .unwrap();
    assert_eq!(
        one(&mut c, "SELECT j FROM t WHERE id = 1").as_deref(),
        Some(r#"{"a": [1, 2.5, "x", true, null], "b": 3, "c": "new"}"#)
    );
    let ids = |c: &mut mysql::Conn, w: &str| -> Vec<i32> {
        c.query(format!("SELECT id FROM t WHERE {w} ORDER BY id"))
            .unwrap()
    };
    assert_eq!(ids(&mut c, "j->'$.c' = 'new'"), vec![1]);
    assert_eq!(ids(&mut c, "j->>'$.c' = 'new'"), vec![1]);
    assert_eq!(ids(&mut c, "j->'$.b' > 2"), vec![1]);
    assert_eq!(ids(&mut c, "j->'$[0]' = 3"), vec![2]);
    assert_eq!(ids(&mut c, "j = CAST('[3, 2, 1]' AS JSON)"), vec![2]);
    assert_eq!(ids(&mut c, "j = 'text'"), vec![4]);
    assert_eq!(ids(&mut c, "JSON_CONTAINS(j, '\"x\"', '$.a')"), vec![1]);
    assert_eq!(ids(&mut c, "2 MEMBER OF (j)"), vec![2]);
    assert_eq!(
        one(
            &mut c,
            "SELECT JSON_ARRAYAGG(id) FROM t WHERE JSON_TYPE(j) = 'INTEGER'"
        )
        .as_deref(),
        Some("[5, 7]")
    );
    assert_eq!(
        one(
            &mut c,
            "SELECT JSON_OBJECTAGG(id, JSON_TYPE(j)) FROM t WHERE id < 5"
        )
        .as_deref(),
        Some(r#"{"1": "OBJECT", "2": "ARRAY", "3": null, "4": "STRING"}"#)
    );
    assert_eq!(
        one(
            &mut c,
            "SELECT JSON_ARRAYAGG(j) FROM t WHERE id IN (2, 3, 4)"
        )
        .as_deref(),
        Some(r#"[[3, 2, 1], null, "text"]"#)
    );
}

#[test]
fn json_functions_give_mysql_results() {
    let s = start();
    let mut c = connect(&s);
    let cases: &[(&str, Option<&str>)] = &[
        // Construction: keys sorted by length then bytes; booleans from predicates; a DECIMAL
        // keeps its scale (but not once nested: JSON values pass between functions as text).
        (
            r#"JSON_OBJECT('bb', 1, 'a', JSON_ARRAY(1, 'x', TRUE, NULL, 1 = 1))"#,
            Some(r#"{"a": [1, "x", true, null, true], "bb": 1}"#),
        ),
        ("JSON_ARRAY(2.50, -0.5e0)", Some("[2.50, -0.5]")),
        ("JSON_ARRAY()", Some("[]")),
        ("JSON_OBJECT()", Some("{}")),
        (r#"JSON_QUOTE('a"b\\c')"#, Some(r#""a\"b\\c""#)),
        (r#"JSON_UNQUOTE('"a\\tb"')"#, Some("a\tb")),
        ("JSON_UNQUOTE('plain')", Some("plain")),
        (
            "CAST('[1, 1e2, 3.0, 18446744073709551615]' AS JSON)",
            Some("[1, 100.0, 3.0, 18446744073709551615]"),
        ),
        ("CAST(2.5e0 AS JSON)", Some("2.5")),
        // Paths.
        (
            r#"JSON_EXTRACT('{"a": {"b": [10, 20, 30]}}', '$.a.b[1]')"#,
            Some("20"),
        ),
        (
            r#"JSON_EXTRACT('{"a": {"b": [10, 20, 30]}}', '$.a.b[last]')"#,
            Some("30"),
        ),
        (
            r#"JSON_EXTRACT('{"a": {"b": [10, 20, 30]}}', '$.a.b[last-1]')"#,
            Some("20"),
        ),
        (
            r#"JSON_EXTRACT('{"a": {"b": [10, 20, 30]}}', '$.a.b[0 to 1]')"#,
            Some("[10, 20]"),
        ),
        (
            r#"JSON_EXTRACT('{"a": {"b": [10, 20, 30]}}', '$.a.b[*]')"#,
            Some("[10, 20, 30]"),
        ),
        (
            r#"JSON_EXTRACT('{"a": {"b": 1}, "c": {"b": 2}}', '$**.b')"#,
            Some("[1, 2]"),
        ),
        (
            r#"JSON_EXTRACT('{"a": {"b": 1}, "c": {"b": 2}}', '$.*.b')"#,
            Some("[1, 2]"),
        ),
        (
            r#"JSON_EXTRACT('{"a": 1, "b": 2}', '$.a', '$.b')"#,
            Some("[1, 2]"),
        ),
        (r#"JSON_EXTRACT('{"a": 1}', '$.b')"#, None),
        (r#"JSON_EXTRACT('{"a b": 1}', '$."a b"')"#, Some("1")),
        ("JSON_EXTRACT('5', '$[0]')", Some("5")),
        ("JSON_EXTRACT(NULL, '$.a')", None),
        // Inspection.
        (r#"JSON_TYPE('{"a": 1}')"#, Some("OBJECT")),
        ("JSON_TYPE('1.5')", Some("DOUBLE")),
        (
            "JSON_TYPE('18446744073709551615')",
            Some("UNSIGNED INTEGER"),
        ),
        ("JSON_TYPE(JSON_EXTRACT('[true]', '$[0]'))", Some("BOOLEAN")),
        (
            r#"JSON_KEYS('{"bb": 1, "a": {"c": 2}}')"#,
            Some(r#"["a", "bb"]"#),
        ),
        (
            r#"JSON_KEYS('{"bb": 1, "a": {"c": 2}}', '$.a')"#,
            Some(r#"["c"]"#),
        ),
        ("JSON_KEYS('[1]')", None),
        (r#"JSON_LENGTH('{"a": [1, 2, 3]}', '$.a')"#, Some("3")),
        ("JSON_LENGTH('7')", Some("1")),
        ("JSON_DEPTH('[]')", Some("1")),
        (r#"JSON_DEPTH('[1, {"a": [2]}]')"#, Some("4")),
        ("JSON_VALID('{\"a\": 1}')", Some("1")),
        ("JSON_VALID('{a: 1}')", Some("0")),
        ("JSON_VALID(5)", Some("0")),
        ("JSON_VALID(NULL)", None),
        (
            r#"JSON_CONTAINS('{"a": 1, "b": [1, 2]}', '{"b": [2]}')"#,
            Some("1"),
        ),
        (r#"JSON_CONTAINS('[1, [2, 3]]', '3')"#, Some("1")),
        (r#"JSON_CONTAINS('{"a": 1}', '1')"#, Some("0")),
        (r#"JSON_CONTAINS('{"a": 1}', '1', '$.a')"#, Some("1")),
        (
            r#"JSON_CONTAINS_PATH('{"a": 1}', 'one', '$.a', '$.b')"#,
            Some("1"),
        ),
        (
            r#"JSON_CONTAINS_PATH('{"a": 1}', 'ALL', '$.a', '$.b')"#,
            Some("0"),
        ),
        ("JSON_OVERLAPS('[1, 3, 5]', '[2, 5]')", Some("1")),
        (r#"JSON_OVERLAPS('{"a": 1}', '{"a": 2}')"#, Some("0")),
        ("3 MEMBER OF ('[1, 3.0]')", Some("1")),
        ("'3' MEMBER OF ('[1, 3]')", Some("0")),
        (r#"'x' MEMBER OF ('["x"]')"#, Some("1")),
        // Changes.
        (
            r#"JSON_SET('{"a": 1}', '$.a', 2, '$.b', 3)"#,
            Some(r#"{"a": 2, "b": 3}"#),
        ),
        (
            r#"JSON_INSERT('{"a": 1}', '$.a', 2, '$.b', 3)"#,
            Some(r#"{"a": 1, "b": 3}"#),
        ),
        (
            r#"JSON_REPLACE('{"a": 1}', '$.a', 2, '$.b', 3)"#,
            Some(r#"{"a": 2}"#),
        ),
        ("JSON_SET('[1, 2]', '$[5]', 9)", Some("[1, 2, 9]")),
        ("JSON_SET('1', '$[1]', 2)", Some("[1, 2]")),
        ("JSON_SET('1', '$[0]', 2)", Some("2")),
        (r#"JSON_SET('{}', '$.a.b', 1)"#, Some("{}")),
        (
            r#"JSON_SET('{}', '$.a', JSON_OBJECT('b', NULL))"#,
            Some(r#"{"a": {"b": null}}"#),
        ),
        (r#"JSON_SET('{}', '$.a', '[1]')"#, Some(r#"{"a": "[1]"}"#)),
        (
            r#"JSON_REMOVE('{"a": [1, 2, 3]}', '$.a[1]', '$.a[0]')"#,
            Some(r#"{"a": [3]}"#),
        ),
        (r#"JSON_REMOVE('{"a": 1}', '$.b')"#, Some(r#"{"a": 1}"#)),
        (
            r#"JSON_ARRAY_APPEND('{"a": [1], "b": 2}', '$.a', 3, '$.b', 4)"#,
            Some(r#"{"a": [1, 3], "b": [2, 4]}"#),
        ),
        (
            "JSON_ARRAY_INSERT('[1, 2]', '$[1]', 'x', '$[9]', 'y')",
            Some(r#"[1, "x", 2, "y"]"#),
        ),
        (
            r#"JSON_MERGE_PATCH('{"a": 1, "b": 2}', '{"b": null, "c": {"d": 3}}')"#,
            Some(r#"{"a": 1, "c": {"d": 3}}"#),
        ),
        ("JSON_MERGE_PATCH('[1]', '[2]')", Some("[2]")),
        (
            r#"JSON_MERGE_PRESERVE('{"a": 1}', '{"a": 2}', '3')"#,
            Some(r#"[{"a": [1, 2]}, 3]"#),
        ),
        ("JSON_MERGE_PRESERVE('[1]', '[2]')", Some("[1, 2]")),
        (
            r#"JSON_PRETTY('{"a": [1, {"b": 2}], "c": {}}')"#,
            Some("{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ],\n  \"c\": {}\n}"),
        ),
        (
            r#"JSON_SEARCH('{"a": ["abc", "x"], "b": "abd"}', 'all', 'ab%')"#,
            Some(r#"["$.a[0]", "$.b"]"#),
        ),
        (
            r#"JSON_SEARCH('{"a": ["abc", "x"], "b": "abd"}', 'one', 'x')"#,
            Some(r#""$.a[1]""#),
        ),
        (r#"JSON_SEARCH('{"a": "b"}', 'one', 'zz')"#, None),
    ];
    let mut wrong = Vec::new();
    for (expr, want) in cases {
        let got = one(&mut c, &format!("SELECT {expr}"));
        if got.as_deref() != *want {
            wrong.push(format!("{expr}: got {got:?}, want {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // JSON_MERGE is JSON_MERGE_PRESERVE with a deprecation warning.
    assert_eq!(
        one(&mut c, "SELECT JSON_MERGE('[1]', '2')").as_deref(),
        Some("[1, 2]")
    );
    let w: Vec<(String, u32, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].1, 1287);
}

#[test]
fn json_errors_have_mysql_numbers_and_messages() {
    let s = start();
    let mut c = connect(&s);
    let cases: &[(&str, u16, &str)] = &[
        (
            "SELECT JSON_EXTRACT('{\"a\": 1}', 'a')",
            3143,
            "Invalid JSON path expression. The error is around character position 1.",
        ),
        (
            "SELECT JSON_EXTRACT('{}', '$.:x')",
            3143,
            "Invalid JSON path expression. The error is around character position 4.",
        ),
        (
            "SELECT JSON_EXTRACT('{x', '$')",
            3141,
            "Invalid JSON text in argument 1 to function json_extract: \"Missing a name for \
             object member.\" at position 1.",
        ),
        (
            "SELECT JSON_TYPE('abc')",
            3141,
            "Invalid JSON text in argument 1 to function json_type: \"Invalid value.\" at \
             position 0.",
        ),
        (
            "SELECT JSON_LENGTH(5)",
            3146,
            "Invalid data type for JSON data in argument 1 to function json_length; a JSON \
             string or JSON type is required.",
        ),
        (
            "SELECT JSON_SET('[]', '$[*]', 1)",
            3149,
            "In this situation, path expressions may not contain the * and ** tokens or an \
             array range.",
        ),
        (
            "SELECT JSON_REMOVE('[]', '$')",
            3153,
            "The path expression '$' is not allowed in this context.",
        ),
        (
            "SELECT JSON_CONTAINS_PATH('{}', 'some', '$')",
            3154,
            "The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'.",
        ),
        (
            "SELECT JSON_OBJECT(NULL, 1)",
            3158,
            "JSON documents may not contain NULL member names.",
        ),
        (
            "SELECT JSON_OBJECT('a')",
            1582,
            "Incorrect parameter count in the call to native function 'json_object'",
        ),
        (
            "SELECT JSON_SET('{}', '$.a')",
            1582,
            "Incorrect parameter count in the call to native function 'json_set'",
        ),
        (
            "SELECT JSON_ARRAY_INSERT('[]', '$.a', 1)",
            3165,
            "A path expression is not a path to a cell in an array.",
        ),
    ];
    assert_errors(&mut c, cases);
    let deep = format!(
        "SELECT JSON_DEPTH('{}{}')",
        "[".repeat(101),
        "]".repeat(101)
    );
    assert_eq!(err(&mut c, &deep).0, 3157);
    // The server is still there.
    assert_eq!(one(&mut c, "SELECT JSON_ARRAY(1)").as_deref(), Some("[1]"));
}

/// JSON_VALUE (MySQL 8.0.21): the scalar at a path as text, NULL when the path finds nothing
/// or an object or array (MySQL's NULL ON EMPTY / NULL ON ERROR defaults), RETURNING casts it;
/// a wildcard path is refused (3149), and a column's document is read per row.
#[test]
fn json_value_extracts_scalars() {
    let s = start();
    let mut c = connect(&s);
    let doc = r#"'{"a": {"b": [1, 2.50, "x"]}, "s": "it\\"s", "t": true, "n": null, "o": {}}'"#;
    let cases = [
        ("'$.a.b[0]'", Some("1")),
        ("'$.a.b[1]'", Some("2.5")),
        ("'$.a.b[2]'", Some("x")),
        ("'$.s'", Some("it\"s")),
        ("'$.t'", Some("true")),
        ("'$.n'", None),
        // Without RETURNING an object or an array is its JSON text; several values answer ON
        // ERROR (NULL).
        ("'$.o'", Some("{}")),
        ("'$.a.b'", Some(r#"[1, 2.5, "x"]"#)),
        ("'$.a.b[*]'", None),
        ("'$.missing'", None),
        ("NULL", None),
    ];
    for (path, want) in cases {
        let q = format!("SELECT JSON_VALUE({doc}, {path})");
        assert_eq!(one(&mut c, &q).as_deref(), want, "{q}");
    }
    assert_eq!(one(&mut c, "SELECT JSON_VALUE(NULL, '$.a')"), None);
    let n: Option<i64> = c
        .query_first(format!(
            "SELECT JSON_VALUE({doc}, '$.a.b[0]' RETURNING SIGNED) + 1"
        ))
        .unwrap()
        .flatten();
    assert_eq!(n, Some(2));
    let d: Option<String> = c
        .query_first(format!(
            "SELECT JSON_VALUE({doc}, '$.a.b[1]' RETURNING DECIMAL(5, 1))"
        ))
        .unwrap()
        .flatten();
    assert_eq!(d.as_deref(), Some("2.5"));
    // ON EMPTY and ON ERROR (MySQL 8.0.21): NULL unless given, a DEFAULT in the RETURNING
    // type, or the error; a value the type does not take answers ON ERROR with CAST's
    // warning.
    let answers = [
        ("'$.missing' DEFAULT 7 ON EMPTY", Some("7")),
        (
            "'$.missing' RETURNING SIGNED DEFAULT '8' ON EMPTY",
            Some("8"),
        ),
        ("'$.s' RETURNING UNSIGNED", None),
        ("'$.s' RETURNING UNSIGNED DEFAULT 5 ON ERROR", Some("5")),
        ("'$.a.b[*]' DEFAULT 'many' ON ERROR", Some("many")),
        ("'$.o' RETURNING SIGNED DEFAULT -1 ON ERROR", Some("-1")),
        ("'$.t' RETURNING SIGNED", Some("1")),
        ("'$.a.b[2]' NULL ON EMPTY NULL ON ERROR", Some("x")),
        ("'$.a.b' RETURNING JSON", Some(r#"[1, 2.5, "x"]"#)),
    ];
    for (args, want) in answers {
        let q = format!("SELECT JSON_VALUE({doc}, {args})");
        assert_eq!(one(&mut c, &q).as_deref(), want, "{q}");
    }
    c.query_drop(format!(
        "SELECT JSON_VALUE({doc}, '$.s' RETURNING SIGNED NULL ON ERROR)"
    ))
    .unwrap();
    let warnings: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        warnings,
        [(
            "Warning".to_string(),
            1292,
            "Truncated incorrect INTEGER value: 'it\"s'".to_string()
        )]
    );
    assert_errors(
        &mut c,
        &[
            (
                &format!("SELECT JSON_VALUE({doc}, '$.missing' ERROR ON EMPTY)"),
                3966,
                "No value was found by 'json_value' on the specified path.",
            ),
            (
                &format!("SELECT JSON_VALUE({doc}, '$.a.b[*]' ERROR ON ERROR)"),
                3967,
                "More than one value was found by 'json_value' on the specified path.",
            ),
            (
                &format!("SELECT JSON_VALUE({doc}, '$.s' RETURNING SIGNED ERROR ON ERROR)"),
                1690,
                "BIGINT value is out of range in 'json_value'",
            ),
        ],
    );
    // ON EMPTY comes before ON ERROR (a syntax error otherwise, as in MySQL).
    assert_eq!(
        err(
            &mut c,
            &format!("SELECT JSON_VALUE({doc}, '$.s' NULL ON ERROR NULL ON EMPTY)")
        )
        .0,
        1064
    );
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, j JSON)")
        .unwrap();
    c.query_drop(r#"INSERT INTO t VALUES (1, '{"k": 10}'), (2, '{"k": "v"}'), (3, '{}')"#)
        .unwrap();
    let rows: Vec<(i64, Option<String>)> = c
        .query("SELECT id, JSON_VALUE(j, '$.k') FROM t ORDER BY id")
        .unwrap();
    assert_eq!(
        rows,
        vec![(1, Some("10".into())), (2, Some("v".into())), (3, None)]
    );
    assert!(s.panics().is_empty());
}

#[test]
fn json_table_makes_rows_as_mysql_does() {
    let s = start();
    let mut c = connect(&s);
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    // Nested paths: a parent's rows with each match of its NESTED PATH, one NULL row when it
    // has none; sibling nested paths one after the other; ORDINALITY per parent.
    let doc = r#"'[{"a":1,"b":[11,111]},{"a":2,"b":[22]},{"a":3}]'"#;
    assert_eq!(
        text_rows(
            &mut c,
            &format!(
                "SELECT * FROM JSON_TABLE({doc}, '$[*]' COLUMNS(id FOR ORDINALITY, \
                 a INT PATH '$.a', NESTED PATH '$.b[*]' COLUMNS (n FOR ORDINALITY, \
                 b1 INT PATH '$'), NESTED PATH '$.b[*]' COLUMNS (b2 INT PATH '$'))) AS jt"
            )
        ),
        [
            "1,1,1,11,NULL",
            "1,1,2,111,NULL",
            "1,1,NULL,NULL,11",
            "1,1,NULL,NULL,111",
            "2,2,1,22,NULL",
            "2,2,NULL,NULL,22",
            "3,3,NULL,NULL,NULL",
        ]
    );
    // LATERAL: the document comes from the table before; a NULL document makes no row, and
    // LEFT JOIN keeps the row with NULLs.
    c.query_drop("CREATE TABLE o (id INT PRIMARY KEY, doc JSON)")
        .unwrap();
    c.query_drop(
        r#"INSERT INTO o VALUES (1, '{"items":[{"sku":"a","qty":2},{"sku":"b","qty":1}]}'),
           (2, '{"items":[]}'), (3, NULL), (4, '{"items":[{"sku":"c","qty":"5"}]}')"#,
    )
    .unwrap();
    let items = "JSON_TABLE(o.doc, '$.items[*]' COLUMNS(sku VARCHAR(10) PATH '$.sku', \
                 qty INT PATH '$.qty')) j";
    assert_eq!(
        text_rows(
            &mut c,
            &format!("SELECT o.id, j.* FROM o, {items} ORDER BY o.id, j.sku")
        ),
        ["1,a,2", "1,b,1", "4,c,5"]
    );
    assert_eq!(
        text_rows(
            &mut c,
            &format!("SELECT o.id, j.sku FROM o LEFT JOIN {items} ON TRUE ORDER BY o.id, j.sku")
        ),
        ["1,a", "1,b", "2,NULL", "3,NULL", "4,c"]
    );
    assert_eq!(
        text_rows(
            &mut c,
            &format!("SELECT o.id, SUM(j.qty) FROM o JOIN {items} GROUP BY o.id ORDER BY o.id")
        ),
        ["1,3", "4,5"]
    );
    // In a correlated subquery, over the outer row's document.
    assert_eq!(
        text_rows(
            &mut c,
            "SELECT id, (SELECT COUNT(*) FROM JSON_TABLE(o.doc, '$.items[*]' \
             COLUMNS(q INT PATH '$.qty')) k) FROM o ORDER BY id"
        ),
        ["1,2", "2,0", "3,0", "4,1"]
    );
    // Values (MySQL 8.0.20 on): what does not convert is NULL ON ERROR by default, without a
    // warning; a JSON null is SQL NULL; several matches make an array in a JSON column only.
    let vals =
        r#"'[{"x":"abc"},{"x":[1]},{"x":"12"},{},{"x":null},{"x":true},{"x":3.7},{"x":[5,6]}]'"#;
    assert_eq!(
        text_rows(
            &mut c,
            &format!(
                "SELECT * FROM JSON_TABLE({vals}, '$[*]' COLUMNS(x INT PATH '$.x', \
                 s VARCHAR(3) PATH '$.x', j JSON PATH '$.x[*]', e INT EXISTS PATH '$.x', \
                 d DECIMAL(5,1) PATH '$.x' DEFAULT '9' ON EMPTY DEFAULT '-1' ON ERROR)) t"
            )
        ),
        [
            "NULL,abc,NULL,1,-1.0",
            "NULL,NULL,1,1,-1.0",
            "12,12,NULL,1,12.0",
            "NULL,NULL,NULL,0,9.0",
            "NULL,NULL,NULL,1,NULL",
            "1,NULL,NULL,1,1.0",
            "4,3.7,NULL,1,3.7",
            "NULL,NULL,[5, 6],1,-1.0",
        ]
    );
    let warnings: Vec<mysql::Row> = c.query("SHOW WARNINGS").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    // The errors MySQL gives.
    let cases: &[(&str, u16, &str)] = &[
        (
            r#"SELECT * FROM JSON_TABLE('{"a":1}', '$' COLUMNS(b INT PATH '$.b' ERROR ON EMPTY)) t"#,
            3665,
            "Missing value for JSON_TABLE column 'b'",
        ),
        (
            r#"SELECT * FROM JSON_TABLE('{"a":[1]}', '$' COLUMNS(a INT PATH '$.a' ERROR ON ERROR)) t"#,
            3666,
            "Can't store an array or an object in the scalar JSON_TABLE column 'a'",
        ),
        (
            r#"SELECT * FROM JSON_TABLE('{"a":"x"}', '$' COLUMNS(a INT PATH '$.a' ERROR ON ERROR)) t"#,
            3669,
            "Value is out of range for JSON_TABLE's column 'a'",
        ),
        (
            "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$'))",
            3667,
            "Every table function must have an alias",
        ),
        (
            "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$', A INT PATH '$')) t",
            1060,
            "Duplicate column name 'A'",
        ),
        (
            "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$' DEFAULT 'x' ON EMPTY)) t",
            1067,
            "Invalid default value for 'a'",
        ),
        (
            "SELECT * FROM JSON_TABLE('[1]', '$[' COLUMNS(a INT PATH '$')) t",
            3143,
            "Invalid JSON path expression. The error is around character position 3.",
        ),
        (
            "SELECT * FROM JSON_TABLE('[1', '$[*]' COLUMNS(a INT PATH '$')) t",
            3141,
            "Invalid JSON text in argument 1 to function json_table: \"Missing a comma or ']' \
             after an array element.\" at position 2.",
        ),
        (
            "SELECT * FROM JSON_TABLE(5, '$[*]' COLUMNS(a INT PATH '$')) t",
            3146,
            "Invalid data type for JSON data in argument 1 to function json_table; a JSON \
             string or JSON type is required.",
        ),
        (
            "SELECT * FROM o RIGHT JOIN JSON_TABLE(o.doc, '$[*]' COLUMNS(a INT PATH '$')) k ON TRUE",
            3668,
            "INNER or LEFT JOIN must be used for LATERAL references made by 'k'",
        ),
        (
            "SELECT * FROM o, JSON_TABLE((SELECT doc FROM o LIMIT 1), '$' COLUMNS(a INT PATH '$')) k",
            1210,
            "Incorrect arguments to JSON_TABLE",
        ),
    ];
    assert_errors(&mut c, cases);
    // At most 15 NESTED PATHs (MySQL's 16 row paths with the top one).
    let deep = (0..15).fold("x INT PATH '$[0]'".to_string(), |cols, _| {
        format!("NESTED PATH '$' COLUMNS ({cols})")
    });
    let deep = format!("SELECT * FROM JSON_TABLE('[1]', '$' COLUMNS ({deep})) AS deep");
    assert_eq!(
        err(&mut c, &deep),
        (
            3670,
            "More than supported 16 NESTED PATHs were found in JSON_TABLE 'deep'".into()
        )
    );
    let fourteen = deep
        .replacen("NESTED PATH '$' COLUMNS (", "", 1)
        .replacen(')', "", 1);
    assert_eq!(text_rows(&mut c, &fourteen), ["1"]);
    // A prepared document: compiled once, each execution its own rows.
    let stmt = c
        .prep("SELECT COUNT(*), SUM(x) FROM JSON_TABLE(?, '$[*]' COLUMNS(x INT PATH '$')) t")
        .unwrap();
    let a: (i64, Option<i64>) = c.exec_first(&stmt, ("[1,2,3]",)).unwrap().unwrap();
    let b: (i64, Option<i64>) = c.exec_first(&stmt, ("[10,20]",)).unwrap().unwrap();
    assert_eq!((a, b), ((3, Some(6)), (2, Some(30))));
    // A large document: 100,000 rows, joined back to itself by hash.
    let big = format!(
        "[{}]",
        (0..100_000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    c.exec_drop("SET @big = ?", (big,)).unwrap();
    assert_eq!(
        text_rows(
            &mut c,
            "SELECT COUNT(*), SUM(a.x) FROM JSON_TABLE(@big, '$[*]' COLUMNS(x INT PATH '$')) a \
             JOIN JSON_TABLE(@big, '$[*]' COLUMNS(y INT PATH '$')) b ON a.x = b.y"
        ),
        ["100000,4999950000"]
    );
}
