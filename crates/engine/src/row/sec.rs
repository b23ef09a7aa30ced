//! Secondary index entries: insert (with the uniqueness check), delete-mark and unmark, and
//! physical removal (shared with the clustered index for rollback and purge).
//! (InnoDB: row_ins_sec_index_entry, row_upd_sec_index_entry, row_purge_remove_sec_if_poss.)

use std::cmp::Ordering;
use std::time::Duration;

use crate::btree::{self, blob, cursor, Bound, Index, Intent};
use crate::dict::{SecIndex, Table};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::lock::{Kind, LockKey, Mode};
use crate::mtr::Mtr;
use crate::page::index_page as ip;
use crate::page::record::{self, Tuple, REC_INFO_DELETED};
use crate::row::lock;
use crate::trx::TrxState;
use crate::types::{PageNo, TableId};

fn with_mark(rec: &[u8], mark: bool) -> Vec<u8> {
    let mut r = rec.to_vec();
    if mark {
        r[2] |= REC_INFO_DELETED;
    } else {
        r[2] &= !REC_INFO_DELETED;
    }
    r
}

/// The unique prefix of an entry, or None if it has a NULL there (NULLs never conflict).
fn unique_prefix(s: &SecIndex, e: &Tuple) -> Option<Tuple> {
    let n = s.index.n_unique;
    if n == 0 {
        return None;
    }
    let mut t = Tuple::new();
    for i in 0..n {
        t.push(Some(e.get(i)?));
    }
    Some(t)
}

/// Errors with DuplicateKey if another live row has the entry's unique prefix. The caller holds
/// the lock on that prefix, so no other transaction can add one meanwhile.
fn check_unique(inner: &Inner, _t: &Table, s: &SecIndex, e: &Tuple, prefix: &Tuple) -> Result<()> {
    let idx = &s.index;
    let mut scan = cursor::Scan::new(
        idx.clone(),
        cursor::Start::Key {
            key: prefix.clone(),
            inclusive: true,
        },
        true,
    );
    while let Some(f) = scan.next(inner)? {
        if record::cmp_tuple_rec(&idx.leaf, prefix, &f.rec) != Ordering::Equal {
            break;
        }
        if record::is_deleted(&f.rec) {
            continue;
        }
        if record::cmp_tuple_rec(&idx.leaf, e, &f.rec) != Ordering::Equal {
            let shown: Vec<String> = prefix
                .iter()
                .map(|b| String::from_utf8_lossy(b.unwrap_or(b"NULL")).into_owned())
                .collect();
            return Err(Error::DuplicateKey {
                index: s.spec.name.clone(),
                key: shown.join("-"),
            });
        }
    }
    Ok(())
}

/// Inserts `e` into a secondary index for transaction `trx`, or clears the delete mark of an
/// identical entry. A unique index's value is locked first, then checked.
pub fn insert(inner: &Inner, trx: &mut TrxState, t: &Table, s: &SecIndex, e: &Tuple) -> Result<()> {
    lock_unique(inner, trx, t, s, e)?;
    insert_entry(inner, t, s, e, true, Some(trx))
}

/// Locks the unique value of entry `e` (if the index is unique and the value has no NULL) until
/// the transaction ends: taken before inserting the value and before delete-marking it, so no
/// other transaction can add the value while this one might still bring it back by rollback.
pub fn lock_unique(
    inner: &Inner,
    trx: &mut TrxState,
    t: &Table,
    s: &SecIndex,
    e: &Tuple,
) -> Result<()> {
    let Some(prefix) = unique_prefix(s, e) else {
        return Ok(());
    };
    let mut key = Vec::new();
    for (i, f) in prefix.iter().enumerate() {
        let c = s.index.leaf.fields[i].collation;
        let sk = c.sort_key(f.unwrap_or(&[]));
        key.extend_from_slice(&(sk.len() as u32).to_be_bytes());
        key.extend_from_slice(&sk);
    }
    trx.lock_row(
        inner,
        LockKey {
            table: t.id,
            index: s.index.id,
            key,
        },
    )
}

