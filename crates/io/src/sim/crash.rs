//! Crash images: what a power loss could leave of a [`SimFs`](super::SimFs).
//!
//! An image starts from the durable state (durable namespace, durable contents) and, in the
//! random modes, replays a random selection of the pending operations in their original
//! order. Random choices are drawn in a fixed order (files by id, then each file's pending
//! operations, then directory operations) from an RNG seeded by the mode, so an image is a
//! pure function of the state and the mode (I6).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

use super::{put_bytes, FileId, FileObj, PendingOp, State};
use crate::SECTOR_SIZE;

/// Which power loss [`SimFs::crash_image`](super::SimFs::crash_image) simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CrashMode {
    /// Only what was synced survives: durable contents under the durable namespace.
    DropUnsynced,
    /// Everything survives, as if every write and entry change had reached the disk.
    KeepAll,
    /// Each pending write is kept whole (p 0.4), dropped (p 0.3) or torn (p 0.3); each
    /// pending length change is kept with p 0.5; each pending directory operation is applied
    /// with p 0.5. Choices are applied in the original order. A write a `dsync` handle
    /// completed is durable: every mode keeps it, in its place in that order.
    ///
    /// A torn write keeps or drops each 512-byte sector it overlaps independently (sector
    /// boundaries are absolute file offsets); with p 0.1 one kept sector gets garbage bytes
    /// instead of the data. A torn write never changes bytes outside its own range.
    Random {
        /// Seeds the choices and the image's own RNG.
        seed: u64,
    },
    /// Like [`CrashMode::Random`], but every pending write is torn (none is kept whole or
    /// dropped whole as such), except the completed `dsync` writes; for torn-page tests.
    TornOnly {
        /// Seeds the choices and the image's own RNG.
        seed: u64,
    },
}

/// How one pending write reaches the image.
enum WriteFate {
    Keep,
    Drop,
    Tear,
}

pub(super) fn build_image(st: &State, mode: CrashMode) -> State {
    let (seed, names, contents) = match mode {
        CrashMode::DropUnsynced => {
            let contents = referenced(&st.durable_ns)
                .into_iter()
                .map(|id| (id, st.file(id).durable.clone()))
                .collect();
            (st.seed, st.durable_ns.clone(), contents)
        }
        CrashMode::KeepAll => {
            let contents = referenced(&st.live_ns)
                .into_iter()
                .map(|id| (id, st.file(id).live.clone()))
                .collect();
            (st.seed, st.live_ns.clone(), contents)
        }
        CrashMode::Random { seed } => random_image(st, seed, false),
        CrashMode::TornOnly { seed } => random_image(st, seed, true),
    };
    let mut img = State::new(seed);
    img.next_id = st.next_id;
    img.dirs = st.dirs.clone();
    img.files = contents
        .into_iter()
        .map(|(id, c)| (id, FileObj::with_content(c)))
        .collect();
    for (path, &id) in &names {
        img.file_mut(id).live_links += 1;
        img.live_ns.insert(path.clone(), id);
    }
    img.durable_ns = names;
    img
}

fn referenced(names: &BTreeMap<PathBuf, FileId>) -> BTreeSet<FileId> {
    names.values().copied().collect()
}

type Image = (u64, BTreeMap<PathBuf, FileId>, BTreeMap<FileId, Vec<u8>>);

fn random_image(st: &State, seed: u64, torn_only: bool) -> Image {
    let mut rng = StdRng::seed_from_u64(seed);
    // Every file a crash could leave named: durably named ones and targets of pending ops.
    let mut candidates = referenced(&st.durable_ns);
    candidates.extend(
        st.pending_dir_ops
            .iter()
            .flat_map(|op| op.effects.iter())
            .filter_map(|e| e.target),
    );
    let mut contents = BTreeMap::new();
    for id in candidates {
        let f = st.file(id);
        contents.insert(id, replay(&f.durable, &f.pending, &mut rng, torn_only));
    }
    let mut names = st.durable_ns.clone();
    for op in &st.pending_dir_ops {
        if rng.random_bool(0.5) {
            for e in &op.effects {
                match e.target {
                    Some(id) => names.insert(e.path.clone(), id),
                    None => names.remove(&e.path),
                };
            }
        }
    }
    let named = referenced(&names);
    contents.retain(|id, _| named.contains(id));
    (seed, names, contents)
}

/// Durable content with a random selection of the pending operations applied in order.
fn replay(durable: &[u8], pending: &[PendingOp], rng: &mut StdRng, torn_only: bool) -> Vec<u8> {
    let mut content = durable.to_vec();
    for op in pending {
        match op {
            PendingOp::SetLen { len } => {
                if rng.random_bool(0.5) {
                    content.resize(*len, 0);
                }
            }
            PendingOp::Write {
                offset,
                data,
                synced,
            } => {
                let fate = if *synced {
                    // Durable before the crash: every image has it.
                    WriteFate::Keep
                } else if torn_only {
                    WriteFate::Tear
                } else {
                    match rng.random_range(0..10u32) {
                        0..=3 => WriteFate::Keep,
                        4..=6 => WriteFate::Drop,
                        _ => WriteFate::Tear,
                    }
                };
                match fate {
                    WriteFate::Keep => put_bytes(&mut content, *offset, data),
                    WriteFate::Drop => {}
                    WriteFate::Tear => tear(&mut content, *offset, data, rng),
                }
            }
        }
    }
    content
}

/// Applies the write `data` at `offset` sector by sector, each sector independently, with at
/// most one kept sector turned to garbage. Only bytes inside `[offset, offset + len)` change
/// (beyond the zero-fill of a gap when a kept sector lies past the end of `content`).
fn tear(content: &mut Vec<u8>, offset: usize, data: &[u8], rng: &mut StdRng) {
    if data.is_empty() {
        return;
    }
    let end = offset + data.len();
    let first = offset / SECTOR_SIZE;
    let last = (end - 1) / SECTOR_SIZE;
    let kept: Vec<usize> = (first..=last).filter(|_| rng.random_bool(0.5)).collect();
    let garbage = if !kept.is_empty() && rng.random_bool(0.1) {
        Some(kept[rng.random_range(0..kept.len())])
    } else {
        None
    };
    for s in kept {
        let lo = offset.max(s * SECTOR_SIZE);
        let hi = end.min((s + 1) * SECTOR_SIZE);
        if content.len() < hi {
            content.resize(hi, 0);
        }
        if garbage == Some(s) {
            rng.fill_bytes(&mut content[lo..hi]);
        } else {
            content[lo..hi].copy_from_slice(&data[lo - offset..hi - offset]);
        }
    }
}
