//! Unit tests of the simulated disk: crash semantics, crash images, faults, quota, and the
//! internal invariants I2/I3 under random operation sequences.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::{is_enospc, File, FileSystem, OpenFlags, SECTOR_SIZE};

fn p(s: &str) -> &Path {
    Path::new(s)
}

/// A SimFs with /db created.
fn setup() -> SimFs {
    let fs = SimFs::new(7);
    fs.create_dir_all(p("/db")).unwrap();
    fs
}

/// Creates `path` with `data`, syncs the data and the parent directory.
fn durable_file(fs: &SimFs, path: &str, data: &[u8]) -> Arc<dyn File> {
    let f = fs.create(p(path)).unwrap();
    f.write_at(data, 0).unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(p(path).parent().unwrap()).unwrap();
    f
}

/// Asserts I2 (live = durable + pending), I3 (durable ns + pending effects = live ns), link
/// counts and that every referenced file and parent directory exists.
fn check_invariants(fs: &SimFs) {
    let st = fs.shared.lock();
    for (id, f) in &st.files {
        let mut c = f.durable.clone();
        for op in &f.pending {
            match op {
                PendingOp::Write { offset, data, .. } => put_bytes(&mut c, *offset, data),
                PendingOp::SetLen { len } => c.resize(*len, 0),
            }
        }
        assert_eq!(c, f.live, "I2 violated for file {id}");
        let links = st.live_ns.values().filter(|&&v| v == *id).count();
        assert_eq!(f.live_links, links, "live_links of file {id}");
    }
    let mut ns = st.durable_ns.clone();
    for op in &st.pending_dir_ops {
        assert!(!op.effects.is_empty());
        for e in &op.effects {
            assert!(
                st.dirs.contains(e.path.parent().unwrap()),
                "effect outside a dir"
            );
            match e.target {
                Some(id) => ns.insert(e.path.clone(), id),
                None => ns.remove(&e.path),
            };
        }
    }
    assert_eq!(ns, st.live_ns, "I3 violated");
    for (path, id) in st.live_ns.iter().chain(st.durable_ns.iter()) {
        assert!(
            st.files.contains_key(id),
            "{} names a freed file",
            path.display()
        );
        assert!(
            st.dirs.contains(path.parent().unwrap()),
            "{} has no parent",
            path.display()
        );
    }
}

fn held_files(fs: &SimFs) -> usize {
    fs.shared.lock().files.len()
}

#[test]
fn unsynced_write_lost_under_drop_unsynced_kept_under_keep_all() {
    let fs = setup();
    let f = durable_file(&fs, "/db/a", b"old!");
    f.write_at(b"new", 0).unwrap();
    f.write_at(b"tail", 10).unwrap();
    assert_eq!(fs.file_bytes("/db/a").unwrap(), b"new!\0\0\0\0\0\0tail");
    assert_eq!(fs.durable_bytes("/db/a").unwrap(), b"old!");
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"old!");
    let img = fs.crash_image(CrashMode::KeepAll);
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"new!\0\0\0\0\0\0tail");
    check_invariants(&fs);
}

#[test]
fn synced_write_survives_and_image_is_usable() {
    let fs = setup();
    let f = durable_file(&fs, "/db/a", b"hello");
    f.write_at(b"J", 0).unwrap();
    f.sync_data().unwrap();
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"Jello");
    assert!(!img.is_crashed());
    assert_eq!(img.sync_count(), 0);
    assert_eq!(img.stats(), SimStats::default());
    let g = img.open(p("/db/a")).unwrap();
    let mut buf = [0u8; 5];
    g.read_at(&mut buf, 0).unwrap();
    assert_eq!(&buf, b"Jello");
    g.write_at(b"Y", 0).unwrap();
    // The image is independent of the original.
    assert_eq!(fs.file_bytes("/db/a").unwrap(), b"Jello");
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"Yello");
    // A handle opened before the image was taken does not touch the image.
    f.write_at(b"Z", 0).unwrap();
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"Yello");
}

#[test]
fn unsynced_create_lost_unless_sync_dir() {
    let fs = setup();
    let f = fs.create(p("/db/a")).unwrap();
    f.write_at(b"data", 0).unwrap();
    f.sync_data().unwrap();
    // Data synced, entry not: the file is gone after a crash.
    assert!(fs
        .crash_image(CrashMode::DropUnsynced)
        .file_bytes("/db/a")
        .is_none());
    assert!(fs
        .crash_image(CrashMode::KeepAll)
        .file_bytes("/db/a")
        .is_some());
    assert_eq!(fs.list_durable_files(), Vec::<PathBuf>::new());
    // Syncing another directory does not help.
    fs.create_dir_all(p("/other")).unwrap();
    fs.sync_dir(p("/other")).unwrap();
    assert!(fs
        .crash_image(CrashMode::DropUnsynced)
        .file_bytes("/db/a")
        .is_none());
    fs.sync_dir(p("/db")).unwrap();
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"data");
    assert!(img.is_dir(p("/other")).unwrap());
    check_invariants(&fs);
}

