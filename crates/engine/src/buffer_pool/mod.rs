//! Buffer pool: page frames allocated up front, page hash, LRU with an old sublist, free list,
//! flush list ordered by oldest modification, page latches and pin counts.
//! (InnoDB: buf0buf, buf0lru, buf0flu's lists.)
//!
//! OVERVIEW
//! `innodb_buffer_pool_size` bytes of frames are split evenly into
//! `innodb_buffer_pool_instances`, and each instance's share into chunks of
//! `innodb_buffer_pool_chunk_size` (one aligned allocation each; the pool size is rounded up to
//! a multiple of chunk size x instances, and the chunk size is cut down to pool / instances when
//! it is larger, as InnoDB does). A frame's index is
//! `instance << ishift | chunk << cshift | frame in chunk` (cshift: frames per chunk rounded up
//! to a power of two), so finding a frame's control block and bytes is two shifts and one table
//! load: `chunks[f >> cshift]`. A page belongs to the instance chosen by `PageId::fold`. Each
//! instance has its chunks `[0, n_chunks)` and:
//! ```text
//!   hash[16]  RwLock<HashMap<PageId, frame>>   lookups take a shared lock only
//!   lru       Mutex<{ LRU list (young | old sublist), free list, withdrawn frames }>
//!   flush     Mutex<flush list>                 newest at head, oldest at tail
//! ```
//! RESIZE (SET GLOBAL innodb_buffer_pool_size, `resize` module): growing allocates chunks at the
//! end of each instance and puts their frames on the free list; shrinking withdraws the last
//! chunks: `limit` drops first, so a frame of a chunk at or above it that becomes free (evicted, released)
//! goes to the withdrawn list instead of the free list, the resize thread evicts clean pages in
//! the range and flushes dirty ones until every frame there is withdrawn, then `n_chunks` drops
//! and the chunks' page memory is freed. A chunk's control blocks stay allocated for the life of the
//! pool (a stale frame index never points at freed control blocks); its page memory is only
//! reached under a pin and latch, which a withdrawn frame cannot get (I2, I6).
//! A frame has a reader/writer latch guarding its bytes, a pin count that keeps it from being
//! evicted, and the LSNs of its oldest and newest unflushed change.
//! READ-AHEAD (`read_ahead`, InnoDB's buf0rea): each frame records the order of its page's first
//! access since it came into the pool (`note_first_access`, from `Inner::fix`); linear and
//! random read-ahead look at those of an area and queue reads that the I/O threads
//! (innodb_read_io_threads) serve into free frames only, installing pages as any reader does.
//!
//! INVARIANTS
//! - I1: a frame is in its instance's page hash iff it holds a page (state VALID or READING);
//!   free-list frames have pin 0, no latch holders, oldest_modification 0.
//! - I2: a frame is evicted (removed from the hash) only with pin == 0, observed under the hash
//!   partition's write lock; pins are only taken under that partition's read or write lock, so
//!   an evicted frame cannot be pinned concurrently.
//! - I3: oldest_modification != 0 iff the frame is on its instance's flush list; both change only
//!   under the flush-list mutex. Frames are added to a flush list only while the log mutex is
//!   held (redo::Log::commit_mtr), so each list is ordered by oldest_modification.
//! - I4: a dirty frame is never evicted; it becomes clean only after its image is durable in its
//!   tablespace (flush module).
//! - I5: frame bytes are read only under an S or X latch and written only under an X latch
//!   (or by the reader that installed the frame, which holds X while the read runs).
//! - I6: the free list holds only frames of chunks below the instance's `limit`; `limit` and
//!   `n_chunks` change only under the LRU mutex, and `limit < n_chunks` only while a shrink
//!   runs. Frames of chunks `[n_chunks, ..)` are in no list and no hash, and those chunks' page
//!   memory may be freed.
//!
//! LATCHING (acquisition order, outermost first)
//! page latches (tree order, see btree) -> log mutex -> flush-list mutex;
//! LRU mutex -> hash partition lock. No page latch is awaited while holding any mutex here.
//! An I/O thread holds the X latches of the frames it installed for a read while it takes the
//! LRU mutex and hash partition locks for the next ones (as a reader holds its page's); the
//! read-ahead queue mutex is a leaf.
//!
//! WAIT ACCOUNTING (sync_stats): the LRU and flush-list mutexes and the hash partitions count
//! their contended acquisitions; a contended page latch is counted per (space, index id) in
//! `latch_waits` after it is granted. Uncontended acquisitions record nothing.

pub mod dump;
mod lists;
pub mod read_ahead;
pub mod resize;

use std::alloc::{self, Layout};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crate::latch::RawRwLatch;
use lock_api::{RawRwLock as _, RawRwLockDowngrade as _};

pub use lists::NIL;
use lists::{Links, Lru};

use crate::config::Tunables;
use crate::counter::Counter;
use crate::sync_stats::{KeyedWaits, WaitMutex, WaitRwLock, WaitStat, NOT_AN_INDEX};
use crate::types::{Lsn, PageId};

pub type FrameIdx = u32;

/// Page latch mode.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LatchMode {
    S,
    X,
}

const FREE: u8 = 0;
const READING: u8 = 1;
const VALID: u8 = 2;
const INVALID: u8 = 3;

const HASH_PARTITIONS: usize = 16;

/// Bits of a frame index below the instance number (at most 64 instances).
const LOCAL_BITS: u32 = 26;
/// Most chunk slots per instance (InnoDB advises staying under 1000 chunks).
const MAX_CHUNK_BITS: u32 = 12;
/// Most frames per chunk.
const MAX_CHUNK_FRAMES: u64 = 1 << 20;

/// Hasher for `PageId` keys: the fold is already well mixed.
#[derive(Default)]
pub struct FoldHasher(u64);
impl Hasher for FoldHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0.rotate_left(32) ^ u64::from(v)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
type PageMap = HashMap<PageId, FrameIdx, BuildHasherDefault<FoldHasher>>;

fn pack(id: PageId) -> u64 {
    (u64::from(id.space) << 32) | u64::from(id.page)
}
fn unpack(v: u64) -> PageId {
    PageId::new((v >> 32) as u32, v as u32)
}

/// Per-frame control block (InnoDB: buf_block_t).
pub struct Frame {
    latch: RawRwLatch,
    id: AtomicU64,
    pin: AtomicU32,
    state: AtomicU8,
    /// Start LSN of the oldest change not yet on disk; 0 when clean. Protected by the flush-list
    /// mutex of the frame's instance (I3).
    pub oldest_modification: AtomicU64,
    /// End LSN of the newest change. Written under the X latch and the log mutex.
    pub newest_modification: AtomicU64,
    /// Bumped by every structural change, so a cursor can tell whether its saved position is
    /// still valid (InnoDB: modify_clock).
    pub modify_clock: AtomicU64,
    is_old: AtomicBool,
    first_access_ms: AtomicU32,
    young_clock: AtomicU64,
    /// Order of the page's first access since it came into the pool (0: none yet), from the
    /// pool's `access_clock`; linear read-ahead compares these (InnoDB: access_time).
    first_access: AtomicU64,
    /// Read by read-ahead and not accessed since: evicted so, it counts in
    /// Innodb_buffer_pool_read_ahead_evicted.
    read_ahead: AtomicBool,
    /// A flush batch holds this frame (pinned) and will write its copy.
    pub in_flush: AtomicBool,
    /// Adaptive hash index bookkeeping (btree::adaptive_hash), a heuristic only: the id of
    /// the index whose records were hashed from this page (0: none), and, packed, the number
    /// of key fields hashed (high 16 bits) and the searches that landed here since the page
    /// came in or was hashed (low 16 bits). Reset when the frame takes another page.
    pub ahi_index: AtomicU64,
    pub ahi_info: AtomicU32,
}

