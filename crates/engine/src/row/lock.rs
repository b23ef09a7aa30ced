//! Row locking: lock keys of index records, implicit locks, insert intentions, locking reads
//! (SELECT ... FOR UPDATE / LOCK IN SHARE MODE, and the current reads of UPDATE and DELETE).
//! (InnoDB: lock_clust_rec_read_check_and_lock, lock_rec_insert_check_and_lock,
//! row_search_mvcc's locking path.)
//!
//! OVERVIEW
//! A record's lock key is its ordering fields, each normalised by its collation (so keys equal
//! under a collation share locks). The gap after an index's last record is its supremum key.
//! Locks are requested with the leaf latched; if one must wait, the latches go (lock L2), the
//! wait happens, and the operation starts again from its position, now holding the lock.
//!
//! Which lock a read takes (InnoDB's rules): at REPEATABLE READ and SERIALIZABLE a locking
//! scan takes next-key locks on every record it passes and on the first record beyond the range
//! (a gap lock on the supremum at the end of the index); an equality search on the whole
//! primary key takes a record-only lock on the row it finds, or a gap lock before the next
//! record if the row is absent. READ COMMITTED and READ UNCOMMITTED lock records only, release
//! the locks on rows that do not match, and, for UPDATE/DELETE, read the newest committed
//! version of a row another transaction has locked instead of waiting, to see whether it
//! matches at all (a semi-consistent read). With the transaction's `wait_policy` (the
//! statement's NOWAIT or SKIP LOCKED) a lock that would wait fails at once (LockNowait) or
//! its row is left out of the read; nothing is locked for a skipped row.
//!
//! LATCHING: the leaf and then its right siblings (S), left to right; none during waits.

use std::sync::Arc;

use crate::btree::{self, cursor, Bound, Index, Intent};
use crate::buffer_pool::LatchMode;
use crate::dict::schema::Value;
use crate::dict::{FieldSrc, Table};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::lock::{Kind, LockKey, Mode, Outcome};
use crate::mtr::{Mtr, PageRef};
use crate::page::index_page as ip;
use crate::page::record::{self, Tuple};
use crate::page::{self};
use crate::row::vers;
use crate::trx::{Isolation, TrxState, WaitPolicy};
use crate::types::{PageId, TableId, FIL_NULL};

/// The lock key of ordering fields `k` of index `idx` of table `table`.
pub fn key_of(table: TableId, idx: &Index, k: &Tuple) -> LockKey {
    let mut key = Vec::new();
    for (i, f) in k.iter().enumerate() {
        match f {
            None => key.push(0),
            Some(b) => {
                key.push(1);
                let sk = idx.leaf.fields[i].collation.sort_key(b);
                key.extend_from_slice(&(sk.len() as u32).to_be_bytes());
                key.extend_from_slice(&sk);
            }
        }
    }
    LockKey {
        table,
        index: idx.id,
        key,
    }
}

/// The lock key of record `rec` of `idx`.
pub fn key_of_rec(table: TableId, idx: &Index, rec: &[u8]) -> LockKey {
    key_of(
        table,
        idx,
        &Tuple::from_rec(&idx.leaf, rec, idx.leaf.n_order),
    )
}

/// The record at `slot` of `leaf`, or the first record of the next non-empty leaf to the right;
/// None at the end of the index. With `keep`, a leaf to the right stays S-latched in `mtr` (a
/// locking read must decide on its lock and read the row under the same latch, or a change
/// committed in between would be missed); without, it is latched only while the record is
/// copied (an inserter may still X-latch it for a split).
pub fn record_at_or_after(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    leaf: PageRef,
    slot: usize,
    keep: bool,
) -> Result<Option<Vec<u8>>> {
    if slot < ip::n_recs(mtr.page(leaf)) {
        return Ok(Some(ip::rec(mtr.page(leaf), slot).to_vec()));
    }
    let mut next = page::next(mtr.page(leaf));
    while next != FIL_NULL {
        let l = mtr.get(PageId::new(idx.space, next), LatchMode::S)?;
        let p = mtr.page(l);
        let r = (ip::n_recs(p) > 0).then(|| ip::rec(p, 0).to_vec());
        next = page::next(p);
        if r.is_some() {
            if !keep {
                mtr.release(l);
            }
            return Ok(r);
        }
        mtr.release(l);
    }
    Ok(None)
}