#[test]
fn durable_entry_with_unsynced_data_is_empty_after_crash() {
    let fs = setup();
    let f = fs.create(p("/db/a")).unwrap();
    fs.sync_dir(p("/db")).unwrap();
    f.write_at(b"data", 0).unwrap();
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"");
}

#[test]
fn unsynced_remove_is_undone() {
    let fs = setup();
    durable_file(&fs, "/db/a", b"keep me");
    fs.remove(p("/db/a")).unwrap();
    assert!(!fs.exists(p("/db/a")).unwrap());
    assert_eq!(fs.list_files(), Vec::<PathBuf>::new());
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"keep me");
    assert!(fs
        .crash_image(CrashMode::KeepAll)
        .file_bytes("/db/a")
        .is_none());
    // durable_bytes still reaches the durably named file.
    assert_eq!(fs.durable_bytes("/db/a").unwrap(), b"keep me");
    fs.sync_dir(p("/db")).unwrap();
    assert!(fs
        .crash_image(CrashMode::DropUnsynced)
        .file_bytes("/db/a")
        .is_none());
    check_invariants(&fs);
    // Nothing references the file any more: it is freed.
    assert_eq!(held_files(&fs), 0);
}

#[test]
fn rename_durability_follows_sync_dir() {
    let fs = setup();
    durable_file(&fs, "/db/tmp", b"new");
    durable_file(&fs, "/db/cur", b"old");
    fs.rename(p("/db/tmp"), p("/db/cur")).unwrap();
    assert_eq!(fs.file_bytes("/db/cur").unwrap(), b"new");
    assert!(fs.file_bytes("/db/tmp").is_none());
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/cur").unwrap(), b"old");
    assert_eq!(img.file_bytes("/db/tmp").unwrap(), b"new");
    fs.sync_dir(p("/db")).unwrap();
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/cur").unwrap(), b"new");
    assert!(img.file_bytes("/db/tmp").is_none());
    check_invariants(&fs);
    assert_eq!(held_files(&fs), 1, "the replaced file is freed");
}

#[test]
fn cross_directory_rename_is_durable_per_directory() {
    let fs = setup();
    fs.create_dir_all(p("/db/x")).unwrap();
    fs.sync_dir(p("/db")).unwrap();
    durable_file(&fs, "/db/a", b"A");
    fs.rename(p("/db/a"), p("/db/x/b")).unwrap();
    fs.sync_dir(p("/db/x")).unwrap();
    check_invariants(&fs);
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/x/b").unwrap(), b"A");
    assert_eq!(
        img.file_bytes("/db/a").unwrap(),
        b"A",
        "source entry not yet durable"
    );
    fs.sync_dir(p("/db")).unwrap();
    check_invariants(&fs);
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert!(img.file_bytes("/db/a").is_none());
    assert_eq!(img.list_files(), vec![PathBuf::from("/db/x/b")]);
}

#[test]
fn crash_at_sync_fails_that_sync_and_everything_after() {
    let fs = setup();
    let f = durable_file(&fs, "/db/a", b"v1"); // syncs 1 (data) and 2 (dir)
    let g = fs.open(p("/db/a")).unwrap();
    assert_eq!(fs.sync_count(), 2);
    fs.set_crash_at_sync(4);
    f.write_at(b"v2", 0).unwrap();
    f.sync_data().unwrap(); // sync 3
    f.write_at(b"v3", 0).unwrap();
    let err = f.sync_data().unwrap_err(); // sync 4: crashes, does not take effect
    assert!(is_simulated_crash(&err), "{err}");
    assert_eq!(err.to_string(), "simulated crash");
    assert!(fs.is_crashed());
    assert_eq!(fs.sync_count(), 4);
    let mut buf = [0u8; 2];
    assert!(is_simulated_crash(&g.read_at(&mut buf, 0).unwrap_err()));
    assert!(is_simulated_crash(&f.write_at(b"x", 0).unwrap_err()));
    assert!(is_simulated_crash(&f.len().unwrap_err()));
    assert!(is_simulated_crash(&f.set_len(0).unwrap_err()));
    assert!(is_simulated_crash(&f.allocate(10).unwrap_err()));
    assert!(is_simulated_crash(&fs.exists(p("/db/a")).unwrap_err()));
    assert!(is_simulated_crash(&fs.open(p("/db/a")).err().unwrap()));
    assert!(is_simulated_crash(&fs.create(p("/db/b")).err().unwrap()));
    assert!(is_simulated_crash(&fs.read_dir(p("/db")).unwrap_err()));
    assert!(is_simulated_crash(&fs.sync_dir(p("/db")).unwrap_err()));
    assert_eq!(fs.sync_count(), 4, "calls after the crash are not counted");
    // The image reflects the state before the crashing sync.
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"v2");
    assert_eq!(
        img.crash_image(CrashMode::KeepAll)
            .file_bytes("/db/a")
            .unwrap(),
        b"v2"
    );
    assert_eq!(
        fs.crash_image(CrashMode::KeepAll)
            .file_bytes("/db/a")
            .unwrap(),
        b"v3"
    );
}