impl Frame {
    fn new() -> Self {
        Frame {
            latch: RawRwLatch::new(),
            id: AtomicU64::new(u64::MAX),
            pin: AtomicU32::new(0),
            state: AtomicU8::new(FREE),
            oldest_modification: AtomicU64::new(0),
            newest_modification: AtomicU64::new(0),
            modify_clock: AtomicU64::new(0),
            is_old: AtomicBool::new(false),
            first_access_ms: AtomicU32::new(0),
            young_clock: AtomicU64::new(0),
            first_access: AtomicU64::new(0),
            read_ahead: AtomicBool::new(false),
            in_flush: AtomicBool::new(false),
            ahi_index: AtomicU64::new(0),
            ahi_info: AtomicU32::new(0),
        }
    }
    pub fn page_id(&self) -> PageId {
        unpack(self.id.load(Ordering::Acquire))
    }
    pub fn pins(&self) -> u32 {
        self.pin.load(Ordering::Acquire)
    }
}

/// One chunk: its frames' control blocks (kept for the life of the pool) and their page memory,
/// one block 4 KiB aligned (ready for O_DIRECT), null while the chunk is withdrawn (I6).
///
/// The block is zeroed memory from the system allocator with the default alignment (calloc),
/// aligned by hand inside a page-larger allocation: a large calloc is fresh zero pages the
/// kernel maps at first touch, so a pool costs memory as pages come in, and allocating a chunk
/// does not write its bytes (an aligned zeroed allocation would memset them all).
struct Chunk {
    frames: Box<[Frame]>,
    /// The allocation, and its first 4 KiB boundary (frame 0's bytes).
    raw: AtomicPtr<u8>,
    mem: AtomicPtr<u8>,
}

/// Page memory alignment.
const MEM_ALIGN: usize = 4096;

impl Chunk {
    fn new(fpc: u32) -> Self {
        Chunk {
            frames: (0..fpc).map(|_| Frame::new()).collect(),
            raw: AtomicPtr::new(std::ptr::null_mut()),
            mem: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Allocates the page memory if the chunk has none (`layout`: the chunk's bytes plus
    /// MEM_ALIGN). Called before any of its frames is put on a free list.
    fn populate(&self, layout: Layout) {
        if self.mem.load(Ordering::Acquire).is_null() {
            // SAFETY: layout has non-zero size (at least 8 frames).
            let ptr = unsafe { alloc::alloc_zeroed(layout) };
            let Some(ptr) = NonNull::new(ptr) else {
                alloc::handle_alloc_error(layout)
            };
            let pad = ptr.as_ptr().align_offset(MEM_ALIGN);
            self.raw.store(ptr.as_ptr(), Ordering::Release);
            // SAFETY: pad < MEM_ALIGN, and the allocation has MEM_ALIGN bytes to spare.
            self.mem
                .store(unsafe { ptr.as_ptr().add(pad) }, Ordering::Release);
        }
    }

    /// Frees the page memory. Called only when no frame of the chunk is in a list or the hash
    /// (I6), so no latch holder can be reading it.
    fn release(&self, layout: Layout) {
        self.mem.store(std::ptr::null_mut(), Ordering::Release);
        let p = self.raw.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: allocated by `populate` with this layout; no longer reachable.
            unsafe { alloc::dealloc(p, layout) }
        }
    }
}

struct LruFree {
    lru: Lru,
    free: Vec<FrameIdx>,
    /// Frames at or above the instance's `limit` that left the pool during a shrink.
    withdrawn: Vec<FrameIdx>,
}

pub struct FlushList {
    links: Links,
}

impl FlushList {
    pub fn len(&self) -> u32 {
        self.links.len
    }
    pub fn is_empty(&self) -> bool {
        self.links.len == 0
    }
    /// Oldest (tail) frame.
    pub fn tail(&self) -> FrameIdx {
        self.links.tail
    }
    pub fn prev(&self, f: FrameIdx) -> FrameIdx {
        self.links.prev(f)
    }
}

pub struct Instance {
    /// Index of the first frame of chunk 0.
    base: FrameIdx,
    /// Frames per chunk, and log2 of a chunk's index space.
    fpc: u32,
    cshift: u32,
    /// Chunks in the pool: `[0, n_chunks)`. Changes under the LRU mutex (I6).
    n_chunks: AtomicU32,
    /// Frames of chunks at or above this one are being withdrawn; equals `n_chunks` outside a
    /// shrink.
    limit: AtomicU32,
    hash: Box<[WaitRwLock<PageMap>]>,
    lru: WaitMutex<LruFree>,
    pub flush: WaitMutex<FlushList>,
    /// Number of pages evicted from the LRU so far (InnoDB: freed_page_clock).
    freed_clock: AtomicU64,
}

impl Instance {
    fn partition(&self, id: PageId) -> &WaitRwLock<PageMap> {
        &self.hash[(id.fold() >> 7) as usize % HASH_PARTITIONS]
    }
    /// Frames in the pool (pages total of this instance).
    pub fn n_frames(&self) -> u32 {
        self.n_chunks.load(Ordering::Acquire) * self.fpc
    }
    /// The instance's chunk a frame belongs to.
    fn chunk_no(&self, f: FrameIdx) -> u32 {
        (f - self.base) >> self.cshift
    }
    /// Whether a shrink is taking the frame's chunk.
    fn withdrawing(&self, f: FrameIdx) -> bool {
        self.chunk_no(f) >= self.limit.load(Ordering::Acquire)
    }
    /// The frames of chunks `[from, to)`.
    fn chunk_frames(&self, from: u32, to: u32) -> impl DoubleEndedIterator<Item = FrameIdx> + '_ {
        (from..to).flat_map(move |c| {
            let first = self.base + (c << self.cshift);
            first..first + self.fpc
        })
    }
    /// Size of the lists' index space for `chunks` chunks.
    fn span(&self, chunks: u32) -> u32 {
        chunks << self.cshift
    }
    /// Puts a frame that became free on the free list, or on the withdrawn list if a shrink is
    /// taking it (I6). LRU mutex held (`g`).
    fn push_free(&self, g: &mut LruFree, f: FrameIdx) {
        if self.withdrawing(f) {
            g.withdrawn.push(f);
        } else {
            g.free.push(f);
        }
    }
    /// Waits on the LRU/free-list mutex.
    pub fn lru_waits(&self) -> &WaitStat {
        self.lru.stat()
    }
    /// Waits on the page hash partitions.
    pub fn hash_waits(&self) -> impl Iterator<Item = &WaitStat> {
        self.hash.iter().map(WaitRwLock::stat)
    }
}

/// Counters of the buffer pool (SHOW ENGINE INNODB STATUS / SHOW STATUS names in comments).
#[derive(Default)]
pub struct PoolStats {
    /// Innodb_buffer_pool_read_requests
    pub read_requests: Counter,
    /// Pages a thread that needed them read (Innodb_buffer_pool_reads, with read_ahead_rnd).
    pub reads: Counter,
    /// Pages read by linear read-ahead (Innodb_buffer_pool_read_ahead).
    pub read_ahead: Counter,
    /// Pages read by random read-ahead (Innodb_buffer_pool_read_ahead_rnd).
    pub read_ahead_rnd: Counter,
    /// Read-ahead pages evicted without an access (Innodb_buffer_pool_read_ahead_evicted).
    pub read_ahead_evicted: Counter,
    /// Innodb_buffer_pool_wait_free
    pub wait_free: Counter,
    /// pages made young / not young
    pub made_young: Counter,
    pub made_not_young: Counter,
    pub evicted: Counter,
    pub created: Counter,
    /// Innodb_buffer_pool_write_requests: page changes logged by mini-transactions.
    pub write_requests: Counter,
}

/// How a pool of a given size is laid out: frames per chunk, chunks per instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub page_size: usize,
    pub instances: usize,
    /// Frames per chunk.
    pub chunk_frames: u32,
    /// Chunks per instance.
    pub chunks: u32,
}