/// The record before `slot` of `leaf` (in the leaves to its left if `slot` is 0), with the
/// leaf now holding it latched, or None at the start of the index. Leaves are latched only
/// left to right: to step left, `leaf` is released first and the left neighbour checked to
/// still be it; if the tree changed meanwhile, the search starts again from the key of the
/// first record seen.
fn record_before(
    mtr: &mut Mtr<'_>,
    idx: &Index,
    mut leaf: PageRef,
    slot: usize,
) -> Result<Option<Vec<u8>>> {
    if slot > 0 {
        return Ok(Some(ip::rec(mtr.page(leaf), slot - 1).to_vec()));
    }
    loop {
        let p = mtr.page(leaf);
        let key = (ip::n_recs(p) > 0)
            .then(|| Tuple::from_rec(&idx.leaf, ip::rec(p, 0), idx.leaf.n_order));
        let here = mtr.id(leaf).page;
        let prev = page::prev(p);
        if prev == FIL_NULL {
            return Ok(None);
        }
        mtr.release(leaf);
        let pl = mtr.get(PageId::new(idx.space, prev), LatchMode::S)?;
        let pp = mtr.page(pl);
        let consistent = page::page_type(pp) == Some(page::PageType::Index)
            && ip::index_id(pp) == idx.id
            && ip::is_leaf(pp)
            && page::next(pp) == here;
        if consistent {
            let n = ip::n_recs(pp);
            if n > 0 {
                return Ok(Some(ip::rec(pp, n - 1).to_vec()));
            }
            leaf = pl;
            continue;
        }
        mtr.release(pl);
        let Some(key) = key else {
            // An empty leaf that changed under us: nothing to anchor a new search on.
            return Ok(None);
        };
        let path = btree::descend(mtr, idx, &key, Bound::Lower, Intent::Read)?;
        let (l2, s2) = (path.leaf().page, path.leaf().slot);
        if s2 > 0 {
            return Ok(Some(ip::rec(mtr.page(l2), s2 - 1).to_vec()));
        }
        leaf = l2;
    }
}

/// The lock key of the record at or after `slot` (the gap an insert at `slot` goes into).
pub fn successor_key(
    mtr: &mut Mtr<'_>,
    table: TableId,
    idx: &Index,
    leaf: PageRef,
    slot: usize,
) -> Result<LockKey> {
    Ok(match record_at_or_after(mtr, idx, leaf, slot, false)? {
        Some(r) => key_of_rec(table, idx, &r),
        None => LockKey::supremum(table, idx.id),
    })
}

/// If clustered record `rec` carries the id of another active transaction, gives that
/// transaction an explicit lock on it (its implicit lock), so a request can queue behind it.
pub fn convert_implicit(inner: &Inner, trx: &TrxState, t: &Table, key: &LockKey, rec: &[u8]) {
    let owner = vers::trx_id(t, rec);
    if owner != trx.id && owner != 0 && inner.trx.is_active(owner) {
        inner.trx.locks.make_explicit(owner, key);
    }
}

/// What a locking read asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockRead {
    /// LOCK IN SHARE MODE / FOR SHARE (and SERIALIZABLE's plain reads).
    Shared,
    /// FOR UPDATE, and the reads of UPDATE and DELETE.
    Exclusive,
}

impl LockRead {
    fn mode(self) -> Mode {
        match self {
            LockRead::Shared => Mode::S,
            LockRead::Exclusive => Mode::X,
        }
    }
}

fn snapshot_isolation(inner: &Inner) -> bool {
    inner
        .tun
        .snapshot_isolation
        .load(std::sync::atomic::Ordering::Relaxed)
}

/// innodb_snapshot_isolation (REPEATABLE READ and SERIALIZABLE): a row locked for reading or
/// writing that a transaction the read view does not see has changed is an error (1020).
pub fn check_snapshot(inner: &Inner, trx: &TrxState, t: &Table, rec: &[u8]) -> Result<()> {
    if trx.isolation < Isolation::RepeatableRead || !snapshot_isolation(inner) {
        return Ok(());
    }
    if let Some(v) = &trx.view {
        if !v.sees(vers::trx_id(t, rec), trx.id) {
            return Err(Error::RecordChanged(t.name.clone()));
        }
    }
    Ok(())
}

