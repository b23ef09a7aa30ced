//! Equality joins with held rows (a derived table, a CTE, a view's result: select.rs `Held`),
//! and with a base table no index of which serves the equality. Held rows have no index, so
//! each row before them was paired with every one of them, and such a table was read whole
//! for each row before it; a join on `d.g = t.g` of 200,000 rows with 5,000 derived rows made
//! a billion pairs. The held rows are now indexed once by the values of their join columns
//! (as MySQL gives a derived table an automatic key, or joins by hash), and each row before
//! them is paired only with the rows of its key.
//!
//! INVARIANTS
//! - H1: the index only narrows the rows paired: every candidate still goes through the whole
//!   ON condition and WHERE (select.rs S1). Its keys are exact for `=`: two values `=` finds
//!   equal have the same key. Only integers (as an i128: `=` compares mixed signed and unsigned
//!   integers exactly) and strings (the sort key, under the comparison's collation, of the
//!   bytes that collation compares) make keys.
//! - H2: a key part whose held values are of more than one kind (or of another kind), leaves
//!   the level unindexed; a probe value of another kind than the held values pairs that row
//!   with every held row, as before. A NULL on either side matches nothing (`=` is not true).
//! - H3: the index is built at most once per execution of the join (`JoinPlan::hashes`); in
//!   memory while its keys take no more than the temporary-table budget, in tmpdir beyond it
//!   (keyset.rs: the keys sorted, each with its row's number; a probe reads the blocks of its
//!   key). Either way a probe gets the rows of its key in their order.
//! - H4: a base table joined (not first, not by a locking read) on equalities none of whose
//!   columns leads one of its indexes is read once, through a row buffer (tmpdir beyond
//!   tmp_table_size), and then joined as held rows are (`Session::table_held`); with an index
//!   that such a column leads, it is looked up for each row before it instead.
//!
//! No latches: the index belongs to one statement's execution.

use std::borrow::Cow;
use std::collections::HashMap;

use innoxide_engine::Collation;
use innoxide_sql::ast::BinaryOp;
use innoxide_sql::error::SqlError;
use innoxide_sql::types::{self, Datum, Warnings};

use super::expr::{CExpr, Env};
use super::finish::TmpArea;
use super::keyset::{DiskKeys, KeySetBuilder};
use super::select::Held;

/// The kind of a key part's values (H1).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Str,
}

/// The held rows of one join level by their join columns' values.
pub(crate) struct RowsHash {
    /// Per key part: the held row's column, the expression over the rows before it that it
    /// must equal, and the comparison's collation.
    keys: Vec<(usize, CExpr, Collation)>,
    /// The kind of each key part's held values (None: no held value is non-NULL).
    kinds: Vec<Option<Kind>>,
    index: Index,
}

/// The held rows' numbers by key (H3).
enum Index {
    Memory(HashMap<Vec<u8>, Vec<u32>>),
    /// Each key with the number of one of its rows, as 4 bytes LE.
    Disk(DiskKeys),
}

/// Appends the key of `v` (H1), giving its kind; None for a value that makes no key.
fn key_part(v: &Datum, coll: Collation, out: &mut Vec<u8>) -> Option<Kind> {
    match v {
        // Big-endian with the sign flipped: keys on disk sort as the numbers do, so probes
        // in the order of the values read neighbouring blocks (keyset.rs).
        Datum::Int(n) => out.extend((i128::from(*n) ^ i128::MIN).to_be_bytes()),
        Datum::UInt(n) => out.extend((i128::from(*n) ^ i128::MIN).to_be_bytes()),
        Datum::Bytes(b) => {
            let k = coll.sort_key(&types::comparable(coll, b));
            out.extend((k.len() as u32).to_le_bytes());
            out.extend(k);
            return Some(Kind::Str);
        }
        _ => return None,
    }
    Some(Kind::Int)
}

/// True if `e` is a column among the first `off` of the row, a constant or a parameter: a
/// value fixed for a row before the held ones.
fn fixed_before(e: &CExpr, off: usize) -> bool {
    match e {
        CExpr::Col(i) => *i < off,
        CExpr::Const(_) | CExpr::Param(_) => true,
        _ => false,
    }
}