impl Geometry {
    /// log2 of a chunk's frame index space (frames per chunk rounded up to a power of two).
    pub fn chunk_shift(&self) -> u32 {
        self.chunk_frames.next_power_of_two().trailing_zeros()
    }
    /// Chunk slots per instance.
    pub fn max_chunks(&self) -> u32 {
        1 << (LOCAL_BITS - self.chunk_shift()).min(MAX_CHUNK_BITS)
    }
}

impl Geometry {
    /// The layout for `pool_bytes` in chunks of `chunk_bytes`: the chunk is cut to
    /// pool / instances if larger (and grown if the pool would need more than MAX_CHUNKS chunks
    /// per instance), the pool rounded up to a multiple of chunk x instances.
    pub fn new(page_size: usize, pool_bytes: u64, chunk_bytes: u64, instances: usize) -> Self {
        let ps = page_size as u64;
        let n = instances.max(1) as u64;
        let per_inst = (pool_bytes / ps / n).max(8);
        let mut chunk_frames = (chunk_bytes / ps).clamp(8, per_inst).min(MAX_CHUNK_FRAMES);
        let mut g = Geometry {
            page_size,
            instances: n as usize,
            chunk_frames: chunk_frames as u32,
            chunks: 1,
        };
        if per_inst.div_ceil(chunk_frames) > u64::from(g.max_chunks()) {
            chunk_frames = per_inst.div_ceil(1 << MAX_CHUNK_BITS);
            g.chunk_frames = chunk_frames.min(MAX_CHUNK_FRAMES) as u32;
        }
        g.chunks = g.chunks_for(pool_bytes).unwrap_or(g.max_chunks());
        g
    }

    /// Chunks per instance for a pool of `pool_bytes` (rounded up), if within the chunk table.
    pub fn chunks_for(&self, pool_bytes: u64) -> Option<u32> {
        let unit = self.chunk_bytes() * self.instances as u64;
        let c = pool_bytes.div_ceil(unit).max(1);
        u32::try_from(c).ok().filter(|&c| c <= self.max_chunks())
    }

    pub fn chunk_bytes(&self) -> u64 {
        u64::from(self.chunk_frames) * self.page_size as u64
    }

    /// The pool size this layout gives.
    pub fn pool_bytes(&self) -> u64 {
        self.chunk_bytes() * u64::from(self.chunks) * self.instances as u64
    }

    /// Largest pool the chunk table allows.
    pub fn max_pool_bytes(&self) -> u64 {
        self.chunk_bytes() * u64::from(self.max_chunks()) * self.instances as u64
    }
}

pub struct BufferPool {
    page_size: usize,
    /// Frames per chunk.
    fpc: u32,
    /// A frame index is `instance << ishift | chunk << cshift | frame in chunk`.
    cshift: u32,
    cmask: u32,
    ishift: u32,
    /// Chunk slots, indexed by `frame >> cshift` (`instance << (ishift - cshift) | chunk`).
    chunks: Box<[OnceLock<Chunk>]>,
    chunk_layout: Layout,
    instances: Box<[Instance]>,
    epoch: Instant,
    /// Numbers first accesses (`Frame::first_access`) in order.
    access_clock: AtomicU64,
    tun: Arc<Tunables>,
    pub stats: PoolStats,
    /// Contended page latch acquisitions by (space, index id) (sync_stats).
    pub latch_waits: KeyedWaits,
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        for c in self.chunks.iter().filter_map(OnceLock::get) {
            c.release(self.chunk_layout);
        }
    }
}

/// What a frame is installed for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// A page being created: VALID at once, its creator's access its first.
    New,
    /// A page a thread needs, read by that thread.
    Read,
    /// A page read ahead of need by an I/O thread.
    ReadAhead,
}

/// Outcome of trying to install a frame for a page that was not in the pool.
pub enum Install {
    /// The frame now holds the page id, X-latched and pinned once, state READING (or VALID for
    /// a new page).
    Installed,
    /// Another thread installed the page first; the given frame went back to the free list.
    Raced,
}

impl BufferPool {
    pub fn new(geo: Geometry, tun: Arc<Tunables>) -> Self {
        let fpc = geo.chunk_frames;
        // The default alignment, so the allocator's calloc serves it (see Chunk).
        let chunk_layout = Layout::from_size_align(fpc as usize * geo.page_size + MEM_ALIGN, 16)
            .expect("chunk layout");
        let cshift = geo.chunk_shift();
        let ishift = cshift + geo.max_chunks().trailing_zeros();
        let chunks: Box<[OnceLock<Chunk>]> = (0..geo.instances << (ishift - cshift))
            .map(|_| OnceLock::new())
            .collect();
        let instances: Box<[Instance]> = (0..geo.instances)
            .map(|i| {
                let base = (i as u32) << ishift;
                for c in 0..geo.chunks {
                    chunks[((base >> cshift) + c) as usize]
                        .get_or_init(|| Chunk::new(fpc))
                        .populate(chunk_layout);
                }
                let span = geo.chunks << cshift;
                let inst = Instance {
                    base,
                    fpc,
                    cshift,
                    n_chunks: AtomicU32::new(geo.chunks),
                    limit: AtomicU32::new(geo.chunks),
                    hash: (0..HASH_PARTITIONS)
                        .map(|_| WaitRwLock::new(PageMap::default()))
                        .collect(),
                    lru: WaitMutex::new(LruFree {
                        lru: Lru::new(base, span),
                        free: Vec::new(),
                        withdrawn: Vec::new(),
                    }),
                    flush: WaitMutex::new(FlushList {
                        links: Links::new(base, span),
                    }),
                    freed_clock: AtomicU64::new(0),
                };
                let free: Vec<FrameIdx> = inst.chunk_frames(0, geo.chunks).rev().collect();
                inst.lru.lock().free = free;
                inst
            })
            .collect();
        BufferPool {
            page_size: geo.page_size,
            fpc,
            cshift,
            cmask: (1 << cshift) - 1,
            ishift,
            chunks,
            chunk_layout,
            instances,
            epoch: Instant::now(),
            access_clock: AtomicU64::new(0),
            tun,
            stats: PoolStats::default(),
            latch_waits: KeyedWaits::default(),
        }
    }