#[test]
fn crash_at_sync_counts_dir_syncs_and_past_k_crashes_next() {
    let fs = setup();
    let f = fs.create(p("/db/a")).unwrap();
    fs.set_crash_at_sync(1);
    assert!(is_simulated_crash(&fs.sync_dir(p("/db")).unwrap_err()));
    assert!(fs
        .crash_image(CrashMode::DropUnsynced)
        .list_files()
        .is_empty());
    drop(f);

    let fs = setup();
    durable_file(&fs, "/db/a", b"x");
    fs.set_crash_at_sync(1); // already past: the next sync crashes
    assert!(fs.sync_dir(p("/db")).is_err());
    assert!(fs.is_crashed());
}

#[test]
fn crash_now_stops_everything() {
    let fs = setup();
    let f = durable_file(&fs, "/db/a", b"x");
    fs.crash_now();
    assert!(fs.is_crashed());
    assert!(is_simulated_crash(&f.sync_data().unwrap_err()));
    assert!(is_simulated_crash(&fs.is_dir(p("/db")).unwrap_err()));
    assert_eq!(
        fs.crash_image(CrashMode::DropUnsynced)
            .file_bytes("/db/a")
            .unwrap(),
        b"x"
    );
}

/// A completed write through an O_DSYNC handle is in every crash image, even between
/// unsynced writes to the same bytes; O_DIRECT alone changes nothing.
#[test]
fn dsync_writes_are_durable_when_they_return() {
    let fs = setup();
    let f = durable_file(&fs, "/db/a", &[0xAA; 4 * SECTOR_SIZE]);
    let d = fs.open_with(p("/db/a"), OpenFlags::DSYNC).unwrap();
    let direct = fs.open_with(p("/db/a"), OpenFlags::DIRECT).unwrap();
    assert_eq!(d.flags(), OpenFlags::DSYNC);
    assert_eq!(
        direct.flags(),
        OpenFlags::DIRECT,
        "SimFs never refuses O_DIRECT"
    );
    let before = fs.sync_count();
    f.write_at(&[0x11; 2 * SECTOR_SIZE], 0).unwrap(); // unsynced, under the dsync write
    d.write_at(&[0x22; SECTOR_SIZE], 512).unwrap(); // durable now
    direct.write_at(&[0x33; SECTOR_SIZE], 3 * 512).unwrap(); // unsynced
    assert_eq!(fs.sync_count(), before + 1, "a dsync write is a sync point");
    assert_eq!(fs.stats().durable_writes, 1);
    check_invariants(&fs);
    let drop_img = fs.crash_image(CrashMode::DropUnsynced);
    let bytes = drop_img.file_bytes("/db/a").unwrap();
    assert!(bytes[..512].iter().all(|&b| b == 0xAA));
    assert!(bytes[512..1024].iter().all(|&b| b == 0x22));
    assert!(
        bytes[1536..].iter().all(|&b| b == 0xAA),
        "O_DIRECT alone is volatile"
    );
    for seed in 0..30 {
        for mode in [CrashMode::Random { seed }, CrashMode::TornOnly { seed }] {
            let img = fs.crash_image(mode);
            let b = img.file_bytes("/db/a").unwrap();
            assert!(b[512..1024].iter().all(|&x| x == 0x22), "{mode:?}");
        }
    }
    // An extending dsync write makes the new length durable too.
    d.write_at(b"tail", 4 * 512).unwrap();
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(&img.file_bytes("/db/a").unwrap()[4 * 512..], b"tail");
}