/// Adds to `out` the equalities among the AND-ed conjuncts of `c` between a column of the
/// held rows (row positions `off..off + width`) and a value fixed by the rows before them.
pub(crate) fn equalities(
    c: &CExpr,
    off: usize,
    width: usize,
    out: &mut Vec<(usize, CExpr, Collation)>,
) {
    match c {
        CExpr::And(a, b) => {
            equalities(a, off, width, out);
            equalities(b, off, width, out);
        }
        CExpr::Cmp(BinaryOp::Eq, a, b, coll) => {
            for (x, y) in [(a, b), (b, a)] {
                if let CExpr::Col(p) = **x {
                    if (off..off + width).contains(&p) && fixed_before(y, off) {
                        out.push((p - off, (**y).clone(), *coll));
                        return;
                    }
                }
            }
        }
        _ => {}
    }
}

/// Indexes `data` by the key parts `keys` (H2, H3): None when there are none, or the index
/// cannot serve.
pub(crate) fn build(
    data: &Held,
    keys: Vec<(usize, CExpr, Collation)>,
    tmp: &TmpArea,
) -> Result<Option<RowsHash>, SqlError> {
    if keys.is_empty() || u32::try_from(data.len()).is_err() {
        return Ok(None);
    }
    let mut kinds: Vec<Option<Kind>> = vec![None; keys.len()];
    let mut map: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
    let mut disk: Option<KeySetBuilder> = None;
    let mut bytes = 0u64;
    'rows: for at in 0..data.len() {
        let r = data.get(at)?;
        let mut key = Vec::new();
        for (part, (col, _, coll)) in keys.iter().enumerate() {
            let v = r.get(*col).unwrap_or(&Datum::Null);
            if v.is_null() {
                continue 'rows;
            }
            let Some(kind) = key_part(v, *coll, &mut key) else {
                return Ok(None);
            };
            if *kinds[part].get_or_insert(kind) != kind {
                return Ok(None);
            }
        }
        let row = (at as u32).to_le_bytes().to_vec();
        if let Some(d) = disk.as_mut() {
            d.push(key, row)?;
            continue;
        }
        bytes += key.len() as u64 + 48;
        if bytes > tmp.budget {
            // Past the budget the index goes to tmpdir, the rows so far first (H3).
            let mut d = KeySetBuilder::new(&tmp.sort, false);
            for (k, rows) in map.drain() {
                for r in rows {
                    d.push(k.clone(), r.to_le_bytes().to_vec())?;
                }
            }
            d.push(key, row)?;
            disk = Some(d);
            continue;
        }
        map.entry(key).or_default().push(at as u32);
    }
    let index = match disk {
        Some(d) => Index::Disk(d.finish()?),
        None => Index::Memory(map),
    };
    Ok(Some(RowsHash { keys, kinds, index }))
}

