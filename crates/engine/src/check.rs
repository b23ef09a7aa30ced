//! `Engine::check`: the full verifier used by tests after every crash and by operators
//! (InnoDB: CHECK TABLE + innochecksum + btr_validate). Expects no concurrent writers.
//!
//! It checks:
//! 1. every B-tree (btree::check);
//! 2. secondary indexes against the clustered index: each live row has exactly its entries,
//!    and no live entry lacks its row (row I2);
//! 3. undo: every active slot and history log is a well-formed chain in the right state, and the
//!    history lengths add up;
//! 4. space accounting: the pages reachable from the dictionary, the undo system and the fixed
//!    system pages are exactly the pages the allocation bitmaps mark used, and FSP_USED agrees;
//! 5. checksums: every allocated page as it is on disk verifies (or was never written and is
//!    still in the buffer pool);
//! 6. buffer pool lists.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::btree::blob;
use crate::btree::check::check_tree;
use crate::buffer_pool::LatchMode;
use crate::dict::Table;
use crate::doublewrite::{DBLWR_AREAS, DBLWR_AREA_PAGES, DBLWR_FIRST_PAGE};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::mtr::Mtr;
use crate::page;
use crate::page::record;
use crate::row::{sec_entry, ClustRec, Stored};
use crate::tablespace::fsp;
use crate::trx::undo;
use crate::types::{PageId, PageNo, SpaceId, FIL_NULL, SYSTEM_SPACE};

#[derive(Debug, Default, Clone)]
pub struct CheckReport {
    pub tables: usize,
    pub indexes: usize,
    pub records: u64,
    pub delete_marked: u64,
    pub spaces: usize,
    pub pages_in_use: u64,
    pub pages_verified_on_disk: u64,
    pub history_len: u64,
    pub active_undo_logs: usize,
}

fn bad(space: SpaceId, page: PageNo, what: String) -> Error {
    Error::corrupted(space, page, what)
}

fn entry_bytes(e: &record::Tuple) -> Vec<u8> {
    crate::row::key_bytes(e)
}