/// A crash armed for a dsync write leaves that write in flight: dropped, kept or torn.
#[test]
fn crash_at_a_dsync_write_leaves_it_in_flight() {
    let fs = setup();
    durable_file(&fs, "/db/a", &[0xAA; 8 * SECTOR_SIZE]);
    let d = fs.open_with(p("/db/a"), OpenFlags::DIRECT_DSYNC).unwrap();
    fs.set_crash_at_sync(fs.sync_count() + 1);
    let err = d.write_at(&[0xBB; 8 * SECTOR_SIZE], 0).unwrap_err();
    assert!(is_simulated_crash(&err));
    assert!(fs.is_crashed());
    assert_eq!(fs.stats().durable_writes, 0);
    let dropped = fs.crash_image(CrashMode::DropUnsynced);
    assert!(dropped
        .file_bytes("/db/a")
        .unwrap()
        .iter()
        .all(|&b| b == 0xAA));
    let kept = fs.crash_image(CrashMode::KeepAll);
    assert!(kept.file_bytes("/db/a").unwrap().iter().all(|&b| b == 0xBB));
    let torn = (0..20).any(|seed| {
        let b = fs
            .crash_image(CrashMode::TornOnly { seed })
            .file_bytes("/db/a")
            .unwrap();
        b.contains(&0xAA) && b.contains(&0xBB)
    });
    assert!(torn, "the write in flight is never torn");
}

/// Old content: 8 sectors of 0xAA; new write: 0xBB over an unaligned range crossing 6
/// sectors. Checks every Random/TornOnly image sector by sector.
#[test]
fn torn_writes_change_only_whole_sectors_inside_the_range() {
    const LEN: usize = 8 * SECTOR_SIZE;
    let (w_lo, w_hi) = (SECTOR_SIZE + 100, 6 * SECTOR_SIZE + 37);
    let fs = setup();
    let f = durable_file(&fs, "/db/t", &[0xAA; LEN]);
    f.write_at(&vec![0xBB; w_hi - w_lo], w_lo as u64).unwrap();
    let (mut whole_new, mut whole_old, mut mixed, mut garbage_seen) = (0, 0, 0, 0);
    for seed in 0..400u64 {
        let torn_only = seed % 2 == 1;
        let mode = if torn_only {
            CrashMode::TornOnly { seed }
        } else {
            CrashMode::Random { seed }
        };
        let img = fs.crash_image(mode).file_bytes("/db/t").unwrap();
        assert_eq!(img.len(), LEN);
        assert!(
            img[..w_lo].iter().all(|&b| b == 0xAA),
            "bytes before the write changed"
        );
        assert!(
            img[w_hi..].iter().all(|&b| b == 0xAA),
            "bytes after the write changed"
        );
        let (mut new, mut old, mut garbage) = (0, 0, 0);
        for s in 0..LEN / SECTOR_SIZE {
            let lo = w_lo.max(s * SECTOR_SIZE);
            let hi = w_hi.min((s + 1) * SECTOR_SIZE);
            if lo >= hi {
                continue;
            }
            let part = &img[lo..hi];
            if part.iter().all(|&b| b == 0xBB) {
                new += 1;
            } else if part.iter().all(|&b| b == 0xAA) {
                old += 1;
            } else {
                garbage += 1;
            }
        }
        assert!(garbage <= 1, "at most one garbage sector per torn write");
        garbage_seen += garbage;
        if new == 6 {
            whole_new += 1;
        } else if old == 6 {
            whole_old += 1;
        } else {
            mixed += 1;
        }
    }
    assert!(
        whole_new > 0 && whole_old > 0 && mixed > 0,
        "{whole_new} {whole_old} {mixed}"
    );
    assert!(garbage_seen > 0, "garbage sectors never produced");
}

#[test]
fn torn_only_never_keeps_multi_sector_writes_whole_every_time() {
    // 16 sectors: P(whole keep) = 2^-16 per torn write; 50 images must be mostly mixed.
    let fs = setup();
    let f = durable_file(&fs, "/db/t", &[0u8; 16 * SECTOR_SIZE]);
    f.write_at(&[1u8; 16 * SECTOR_SIZE], 0).unwrap();
    let mut mixed = 0;
    for seed in 0..50 {
        let img = fs
            .crash_image(CrashMode::TornOnly { seed })
            .file_bytes("/db/t")
            .unwrap();
        let new = img
            .chunks(SECTOR_SIZE)
            .filter(|c| c.iter().all(|&b| b == 1))
            .count();
        if new > 0 && new < 16 {
            mixed += 1;
        }
    }
    assert!(mixed >= 45, "only {mixed} of 50 TornOnly images were torn");
}

#[test]
fn random_images_are_deterministic_per_seed() {
    let build = || {
        let fs = setup();
        let f = durable_file(&fs, "/db/a", &[3u8; 4096]);
        for i in 0..20u64 {
            f.write_at(&[i as u8 + 10; 700], i * 150).unwrap();
        }
        f.set_len(5000).unwrap();
        fs.create(p("/db/b")).unwrap().write_at(b"bbb", 0).unwrap();
        fs.rename(p("/db/a"), p("/db/c")).unwrap();
        fs
    };
    let (fs1, fs2) = (build(), build());
    let image = |fs: &SimFs, seed| {
        let img = fs.crash_image(CrashMode::Random { seed });
        img.list_files()
            .into_iter()
            .map(|f| (img.file_bytes(&f), f))
            .collect::<Vec<_>>()
    };
    let mut distinct = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let a = image(&fs1, seed);
        assert_eq!(a, image(&fs1, seed), "same fs, same seed");
        assert_eq!(a, image(&fs2, seed), "same history, same seed");
        distinct.insert(a);
    }
    assert!(
        distinct.len() > 5,
        "seeds barely matter: {} distinct images",
        distinct.len()
    );
    assert_eq!(fs1.crash_image(CrashMode::Random { seed: 9 }).seed(), 9);
}

