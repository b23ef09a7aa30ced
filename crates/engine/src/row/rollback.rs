//! Rollback: applies a transaction's undo records in reverse. (InnoDB: row0undo, row0uins,
//! row0umod.)
//!
//! Each undo record is applied only if the clustered record still carries the transaction's id
//! (so a change whose undo was written but whose index change never happened is skipped), and
//! secondary indexes are restored before the clustered record: rolling back again after a crash
//! part way through is harmless (idempotent). A secondary entry the rolled-back change brought
//! is removed only if no older version of the row that a read view may need has it (it may
//! have been a delete-marked entry this change revived); otherwise it is delete-marked again.

use std::time::Duration;

use crate::btree::{self, blob, Bound, Intent};
use crate::dict::{SecIndex, Table};
use crate::engine::Inner;
use crate::error::Result;
use crate::mtr::Mtr;
use crate::page::index_page as ip;
use crate::page::record::{self, Tuple};
use crate::trx::undo::{self, UndoLog, UndoRec};
use crate::types::{PageNo, FIL_NULL};

use super::{sec, sec_entry, ClustRec};

/// Rolls back records with undo number >= `savepoint`, newest first.
pub fn rollback_to(inner: &Inner, trx_id: u64, log: &mut UndoLog, savepoint: u64) -> Result<()> {
    let mut pno = log.last;
    loop {
        let (recs, prev) = undo::read_page_records(inner, pno)?;
        for r in recs.iter().rev() {
            if r.undo_no < savepoint {
                return Ok(());
            }
            apply(inner, trx_id, r)?;
        }
        if pno == log.first || prev == FIL_NULL {
            return Ok(());
        }
        pno = prev;
    }
}

fn apply(inner: &Inner, trx_id: u64, r: &UndoRec) -> Result<()> {
    let Some(t) = crate::ddl::table_for_undo(inner, r.table_id)? else {
        return Ok(()); // the table was dropped: nothing left to undo
    };
    match r.kind {
        undo::UREC_INSERT => {
            let mut key = Tuple::new();
            for f in &r.key {
                key.push(Some(f));
            }
            undo_insert(inner, &t, trx_id, &key)
        }
        _ => undo_modify(inner, &t, trx_id, &r.old_rec, &r.changed),
    }
}

/// The current clustered record for `key`, if it carries `trx_id`.
fn current_of(inner: &Inner, t: &Table, key: &Tuple, trx_id: u64) -> Result<Option<ClustRec>> {
    let idx = &t.clustered;
    let mut mtr = Mtr::new(inner);
    let path = btree::descend(&mut mtr, idx, key, Bound::Upper, Intent::Read)?;
    let (leaf, slot) = (path.leaf().page, path.leaf().slot);
    let p = mtr.page(leaf);
    let found = slot > 0 && record::cmp_tuple_rec(&idx.leaf, key, ip::rec(p, slot - 1)).is_eq();
    let cr = if found {
        Some(ClustRec::parse(t, ip::rec(p, slot - 1)))
    } else {
        None
    };
    mtr.commit()?;
    Ok(cr.filter(|c| c.trx_id == trx_id))
}

fn chain_heads(refs: &[[u8; 20]]) -> Vec<PageNo> {
    refs.iter()
        .map(|r| blob::ref_page(r))
        .filter(|&p| p != FIL_NULL)
        .collect()
}

fn undo_insert(inner: &Inner, t: &Table, trx_id: u64, key: &Tuple) -> Result<()> {
    let Some(cur) = current_of(inner, t, key, trx_id)? else {
        return Ok(());
    };
    for s in &t.secondary {
        let e = sec_entry(inner, t, s, &cur)?;
        sec::remove_if(inner, t.id, &s.index, &e, &|_| true, None)?;
    }
    let pred = |rec: &[u8]| ClustRec::parse(t, rec).trx_id == trx_id;
    let chains = |rec: &[u8]| chain_heads(&ClustRec::parse(t, rec).externs(None));
    sec::remove_if(inner, t.id, &t.clustered, key, &pred, Some(&chains))?;
    Ok(())
}

/// Removes entry `e` of `s` that the change being rolled back brought, or delete-marks it if a
/// version from `old` back may still be read through it (purge I1).
fn drop_entry(
    inner: &Inner,
    t: &Table,
    s: &SecIndex,
    e: &Tuple,
    old: &[u8],
    trx_id: u64,
) -> Result<()> {
    let needed = {
        let pv = inner.trx.purge_view.read();
        crate::purge::entry_needed(inner, t, s, e, old, &pv)?
    };
    if needed {
        sec::set_entry(inner, s, e, true, trx_id)?;
    } else {
        sec::remove_if(inner, t.id, &s.index, e, &|_| true, None)?;
    }
    Ok(())
}