fn gap_locking(trx: &TrxState) -> bool {
    trx.isolation >= Isolation::RepeatableRead
}

/// A locking read of the row with primary key `key`.
pub fn get(
    inner: &Inner,
    trx: &mut TrxState,
    t: &Table,
    key: &Tuple,
    how: LockRead,
) -> Result<Option<Vec<Value>>> {
    let idx = &t.clustered;
    let lk = key_of(t.id, idx, key);
    loop {
        let mut mtr = Mtr::new(inner);
        let path = btree::descend(&mut mtr, idx, key, Bound::Lower, Intent::Read)?;
        let (leaf, slot) = (path.leaf().page, path.leaf().slot);
        let rec = record_at_or_after(&mut mtr, idx, leaf, slot, true)?;
        let exact = rec
            .as_ref()
            .is_some_and(|r| record::cmp_tuple_rec(&idx.leaf, key, r).is_eq());
        let (want_key, kind) = match &rec {
            Some(r) if exact => {
                convert_implicit(inner, trx, t, &lk, r);
                let kind = if record::is_deleted(r) && gap_locking(trx) {
                    Kind::NextKey
                } else {
                    Kind::RecNotGap
                };
                (lk.clone(), kind)
            }
            _ if !gap_locking(trx) => {
                mtr.commit()?;
                return Ok(None);
            }
            Some(r) => (key_of_rec(t.id, idx, r), Kind::Gap),
            None => (LockKey::supremum(t.id, idx.id), Kind::Gap),
        };
        if trx.try_lock(inner, &want_key, how.mode(), kind)? == Outcome::MustWait {
            drop(mtr);
            match trx.wait_policy {
                WaitPolicy::Wait => trx.wait_lock(inner, &want_key, how.mode(), kind)?,
                WaitPolicy::NoWait => return Err(Error::LockNowait),
                WaitPolicy::SkipLocked => return Ok(None),
            }
            continue;
        }
        let Some(r) = rec.filter(|_| exact) else {
            mtr.commit()?;
            return Ok(None);
        };
        check_snapshot(inner, trx, t, &r)?;
        if record::is_deleted(&r) {
            mtr.commit()?;
            return Ok(None);
        }
        let f = cursor::fetch_rec(&mut mtr, idx, r)?;
        mtr.commit()?;
        return Ok(Some(super::decode_row(t, &f)));
    }
}