#[test]
fn random_rename_is_atomic_and_create_is_all_or_nothing() {
    let fs = setup();
    durable_file(&fs, "/db/a", b"A");
    fs.rename(p("/db/a"), p("/db/b")).unwrap();
    let f = fs.create(p("/db/c")).unwrap();
    f.write_at(b"C", 0).unwrap();
    let (mut renamed, mut created) = (0, 0);
    for seed in 0..64 {
        let img = fs.crash_image(CrashMode::Random { seed });
        let (a, b) = (img.file_bytes("/db/a"), img.file_bytes("/db/b"));
        assert!(a.is_some() != b.is_some(), "rename must be atomic");
        assert_eq!(a.or(b).unwrap(), b"A");
        renamed += usize::from(img.exists(p("/db/b")).unwrap());
        if let Some(c) = img.file_bytes("/db/c") {
            created += 1;
            assert!(c == b"C" || c.is_empty() || c.len() == 1, "{c:?}");
        }
    }
    assert!(renamed > 0 && renamed < 64);
    assert!(created > 0 && created < 64);
}

#[test]
fn random_image_replays_set_len_in_order() {
    let fs = setup();
    let f = durable_file(&fs, "/db/a", &[9u8; 100]);
    f.set_len(10).unwrap();
    f.set_len(50).unwrap();
    let mut lens = std::collections::BTreeSet::new();
    for seed in 0..64 {
        let img = fs
            .crash_image(CrashMode::Random { seed })
            .file_bytes("/db/a")
            .unwrap();
        lens.insert(img.len());
        match img.len() {
            100 => assert!(img.iter().all(|&b| b == 9)),
            10 => assert!(img.iter().all(|&b| b == 9)),
            50 => assert!(img[..10].iter().all(|&b| b == 9), "{img:?}"),
            n => panic!("impossible length {n}"),
        }
    }
    assert_eq!(lens.len(), 3);
}

#[test]
fn fault_fires_on_nth_matching_call_only() {
    let fs = setup();
    let f = fs.create(p("/db/a")).unwrap();
    fs.inject(Fault::new(FaultOp::Write, 3, FaultKind::Eio));
    f.write_at(b"1", 0).unwrap();
    f.write_at(b"2", 1).unwrap();
    let err = f.write_at(b"3", 2).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO));
    f.write_at(b"4", 3).unwrap();
    assert_eq!(fs.file_bytes("/db/a").unwrap(), b"12\x004");
    assert_eq!(fs.stats().faults_fired, 1);
    // Counting starts at injection, not at construction.
    fs.inject(Fault::new(FaultOp::Sync, 1, FaultKind::Eio));
    assert!(f.sync_data().is_err());
    assert_eq!(
        fs.durable_bytes("/db/a").unwrap(),
        b"",
        "a failed sync has no effect"
    );
    f.sync_data().unwrap();
    assert_eq!(fs.durable_bytes("/db/a").unwrap(), b"12\x004");
    check_invariants(&fs);
}

#[test]
fn latency_delays_matching_calls_and_changes_nothing_else() {
    use std::time::{Duration, Instant};
    let fs = setup();
    let slow = fs.create(p("/db/t.ibd")).unwrap();
    let fast = fs.create(p("/db/ib_logfile0")).unwrap();
    let d = Duration::from_millis(100);
    fs.inject(
        Fault::new(FaultOp::Write, 1, FaultKind::Latency(d))
            .persistent()
            .on_path(".ibd"),
    );
    // An error fault counts only its own calls: the latency fault does not disturb it.
    fs.inject(Fault::new(FaultOp::Write, 2, FaultKind::Eio).on_path(".ibd"));
    let t = Instant::now();
    slow.write_at(b"a", 0).unwrap();
    assert!(t.elapsed() >= d);
    assert_eq!(
        slow.write_at(b"b", 1).unwrap_err().raw_os_error(),
        Some(libc::EIO)
    );
    slow.write_at(b"c", 1).unwrap();
    fast.write_at(b"x", 0).unwrap();
    let mut buf = [0u8; 2];
    let t = Instant::now();
    slow.read_at(&mut buf, 0).unwrap();
    assert_eq!(&buf, b"ac");
    assert!(t.elapsed() < d, "reads are not delayed");
    assert_eq!(fs.stats().writes, 3);
    // Calls of several threads wait at the same time.
    let (a, b) = (slow.clone(), slow.clone());
    let t = Instant::now();
    let h = std::thread::spawn(move || a.write_at(b"1", 2).unwrap());
    b.write_at(b"2", 3).unwrap();
    h.join().unwrap();
    assert!(
        t.elapsed() < d * 2,
        "{:?} for two writes at once",
        t.elapsed()
    );
    assert_eq!(fs.file_bytes("/db/t.ibd").unwrap(), b"ac12");
    check_invariants(&fs);
}