impl RowsHash {
    /// The held rows that may pair with `left` (the row of the tables before them), in their
    /// order; None when every held row must be tried (H2).
    pub(crate) fn probe(
        &self,
        left: &[Datum],
        params: &[Datum],
        mode: types::SqlMode,
    ) -> Result<Option<Cow<'_, [u32]>>, SqlError> {
        let env = Env::new(left, params, mode);
        let mut key = Vec::new();
        for ((_, e, coll), kind) in self.keys.iter().zip(&self.kinds) {
            let Ok(v) = e.eval_cow(&env, &mut Warnings::default()) else {
                return Ok(None);
            };
            if v.is_null() {
                return Ok(Some(Cow::Borrowed(&[])));
            }
            let Some(k) = key_part(&v, *coll, &mut key) else {
                return Ok(None);
            };
            if kind.is_some_and(|held| held != k) {
                return Ok(None);
            }
        }
        Ok(Some(match &self.index {
            Index::Memory(map) => Cow::Borrowed(map.get(&key).map_or(&[], Vec::as_slice)),
            Index::Disk(d) => {
                let mut rows = Vec::new();
                let mut whole = true;
                d.find(&key, |v| match <[u8; 4]>::try_from(v) {
                    Ok(b) => {
                        rows.push(u32::from_le_bytes(b));
                        true
                    }
                    Err(_) => {
                        whole = false;
                        false
                    }
                })?;
                if !whole {
                    return Err(d.damaged());
                }
                Cow::Owned(rows)
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(rows: &[(Datum, Datum)]) -> Held {
        Held::Vec(
            rows.iter()
                .map(|(a, b)| vec![a.clone(), b.clone()])
                .collect(),
        )
    }

    fn tmp(budget: u64) -> TmpArea {
        TmpArea {
            budget,
            sort: super::super::sort::SortArea {
                cap: 1 << 16,
                tmpdir: std::env::temp_dir(),
                passes: Default::default(),
            },
        }
    }

    fn rows(h: &RowsHash, left: &[Datum]) -> Option<Vec<u32>> {
        h.probe(left, &[], types::SqlMode::default())
            .unwrap()
            .map(|r| r.to_vec())
    }

    #[test]
    fn probes_find_the_rows_of_equal_values() {
        let data = held(&[
            (Datum::Int(1), Datum::Bytes(b"a".to_vec())),
            (Datum::UInt(2), Datum::Bytes(b"B".to_vec())),
            (Datum::Int(1), Datum::Null),
            (Datum::Null, Datum::Bytes(b"b".to_vec())),
        ]);
        let ci = Collation::Utf8mb4GeneralCi;
        // In memory, and past a budget of 60 bytes: the index on disk, with the same answers.
        for budget in [1 << 20, 60] {
            let t = tmp(budget);
            let by_int = build(&data, vec![(0, CExpr::Col(0), ci)], &t)
                .unwrap()
                .unwrap();
            assert_eq!(matches!(by_int.index, Index::Disk(_)), budget == 60);
            assert_eq!(rows(&by_int, &[Datum::UInt(1)]), Some(vec![0, 2]));
            assert_eq!(rows(&by_int, &[Datum::Int(2)]), Some(vec![1]));
            assert_eq!(rows(&by_int, &[Datum::Int(3)]), Some(vec![]));
            assert_eq!(rows(&by_int, &[Datum::Null]), Some(vec![]));
            // A string probe of integers: every row is tried ('1' = 1 is true).
            assert_eq!(rows(&by_int, &[Datum::Bytes(b"1".to_vec())]), None);
            let by_str = build(&data, vec![(1, CExpr::Col(0), ci)], &t)
                .unwrap()
                .unwrap();
            assert_eq!(
                rows(&by_str, &[Datum::Bytes(b"b".to_vec())]),
                Some(vec![1, 3])
            );
            // Two parts.
            let both = build(
                &data,
                vec![(0, CExpr::Col(0), ci), (1, CExpr::Col(1), ci)],
                &t,
            )
            .unwrap()
            .unwrap();
            assert_eq!(
                rows(&both, &[Datum::Int(1), Datum::Bytes(b"A".to_vec())]),
                Some(vec![0])
            );
        }
        // Held values of two kinds: no index.
        let mixed = held(&[
            (Datum::Int(1), Datum::Null),
            (Datum::Bytes(b"1".to_vec()), Datum::Null),
        ]);
        assert!(build(&mixed, vec![(0, CExpr::Col(0), ci)], &tmp(1 << 20))
            .unwrap()
            .is_none());
    }

    #[test]
    fn equalities_take_columns_fixed_before_the_held_rows() {
        let eq = |a: CExpr, b: CExpr| {
            CExpr::Cmp(
                BinaryOp::Eq,
                Box::new(a),
                Box::new(b),
                Collation::Utf8mb40900AiCi,
            )
        };
        // Row: two columns before, then three held ones (positions 2..5).
        let c = CExpr::And(
            Box::new(eq(CExpr::Col(3), CExpr::Col(0))),
            Box::new(CExpr::And(
                Box::new(eq(CExpr::Col(1), CExpr::Col(4))),
                Box::new(eq(CExpr::Col(2), CExpr::Col(4))),
            )),
        );
        let mut out = Vec::new();
        equalities(&c, 2, 3, &mut out);
        let got: Vec<(usize, bool)> = out
            .iter()
            .map(|(p, e, _)| (*p, matches!(e, CExpr::Col(_))))
            .collect();
        assert_eq!(got, vec![(1, true), (2, true)]);
    }
}