/// Inserts an entry. A transaction inserting first checks that no other transaction locks the
/// gap (insert intention) and stamps the leaf with its id (Mtr::raise_max_trx_id); an index
/// build passes None (the table's DML is blocked) and stamps the next id to be handed out, so
/// no view older than the build reads the new entries without their rows.
pub fn insert_entry(
    inner: &Inner,
    t: &Table,
    s: &SecIndex,
    e: &Tuple,
    check: bool,
    mut trx: Option<&mut TrxState>,
) -> Result<()> {
    if check {
        if let Some(prefix) = unique_prefix(s, e) {
            check_unique(inner, t, s, e, &prefix)?;
        }
    }
    let idx = &s.index;
    let stamp = trx
        .as_deref()
        .map_or_else(|| inner.trx.max_trx_id(), |t| t.id);
    let mut rec = Vec::new();
    record::build(
        &idx.leaf,
        0,
        e.iter()
            .map(|f| f.map_or(record::FieldVal::Null, record::FieldVal::Bytes)),
        &mut rec,
    );
    let mut intent = Intent::ModifyLeaf;
    loop {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let mut path = btree::descend(&mut mtr, idx, e, Bound::Upper, intent)?;
        let (leaf, slot) = (path.leaf().page, path.leaf().slot);
        let p = mtr.page(leaf);
        if slot > 0 && record::cmp_tuple_rec(&idx.leaf, e, ip::rec(p, slot - 1)) == Ordering::Equal
        {
            // An equal entry (possibly different bytes under a case-insensitive collation)
            // exists: the insert becomes an update of it to exactly the new bytes, unmarked.
            drop(mtr);
            set_entry(inner, s, e, false, stamp)?;
            return Ok(());
        }
        let mut succ = None;
        if let Some(trx) = trx.as_deref_mut() {
            let k = lock::successor_key(&mut mtr, t.id, idx, leaf, slot)?;
            if trx.conflicts(inner, &k, Mode::X, Kind::InsertIntention) {
                drop(mtr);
                trx.wait_lock(inner, &k, Mode::X, Kind::InsertIntention)?;
                continue;
            }
            succ = Some(k);
        }
        if intent == Intent::ModifyLeaf {
            if !mtr.rec_insert(leaf, slot, &rec) {
                intent = Intent::TreeInsert;
                continue;
            }
            mtr.raise_max_trx_id(leaf, stamp);
        } else {
            // Stamped first: a split hands the stamp on with the records it moves.
            mtr.raise_max_trx_id(leaf, stamp);
            btree::tree_insert(&mut mtr, idx, &mut path, slot, &rec)?;
        }
        if let Some(k) = succ {
            inner
                .trx
                .locks
                .inherit_from_successor(&k, &lock::key_of(t.id, idx, e));
        }
        mtr.commit()?;
        return Ok(());
    }
}

/// Sets or clears the delete mark of entry `e` for transaction `stamp` (its id, stamped on the
/// leaf). Returns false if the entry is absent.
pub fn set_mark(inner: &Inner, s: &SecIndex, e: &Tuple, mark: bool, stamp: u64) -> Result<bool> {
    let idx = &s.index;
    inner.log_free_check()?;
    let mut mtr = Mtr::new(inner);
    let path = btree::descend(&mut mtr, idx, e, Bound::Upper, Intent::ModifyLeaf)?;
    let (leaf, slot) = (path.leaf().page, path.leaf().slot);
    let p = mtr.page(leaf);
    if slot == 0 || record::cmp_tuple_rec(&idx.leaf, e, ip::rec(p, slot - 1)) != Ordering::Equal {
        return Ok(false);
    }
    let old = ip::rec(p, slot - 1);
    if record::is_deleted(old) != mark {
        let r = with_mark(old, mark);
        let ok = mtr.rec_update(leaf, slot - 1, &r);
        assert!(ok, "a delete mark keeps the length");
        mtr.raise_max_trx_id(leaf, stamp);
    }
    mtr.commit()?;
    Ok(true)
}

/// True if two entries sit at the same place in the index (equal under its collations), even
/// if their bytes differ.
pub fn same_place(s: &SecIndex, a: &Tuple, b: &Tuple) -> bool {
    let lay = &s.index.leaf;
    (0..lay.n_order.min(a.len()).min(b.len()))
        .all(|i| record::cmp_field(&lay.fields[i], a.get(i), b.get(i)) == Ordering::Equal)
}