#[test]
fn persistent_fault_and_clear() {
    let fs = setup();
    let f = fs.create(p("/db/a")).unwrap();
    fs.inject(Fault::new(FaultOp::Read, 2, FaultKind::Eio).persistent());
    f.write_at(b"abc", 0).unwrap();
    let mut buf = [0u8; 1];
    f.read_at(&mut buf, 0).unwrap();
    for _ in 0..5 {
        assert_eq!(
            f.read_at(&mut buf, 0).unwrap_err().raw_os_error(),
            Some(libc::EIO)
        );
    }
    fs.clear_faults();
    f.read_at(&mut buf, 1).unwrap();
    assert_eq!(&buf, b"b");
}

#[test]
fn fault_path_filter_and_any_op() {
    let fs = setup();
    let log = fs.create(p("/db/ib_logfile0")).unwrap();
    let data = fs.create(p("/db/t.ibd")).unwrap();
    fs.inject(Fault::new(FaultOp::Any, 2, FaultKind::Enospc).on_path("logfile"));
    data.write_at(b"x", 0).unwrap(); // does not match, does not count
    data.sync_data().unwrap();
    log.write_at(b"1", 0).unwrap(); // 1st matching call
    let err = log.sync_data().unwrap_err(); // 2nd
    assert!(is_enospc(&err));
    log.sync_data().unwrap();
    // Rename matches by either path; Create by its path.
    fs.inject(Fault::new(FaultOp::Rename, 1, FaultKind::Eio).on_path("new"));
    let err = fs.rename(p("/db/t.ibd"), p("/db/new.ibd")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO));
    assert!(
        fs.exists(p("/db/t.ibd")).unwrap(),
        "a failed rename has no effect"
    );
    fs.inject(Fault::new(FaultOp::Create, 1, FaultKind::Eio));
    assert!(fs.create(p("/db/c")).is_err());
    assert!(
        !fs.exists(p("/db/c")).unwrap(),
        "a failed create has no effect"
    );
    fs.inject(Fault::new(FaultOp::Remove, 1, FaultKind::Eio));
    assert!(fs.remove(p("/db/t.ibd")).is_err());
    assert!(fs.exists(p("/db/t.ibd")).unwrap());
    fs.inject(Fault::new(FaultOp::Open, 1, FaultKind::Eio));
    assert!(fs.open(p("/db/t.ibd")).is_err());
    fs.inject(Fault::new(FaultOp::SyncDir, 1, FaultKind::Eio));
    assert!(fs.sync_dir(p("/db")).is_err());
    assert!(
        fs.list_durable_files().is_empty(),
        "a failed sync_dir has no effect"
    );
    fs.inject(Fault::new(FaultOp::Allocate, 1, FaultKind::Enospc));
    assert!(is_enospc(&data.allocate(4096).unwrap_err()));
    assert_eq!(data.len().unwrap(), 1);
    fs.inject(Fault::new(FaultOp::SetLen, 1, FaultKind::Eio));
    assert!(data.set_len(0).is_err());
    assert_eq!(data.len().unwrap(), 1);
    check_invariants(&fs);
}

#[test]
fn short_write_writes_a_sector_aligned_prefix() {
    let fs = setup();
    let f = fs.create(p("/db/a")).unwrap();
    fs.inject(Fault::new(FaultOp::Write, 1, FaultKind::ShortWrite));
    let buf: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8 + 1).collect();
    let err = f.write_at(&buf, 100).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::WriteZero);
    // Half of 3000 is 1500, rounded down to 1024.
    let live = fs.file_bytes("/db/a").unwrap();
    assert_eq!(live.len(), 100 + 1024);
    assert_eq!(&live[100..], &buf[..1024]);
    // Below one sector the prefix is empty.
    fs.inject(Fault::new(FaultOp::Any, 1, FaultKind::ShortWrite));
    f.sync_data().unwrap(); // ShortWrite never matches a non-write
    assert!(f.write_at(&[7u8; 1000], 0).is_err());
    assert_eq!(fs.file_bytes("/db/a").unwrap(), live);
    check_invariants(&fs);
}

