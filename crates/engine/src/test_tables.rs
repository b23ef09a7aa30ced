//! Tables the engine's unit tests build (compiled for tests only).

use std::sync::Arc;

use crate::{ColumnDef, ColumnKind, Engine, Table, TableDef, Value};

/// Creates `name` (id BIGINT, the primary key, and v, up to 1,000 bytes) holding ids 0 to
/// 3,999 with 1,000-byte values, 100 rows a transaction: about 280 leaves in key order.
pub(crate) fn kb_rows(engine: &Engine, name: &str) -> Arc<Table> {
    let t = engine
        .create_table(TableDef::new(
            name,
            vec![
                ColumnDef::new("id", ColumnKind::BIGINT),
                ColumnDef::new("v", ColumnKind::Var { max_len: 1000 }),
            ],
            Some(vec![0]),
        ))
        .unwrap();
    for chunk in 0..40i64 {
        let mut trx = engine.begin();
        for i in chunk * 100..(chunk + 1) * 100 {
            trx.insert(&t, &[Value::Int(i), Value::Bytes(vec![1; 1000])])
                .unwrap();
        }
        trx.commit().unwrap();
    }
    t
}