/// A locking range scan of the clustered index (`index` None) or a secondary index between
/// key prefixes `from` and `to` (each with its inclusiveness; None = unbounded), forward or
/// backward, returning the rows `pred` accepts, locked, in scan order. `semi_consistent`
/// allows READ COMMITTED's semi-consistent read (UPDATE and DELETE). With `limit`, the scan
/// stops once that many rows are returned, locking nothing after them.
///
/// With gap locking a forward scan takes next-key locks on the records it reads, and locks
/// the first one past the range for the gap up to it (next-key, or a gap lock when the range
/// is one key prefix, `from` = `to`, both inclusive: an equality; a unique search, an
/// equality on a whole unique key without NULLs, locks its live record alone and stops
/// there). A backward scan first locks the
/// gap above the range (before the record after it, or the supremum), then takes next-key
/// locks downwards; the gap below the lowest record it locks is that lock's own, so the
/// record past the lower end is not locked (InnoDB's descending scan).
#[allow(clippy::too_many_arguments)]
pub fn scan(
    inner: &Inner,
    trx: &mut TrxState,
    t: &Arc<Table>,
    index: Option<usize>,
    from: Option<(Tuple, bool)>,
    to: Option<(Tuple, bool)>,
    forward: bool,
    how: LockRead,
    semi_consistent: bool,
    limit: Option<usize>,
    pred: &mut dyn FnMut(&[Value]) -> bool,
) -> Result<Vec<Vec<Value>>> {
    let idx = match index {
        None => t.clustered.clone(),
        Some(i) => t.secondary[i].index.clone(),
    };
    let gap = gap_locking(trx);
    let kind = if gap { Kind::NextKey } else { Kind::RecNotGap };
    let equality = matches!((&from, &to), (Some((a, true)), Some((b, true))) if a == b);
    // A unique search (an equality on every field of a unique index, none NULL): its live
    // record is locked alone (record only) and ends the scan (InnoDB's unique_search).
    let unique_eq = equality
        && forward
        && idx.n_unique > 0
        && from.as_ref().is_some_and(|(k, _)| {
            k.len() >= idx.n_unique && (0..idx.n_unique).all(|i| k.get(i).is_some())
        });
    let mut out = Vec::new();
    // Position: (key, inclusive), from where the scan goes on in its direction.
    let (start, stop) = if forward { (from, to) } else { (to, from) };
    let mut pos: Option<(Tuple, bool)> = start;
    // A backward scan locks the gap above its range once, before its first record.
    let mut above_locked = forward || !gap;
    let sc = Scanned {
        t,
        index,
        idx: &idx,
        how,
        kind,
        gap,
        semi_consistent,
        unique_eq,
    };
    loop {
        let mut mtr = Mtr::new(inner);
        let (k, bound) = match (&pos, forward) {
            (None, true) => (Tuple::new(), Bound::Lower),
            (Some((k, true)), true) => (k.clone(), Bound::Lower),
            (Some((k, false)), true) => (k.clone(), Bound::Upper),
            // Backward: the slot after the records at or below (or below) the position.
            (None, false) => (Tuple::new(), Bound::Upper),
            (Some((k, true)), false) => (k.clone(), Bound::Upper),
            (Some((k, false)), false) => (k.clone(), Bound::Lower),
        };
        let path = btree::descend(&mut mtr, &idx, &k, bound, Intent::Read)?;
        let (leaf, slot) = (path.leaf().page, path.leaf().slot);
        if !above_locked {
            let above = successor_key(&mut mtr, t.id, &idx, leaf, slot)?;
            if trx.try_lock(inner, &above, how.mode(), Kind::Gap)? == Outcome::MustWait {
                drop(mtr);
                match trx.wait_policy {
                    WaitPolicy::Wait => trx.wait_lock(inner, &above, how.mode(), Kind::Gap)?,
                    WaitPolicy::NoWait => return Err(Error::LockNowait),
                    // Only a gap: no row is left out for not having it.
                    WaitPolicy::SkipLocked => above_locked = true,
                }
                continue;
            }
            above_locked = true;
        }
        // Forward, a record of `leaf` itself: the scan goes on along the leaf while its latch
        // is held (`at`), without searching from the root for each record.
        let mut at = (forward && slot < ip::n_recs(mtr.page(leaf))).then_some(slot);
        let found = if forward {
            record_at_or_after(&mut mtr, &idx, leaf, slot, true)?
        } else {
            record_before(&mut mtr, &idx, leaf, slot)?
        };
        let Some(mut rec) = found else {
            // The end of the index: a forward scan locks the gap before the supremum.
            if gap && forward {
                let sup = LockKey::supremum(t.id, idx.id);
                if trx.try_lock(inner, &sup, how.mode(), Kind::Gap)? == Outcome::MustWait {
                    drop(mtr);
                    match trx.wait_policy {
                        WaitPolicy::Wait => trx.wait_lock(inner, &sup, how.mode(), Kind::Gap)?,
                        WaitPolicy::NoWait => return Err(Error::LockNowait),
                        WaitPolicy::SkipLocked => return Ok(out),
                    }
                    continue;
                }
            }
            mtr.commit()?;
            return Ok(out);
        };
        // Rows locked and read under this leaf's latch, tested with `pred` once it is let go
        // (no expression of the caller runs under a page latch).
        let mut pending: Vec<(Vec<Value>, LockKey)> = Vec::new();
        let ended = loop {
            let beyond = stop.as_ref().is_some_and(|(end, incl)| {
                let o = record::cmp_tuple_rec(&idx.leaf, end, &rec);
                match (forward, *incl) {
                    (true, true) => o.is_lt(),
                    (true, false) => o.is_le(),
                    (false, true) => o.is_gt(),
                    (false, false) => o.is_ge(),
                }
            });
            if beyond {
                // Forward with gap locking: the record past the range is locked too, for the
                // gap before it: a next-key lock, or only the gap when the range is one key
                // prefix (an equality: InnoDB's ROW_SEL_EXACT, which gap-locks the first
                // record that does not match). Backward: the last next-key lock already
                // covers the gap.
                if gap && forward {
                    let rk = key_of_rec(t.id, &idx, &rec);
                    if index.is_none() {
                        convert_implicit(inner, trx, t, &rk, &rec);
                    }
                    let kind = if equality { Kind::Gap } else { kind };
                    if trx.try_lock(inner, &rk, how.mode(), kind)? == Outcome::MustWait {
                        drop(mtr);
                        match trx.wait_policy {
                            WaitPolicy::Wait => trx.wait_lock(inner, &rk, how.mode(), kind)?,
                            WaitPolicy::NoWait => return Err(Error::LockNowait),
                            WaitPolicy::SkipLocked => break true,
                        }
                        break false;
                    }
                }
                mtr.commit()?;
                break true;
            }
            let mut held = Some(mtr);
            match sc.take(inner, trx, &mut held, rec, pred)? {
                Step::Again => break false,
                Step::Skip(next) => pos = Some(next),
                Step::Row(next, row, rk) => {
                    pending.push((row, rk));
                    pos = Some(next);
                    // A unique search found its record: nothing after it is locked.
                    if unique_eq {
                        if let Some(m) = held {
                            m.commit()?;
                        }
                        break true;
                    }
                    // With a limit, each row is tested before the next is locked.
                    if limit.is_some() {
                        if let Some(m) = held {
                            m.commit()?;
                        }
                        break false;
                    }
                }
            }
            // The leaf still latched (the record was decided without waiting or leaving it):
            // its next record is the next one in the index.
            match (held, at) {
                (Some(m), Some(s)) if s + 1 < ip::n_recs(m.page(leaf)) => {
                    mtr = m;
                    at = Some(s + 1);
                    rec = ip::rec(mtr.page(leaf), s + 1).to_vec();
                }
                (Some(m), _) => {
                    m.commit()?;
                    break false;
                }
                (None, _) => break false,
            }
        };
        for (row, rk) in pending {
            if pred(&row) {
                out.push(row);
                if limit.is_some_and(|n| out.len() >= n) {
                    return Ok(out);
                }
            } else {
                release_unmatched(inner, trx, gap, &rk);
            }
        }
        if ended {
            return Ok(out);
        }
    }
}

