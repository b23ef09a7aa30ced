//! Row versions: the version of a clustered record that a read view sees, rebuilt from the
//! undo log. (InnoDB: row0vers.)
//!
//! OVERVIEW
//! A clustered record carries the id of the transaction that wrote it and a roll pointer to the
//! undo record holding the version before. Going back along the roll pointers gives older and
//! older versions; an insert's undo record ends the chain (no earlier version exists). Update
//! and delete-mark undo records hold the whole previous record, so each step is one undo read.
//!
//! INVARIANTS
//! - R1: the caller holds the latch (S or X) of the leaf the record was read from. A
//!   transaction's undo log is freed by its rollback only after the rollback restored every
//!   record it changed, which needs that latch; purge frees only logs every open view sees, and
//!   a walk stops at the first version its view sees. So every undo record a walk reads exists.
//!
//! LATCHING: undo pages are latched (S) after the clustered leaf (the documented order).

use std::borrow::Cow;

use crate::dict::Table;
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::mach::read_u48;
use crate::page::record;
use crate::trx::undo::{self, RollPtr};
use crate::trx::view::ReadView;
use crate::types::SYSTEM_SPACE;

/// The id of the transaction that wrote clustered record `rec` of `t`.
#[inline]
pub fn trx_id(t: &Table, rec: &[u8]) -> u64 {
    let lay = &t.clustered.leaf;
    read_u48(
        record::field(lay, rec, lay.n_order).expect("clustered record has a trx id"),
        0,
    )
}

/// The roll pointer of clustered record `rec` of `t`.
pub fn roll_ptr(t: &Table, rec: &[u8]) -> RollPtr {
    let lay = &t.clustered.leaf;
    RollPtr::decode(
        record::field(lay, rec, lay.n_order + 1).expect("clustered record has a roll ptr"),
    )
}

/// The version before `rec`, or None if `rec` was created by an insert.
pub fn previous(inner: &Inner, t: &Table, rec: &[u8]) -> Result<Option<Vec<u8>>> {
    let rp = roll_ptr(t, rec);
    if rp.insert {
        return Ok(None);
    }
    let u = undo::read_at(inner, rp.page, rp.offset)?;
    if u.kind == undo::UREC_INSERT || u.table_id != t.id {
        return Err(Error::corrupted(
            SYSTEM_SPACE,
            rp.page,
            format!(
                "a roll pointer of {} leads to an undo record of another kind or table (offset {})",
                t.name, rp.offset
            ),
        ));
    }
    Ok(Some(u.old_rec))
}

/// The version of `rec` that `view` sees for a reader with transaction id `own`, or None if it
/// sees none or sees it deleted (R1: the leaf is latched).
pub fn visible<'a>(
    inner: &Inner,
    t: &Table,
    rec: &'a [u8],
    view: &ReadView,
    own: u64,
) -> Result<Option<Cow<'a, [u8]>>> {
    visible_from(inner, t, rec, trx_id(t, rec), view, own)
}

/// `visible` of a record whose transaction id (`trx_id`) the caller read.
pub fn visible_from<'a>(
    inner: &Inner,
    t: &Table,
    rec: &'a [u8],
    trx: u64,
    view: &ReadView,
    own: u64,
) -> Result<Option<Cow<'a, [u8]>>> {
    if view.sees(trx, own) {
        return Ok((!record::is_deleted(rec)).then_some(Cow::Borrowed(rec)));
    }
    let mut cur = rec.to_vec();
    loop {
        let Some(prev) = previous(inner, t, &cur)? else {
            return Ok(None);
        };
        cur = prev;
        if view.sees(trx_id(t, &cur), own) {
            return Ok((!record::is_deleted(&cur)).then_some(Cow::Owned(cur)));
        }
    }
}

/// The newest committed version of `rec` (a semi-consistent read), or None if there is none or
/// it is deleted (R1).
pub fn last_committed(inner: &Inner, t: &Table, rec: &[u8]) -> Result<Option<Vec<u8>>> {
    let mut cur = rec.to_vec();
    while inner.trx.is_active(trx_id(t, &cur)) {
        match previous(inner, t, &cur)? {
            Some(p) => cur = p,
            None => return Ok(None),
        }
    }
    Ok((!record::is_deleted(&cur)).then_some(cur))
}

/// Calls `f` on `rec` and each older version down to and including the first one `view` sees;
/// stops early when `f` returns true (and returns true). Used by purge and rollback to learn
/// whether some open view may still need a secondary index entry (R1).
pub fn any_version_until(
    inner: &Inner,
    t: &Table,
    rec: &[u8],
    view: &ReadView,
    f: &mut dyn FnMut(&[u8]) -> Result<bool>,
) -> Result<bool> {
    let mut cur = rec.to_vec();
    loop {
        if f(&cur)? {
            return Ok(true);
        }
        if view.sees(trx_id(t, &cur), 0) {
            return Ok(false);
        }
        match previous(inner, t, &cur)? {
            Some(p) => cur = p,
            None => return Ok(false),
        }
    }
}
