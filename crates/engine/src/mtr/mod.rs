//! Mini-transaction: the only way to change a page. (InnoDB: mtr0mtr.)
//!
//! OVERVIEW
//! An `Mtr` keeps a memo of the pages it has fixed (with their latch mode) and a buffer of redo
//! records. Each change method applies the change to the X-latched page *and* appends the redo
//! record describing it, through the same page function recovery uses (redo::record I1).
//! `commit` appends the records as one group to the log, stamps every changed page with the
//! group's end LSN and puts it on the flush list (under the log mutex), then releases the
//! latches. Redo of a change is therefore always in the log buffer before the page can be
//! flushed, and the flusher makes it durable before the page write (redo I1).
//!
//! STATE MACHINE
//! ```text
//!   ACTIVE --get/create--> ACTIVE (memo grows) --change--> ACTIVE+dirty --commit--> done
//!     \------------------------- drop without commit --------------------------> done
//! ```
//! Dropping an mtr that changed pages without committing it would leave pages changed without
//! redo; `Drop` then puts the engine in fail-stop so nothing inconsistent reaches disk.
//!
//! INVARIANTS
//! - I1: every change to a page's bytes after it was fixed happens through a logging method
//!   while the mtr holds the page's X latch.
//! - I2: all fallible steps of an operation (reading pages, reserving space) happen before its
//!   first change, so an error never leaves a half-changed page set.
//! - I3: latches are released only at commit (or earlier for pages this mtr did not change).
//!
//! LATCHING: pages are latched in B-tree order (btree module); the log mutex is taken only
//! inside `commit` after all page latches are held.

use std::sync::atomic::Ordering;

use crate::buffer_pool::{FrameIdx, LatchMode};
use crate::engine::Inner;
use crate::error::Result;
use crate::mach::{write_u16, write_u32, write_u64};
use crate::page::{self, index_page, PageType};
use crate::redo::record as rr;
use crate::types::{Lsn, PageId, PageNo};

/// A page in an mtr's memo.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PageRef(u16);

#[derive(Clone, Copy)]
struct Slot {
    frame: FrameIdx,
    id: PageId,
    mode: LatchMode,
    modified: bool,
    released: bool,
}

pub struct Mtr<'a> {
    inner: &'a Inner,
    memo: Vec<Slot>,
    log: rr::Group,
    done: bool,
}

impl<'a> Mtr<'a> {
    pub fn new(inner: &'a Inner) -> Self {
        Mtr {
            inner,
            memo: Vec::with_capacity(8),
            log: rr::Group::default(),
            done: false,
        }
    }