/// What a locking scan does with a record in its range (`Scanned::take`).
enum Step {
    /// It waited for a lock: look again from the same position.
    Again,
    /// No row (deleted, rejected, skipped): go on after the record (the position given).
    Skip((Tuple, bool)),
    /// A row, locked (its lock key given), for the caller to test: go on after the record.
    Row((Tuple, bool), Vec<Value>, LockKey),
}

/// The fixed parts of one locking scan.
struct Scanned<'a> {
    t: &'a Arc<Table>,
    index: Option<usize>,
    idx: &'a Index,
    how: LockRead,
    kind: Kind,
    gap: bool,
    semi_consistent: bool,
    /// A unique search: a live record is locked record-only.
    unique_eq: bool,
}

impl Scanned<'_> {
    /// Locks record `rec` of the range (its leaf latched by `held`) and reads its row (for the
    /// caller to test with `pred`): waits if another transaction holds it (then Again), or
    /// skips it as the wait policy or READ COMMITTED's semi-consistent read (which tests the
    /// newest committed version with `pred`) says. `held` is left latching the leaf when the record
    /// was decided without letting go of it (a clustered record with no off-page value, its
    /// lock granted at once), else ended (None).
    fn take(
        &self,
        inner: &Inner,
        trx: &mut TrxState,
        held: &mut Option<Mtr<'_>>,
        rec: Vec<u8>,
        pred: &mut dyn FnMut(&[Value]) -> bool,
    ) -> Result<Step> {
        let mut mtr = held.take().expect("a latched leaf");
        let (t, idx, how, gap) = (self.t, self.idx, self.how, self.gap);
        let kind = if self.unique_eq && !record::is_deleted(&rec) {
            Kind::RecNotGap
        } else {
            self.kind
        };
        let key = Tuple::from_rec(&idx.leaf, &rec, idx.leaf.n_order);
        let rk = key_of(t.id, idx, &key);
        let next = (key, false);
        let is_clustered = self.index.is_none();
        if is_clustered {
            convert_implicit(inner, trx, t, &rk, &rec);
        }
        if trx.try_lock(inner, &rk, how.mode(), kind)? == Outcome::MustWait {
            // READ COMMITTED UPDATE: skip a locked row whose newest committed version does not
            // match, without waiting. MariaDB's rules with innodb_snapshot_isolation: none at
            // READ COMMITTED; READ UNCOMMITTED judges the newest, uncommitted version.
            if self.semi_consistent && !gap && is_clustered {
                let si = snapshot_isolation(inner);
                let judged = match (trx.isolation, si) {
                    (_, false) => Some(vers::last_committed(inner, t, &rec)?),
                    (Isolation::ReadUncommitted, true) => {
                        Some((!record::is_deleted(&rec)).then(|| rec.clone()))
                    }
                    _ => None,
                };
                let skip = match judged {
                    None => false,
                    Some(None) => true,
                    Some(Some(v)) => {
                        let f = cursor::fetch_rec(&mut mtr, idx, v)?;
                        !pred(&super::decode_row(t, &f))
                    }
                };
                if skip {
                    mtr.commit()?;
                    return Ok(Step::Skip(next));
                }
            }
            match trx.wait_policy {
                WaitPolicy::Wait => {}
                WaitPolicy::NoWait => return Err(Error::LockNowait),
                // A locked row is left out.
                WaitPolicy::SkipLocked => {
                    mtr.commit()?;
                    return Ok(Step::Skip(next));
                }
            }
            drop(mtr);
            trx.wait_lock(inner, &rk, how.mode(), kind)?;
            return Ok(Step::Again);
        }
        if is_clustered {
            check_snapshot(inner, trx, t, &rec)?;
        }
        if record::is_deleted(&rec) {
            *held = Some(mtr);
            release_unmatched(inner, trx, gap, &rk);
            return Ok(Step::Skip(next));
        }
        let row = if is_clustered && record::info(&rec) & record::REC_INFO_HAS_EXTERN == 0 {
            let row = super::decode_rec(t, &rec, &[], None);
            *held = Some(mtr);
            Some(row)
        } else if is_clustered {
            let f = cursor::fetch_rec(&mut mtr, idx, rec.clone())?;
            mtr.commit()?;
            Some(super::decode_row(t, &f))
        } else {
            mtr.commit()?;
            // Lock the row in the clustered index, then check that its newest version still
            // has this entry.
            let i = self.index.expect("secondary");
            let pk = pk_of_sec_rec(t, i, &rec);
            match get(inner, trx, t, &pk, how)? {
                Some(row) if sec_matches(t, i, &row, &rec)? => Some(row),
                _ => None,
            }
        };
        match row {
            Some(r) => Ok(Step::Row(next, r, rk)),
            None => {
                release_unmatched(inner, trx, gap, &rk);
                Ok(Step::Skip(next))
            }
        }
    }
}

