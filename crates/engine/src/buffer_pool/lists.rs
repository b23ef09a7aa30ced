//! Intrusive doubly linked lists over frame indices: the LRU list (with its old sublist) and the
//! flush list. Pure data structures; the buffer pool holds each behind its instance's mutex.

pub const NIL: u32 = u32::MAX;

/// A doubly linked list of frame indices in `[base, base + n)`.
pub struct Links {
    base: u32,
    prev: Vec<u32>,
    next: Vec<u32>,
    member: Vec<bool>,
    pub head: u32,
    pub tail: u32,
    pub len: u32,
}

impl Links {
    pub fn new(base: u32, n: u32) -> Self {
        Links {
            base,
            prev: vec![NIL; n as usize],
            next: vec![NIL; n as usize],
            member: vec![false; n as usize],
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
    /// Makes room for frames `[base, base + n)` (a pool that grew).
    pub fn grow(&mut self, n: u32) {
        let n = n as usize;
        if n > self.prev.len() {
            self.prev.resize(n, NIL);
            self.next.resize(n, NIL);
            self.member.resize(n, false);
        }
    }
    #[inline]
    fn i(&self, f: u32) -> usize {
        (f - self.base) as usize
    }
    pub fn contains(&self, f: u32) -> bool {
        self.member[self.i(f)]
    }
    pub fn prev(&self, f: u32) -> u32 {
        self.prev[self.i(f)]
    }
    pub fn next(&self, f: u32) -> u32 {
        self.next[self.i(f)]
    }

    /// Inserts `f` before `at` (at NIL = append at the tail).
    pub fn insert_before(&mut self, f: u32, at: u32) {
        let fi = self.i(f);
        assert!(!self.member[fi], "frame {f} already in list");
        let p = if at == NIL { self.tail } else { self.prev(at) };
        self.prev[fi] = p;
        self.next[fi] = at;
        if p == NIL {
            self.head = f;
        } else {
            let pi = self.i(p);
            self.next[pi] = f;
        }
        if at == NIL {
            self.tail = f;
        } else {
            let ai = self.i(at);
            self.prev[ai] = f;
        }
        self.member[fi] = true;
        self.len += 1;
    }

    pub fn push_head(&mut self, f: u32) {
        let h = self.head;
        self.insert_before(f, h);
    }

    pub fn remove(&mut self, f: u32) {
        let fi = self.i(f);
        assert!(self.member[fi], "frame {f} not in list");
        let (p, n) = (self.prev[fi], self.next[fi]);
        if p == NIL {
            self.head = n;
        } else {
            let pi = self.i(p);
            self.next[pi] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            let ni = self.i(n);
            self.prev[ni] = p;
        }
        self.prev[fi] = NIL;
        self.next[fi] = NIL;
        self.member[fi] = false;
        self.len -= 1;
    }
}

/// The LRU list of one instance: young sublist at the head, old sublist (the last
/// `old_blocks_pct`%) at the tail; `old` is the first block of the old sublist. New pages enter
/// at the head of the old sublist, so one large scan cannot evict the hot set.
pub struct Lru {
    pub links: Links,
    pub old: u32,
    pub old_len: u32,
    /// is_old per frame, mirrored into the frames' atomics by the caller.
    is_old: Vec<bool>,
}

impl Lru {
    pub fn new(base: u32, n: u32) -> Self {
        Lru {
            links: Links::new(base, n),
            old: NIL,
            old_len: 0,
            is_old: vec![false; n as usize],
        }
    }

    /// Makes room for frames `[base, base + n)` (a pool that grew).
    pub fn grow(&mut self, n: u32) {
        self.links.grow(n);
        if n as usize > self.is_old.len() {
            self.is_old.resize(n as usize, false);
        }
    }

    pub fn is_old(&self, f: u32) -> bool {
        self.is_old[self.links.i(f)]
    }

    fn set_old(&mut self, f: u32, v: bool, flip: &mut impl FnMut(u32, bool)) {
        let i = self.links.i(f);
        self.is_old[i] = v;
        flip(f, v);
    }

    /// Adds a newly read page at the head of the old sublist.
    pub fn insert_old(&mut self, f: u32, pct: u32, flip: &mut impl FnMut(u32, bool)) {
        let at = self.old;
        self.links.insert_before(f, at);
        self.old = f;
        self.old_len += 1;
        self.set_old(f, true, flip);
        self.adjust(pct, flip);
    }

    /// Moves a page to the head of the young sublist.
    pub fn make_young(&mut self, f: u32, pct: u32, flip: &mut impl FnMut(u32, bool)) {
        self.remove(f, pct, flip);
        self.links.push_head(f);
        self.set_old(f, false, flip);
        self.adjust(pct, flip);
    }

    pub fn remove(&mut self, f: u32, pct: u32, flip: &mut impl FnMut(u32, bool)) {
        if self.is_old(f) {
            if self.old == f {
                self.old = self.links.next(f);
            }
            self.old_len -= 1;
            self.set_old(f, false, flip);
        }
        self.links.remove(f);
        self.adjust(pct, flip);
    }

    /// Moves the old-sublist boundary so the old sublist holds about `pct`% of the list.
    fn adjust(&mut self, pct: u32, flip: &mut impl FnMut(u32, bool)) {
        let target = (u64::from(self.links.len) * u64::from(pct) / 100) as u32;
        while self.old_len > target + 1 && self.old != NIL {
            let f = self.old;
            self.old = self.links.next(f);
            self.old_len -= 1;
            self.set_old(f, false, flip);
        }
        while self.old_len < target {
            let cand = if self.old == NIL {
                self.links.tail
            } else {
                self.links.prev(self.old)
            };
            if cand == NIL {
                break;
            }
            self.old = cand;
            self.old_len += 1;
            self.set_old(cand, true, flip);
        }
    }

    /// Debug check: old blocks are exactly the suffix starting at `old`.
    pub fn check(&self) -> Result<(), String> {
        let mut f = self.links.head;
        let mut seen_old = false;
        let mut n = 0;
        let mut n_old = 0;
        while f != NIL {
            if f == self.old {
                seen_old = true;
            }
            if self.is_old(f) != seen_old {
                return Err(format!(
                    "LRU frame {f} old flag {} out of place",
                    self.is_old(f)
                ));
            }
            n += 1;
            if seen_old {
                n_old += 1;
            }
            f = self.links.next(f);
        }
        if n != self.links.len || n_old != self.old_len {
            return Err(format!(
                "LRU counts {n}/{n_old} vs {}/{}",
                self.links.len, self.old_len
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_sublist_tracks_pct_and_scans_do_not_evict_hot_pages() {
        let mut lru = Lru::new(100, 200);
        let mut flip = |_f: u32, _v: bool| {};
        for f in 100..200 {
            lru.insert_old(f, 37, &mut flip);
            lru.check().unwrap();
        }
        assert!((36..=38).contains(&lru.old_len), "{}", lru.old_len);
        // Make 100..150 hot.
        for f in 100..150 {
            lru.make_young(f, 37, &mut flip);
        }
        lru.check().unwrap();
        // A scan of 200 pages through a 100-page list: most hot pages must survive.
        let mut lru2 = Lru::new(0, 300);
        for f in 0..100 {
            lru2.insert_old(f, 37, &mut flip);
            lru2.make_young(f, 37, &mut flip);
        }
        for f in 100..300 {
            lru2.insert_old(f, 37, &mut flip);
            // evict from the tail to keep 100 pages
            if lru2.links.len > 100 {
                let t = lru2.links.tail;
                lru2.remove(t, 37, &mut flip);
            }
            lru2.check().unwrap();
        }
        let mut f = lru2.links.head;
        let mut hot = 0;
        while f != NIL {
            if f < 100 {
                hot += 1;
            }
            f = lru2.links.next(f);
        }
        assert!(hot >= 60, "hot pages survived a scan: {hot}");
        while lru.links.len > 0 {
            let t = lru.links.tail;
            lru.remove(t, 37, &mut flip);
            lru.check().unwrap();
        }
        assert_eq!(lru.old, NIL);
    }
}