#[test]
fn quota_enospc_has_no_partial_effect() {
    let fs = setup();
    fs.set_quota(Some(1000));
    let f = fs.create(p("/db/a")).unwrap();
    let g = fs.create(p("/db/b")).unwrap();
    f.write_at(&[1u8; 600], 0).unwrap();
    let err = g.write_at(&[2u8; 500], 0).unwrap_err();
    assert!(is_enospc(&err));
    assert_eq!(g.len().unwrap(), 0, "nothing written");
    assert!(is_enospc(&g.allocate(401).unwrap_err()));
    assert!(is_enospc(&g.set_len(401).unwrap_err()));
    assert_eq!(g.len().unwrap(), 0);
    g.allocate(400).unwrap();
    assert_eq!(fs.used_bytes(), 1000);
    // Overwrites inside the file need no space.
    f.write_at(&[3u8; 600], 0).unwrap();
    assert!(is_enospc(&f.write_at(&[3u8; 2], 599).unwrap_err()));
    assert_eq!(fs.file_bytes("/db/a").unwrap(), vec![3u8; 600]);
    // An unlinked file still holds its space while open, and frees it on close.
    fs.remove(p("/db/a")).unwrap();
    assert_eq!(fs.used_bytes(), 1000);
    drop(f);
    assert_eq!(fs.used_bytes(), 400);
    g.write_at(&[4u8; 1000], 0).unwrap();
    fs.set_quota(None);
    g.write_at(&[4u8; 10], 5000).unwrap();
    check_invariants(&fs);
}

#[test]
fn unlinked_open_file_keeps_working_and_its_durable_name_survives() {
    let fs = setup();
    let f = durable_file(&fs, "/db/a", b"abc");
    fs.remove(p("/db/a")).unwrap();
    f.write_at(b"XYZW", 0).unwrap();
    f.sync_data().unwrap();
    assert_eq!(f.len().unwrap(), 4);
    // The unlink is not durable, the data sync reaches the still-durable name.
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/a").unwrap(), b"XYZW");
    fs.sync_dir(p("/db")).unwrap();
    assert!(fs
        .crash_image(CrashMode::DropUnsynced)
        .list_files()
        .is_empty());
    assert_eq!(held_files(&fs), 1, "still open");
    drop(f);
    assert_eq!(held_files(&fs), 0);
    check_invariants(&fs);
}

#[test]
fn remove_dir_is_durable_at_once() {
    let fs = setup();
    fs.create_dir_all(p("/db/x/y")).unwrap();
    let f = durable_file(&fs, "/db/x/y/f", b"1");
    assert_eq!(
        fs.remove_dir(p("/db/x/y")).unwrap_err().raw_os_error(),
        Some(libc::ENOTEMPTY)
    );
    fs.remove(p("/db/x/y/f")).unwrap();
    fs.remove_dir(p("/db/x/y")).unwrap();
    check_invariants(&fs);
    let img = fs.crash_image(CrashMode::Random { seed: 1 });
    assert!(!img.exists(p("/db/x/y")).unwrap());
    assert!(img.is_dir(p("/db/x")).unwrap());
    assert!(img.list_files().is_empty());
    drop(f);
    assert_eq!(held_files(&fs), 0);
}

#[test]
fn surgery_changes_live_and_durable_without_counting() {
    let fs = setup();
    let f = durable_file(&fs, "/db/redo", b"0123456789");
    let before = fs.stats();
    fs.corrupt("/db/redo", 3, &[0xFF, 0xFE]);
    assert_eq!(fs.file_bytes("/db/redo").unwrap(), b"012\xFF\xFE56789");
    assert_eq!(fs.durable_bytes("/db/redo").unwrap(), b"012\xFF\xFE56789");
    fs.truncate_durable("/db/redo", 4);
    assert_eq!(fs.durable_bytes("/db/redo").unwrap(), b"012\xFF");
    assert_eq!(f.len().unwrap(), 4);
    let img = fs.crash_image(CrashMode::DropUnsynced);
    assert_eq!(img.file_bytes("/db/redo").unwrap(), b"012\xFF");
    assert_eq!(fs.stats(), before);
    check_invariants(&fs);
}

#[test]
fn sync_makes_durable_equal_live_after_mixed_operations() {
    let fs = setup();
    let f = durable_file(&fs, "/db/a", &[1u8; 3000]);
    f.write_at(&[2u8; 100], 200).unwrap();
    f.set_len(1000).unwrap();
    f.set_len(2500).unwrap();
    f.write_at(&[3u8; 10], 4000).unwrap();
    f.set_len(3900).unwrap();
    fs.corrupt("/db/a", 50, &[9u8; 4]); // surgery on a file with pending operations
    f.sync_data().unwrap();
    let live = fs.file_bytes("/db/a").unwrap();
    assert_eq!(live.len(), 3900);
    assert_eq!(fs.durable_bytes("/db/a").unwrap(), live);
    assert!(
        live[1000..].iter().all(|&b| b == 0),
        "truncated bytes must not come back"
    );
    assert_eq!(&live[50..54], &[9u8; 4]);
    assert_eq!(
        fs.crash_image(CrashMode::DropUnsynced)
            .file_bytes("/db/a")
            .unwrap(),
        live
    );
    check_invariants(&fs);
}