/// READ COMMITTED and READ UNCOMMITTED (no gap locking) release the lock on a row the read
/// does not return.
fn release_unmatched(inner: &Inner, trx: &TrxState, gap: bool, rk: &LockKey) {
    if let (false, Some(l)) = (gap, trx.locks.as_ref()) {
        inner.trx.locks.unlock_row(l, rk);
    }
}

/// The primary key (clustered ordering fields) stored in secondary record `rec`.
pub fn pk_of_sec_rec(t: &Table, i: usize, rec: &[u8]) -> Tuple {
    let s = &t.secondary[i];
    let lay = &s.index.leaf;
    let mut key = Tuple::new();
    if t.has_hidden_pk() {
        key.push(record::field(lay, rec, s.fields.len() - 1));
    } else {
        for &c in &t.pk_cols {
            let pos = s
                .fields
                .iter()
                .position(|x| *x == FieldSrc::Col(c))
                .expect("pk in entry");
            key.push(record::field(lay, rec, pos));
        }
    }
    key
}

/// True if `row` (decoded values) has secondary record `rec` of index `i` as its entry.
pub fn sec_matches(t: &Table, i: usize, row: &[Value], rec: &[u8]) -> Result<bool> {
    let s = &t.secondary[i];
    let lay = &s.index.leaf;
    let mut enc = Tuple::new();
    let mut buf = Vec::new();
    for src in &s.fields {
        match src {
            FieldSrc::Col(c) => {
                buf.clear();
                let present = crate::dict::schema::encode(&t.def.columns[*c], &row[*c], &mut buf)?;
                enc.push(present.then_some(&buf[..]));
            }
            FieldSrc::RowId => enc.push(record::field(lay, rec, s.fields.len() - 1)),
        }
    }
    Ok(record::cmp_tuple_rec(lay, &enc, rec).is_eq())
}