/// Checks one table; adds its pages to `used`.
fn check_table(
    inner: &Inner,
    t: &Arc<Table>,
    used: &mut BTreeSet<PageNo>,
    rep: &mut CheckReport,
) -> Result<()> {
    let mut expected: Vec<HashMap<Vec<u8>, u32>> = vec![HashMap::new(); t.secondary.len()];
    // Each clustered record (deleted or not) by key, to explain an entry with no row.
    let mut described: HashMap<Vec<u8>, String> = HashMap::new();
    let mut err: Option<Error> = None;
    let st = check_tree(inner, &t.clustered, |rec, _| {
        if err.is_some() {
            return Ok(());
        }
        let cr = ClustRec::parse(t, rec);
        described.insert(
            entry_bytes(&cr.key(t)),
            format!(
                "delete-marked {}, trx id {}, columns {:?}",
                cr.deleted,
                cr.trx_id,
                cr.cols
                    .iter()
                    .map(|c| match c {
                        Stored::Inline(v) => String::from_utf8_lossy(v).into_owned(),
                        Stored::Null => "NULL".into(),
                        Stored::Extern(_) => "(off-page)".into(),
                    })
                    .collect::<Vec<_>>()
            ),
        );
        if cr.deleted {
            return Ok(());
        }
        for (i, s) in t.secondary.iter().enumerate() {
            match sec_entry(inner, t, s, &cr) {
                Ok(e) => *expected[i].entry(entry_bytes(&e)).or_default() += 1,
                Err(e) => err = Some(e),
            }
        }
        Ok(())
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    rep.records += st.records;
    rep.delete_marked += st.delete_marked;
    used.extend(st.pages);
    rep.indexes += 1;
    for (i, s) in t.secondary.iter().enumerate() {
        let exp = &mut expected[i];
        let mut extra: Option<String> = None;
        let lay = &s.index.leaf;
        let st = check_tree(inner, &s.index, |rec, _| {
            if record::is_deleted(rec) {
                return Ok(());
            }
            let e = record::Tuple::from_rec(lay, rec, lay.n_fields());
            let k = entry_bytes(&e);
            match exp.get_mut(&k) {
                Some(n) if *n > 0 => *n -= 1,
                _ => {
                    extra.get_or_insert_with(|| {
                        // The clustered key is the entry's last fields.
                        let nk = t.clustered.leaf.n_order;
                        let mut key = record::Tuple::new();
                        for i in e.len().saturating_sub(nk)..e.len() {
                            key.push(e.get(i));
                        }
                        format!(
                            "index {} of {} has an entry with no row: {:?} (clustered record: {})",
                            s.spec.name,
                            t.name,
                            e.iter()
                                .map(|f| f.map(String::from_utf8_lossy))
                                .collect::<Vec<_>>(),
                            described
                                .get(&entry_bytes(&key))
                                .map_or("none", String::as_str)
                        )
                    });
                }
            }
            Ok(())
        })?;
        if let Some(x) = extra {
            return Err(bad(t.space, s.index.root, x));
        }
        if let Some((_, n)) = exp.iter().find(|(_, n)| **n > 0) {
            return Err(bad(
                t.space,
                s.index.root,
                format!(
                    "index {} of {} lacks {n} entr(y/ies) of live rows",
                    s.spec.name, t.name
                ),
            ));
        }
        used.extend(st.pages);
        rep.indexes += 1;
    }
    Ok(())
}

/// Pages of the undo system; checks chain and state consistency.
/// Pages of the off-page values that undo records still reference (old versions that purge
/// has not freed yet): in use although no current record points to them. After a crash a
/// history log may also reference chains purge had already freed (it removes a record with
/// its chains before it frees the log), so these pages only excuse "leaked", they are not
/// required to be allocated; a walk stops at a page that is no longer a BLOB page.
fn undo_chains(
    inner: &Inner,
    recs: &[undo::UndoRec],
    chains: &mut HashMap<SpaceId, BTreeSet<PageNo>>,
) -> Result<()> {
    for r in recs.iter().filter(|r| r.kind != undo::UREC_INSERT) {
        let Some(t) = crate::ddl::table_for_undo(inner, r.table_id)? else {
            continue;
        };
        let refs = chains.entry(t.space).or_default();
        for reference in ClustRec::parse(&t, &r.old_rec).externs(None) {
            let mut pno = blob::ref_page(&reference);
            while pno != FIL_NULL && !refs.contains(&pno) {
                let mut mtr = Mtr::new(inner);
                let Ok(pg) = mtr.get(PageId::new(t.space, pno), LatchMode::S) else {
                    break;
                };
                if page::page_type(mtr.page(pg)) != Some(page::PageType::Blob) {
                    break;
                }
                refs.insert(pno);
                pno = page::next(mtr.page(pg));
                mtr.commit()?;
            }
        }
    }
    Ok(())
}

fn check_undo(
    inner: &Inner,
    used: &mut BTreeSet<PageNo>,
    chains: &mut HashMap<SpaceId, BTreeSet<PageNo>>,
    rep: &mut CheckReport,
) -> Result<()> {
    let mut total_hist = 0u64;
    for (r, &rp) in inner.trx.rsegs().iter().enumerate() {
        used.insert(rp);
        let st = undo::read_rseg(inner, rp)?;
        for first in &st.active {
            let h = undo::read_header(inner, *first)?;
            if h.state != undo::STATE_ACTIVE && h.state != undo::STATE_PREPARED {
                return Err(bad(
                    SYSTEM_SPACE,
                    *first,
                    format!("undo log in an active slot has state {}", h.state),
                ));
            }
            if usize::from(h.rseg) != r {
                return Err(bad(
                    SYSTEM_SPACE,
                    *first,
                    "undo log in the wrong rollback segment".into(),
                ));
            }
            used.extend(undo::log_pages(inner, *first)?);
            undo_chains(inner, &undo::read_all(inner, *first)?, chains)?;
            rep.active_undo_logs += 1;
        }
        let mut n = 0u32;
        let mut cur = st.history_first;
        let mut last_no = 0u64;
        while let Some(first) = cur {
            let h = undo::read_header(inner, first)?;
            if h.state != undo::STATE_COMMITTED || h.trx_no < last_no {
                return Err(bad(
                    SYSTEM_SPACE,
                    first,
                    "history list out of order or not committed".into(),
                ));
            }
            last_no = h.trx_no;
            used.extend(undo::log_pages(inner, first)?);
            undo_chains(inner, &undo::read_all(inner, first)?, chains)?;
            n += 1;
            cur = (h.hist_next != FIL_NULL).then_some(h.hist_next);
            if n > st.history_len + 1 {
                break;
            }
        }
        if n != st.history_len {
            return Err(bad(
                SYSTEM_SPACE,
                rp,
                format!("history list has {n} logs, header says {}", st.history_len),
            ));
        }
        total_hist += u64::from(n);
        used.extend(undo::rseg_free_pages(inner, rp)?);
    }
    rep.history_len = total_hist;
    Ok(())
}

/// Compares the allocation bitmaps of `space` with the pages in use; verifies pages on disk.
fn check_space(
    inner: &Inner,
    space: SpaceId,
    used: &mut BTreeSet<PageNo>,
    undo_refs: &BTreeSet<PageNo>,
    rep: &mut CheckReport,
) -> Result<()> {
    let ps = inner.bp.page_size();
    let (hdr, bitmaps) = {
        let mut mtr = Mtr::new(inner);
        let h = mtr.get(PageId::new(space, 0), LatchMode::S)?;
        let hdr = mtr.page(h).to_vec();
        mtr.commit()?;
        let span = fsp::bitmap_span(ps);
        let mut bms = Vec::new();
        let mut k = 1;
        while k * span < fsp::size(&hdr) {
            let mut mtr = Mtr::new(inner);
            let b = mtr.get(PageId::new(space, k * span), LatchMode::S)?;
            bms.push((k * span, mtr.page(b).to_vec()));
            mtr.commit()?;
            used.insert(k * span);
            k += 1;
        }
        (hdr, bms)
    };
    used.insert(0);
    // Chains still in pending slots are in use.
    for (_, head) in fsp::pending(&hdr) {
        let mut p = head;
        while p != FIL_NULL && used.insert(p) {
            let mut mtr = Mtr::new(inner);
            let r = mtr.get(PageId::new(space, p), LatchMode::S)?;
            p = if page::page_type(mtr.page(r)) == Some(page::PageType::Blob) {
                page::next(mtr.page(r))
            } else {
                FIL_NULL
            };
            mtr.commit()?;
        }
    }
    let refs: Vec<(u32, &[u8])> = bitmaps.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    let bits = fsp::bitmap_bits(&hdr, &refs, ps);
    let n_set = bits.iter().filter(|b| **b).count() as u32;
    if n_set != fsp::used(&hdr) {
        return Err(bad(
            space,
            0,
            format!(
                "FSP_USED is {} but {n_set} pages are marked",
                fsp::used(&hdr)
            ),
        ));
    }
    let mut old_versions = Vec::new();
    for (p, &bit) in bits.iter().enumerate() {
        let p = p as u32;
        match (bit, used.contains(&p)) {
            (true, false) if undo_refs.contains(&p) => old_versions.push(p),
            (true, false) => {
                return Err(bad(
                    space,
                    p,
                    "page is allocated but nothing uses it (leaked)".into(),
                ))
            }
            (false, true) => {
                return Err(bad(
                    space,
                    p,
                    "page is in use but free in the allocation bitmap".into(),
                ))
            }
            _ => {}
        }
    }
    if let Some(&p) = used.iter().find(|&&p| p >= fsp::size(&hdr)) {
        return Err(bad(space, p, "page in use beyond FSP_SIZE".into()));
    }
    used.extend(old_versions);
    // Checksums of every allocated page on disk.
    let sp = inner.fil.space(space)?;
    let mut buf = vec![0u8; ps];
    let dblwr = DBLWR_FIRST_PAGE..DBLWR_FIRST_PAGE + DBLWR_AREAS * DBLWR_AREA_PAGES;
    for &p in used.iter() {
        if space == SYSTEM_SPACE && dblwr.contains(&p) {
            continue;
        }
        inner.fil.read_page_in(&sp, p, &mut buf)?;
        let id = PageId::new(space, p);
        if let Err(d) = page::verify(&buf, id) {
            return Err(bad(space, p, format!("on disk: {d}")));
        }
        if page::is_all_zero(&buf) {
            // Never written: must be a page still only in the buffer pool.
            let in_pool = inner
                .bp
                .peek_pin(id)
                .inspect(|&f| inner.bp.unpin(f))
                .is_some();
            if !in_pool {
                return Err(bad(
                    space,
                    p,
                    "allocated page was never written and is not in memory".into(),
                ));
            }
        }
        rep.pages_verified_on_disk += 1;
    }
    rep.pages_in_use += used.len() as u64;
    rep.spaces += 1;
    Ok(())
}

/// CHECK TABLE: items 1 and 2 for one table. The caller holds a shared table lock (no
/// uncommitted change of the table exists, none can start); purge waits meanwhile.
pub fn check_one_table(inner: &Inner, t: &Arc<Table>) -> Result<CheckReport> {
    let _purge = inner.purge_gate.write();
    let mut rep = CheckReport {
        tables: 1,
        ..CheckReport::default()
    };
    check_table(inner, t, &mut BTreeSet::new(), &mut rep)?;
    Ok(rep)
}

pub fn check(inner: &Inner) -> Result<CheckReport> {
    let mut rep = CheckReport::default();
    let mut used: HashMap<SpaceId, BTreeSet<PageNo>> = HashMap::new();
    let sys = inner.dict.sys_tables();
    {
        let u = used.entry(SYSTEM_SPACE).or_default();
        u.insert(crate::dict::DICT_HDR_PAGE);
        u.extend(DBLWR_FIRST_PAGE..DBLWR_FIRST_PAGE + DBLWR_AREAS * DBLWR_AREA_PAGES);
        check_table(inner, &sys, u, &mut rep)?;
    }
    let mut chains = HashMap::new();
    check_undo(
        inner,
        used.entry(SYSTEM_SPACE).or_default(),
        &mut chains,
        &mut rep,
    )?;
    for &space in chains.keys() {
        used.entry(space).or_default();
    }
    for t in inner.dict.tables() {
        check_table(inner, &t, used.entry(t.space).or_default(), &mut rep)?;
        rep.tables += 1;
    }
    let mut spaces: Vec<SpaceId> = used.keys().copied().collect();
    spaces.sort_unstable();
    for s in spaces {
        let mut u = used.remove(&s).unwrap_or_default();
        let undo_refs = chains.remove(&s).unwrap_or_default();
        check_space(inner, s, &mut u, &undo_refs, &mut rep)?;
    }
    inner
        .bp
        .check_lists()
        .map_err(|e| Error::corrupted(0, 0, format!("buffer pool: {e}")))?;
    Ok(rep)
}