/// Rewrites the entry equal to `e` with exactly `e`'s bytes and the given delete mark (the
/// stored bytes may differ under a case-insensitive collation) for transaction `stamp`.
/// Returns false if absent.
pub fn set_entry(
    inner: &Inner,
    s: &SecIndex,
    e: &Tuple,
    deleted: bool,
    stamp: u64,
) -> Result<bool> {
    let idx = &s.index;
    let mut rec = Vec::new();
    let info = if deleted { REC_INFO_DELETED } else { 0 };
    let vals = e
        .iter()
        .map(|f| f.map_or(record::FieldVal::Null, record::FieldVal::Bytes));
    record::build(&idx.leaf, info, vals, &mut rec);
    for intent in [Intent::ModifyLeaf, Intent::TreeInsert] {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let mut path = btree::descend(&mut mtr, idx, e, Bound::Upper, intent)?;
        let (leaf, slot) = (path.leaf().page, path.leaf().slot);
        let p = mtr.page(leaf);
        if slot == 0 || record::cmp_tuple_rec(&idx.leaf, e, ip::rec(p, slot - 1)) != Ordering::Equal
        {
            return Ok(false);
        }
        if ip::rec(p, slot - 1) == rec.as_slice() {
            return Ok(true);
        }
        if mtr.rec_update(leaf, slot - 1, &rec) {
            mtr.raise_max_trx_id(leaf, stamp);
            mtr.commit()?;
            return Ok(true);
        }
        if intent == Intent::ModifyLeaf {
            continue;
        }
        mtr.raise_max_trx_id(leaf, stamp);
        mtr.rec_delete(leaf, slot - 1);
        btree::tree_insert(&mut mtr, idx, &mut path, slot - 1, &rec)?;
        mtr.commit()?;
        return Ok(true);
    }
    unreachable!("the pessimistic attempt always completes")
}

/// What to do with the chains of a removed record.
pub type ChainsOf<'a> = &'a dyn Fn(&[u8]) -> Vec<PageNo>;

/// Physically removes the record with full key `key` from `idx` (of table `table`) if `pred`
/// accepts it, merging pages as needed. Chains that `chains` lists for the record are
/// registered for freeing in the same mini-transaction and freed after it (blob I1). Locks on
/// the record pass to its successor as gap locks. Returns true if a record was removed.
pub fn remove_if(
    inner: &Inner,
    table: TableId,
    idx: &Index,
    key: &Tuple,
    pred: &dyn Fn(&[u8]) -> bool,
    chains: Option<ChainsOf<'_>>,
) -> Result<bool> {
    let ps = inner.bp.page_size();
    let mut intent = Intent::ModifyLeaf;
    loop {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let mut path = btree::descend(
            &mut mtr,
            idx,
            key,
            Bound::Upper,
            if intent == Intent::ModifyLeaf {
                Intent::ModifyLeaf
            } else {
                Intent::TreeDelete
            },
        )?;
        let (leaf, slot) = (path.leaf().page, path.leaf().slot);
        let p = mtr.page(leaf);
        if slot == 0
            || record::cmp_tuple_rec(&idx.leaf, key, ip::rec(p, slot - 1)) != Ordering::Equal
        {
            return Ok(false);
        }
        let rec = ip::rec(p, slot - 1).to_vec();
        if !pred(&rec) {
            return Ok(false);
        }
        let is_root = mtr.id(leaf).page == idx.root;
        let stays = is_root || ip::used_space(p) - rec.len() - 2 >= btree::merge_threshold(ps);
        if intent == Intent::ModifyLeaf && !stays {
            drop(mtr);
            intent = Intent::TreeDelete;
            continue;
        }
        let heads = chains.map(|f| f(&rec)).unwrap_or_default();
        let Some(regs) = blob::register(&mut mtr, idx.space, &heads)? else {
            drop(mtr);
            std::thread::sleep(Duration::from_millis(1));
            continue;
        };
        let rk = lock::key_of(table, idx, key);
        let locked = inner.trx.locks.has_requests(&rk);
        if intent == Intent::ModifyLeaf {
            let succ = if locked {
                Some(lock::successor_key(&mut mtr, table, idx, leaf, slot)?)
            } else {
                None
            };
            mtr.rec_delete(leaf, slot - 1);
            if let Some(succ) = succ {
                inner.trx.locks.inherit_to_gap(&rk, &succ);
            }
            mtr.commit()?;
        } else {
            btree::tree_delete(&mut mtr, idx, &mut path, slot - 1)?;
            mtr.commit()?;
            if locked {
                // The tree changed shape: find the successor afresh.
                let mut m2 = Mtr::new(inner);
                let p2 = btree::descend(&mut m2, idx, key, Bound::Upper, Intent::Read)?;
                let (l2, s2) = (p2.leaf().page, p2.leaf().slot);
                let succ = lock::successor_key(&mut m2, table, idx, l2, s2)?;
                m2.commit()?;
                inner.trx.locks.inherit_to_gap(&rk, &succ);
            }
        }
        blob::free_registered(inner, idx.space, &regs)?;
        return Ok(true);
    }
}