    pub fn page_size(&self) -> usize {
        self.page_size
    }
    /// Frames in the pool now (Innodb_buffer_pool_pages_total).
    pub fn n_frames(&self) -> usize {
        self.instances.iter().map(|i| i.n_frames() as usize).sum()
    }
    /// The layout in force (chunks per instance as of now).
    pub fn geometry(&self) -> Geometry {
        Geometry {
            page_size: self.page_size,
            instances: self.instances.len(),
            chunk_frames: self.fpc,
            chunks: self.instances[0].n_chunks.load(Ordering::Acquire),
        }
    }
    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }
    pub fn instance_of(&self, id: PageId) -> usize {
        (id.fold() % self.instances.len() as u64) as usize
    }
    pub fn instance_of_frame(&self, f: FrameIdx) -> usize {
        (f >> self.ishift) as usize
    }
    /// The chunk holding frame `f` and the frame's place in it.
    #[inline]
    fn chunk_of(&self, f: FrameIdx) -> (&Chunk, usize) {
        match self
            .chunks
            .get((f >> self.cshift) as usize)
            .and_then(OnceLock::get)
        {
            Some(c) => (c, (f & self.cmask) as usize),
            None => panic!("frame {f} is outside the buffer pool"),
        }
    }
    #[inline]
    pub fn frame(&self, f: FrameIdx) -> &Frame {
        let (c, i) = self.chunk_of(f);
        &c.frames[i]
    }
    /// Start of a frame's page memory (its chunk is populated: the frame is in the pool).
    #[inline]
    fn frame_ptr(&self, f: FrameIdx) -> *mut u8 {
        let (c, i) = self.chunk_of(f);
        let base = c.mem.load(Ordering::Acquire);
        assert!(!base.is_null(), "frame {f} of a withdrawn chunk");
        // SAFETY: i < frames per chunk, so the offset is inside the chunk's allocation.
        unsafe { base.add(i * self.page_size) }
    }

    /// The bytes of a frame.
    ///
    /// # Safety
    /// The caller holds the frame's S or X latch (I5) and keeps it for the life of the slice.
    pub unsafe fn data(&self, f: FrameIdx) -> &[u8] {
        // SAFETY: in bounds of the chunk; aliasing governed by the latch (caller).
        unsafe { std::slice::from_raw_parts(self.frame_ptr(f), self.page_size) }
    }

    /// The bytes of a frame, writable.
    ///
    /// # Safety
    /// The caller holds the frame's X latch and no other slice of this frame is alive.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn data_mut(&self, f: FrameIdx) -> &mut [u8] {
        // SAFETY: as above, exclusive by the X latch (caller).
        unsafe { std::slice::from_raw_parts_mut(self.frame_ptr(f), self.page_size) }
    }

    fn now_ms(&self) -> u32 {
        (self.epoch.elapsed().as_millis() as u32).max(1)
    }

    // ---- latches -------------------------------------------------------------------------

    pub fn latch(&self, f: FrameIdx, mode: LatchMode) {
        if !self.try_latch(f, mode) {
            self.latch_slow(f, mode);
        }
    }

    /// A contended latch: block, then count the wait under the page's index (read with the
    /// latch held, so the bytes are stable), or under its space and page type if it is no
    /// B-tree node.
    #[cold]
    #[inline(never)]
    fn latch_slow(&self, f: FrameIdx, mode: LatchMode) {
        let l = &self.frame(f).latch;
        let t = Instant::now();
        match mode {
            LatchMode::S => l.lock_shared(),
            LatchMode::X => l.lock_exclusive(),
        }
        let ns = t.elapsed().as_nanos() as u64;
        let space = self.frame(f).page_id().space;
        let mut index = NOT_AN_INDEX;
        if self.is_valid(f) {
            // SAFETY: the latch is held (I5); the slice is dropped before returning.
            let p = unsafe { self.data(f) };
            index = match crate::page::page_type(p) {
                Some(crate::page::PageType::Index) => crate::page::index_page::index_id(p),
                Some(t) => NOT_AN_INDEX - t as u64,
                None => NOT_AN_INDEX,
            };
        }
        self.latch_waits.record(space, index, ns);
    }

    pub fn try_latch(&self, f: FrameIdx, mode: LatchMode) -> bool {
        let l = &self.frame(f).latch;
        match mode {
            LatchMode::S => l.try_lock_shared(),
            LatchMode::X => l.try_lock_exclusive(),
        }
    }

    /// Releases a latch taken with `latch`.
    pub fn unlatch(&self, f: FrameIdx, mode: LatchMode) {
        let l = &self.frame(f).latch;
        // SAFETY: callers pair every unlatch with a latch they hold (mtr memo / flush batch).
        unsafe {
            match mode {
                LatchMode::S => l.unlock_shared(),
                LatchMode::X => l.unlock_exclusive(),
            }
        }
    }

    /// Turns a held X latch into an S latch.
    pub fn downgrade(&self, f: FrameIdx) {
        // SAFETY: caller holds X (install path).
        unsafe { self.frame(f).latch.downgrade() }
    }

    pub fn unpin(&self, f: FrameIdx) {
        let old = self.frame(f).pin.fetch_sub(1, Ordering::AcqRel);
        assert!(old > 0, "unpin of an unpinned frame");
    }

    /// Adds a pin to a frame the caller already has pinned.
    pub fn repin(&self, f: FrameIdx) {
        let old = self.frame(f).pin.fetch_add(1, Ordering::AcqRel);
        assert!(old > 0, "repin of an unpinned frame");
    }

    pub fn is_valid(&self, f: FrameIdx) -> bool {
        self.frame(f).state.load(Ordering::Acquire) == VALID
    }

    // ---- lookup, install, access -----------------------------------------------------------

    /// Pins the frame holding `id` if the page is in the pool.
    pub fn lookup_pin(&self, id: PageId) -> Option<FrameIdx> {
        self.stats.read_requests.inc();
        let inst = &self.instances[self.instance_of(id)];
        let part = inst.partition(id).read();
        let f = *part.get(&id)?;
        self.frame(f).pin.fetch_add(1, Ordering::AcqRel);
        Some(f)
    }

    /// Whether `id` is in the pool (valid or being read).
    pub fn contains(&self, id: PageId) -> bool {
        let inst = &self.instances[self.instance_of(id)];
        inst.partition(id).read().contains_key(&id)
    }

    /// Pins `id`'s frame only if present and clean-or-dirty valid; used by flush and checks.
    pub fn peek_pin(&self, id: PageId) -> Option<FrameIdx> {
        let inst = &self.instances[self.instance_of(id)];
        let part = inst.partition(id).read();
        let f = *part.get(&id)?;
        self.frame(f).pin.fetch_add(1, Ordering::AcqRel);
        Some(f)
    }

    /// Takes a frame from the free list, or evicts a clean unpinned page from the LRU tail
    /// (scanning at most `depth` frames). None if neither is possible.
    pub fn try_free_frame(&self, inst_idx: usize, depth: u32) -> Option<FrameIdx> {
        let inst = &self.instances[inst_idx];
        let mut g = inst.lru.lock();
        if let Some(f) = g.free.pop() {
            return Some(f);
        }
        let pct = self.tun.old_blocks_pct.load(Ordering::Relaxed).clamp(5, 95);
        let mut cur = g.lru.links.tail;
        let mut scanned = 0;
        while cur != NIL && scanned < depth {
            let prev = g.lru.links.prev(cur);
            if self.try_evict_locked(inst, &mut g, cur, pct) {
                if !inst.withdrawing(cur) {
                    return Some(cur);
                }
                g.withdrawn.push(cur); // I6: a shrink is taking it
            }
            cur = prev;
            scanned += 1;
        }
        None
    }

    /// Evicts `f` if it is clean and unpinned. Called with the LRU mutex held.
    fn try_evict_locked(&self, inst: &Instance, g: &mut LruFree, f: FrameIdx, pct: u32) -> bool {
        let fr = &self.frame(f);
        if fr.pin.load(Ordering::Acquire) != 0
            || fr.oldest_modification.load(Ordering::Acquire) != 0
            || fr.state.load(Ordering::Acquire) != VALID
        {
            return false;
        }
        let id = fr.page_id();
        let mut part = inst.partition(id).write();
        // Recheck under the write lock: no pin can be taken now (I2).
        if fr.pin.load(Ordering::Acquire) != 0
            || fr.oldest_modification.load(Ordering::Acquire) != 0
        {
            return false;
        }
        part.remove(&id);
        drop(part);
        fr.state.store(FREE, Ordering::Release);
        fr.id.store(u64::MAX, Ordering::Release);
        g.lru.remove(f, pct, &mut |x, v| {
            self.frame(x).is_old.store(v, Ordering::Relaxed)
        });
        inst.freed_clock.fetch_add(1, Ordering::Relaxed);
        self.stats.evicted.inc();
        if fr.read_ahead.swap(false, Ordering::Relaxed) {
            self.stats.read_ahead_evicted.inc();
        }
        true
    }

    /// Moves clean unpinned pages from the LRU tail to the free list until it holds `want`
    /// frames, scanning at most `depth` frames. Returns the number freed. (Page cleaner.)
    pub fn replenish_free(&self, inst_idx: usize, want: usize, depth: u32) -> usize {
        let inst = &self.instances[inst_idx];
        let mut g = inst.lru.lock();
        let pct = self.tun.old_blocks_pct.load(Ordering::Relaxed).clamp(5, 95);
        let mut cur = g.lru.links.tail;
        let mut scanned = 0;
        let mut freed = 0;
        while cur != NIL && scanned < depth && g.free.len() < want {
            let prev = g.lru.links.prev(cur);
            if self.try_evict_locked(inst, &mut g, cur, pct) {
                inst.push_free(&mut g, cur);
                freed += 1;
            }
            cur = prev;
            scanned += 1;
        }
        freed
    }

    /// Up to `max` dirty, unpinned frames among the last `depth` of the LRU, tail first (page
    /// cleaner's LRU flush, single-page flushes).
    pub fn lru_tail_dirty(&self, inst_idx: usize, depth: u32, max: usize, out: &mut Vec<FrameIdx>) {
        let inst = &self.instances[inst_idx];
        let g = inst.lru.lock();
        let mut cur = g.lru.links.tail;
        let mut scanned = 0;
        while cur != NIL && scanned < depth && out.len() < max {
            let fr = &self.frame(cur);
            if fr.oldest_modification.load(Ordering::Acquire) != 0
                && fr.pin.load(Ordering::Acquire) == 0
                && !fr.in_flush.load(Ordering::Acquire)
            {
                out.push(cur);
            }
            cur = g.lru.links.prev(cur);
            scanned += 1;
        }
    }

    pub fn free_len(&self, inst_idx: usize) -> usize {
        self.instances[inst_idx].lru.lock().free.len()
    }

    /// A frame from an instance's free list, evicting nothing (read-ahead: RA2).
    pub fn take_free(&self, inst_idx: usize) -> Option<FrameIdx> {
        self.instances[inst_idx].lru.lock().free.pop()
    }

    /// Returns an unused frame to the free list.
    pub fn release_free_frame(&self, inst_idx: usize, f: FrameIdx) {
        let inst = &self.instances[inst_idx];
        inst.push_free(&mut inst.lru.lock(), f);
    }

    /// Installs `id` into free frame `f` (from `try_free_frame` of the page's instance): the
    /// frame is X-latched, pinned once and in the page hash. `new_page` marks it VALID at once
    /// (a page being created, not read).
    pub fn install(&self, id: PageId, f: FrameIdx, new_page: bool) -> Install {
        self.install_as(id, f, if new_page { Fill::New } else { Fill::Read })
    }

    /// `install` for a page read ahead of need (not counted as a read: the reader counts it
    /// by kind once read).
    pub fn install_read_ahead(&self, id: PageId, f: FrameIdx) -> Install {
        self.install_as(id, f, Fill::ReadAhead)
    }

    fn install_as(&self, id: PageId, f: FrameIdx, fill: Fill) -> Install {
        let new_page = fill == Fill::New;
        let ii = self.instance_of(id);
        let inst = &self.instances[ii];
        let fr = &self.frame(f);
        {
            let mut part = inst.partition(id).write();
            if part.contains_key(&id) {
                drop(part);
                self.release_free_frame(ii, f);
                return Install::Raced;
            }
            let ok = fr.latch.try_lock_exclusive();
            assert!(ok, "free frame {f} is latched");
            fr.id.store(pack(id), Ordering::Release);
            fr.pin.store(1, Ordering::Release);
            fr.state
                .store(if new_page { VALID } else { READING }, Ordering::Release);
            fr.modify_clock.fetch_add(1, Ordering::Relaxed);
            fr.first_access_ms.store(0, Ordering::Relaxed);
            let first = if new_page { self.next_access() } else { 0 };
            fr.first_access.store(first, Ordering::Relaxed);
            fr.read_ahead
                .store(fill == Fill::ReadAhead, Ordering::Relaxed);
            fr.young_clock
                .store(inst.freed_clock.load(Ordering::Relaxed), Ordering::Relaxed);
            fr.ahi_index.store(0, Ordering::Relaxed);
            fr.ahi_info.store(0, Ordering::Relaxed);
            part.insert(id, f);
        }
        let pct = self.tun.old_blocks_pct.load(Ordering::Relaxed).clamp(5, 95);
        inst.lru.lock().lru.insert_old(f, pct, &mut |x, v| {
            self.frame(x).is_old.store(v, Ordering::Relaxed)
        });
        match fill {
            Fill::New => self.stats.created.inc(),
            Fill::Read => self.stats.reads.inc(),
            Fill::ReadAhead => {}
        }
        Install::Installed
    }

    fn next_access(&self) -> u64 {
        self.access_clock.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Records an access to a frame the caller holds pinned and latched; true if it is the
    /// first since the page came into the pool (linear read-ahead then looks at its area).
    pub fn note_first_access(&self, f: FrameIdx) -> bool {
        let fr = self.frame(f);
        if fr.first_access.load(Ordering::Relaxed) != 0 {
            return false;
        }
        // Readers holding S latches may race here; the first stamp wins.
        let first = self.next_access();
        if fr
            .first_access
            .compare_exchange(0, first, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        fr.read_ahead.store(false, Ordering::Relaxed);
        true
    }

    /// For each page `low..high` of `space`: the order of its first access, if it is in the
    /// pool and was accessed (linear read-ahead).
    pub fn first_accesses(&self, space: u32, low: u32, high: u32) -> Vec<Option<u64>> {
        (low..high)
            .map(|p| {
                let id = PageId::new(space, p);
                let inst = &self.instances[self.instance_of(id)];
                let part = inst.partition(id).read();
                let f = *part.get(&id)?;
                let first = self.frame(f).first_access.load(Ordering::Relaxed);
                (first != 0).then_some(first)
            })
            .collect()
    }

    /// How many pages `low..high` of `space` are in the pool, were accessed, and were made
    /// young (or came in) less than a quarter of the young sublist's evictions ago (random
    /// read-ahead; InnoDB: buf_page_is_accessed and buf_page_peek_if_young).
    pub fn recently_used(&self, space: u32, low: u32, high: u32) -> usize {
        (low..high)
            .filter(|&p| {
                let id = PageId::new(space, p);
                let inst = &self.instances[self.instance_of(id)];
                let part = inst.partition(id).read();
                let Some(&f) = part.get(&id) else {
                    return false;
                };
                let fr = self.frame(f);
                fr.first_access.load(Ordering::Relaxed) != 0
                    && inst
                        .freed_clock
                        .load(Ordering::Relaxed)
                        .saturating_sub(fr.young_clock.load(Ordering::Relaxed))
                        <= self.young_quarter(inst)
            })
            .count()
    }

    /// Evictions after which a young page is moved to the head again: a quarter of the young
    /// sublist.
    fn young_quarter(&self, inst: &Instance) -> u64 {
        let pct = u64::from(self.tun.old_blocks_pct.load(Ordering::Relaxed).clamp(5, 95));
        u64::from(inst.n_frames()) * (100 - pct) / 400
    }

    /// The read into an installed frame succeeded.
    pub fn complete_read(&self, f: FrameIdx) {
        self.frame(f).state.store(VALID, Ordering::Release);
    }

    /// The read into an installed frame failed: take the page out of the pool. The caller holds
    /// the X latch and one pin; both are released here. Threads waiting on the latch see the
    /// frame INVALID, drop their pins and retry.
    pub fn abort_read(&self, f: FrameIdx) {
        let fr = &self.frame(f);
        let id = fr.page_id();
        let ii = self.instance_of(id);
        let inst = &self.instances[ii];
        fr.state.store(INVALID, Ordering::Release);
        {
            let mut g = inst.lru.lock();
            let pct = self.tun.old_blocks_pct.load(Ordering::Relaxed).clamp(5, 95);
            g.lru.remove(f, pct, &mut |x, v| {
                self.frame(x).is_old.store(v, Ordering::Relaxed)
            });
            inst.partition(id).write().remove(&id);
        }
        self.unlatch(f, LatchMode::X);
        self.unpin(f);
        // Waiters release their pins as soon as they get the latch.
        while fr.pin.load(Ordering::Acquire) != 0 {
            std::thread::yield_now();
        }
        fr.id.store(u64::MAX, Ordering::Release);
        fr.state.store(FREE, Ordering::Release);
        self.release_free_frame(ii, f);
    }

    /// LRU bookkeeping after a page was latched (InnoDB: buf_page_make_young_if_needed).
    pub fn on_access(&self, f: FrameIdx) {
        let fr = &self.frame(f);
        // The first access is stamped whatever the page's place (InnoDB's access_time): a page
        // read into the old sublist may be in the young one by its first access (the boundary
        // moved), and back in the old one later, where the window counts from that access.
        let first = fr.first_access_ms.load(Ordering::Relaxed);
        let stamped = if first == 0 {
            let now = self.now_ms();
            fr.first_access_ms.store(now, Ordering::Relaxed);
            Some(now)
        } else {
            None
        };
        let inst_idx = self.instance_of_frame(f);
        let inst = &self.instances[inst_idx];
        if inst.freed_clock.load(Ordering::Relaxed) == 0 {
            // Nothing was evicted yet (warm-up, or the data fits): LRU order does not matter
            // and moving pages would only cost the mutex (as InnoDB's buf_page_peek_if_too_old).
            return;
        }
        if fr.is_old.load(Ordering::Relaxed) {
            let window = self.tun.old_blocks_time.load(Ordering::Relaxed);
            let now = stamped.unwrap_or_else(|| self.now_ms());
            if window != 0 && (first == 0 || now.wrapping_sub(first) < window) {
                self.stats.made_not_young.inc();
                return;
            }
            self.make_young(inst, f);
        } else {
            // A young page moves to the head only once a quarter of the young sublist has been
            // evicted since it was last moved, so hot pages cost no mutex.
            let clock = inst.freed_clock.load(Ordering::Relaxed);
            let young_quarter = self.young_quarter(inst);
            if clock.saturating_sub(fr.young_clock.load(Ordering::Relaxed)) > young_quarter {
                self.make_young(inst, f);
            }
        }
    }

    fn make_young(&self, inst: &Instance, f: FrameIdx) {
        let fr = &self.frame(f);
        let mut g = inst.lru.lock();
        if g.lru.links.contains(f) {
            let pct = self.tun.old_blocks_pct.load(Ordering::Relaxed).clamp(5, 95);
            g.lru.make_young(f, pct, &mut |x, v| {
                self.frame(x).is_old.store(v, Ordering::Relaxed)
            });
            fr.young_clock
                .store(inst.freed_clock.load(Ordering::Relaxed), Ordering::Relaxed);
            self.stats.made_young.inc();
        }
    }

    // ---- flush list --------------------------------------------------------------------------

    /// Marks a frame dirty from `start_lsn` if it was clean. Called by mtr commit with the log
    /// mutex held (I3), so list order follows LSN order.
    pub fn note_modified(&self, f: FrameIdx, start_lsn: Lsn, end_lsn: Lsn) {
        let fr = &self.frame(f);
        // Both LSNs change under the flush-list mutex: `mark_clean_if_unchanged` compares
        // newest_modification and clears oldest_modification under it, and a change slipping
        // between its compare and its clear would leave a modified page marked clean (I4).
        let inst = &self.instances[self.instance_of_frame(f)];
        self.stats.write_requests.inc();
        let mut fl = inst.flush.lock();
        fr.newest_modification.store(end_lsn, Ordering::Release);
        if fr.oldest_modification.load(Ordering::Acquire) == 0 {
            fr.oldest_modification.store(start_lsn, Ordering::Release);
            fl.links.push_head(f);
        }
    }

    /// Marks a frame dirty during recovery, keeping the list sorted (pages are applied out of
    /// LSN order there).
    pub fn note_recovered(&self, f: FrameIdx, oldest: Lsn, newest: Lsn) {
        let fr = &self.frame(f);
        let inst = &self.instances[self.instance_of_frame(f)];
        let mut fl = inst.flush.lock();
        fr.newest_modification.store(newest, Ordering::Release);
        self.raise_or_insert(&mut fl, f, oldest);
    }

    /// Gives a frame `oldest` as its oldest_modification if it is clean or has an older one,
    /// placing it in the flush list by walking from the head (newest) to the first frame not
    /// newer than `oldest` (I3). Flush-list mutex held.
    fn raise_or_insert(&self, fl: &mut FlushList, f: FrameIdx, oldest: Lsn) {
        let fr = &self.frame(f);
        let cur_oldest = fr.oldest_modification.load(Ordering::Acquire);
        if cur_oldest != 0 {
            if cur_oldest >= oldest {
                return;
            }
            fl.links.remove(f);
        }
        fr.oldest_modification.store(oldest, Ordering::Release);
        let mut at = fl.links.head;
        while at != NIL && self.frame(at).oldest_modification.load(Ordering::Acquire) > oldest {
            at = fl.links.next(at);
        }
        fl.links.insert_before(f, at);
    }

    /// After a flushed image of `f` with `newest_modification == flushed_lsn` became durable:
    /// marks the frame clean, or, if it changed again meanwhile, moves its oldest_modification
    /// up to `flushed_lsn`. That is a lower bound of the changes the image lacks: the copy was
    /// taken under the page latch, and a later change reserves its redo (start LSN) after the
    /// change ending at `flushed_lsn`. Without this a page changed during every write of it would
    /// keep its first change's LSN and hold the checkpoint back. Returns whether this marked it
    /// clean.
    pub fn mark_clean_if_unchanged(&self, f: FrameIdx, flushed_lsn: Lsn) -> bool {
        let fr = &self.frame(f);
        let inst = &self.instances[self.instance_of_frame(f)];
        let mut fl = inst.flush.lock();
        if fr.oldest_modification.load(Ordering::Acquire) == 0 {
            return false;
        }
        if fr.newest_modification.load(Ordering::Acquire) == flushed_lsn {
            fl.links.remove(f);
            fr.oldest_modification.store(0, Ordering::Release);
            return true;
        }
        self.raise_or_insert(&mut fl, f, flushed_lsn);
        false
    }

    /// Smallest oldest_modification over all flush lists (None if no page is dirty).
    pub fn min_oldest_modification(&self) -> Option<Lsn> {
        let mut min: Option<Lsn> = None;
        for inst in self.instances.iter() {
            let fl = inst.flush.lock();
            let t = fl.links.tail;
            if t != NIL {
                let v = self.frame(t).oldest_modification.load(Ordering::Acquire);
                min = Some(min.map_or(v, |m| m.min(v)));
            }
        }
        min
    }

    /// Dirty pages in the pool.
    pub fn n_dirty(&self) -> usize {
        self.instances
            .iter()
            .map(|i| i.flush.lock().links.len as usize)
            .sum()
    }

    /// Pages holding data (in the LRU).
    pub fn n_data(&self) -> usize {
        self.instances
            .iter()
            .map(|i| i.lru.lock().lru.links.len as usize)
            .sum()
    }

    pub fn n_free(&self) -> usize {
        self.instances.iter().map(|i| i.lru.lock().free.len()).sum()
    }

    /// (`n_free`, `n_data`) with each instance's two counts read together under its LRU
    /// latch, so a page moving between the free list and the LRU list is counted once.
    pub fn n_free_and_data(&self) -> (usize, usize) {
        self.instances.iter().fold((0, 0), |(f, d), i| {
            let g = i.lru.lock();
            (f + g.free.len(), d + g.lru.links.len as usize)
        })
    }

    /// The page ids of the first `pct` percent of an instance's LRU list, from the young
    /// (most recently used) end: what a buffer pool dump saves.
    pub fn lru_page_ids(&self, inst_idx: usize, pct: u32) -> Vec<PageId> {
        let g = self.instances[inst_idx].lru.lock();
        let want = (u64::from(g.lru.links.len) * u64::from(pct)).div_ceil(100) as usize;
        let mut out = Vec::with_capacity(want);
        let mut f = g.lru.links.head;
        while f != NIL && out.len() < want {
            out.push(self.frame(f).page_id());
            f = g.lru.links.next(f);
        }
        out
    }

    /// Free frames of one instance.
    pub fn free_len_of(&self, inst_idx: usize) -> usize {
        self.instances[inst_idx].lru.lock().free.len()
    }

    /// Dirty pages of one instance.
    pub fn dirty_len_of(&self, inst_idx: usize) -> usize {
        self.instances[inst_idx].flush.lock().links.len as usize
    }

    /// LRU length and old sublist length of one instance.
    pub fn lru_lens(&self, inst_idx: usize) -> (u32, u32) {
        let g = self.instances[inst_idx].lru.lock();
        (g.lru.links.len, g.lru.old_len)
    }

    /// Collects up to `max` frames from the tail (oldest end) of an instance's flush list whose
    /// oldest_modification is below `lsn_limit`, skipping frames already in a batch.
    pub fn flush_list_tail(
        &self,
        inst_idx: usize,
        lsn_limit: Lsn,
        max: usize,
        out: &mut Vec<FrameIdx>,
    ) {
        let fl = self.instances[inst_idx].flush.lock();
        let mut cur = fl.links.tail;
        while cur != NIL && out.len() < max {
            let fr = &self.frame(cur);
            if fr.oldest_modification.load(Ordering::Acquire) >= lsn_limit {
                break;
            }
            if !fr.in_flush.load(Ordering::Acquire) {
                out.push(cur);
            }
            cur = fl.links.prev(cur);
        }
    }

    /// Pins a frame found on a list (flush list or LRU) so a flush can copy it; fails if the
    /// frame is being freed.
    pub fn pin_for_flush(&self, f: FrameIdx) -> bool {
        let fr = &self.frame(f);
        let id = fr.page_id();
        if id.space == u32::MAX {
            return false;
        }
        let inst = &self.instances[self.instance_of(id)];
        let part = inst.partition(id).read();
        if part.get(&id) != Some(&f) || fr.state.load(Ordering::Acquire) != VALID {
            return false;
        }
        if fr.in_flush.swap(true, Ordering::AcqRel) {
            return false;
        }
        fr.pin.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// The frame holding `id` if it could join a flush batch as a neighbour: in the pool and
    /// valid, dirty, in no batch, and with `old_only` in the LRU's old sublist. `pin` also pins
    /// it for the flush (as `pin_for_flush`), under the same hash partition lock.
    pub fn neighbor_for_flush(&self, id: PageId, old_only: bool, pin: bool) -> Option<FrameIdx> {
        let inst = &self.instances[self.instance_of(id)];
        let part = inst.partition(id).read();
        let f = *part.get(&id)?;
        let fr = self.frame(f);
        let ok = fr.state.load(Ordering::Acquire) == VALID
            && fr.oldest_modification.load(Ordering::Acquire) != 0
            && !fr.in_flush.load(Ordering::Acquire)
            && (!old_only || fr.is_old.load(Ordering::Relaxed));
        if !ok || (pin && fr.in_flush.swap(true, Ordering::AcqRel)) {
            return None;
        }
        if pin {
            fr.pin.fetch_add(1, Ordering::AcqRel);
        }
        Some(f)
    }

    /// Drops every page of `space` from the pool, discarding unflushed changes (the tablespace
    /// is being dropped). Waits for pins to go (flush batches finishing).
    ///
    /// A frame listed here may be evicted and take a page of another space before its turn
    /// comes: each is pinned first, under its hash partition and only if it still holds the
    /// listed page (a pinned frame keeps its page, I2), so only the dropped space's changes are
    /// discarded.
    pub fn evict_space(&self, space: u32) {
        for inst in self.instances.iter() {
            let mut victims = Vec::new();
            for part in inst.hash.iter() {
                for (id, &f) in part.read().iter() {
                    if id.space == space {
                        victims.push((*id, f));
                    }
                }
            }
            for (id, f) in victims {
                let fr = &self.frame(f);
                {
                    let part = inst.partition(id).read();
                    if part.get(&id) != Some(&f) {
                        continue;
                    }
                    fr.pin.fetch_add(1, Ordering::AcqRel);
                }
                while fr.pin.load(Ordering::Acquire) != 1 {
                    std::thread::yield_now();
                }
                {
                    let mut fl = inst.flush.lock();
                    if fr.oldest_modification.load(Ordering::Acquire) != 0 {
                        fl.links.remove(f);
                        fr.oldest_modification.store(0, Ordering::Release);
                    }
                }
                self.unpin(f);
                let mut g = inst.lru.lock();
                let pct = self.tun.old_blocks_pct.load(Ordering::Relaxed).clamp(5, 95);
                if fr.page_id() == id && self.try_evict_locked(inst, &mut g, f, pct) {
                    inst.push_free(&mut g, f);
                }
            }
        }
    }

    // ---- resize (I6) ----------------------------------------------------------------------

    /// The chunk slot of an instance's chunk `c`.
    fn chunk_slot(&self, inst: &Instance, c: u32) -> &OnceLock<Chunk> {
        &self.chunks[((inst.base >> self.cshift) + c) as usize]
    }

    /// Grows instance `ii` to `chunks` chunks: allocates the new chunks' memory and puts their
    /// frames on the free list.
    pub fn grow_instance(&self, ii: usize, chunks: u32) {
        let inst = &self.instances[ii];
        let old = inst.n_chunks.load(Ordering::Acquire);
        if chunks <= old {
            return;
        }
        for c in old..chunks {
            self.chunk_slot(inst, c)
                .get_or_init(|| Chunk::new(self.fpc))
                .populate(self.chunk_layout);
        }
        inst.flush.lock().links.grow(inst.span(chunks));
        let mut g = inst.lru.lock();
        g.lru.grow(inst.span(chunks));
        g.free.extend(inst.chunk_frames(old, chunks).rev());
        inst.limit.store(chunks, Ordering::Release);
        inst.n_chunks.store(chunks, Ordering::Release);
    }

    /// Starts shrinking instance `ii` to `chunks` chunks: frames beyond leave the free list now
    /// and never return to it (I6). Returns the number of frames to withdraw.
    pub fn begin_withdraw(&self, ii: usize, chunks: u32) -> u32 {
        let inst = &self.instances[ii];
        let mut g = inst.lru.lock();
        let n = inst.n_chunks.load(Ordering::Acquire);
        if chunks >= n {
            return 0;
        }
        inst.limit.store(chunks, Ordering::Release);
        let g = &mut *g;
        let (keep, gone): (Vec<FrameIdx>, Vec<FrameIdx>) =
            g.free.iter().partition(|&&f| !inst.withdrawing(f));
        g.free = keep;
        g.withdrawn.extend(gone);
        (n - chunks) * self.fpc
    }

    /// One pass of a withdrawal: evicts the clean unpinned pages in the withdrawn chunks and
    /// lists the dirty ones in `dirty` (to be flushed, then evicted by a later pass). Returns
    /// the frames still to withdraw.
    pub fn withdraw_pass(&self, ii: usize, dirty: &mut Vec<FrameIdx>) -> u32 {
        let inst = &self.instances[ii];
        let pct = self.tun.old_blocks_pct.load(Ordering::Relaxed).clamp(5, 95);
        let mut g = inst.lru.lock();
        let mut cur = g.lru.links.tail;
        while cur != NIL {
            let prev = g.lru.links.prev(cur);
            if inst.withdrawing(cur) {
                if self.try_evict_locked(inst, &mut g, cur, pct) {
                    g.withdrawn.push(cur);
                } else {
                    let fr = self.frame(cur);
                    if fr.oldest_modification.load(Ordering::Acquire) != 0
                        && !fr.in_flush.load(Ordering::Acquire)
                    {
                        dirty.push(cur);
                    }
                }
            }
            cur = prev;
        }
        let n = inst.n_chunks.load(Ordering::Acquire);
        let gone = (n - inst.limit.load(Ordering::Acquire)) * self.fpc;
        gone.saturating_sub(g.withdrawn.len() as u32)
    }

    /// Ends a withdrawal whose frames are all withdrawn: the instance shrinks to its limit and
    /// the withdrawn chunks' page memory is freed.
    pub fn finish_withdraw(&self, ii: usize) {
        let inst = &self.instances[ii];
        let mut g = inst.lru.lock();
        let limit = inst.limit.load(Ordering::Acquire);
        let n = inst.n_chunks.load(Ordering::Acquire);
        assert_eq!(
            g.withdrawn.len() as u32,
            (n - limit) * self.fpc,
            "withdrawal finished with frames still in use"
        );
        g.withdrawn.clear();
        inst.n_chunks.store(limit, Ordering::Release);
        drop(g);
        for c in limit..n {
            if let Some(chunk) = self.chunk_slot(inst, c).get() {
                chunk.release(self.chunk_layout);
            }
        }
    }

    /// Abandons a withdrawal (shutdown, or a flush failed): the withdrawn frames go back to the
    /// free list and the instance keeps its size.
    pub fn cancel_withdraw(&self, ii: usize) {
        let inst = &self.instances[ii];
        let mut g = inst.lru.lock();
        inst.limit
            .store(inst.n_chunks.load(Ordering::Acquire), Ordering::Release);
        let back = std::mem::take(&mut g.withdrawn);
        g.free.extend(back);
    }

    /// Debug/check helper: verifies list invariants of every instance.
    pub fn check_lists(&self) -> Result<(), String> {
        for inst in self.instances.iter() {
            let g = inst.lru.lock();
            g.lru.check()?;
            let fl = inst.flush.lock();
            let mut cur = fl.links.tail;
            let mut last = 0;
            let mut n = 0;
            while cur != NIL {
                let o = self.frame(cur).oldest_modification.load(Ordering::Acquire);
                if o == 0 {
                    return Err(format!("frame {cur} on flush list is clean"));
                }
                if o < last {
                    return Err(format!("flush list out of order at frame {cur}"));
                }
                last = o;
                n += 1;
                cur = fl.links.prev(cur);
            }
            if n != fl.links.len {
                return Err("flush list length".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TunableValues;

    fn pool(frames: u64) -> BufferPool {
        BufferPool::new(
            Geometry::new(4096, frames * 4096, 128 << 20, 1),
            Arc::new(Tunables::new(&TunableValues::default())),
        )
    }

    #[test]
    fn install_lookup_evict() {
        let bp = pool(16);
        let id = PageId::new(1, 5);
        assert!(bp.lookup_pin(id).is_none());
        let f = bp.try_free_frame(0, 100).unwrap();
        assert!(matches!(bp.install(id, f, false), Install::Installed));
        // SAFETY: X latched by install.
        unsafe { bp.data_mut(f)[0] = 7 };
        bp.complete_read(f);
        bp.unlatch(f, LatchMode::X);
        bp.unpin(f);
        let g = bp.lookup_pin(id).unwrap();
        assert_eq!(g, f);
        bp.latch(g, LatchMode::S);
        // SAFETY: S latched.
        assert_eq!(unsafe { bp.data(g)[0] }, 7);
        bp.unlatch(g, LatchMode::S);
        // Pinned pages are not evicted.
        for i in 0..15 {
            let h = bp.try_free_frame(0, 100).unwrap();
            assert!(matches!(
                bp.install(PageId::new(2, i), h, true),
                Install::Installed
            ));
            bp.unlatch(h, LatchMode::X);
            bp.unpin(h);
        }
        let victim = bp.try_free_frame(0, 100).unwrap();
        assert_ne!(victim, f);
        bp.release_free_frame(0, victim);
        bp.unpin(g);
        bp.check_lists().unwrap();
    }

    #[test]
    fn a_change_racing_with_mark_clean_keeps_the_page_dirty() {
        // A flusher keeps marking clean what it "copied" (the newest LSN it saw) while a writer
        // changes the page now and then. After each change the writer lets the flusher run a
        // few rounds and checks: a clean page was cleaned at its newest change, never before.
        let bp = Arc::new(pool(8));
        let f = bp.try_free_frame(0, 100).unwrap();
        assert!(matches!(
            bp.install(PageId::new(3, 1), f, true),
            Install::Installed
        ));
        bp.unlatch(f, LatchMode::X);
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicU64::new(0));
        let cleaned = Arc::new(AtomicU64::new(0));
        let (b2, s2, r2, c2) = (bp.clone(), stop.clone(), rounds.clone(), cleaned.clone());
        let flusher = std::thread::spawn(move || {
            while !s2.load(Ordering::Relaxed) {
                let copied = b2.frame(f).newest_modification.load(Ordering::Acquire);
                if copied != 0 && b2.mark_clean_if_unchanged(f, copied) {
                    c2.store(copied, Ordering::Release);
                }
                r2.fetch_add(1, Ordering::Release);
            }
        });
        let fr = bp.frame(f);
        let mut x = 88172645463325252u64;
        for i in 0..50_000u64 {
            // Two changes a random short time apart: the second may land while the flusher is
            // marking the first one clean.
            let lsn = 100 + 4 * i;
            bp.note_modified(f, lsn, lsn + 1);
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for _ in 0..(x % 512) {
                std::hint::spin_loop();
            }
            let lsn = lsn + 2;
            bp.note_modified(f, lsn, lsn + 1);
            let r0 = rounds.load(Ordering::Acquire);
            while rounds.load(Ordering::Acquire) < r0 + 3 {
                std::hint::spin_loop();
            }
            if fr.oldest_modification.load(Ordering::Acquire) == 0 {
                assert_eq!(
                    cleaned.load(Ordering::Acquire),
                    lsn + 1,
                    "change {lsn} was marked clean unflushed"
                );
            }
        }
        stop.store(true, Ordering::Relaxed);
        flusher.join().unwrap();
        bp.unpin(f);
    }

    #[test]
    fn a_page_changed_during_its_write_moves_up_the_flush_list() {
        let bp = pool(8);
        let mut fs = Vec::new();
        for n in 1..=3 {
            let f = bp.try_free_frame(0, 100).unwrap();
            assert!(matches!(
                bp.install(PageId::new(3, n), f, true),
                Install::Installed
            ));
            bp.unlatch(f, LatchMode::X);
            fs.push(f);
        }
        bp.note_modified(fs[0], 10, 20);
        bp.note_modified(fs[1], 30, 40);
        // fs[0] is copied at LSN 20, then changed again (50..60) while the copy is written.
        bp.note_modified(fs[0], 50, 60);
        bp.note_modified(fs[2], 70, 80);
        assert!(!bp.mark_clean_if_unchanged(fs[0], 20));
        assert_eq!(
            bp.frame(fs[0]).oldest_modification.load(Ordering::Acquire),
            20
        );
        assert_eq!(bp.min_oldest_modification(), Some(20));
        bp.check_lists().unwrap();
        assert!(bp.mark_clean_if_unchanged(fs[0], 60));
        assert_eq!(bp.min_oldest_modification(), Some(30));
        bp.check_lists().unwrap();
        for f in fs {
            bp.unpin(f);
        }
    }

    #[test]
    fn dirty_pages_are_not_evicted_and_flush_list_is_ordered() {
        let bp = pool(8);
        let mut fs = Vec::new();
        for i in 0..8 {
            let f = bp.try_free_frame(0, 100).unwrap();
            assert!(matches!(
                bp.install(PageId::new(3, i), f, true),
                Install::Installed
            ));
            bp.note_modified(f, 100 + u64::from(i), 200 + u64::from(i));
            bp.unlatch(f, LatchMode::X);
            bp.unpin(f);
            fs.push(f);
        }
        assert!(
            bp.try_free_frame(0, 100).is_none(),
            "all dirty: nothing to evict"
        );
        assert_eq!(bp.min_oldest_modification(), Some(100));
        assert!(!bp.mark_clean_if_unchanged(fs[0], 150));
        assert!(bp.mark_clean_if_unchanged(fs[0], 200));
        assert_eq!(bp.min_oldest_modification(), Some(101));
        bp.note_recovered(fs[0], 50, 60);
        assert_eq!(bp.min_oldest_modification(), Some(50));
        bp.check_lists().unwrap();
        assert!(bp.mark_clean_if_unchanged(fs[0], 60));
        assert_eq!(bp.try_free_frame(0, 100), Some(fs[0]));
    }
}