#[test]
#[should_panic(expected = "no file named")]
fn surgery_on_missing_file_panics() {
    setup().corrupt("/db/none", 0, b"x");
}

#[test]
fn stats_count_successful_operations() {
    let fs = setup();
    let f = fs.create(p("/db/a")).unwrap();
    f.write_at(&[1u8; 100], 0).unwrap();
    f.write_at(&[1u8; 28], 100).unwrap();
    let mut buf = [0u8; 64];
    f.read_at(&mut buf, 0).unwrap();
    assert!(f.read_at(&mut buf, 100).is_err());
    f.sync_data().unwrap();
    fs.sync_dir(p("/db")).unwrap();
    let s = fs.stats();
    assert_eq!((s.writes, s.bytes_written), (2, 128));
    assert_eq!((s.reads, s.bytes_read), (1, 64));
    assert_eq!((s.syncs, s.dir_syncs, s.faults_fired), (1, 1, 0));
    assert_eq!(fs.sync_count(), 2);
}

#[test]
fn oversized_files_are_refused() {
    let fs = setup();
    let f = fs.create(p("/db/a")).unwrap();
    assert_eq!(
        f.write_at(b"x", MAX_FILE_LEN).unwrap_err().raw_os_error(),
        Some(libc::EFBIG)
    );
    assert!(f.set_len(u64::MAX).is_err());
    assert!(f.write_at(b"x", u64::MAX).is_err());
    assert_eq!(f.len().unwrap(), 0);
}

/// Random operation sequences keep the invariants, and the three kinds of image agree with
/// what the state says survives.
#[test]
fn random_operation_sequences_keep_invariants() {
    let names = ["/db/a", "/db/b", "/db/x/c", "/db/x/d"];
    for seed in 0..40u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let fs = SimFs::new(seed);
        fs.create_dir_all(p("/db/x")).unwrap();
        let mut handles: Vec<Arc<dyn File>> = Vec::new();
        for _ in 0..60 {
            let name = p(names[rng.random_range(0..names.len())]);
            let other = p(names[rng.random_range(0..names.len())]);
            let h = (!handles.is_empty()).then(|| rng.random_range(0..handles.len()));
            let off = rng.random_range(0..3000u64);
            // Errors (NotFound, AlreadyExists) are part of the exercise.
            let _ = match rng.random_range(0..11) {
                0 => fs.create(name).map(|f| handles.push(f)),
                1 => {
                    let flags = OpenFlags {
                        direct: rng.random_bool(0.5),
                        dsync: rng.random_bool(0.5),
                    };
                    fs.open_with(name, flags).map(|f| handles.push(f))
                }
                2 => fs.remove(name),
                3 => fs.rename(name, other),
                4 => fs.sync_dir(name.parent().unwrap()),
                5 => h.map_or(Ok(()), |i| handles[i].write_at(&[seed as u8; 700], off)),
                6 => h.map_or(Ok(()), |i| handles[i].sync_data()),
                7 => h.map_or(Ok(()), |i| handles[i].set_len(off)),
                8 => h.map_or(Ok(()), |i| handles[i].allocate(off)),
                9 => {
                    if let Some(i) = h {
                        handles.swap_remove(i);
                    }
                    Ok(())
                }
                _ => h.map_or(Ok(()), |i| handles[i].write_at(&[1; 10], off)),
            };
            check_invariants(&fs);
        }
        let live: Vec<_> = fs
            .list_files()
            .into_iter()
            .map(|f| (fs.file_bytes(&f), f))
            .collect();
        let keep = fs.crash_image(CrashMode::KeepAll);
        let kept: Vec<_> = keep
            .list_files()
            .into_iter()
            .map(|f| (keep.file_bytes(&f), f))
            .collect();
        assert_eq!(live, kept);
        let drop_img = fs.crash_image(CrashMode::DropUnsynced);
        assert_eq!(drop_img.list_files(), fs.list_durable_files());
        {
            let st = fs.shared.lock();
            for (f, id) in &st.durable_ns {
                assert_eq!(drop_img.file_bytes(f).as_ref(), Some(&st.file(*id).durable));
            }
        }
        let rand_img = fs.crash_image(CrashMode::Random { seed });
        check_invariants(&rand_img);
        check_invariants(&drop_img);
        drop(handles);
        check_invariants(&fs);
    }
}