/// Undoes an update, a delete mark, or an insert over a delete-marked record: puts `old` back.
fn undo_modify(inner: &Inner, t: &Table, trx_id: u64, old: &[u8], changed: &[u16]) -> Result<()> {
    let o = ClustRec::parse(t, old);
    let key = o.key(t);
    let Some(cur) = current_of(inner, t, &key, trx_id)? else {
        return Ok(());
    };
    // Secondary indexes first (idempotent if repeated).
    for s in &t.secondary {
        let e_old = sec_entry(inner, t, s, &o)?;
        let e_cur = sec_entry(inner, t, s, &cur)?;
        match (o.deleted, cur.deleted) {
            // Delete mark undone: the entries this transaction marked come back.
            (false, true) => {
                sec::set_mark(inner, s, &e_old, false, trx_id)?;
            }
            // Update undone. An entry at the same place (bytes may differ under a collation)
            // gets the old bytes back; otherwise the new entry goes and the old one returns.
            (false, false) => {
                if e_old == e_cur {
                } else if sec::same_place(s, &e_old, &e_cur) {
                    sec::set_entry(inner, s, &e_old, false, trx_id)?;
                } else {
                    drop_entry(inner, t, s, &e_cur, old, trx_id)?;
                    sec::set_mark(inner, s, &e_old, false, trx_id)?;
                }
            }
            // Insert over a delete-marked record undone: its entries were marked before.
            (true, false) => {
                if sec::same_place(s, &e_old, &e_cur) {
                    sec::set_entry(inner, s, &e_old, true, trx_id)?;
                } else {
                    drop_entry(inner, t, s, &e_cur, old, trx_id)?;
                }
            }
            (true, true) => {}
        }
    }
    // Chains of replaced fields in the current version were created by this change.
    let lay = &t.clustered.leaf;
    let replaced: Vec<usize> = changed.iter().map(|&f| usize::from(f)).collect();
    let new_chains = |rec: &[u8]| -> Vec<PageNo> {
        let mut v = Vec::new();
        for (i, r) in record::FieldIter::new(lay, rec).enumerate() {
            let r = r.expect("malformed record");
            if r.ext && replaced.contains(&i) {
                v.push(blob::ref_page(&rec[r.start..r.start + r.len]));
            }
        }
        v
    };
    restore_clustered(inner, t, &key, trx_id, old, &new_chains)
}

/// Replaces the clustered record for `key` (still carrying `trx_id`) with `old`.
fn restore_clustered(
    inner: &Inner,
    t: &Table,
    key: &Tuple,
    trx_id: u64,
    old: &[u8],
    chains: &dyn Fn(&[u8]) -> Vec<PageNo>,
) -> Result<()> {
    let idx = &t.clustered;
    let mut intent = Intent::ModifyLeaf;
    loop {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let mut path = btree::descend(&mut mtr, idx, key, Bound::Upper, intent)?;
        let (leaf, slot) = (path.leaf().page, path.leaf().slot);
        let p = mtr.page(leaf);
        if slot == 0 || !record::cmp_tuple_rec(&idx.leaf, key, ip::rec(p, slot - 1)).is_eq() {
            return Ok(());
        }
        let cur = ip::rec(p, slot - 1).to_vec();
        if ClustRec::parse(t, &cur).trx_id != trx_id {
            return Ok(());
        }
        if intent == Intent::ModifyLeaf && old.len() > cur.len() + ip::free_space(p) {
            drop(mtr);
            intent = Intent::TreeInsert;
            continue;
        }
        let heads: Vec<PageNo> = chains(&cur)
            .into_iter()
            .filter(|&h| h != FIL_NULL)
            .collect();
        let Some(regs) = blob::register(&mut mtr, t.space, &heads)? else {
            drop(mtr);
            std::thread::sleep(Duration::from_millis(1));
            continue;
        };
        if !mtr.rec_update(leaf, slot - 1, old) {
            mtr.rec_delete(leaf, slot - 1);
            btree::tree_insert(&mut mtr, idx, &mut path, slot - 1, old)?;
        }
        mtr.commit()?;
        blob::free_registered(inner, t.space, &regs)?;
        return Ok(());
    }
}