    pub fn inner(&self) -> &'a Inner {
        self.inner
    }

    fn push(&mut self, frame: FrameIdx, id: PageId, mode: LatchMode) -> PageRef {
        self.memo.push(Slot {
            frame,
            id,
            mode,
            modified: false,
            released: false,
        });
        PageRef((self.memo.len() - 1) as u16)
    }

    /// A page this mtr already holds (not released) in `mode` or stronger.
    fn held(&self, id: PageId, mode: LatchMode) -> Option<PageRef> {
        let i = self.memo.iter().position(|s| s.id == id && !s.released)?;
        let s = &self.memo[i];
        assert!(
            !(s.mode == LatchMode::S && mode == LatchMode::X),
            "page {id} is S-latched in this mtr; upgrading to X could deadlock"
        );
        Some(PageRef(i as u16))
    }

    /// Fixes and latches a page, reading it from disk if needed. A page the mtr already holds
    /// is returned as is (latches are not re-entrant).
    pub fn get(&mut self, id: PageId, mode: LatchMode) -> Result<PageRef> {
        if let Some(r) = self.held(id, mode) {
            return Ok(r);
        }
        let f = self.inner.fix(id, mode)?;
        Ok(self.push(f, id, mode))
    }

    /// Fixes and latches a page only if it is in the buffer pool and its latch is free at once
    /// (`Inner::try_fix`); None also when this mtr holds the page already.
    pub fn try_get(&mut self, id: PageId, mode: LatchMode) -> Option<PageRef> {
        if self.memo.iter().any(|s| s.id == id && !s.released) {
            return None;
        }
        let f = self.inner.try_fix(id, mode)?;
        Some(self.push(f, id, mode))
    }

    /// Fixes a page being created (just allocated): X-latched and not read from disk. The caller
    /// initialises it (`page_init` / `index_init`) before any other use.
    pub fn get_new(&mut self, id: PageId) -> Result<PageRef> {
        if let Some(r) = self.held(id, LatchMode::X) {
            return Ok(r);
        }
        let f = self.inner.fix_new(id)?;
        Ok(self.push(f, id, LatchMode::X))
    }

    #[inline]
    fn slot(&self, r: PageRef) -> &Slot {
        let s = &self.memo[usize::from(r.0)];
        debug_assert!(!s.released, "page {} used after release", s.id);
        s
    }

    pub fn id(&self, r: PageRef) -> PageId {
        self.slot(r).id
    }
    pub fn frame(&self, r: PageRef) -> FrameIdx {
        self.slot(r).frame
    }
    pub fn mode(&self, r: PageRef) -> LatchMode {
        self.slot(r).mode
    }

    /// The page's bytes.
    pub fn page(&self, r: PageRef) -> &[u8] {
        let s = self.slot(r);
        // SAFETY: the memo holds the frame's latch until release/commit (I3).
        unsafe { self.inner.bp.data(s.frame) }
    }

    /// Releases a page this mtr did not change (latch coupling during a descent).
    pub fn release(&mut self, r: PageRef) {
        let s = &mut self.memo[usize::from(r.0)];
        assert!(!s.modified, "releasing a changed page before commit");
        if !s.released {
            s.released = true;
            self.inner.bp.unlatch(s.frame, s.mode);
            self.inner.bp.unpin(s.frame);
        }
    }

    /// Releases every page latched after `r` was (the memo suffix), keeping `r`.
    pub fn release_all_except(&mut self, keep: &[PageRef]) {
        for i in 0..self.memo.len() {
            let r = PageRef(i as u16);
            if !keep.contains(&r) && !self.memo[i].released && !self.memo[i].modified {
                self.release(r);
            }
        }
    }

    pub fn is_modified(&self) -> bool {
        self.memo.iter().any(|s| s.modified)
    }

    fn page_mut(&mut self, r: PageRef) -> &mut [u8] {
        let s = &mut self.memo[usize::from(r.0)];
        assert!(
            s.mode == LatchMode::X && !s.released,
            "change without X latch on {}",
            s.id
        );
        s.modified = true;
        // SAFETY: X latch held (asserted); no other slice of this frame is alive because page()
        // borrows self immutably.
        unsafe { self.inner.bp.data_mut(s.frame) }
    }

    fn bump_clock(&self, r: PageRef) {
        self.inner
            .bp
            .frame(self.slot(r).frame)
            .modify_clock
            .fetch_add(1, Ordering::Relaxed);
    }

    // ---- logged changes (each mirrors a redo record type) ---------------------------------

    pub fn page_init(&mut self, r: PageRef, ty: PageType) {
        let id = self.id(r);
        page::init(self.page_mut(r), id, ty);
        self.log.page_init(id, ty);
        self.bump_clock(r);
    }

    pub fn index_init(&mut self, r: PageRef, level: u16, index_id: u64) {
        let id = self.id(r);
        index_page::init(self.page_mut(r), id, level, index_id);
        self.log.index_init(id, level, index_id);
        self.bump_clock(r);
    }

    pub fn write(&mut self, r: PageRef, off: usize, data: &[u8]) {
        let id = self.id(r);
        self.page_mut(r)[off..off + data.len()].copy_from_slice(data);
        self.log.write(id, off, data);
    }

    pub fn write_u16(&mut self, r: PageRef, off: usize, v: u16) {
        let mut b = [0; 2];
        write_u16(&mut b, 0, v);
        self.write(r, off, &b);
    }
    pub fn write_u32(&mut self, r: PageRef, off: usize, v: u32) {
        let mut b = [0; 4];
        write_u32(&mut b, 0, v);
        self.write(r, off, &b);
    }
    pub fn write_u64(&mut self, r: PageRef, off: usize, v: u64) {
        let mut b = [0; 8];
        write_u64(&mut b, 0, v);
        self.write(r, off, &b);
    }

    /// Raises the page's PAGE_MAX_TRX_ID to `id` (nothing changes or is logged when it is
    /// already there). Every transaction changing a secondary-index leaf stamps it, and records
    /// moved to another page take their page's value along, so a consistent read may use a
    /// leaf's records without the rows when the view sees every id up to it (row::scan).
    pub fn raise_max_trx_id(&mut self, r: PageRef, id: u64) {
        if index_page::max_trx_id(self.page(r)) < id {
            self.write_u64(r, index_page::PAGE_MAX_TRX_ID, id);
        }
    }

    /// Inserts a record at `slot`; false (nothing changed or logged) if it does not fit.
    pub fn rec_insert(&mut self, r: PageRef, slot: usize, rec: &[u8]) -> bool {
        let id = self.id(r);
        if !index_page::fits(self.page(r), rec.len()) {
            return false;
        }
        let ok = index_page::insert(self.page_mut(r), slot, rec);
        debug_assert!(ok);
        self.log.rec(rr::REC_INSERT, id, slot, rec);
        self.bump_clock(r);
        true
    }

    /// Replaces the record at `slot`; false (nothing changed) if the new one does not fit.
    pub fn rec_update(&mut self, r: PageRef, slot: usize, rec: &[u8]) -> bool {
        let id = self.id(r);
        // SAFETY: as in `page`; the slice is dropped before the page is changed below.
        let p = unsafe { self.inner.bp.data(self.slot(r).frame) };
        let old = index_page::rec(p, slot);
        if rec.len() != old.len() && index_page::free_space(p) + old.len() < rec.len() {
            return false;
        }
        self.log.rec_update(id, slot, old, rec);
        let ok = index_page::update(self.page_mut(r), slot, rec);
        debug_assert!(ok);
        self.bump_clock(r);
        true
    }

    pub fn rec_delete(&mut self, r: PageRef, slot: usize) {
        let id = self.id(r);
        index_page::delete(self.page_mut(r), slot);
        self.log.delete(id, slot);
        self.bump_clock(r);
    }

    pub fn rec_delete_range(&mut self, r: PageRef, from: usize, to: usize) {
        if from == to {
            return;
        }
        let id = self.id(r);
        index_page::delete_range(self.page_mut(r), from, to);
        self.log.delete_range(id, from, to);
        self.bump_clock(r);
    }

    /// Inserts records at consecutive slots; the caller guarantees they fit.
    pub fn rec_insert_many(&mut self, r: PageRef, slot: usize, recs: &[&[u8]]) {
        if recs.is_empty() {
            return;
        }
        let id = self.id(r);
        index_page::insert_many(self.page_mut(r), slot, recs.iter().copied());
        self.log.insert_many(id, slot, recs.iter().copied());
        self.bump_clock(r);
    }

    pub fn set_links(&mut self, r: PageRef, prev: PageNo, next: PageNo) {
        let id = self.id(r);
        page::set_links(self.page_mut(r), prev, next);
        self.log.set_links(id, prev, next);
    }

    /// Appends the redo, stamps and dirties the changed pages, releases every latch. Returns the
    /// end LSN of the group (or the current LSN if nothing changed).
    pub fn commit(mut self) -> Result<Lsn> {
        self.done = true;
        if self.log.is_empty() {
            debug_assert!(!self.is_modified());
            self.release_everything();
            return Ok(self.inner.log.lsn());
        }
        let bp = &self.inner.bp;
        let memo = &self.memo;
        let res = self.inner.log.append(self.log.bytes(), |start, end| {
            for s in memo.iter().filter(|s| s.modified) {
                // SAFETY: X latch held on every modified page until release below.
                page::set_lsn(unsafe { bp.data_mut(s.frame) }, end);
                bp.note_modified(s.frame, start, end);
            }
        });
        if res.is_err() {
            self.inner
                .fail_stop("a mini-transaction could not append its redo");
        }
        self.release_everything();
        Ok(res?.1)
    }

    fn release_everything(&mut self) {
        for s in self.memo.iter_mut().rev() {
            if !s.released {
                s.released = true;
                self.inner.bp.unlatch(s.frame, s.mode);
                self.inner.bp.unpin(s.frame);
            }
        }
    }
}

impl Drop for Mtr<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if self.is_modified() {
            self.inner
                .fail_stop("a mini-transaction changed pages and was abandoned");
        }
        self.release_everything();
    }
}
