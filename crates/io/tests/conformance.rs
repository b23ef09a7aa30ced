//! One conformance suite for every `FileSystem`: each check runs against the real file system
//! (OsFs in a temporary directory) and the simulated one (SimFs under `/data`), so the
//! simulation cannot drift from the semantics the engine gets in production. Each runs four
//! times on each, with handles opened buffered, O_DSYNC, O_DIRECT and O_DIRECT|O_DSYNC
//! (innodb_flush_method's kinds of handle): the flags change durability and caching, never
//! what reads and writes see. On OsFs the checks' unaligned requests exercise the O_DIRECT
//! bounce and read-modify-write paths.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use innoxide_io::{File, FileSystem, OpenFlags, OsFs, SimFs, DIRECT_IO_ALIGN};

type Check = fn(&dyn FileSystem, &Path);

const ALL_FLAGS: [OpenFlags; 4] = [
    OpenFlags::BUFFERED,
    OpenFlags::DSYNC,
    OpenFlags::DIRECT,
    OpenFlags::DIRECT_DSYNC,
];

/// A file system whose `open` and `create` use `flags` (the checks call those).
struct WithFlags {
    fs: Arc<dyn FileSystem>,
    flags: OpenFlags,
}

impl FileSystem for WithFlags {
    fn open_with(&self, path: &Path, flags: OpenFlags) -> io::Result<Arc<dyn File>> {
        self.fs.open_with(path, flags)
    }
    fn open(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        self.fs.open_with(path, self.flags)
    }
    fn create_with(&self, path: &Path, flags: OpenFlags) -> io::Result<Arc<dyn File>> {
        self.fs.create_with(path, flags)
    }
    fn create(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        self.fs.create_with(path, self.flags)
    }
    fn exists(&self, path: &Path) -> io::Result<bool> {
        self.fs.exists(path)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.fs.remove(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.fs.rename(from, to)
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.fs.create_dir_all(path)
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.fs.remove_dir(path)
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.fs.read_dir(path)
    }
    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        self.fs.is_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.fs.sync_dir(path)
    }
}

/// Runs `check` on OsFs in a fresh temporary directory and on a fresh SimFs, with each kind
/// of handle.
fn on_both(check: Check) {
    for flags in ALL_FLAGS {
        let dir = tempfile::tempdir().expect("tempdir");
        let os = WithFlags {
            fs: Arc::new(OsFs::new()),
            flags,
        };
        check(&os, dir.path());

        let sim = WithFlags {
            fs: Arc::new(SimFs::new(1)),
            flags,
        };
        let root = Path::new("/data");
        sim.create_dir_all(root).expect("sim root");
        check(&sim, root);
    }
}

fn read_all(f: &dyn File) -> Vec<u8> {
    let mut buf = vec![0u8; f.len().unwrap() as usize];
    f.read_at(&mut buf, 0).unwrap();
    buf
}

macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                on_both(checks::$name);
            }
        )*
    };
}

conformance!(
    create_write_read_roundtrip,
    create_existing_fails_and_open_missing_fails,
    create_needs_existing_parent,
    write_past_eof_zero_fills_and_extends,
    read_past_eof_is_unexpected_eof,
    allocate_grows_and_never_shrinks,
    set_len_truncates_and_extends_with_zeros,
    handles_share_one_file,
    rename_moves_and_replaces,
    rename_missing_source_fails,
    remove_semantics,
    unlinked_open_handle_still_works,
    directories,
    read_dir_lists_sorted_full_paths,
    sync_calls_succeed,
    direct_requests_of_any_alignment,
    flags_report_what_is_in_force,
);

mod checks {
    use super::*;

    pub fn create_write_read_roundtrip(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("a.ibd");
        assert!(!fs.exists(&path).unwrap());
        let f = fs.create(&path).unwrap();
        assert!(fs.exists(&path).unwrap());
        assert!(!fs.is_dir(&path).unwrap());
        assert_eq!(f.len().unwrap(), 0);
        f.write_at(b"hello world", 0).unwrap();
        f.write_at(b"W", 6).unwrap();
        assert_eq!(f.len().unwrap(), 11);
        let mut buf = [0u8; 5];
        f.read_at(&mut buf, 6).unwrap();
        assert_eq!(&buf, b"World");
        // An empty write changes nothing, even past the end; an empty read always succeeds.
        f.write_at(b"", 100).unwrap();
        assert_eq!(f.len().unwrap(), 11);
        f.read_at(&mut [], 1000).unwrap();
        drop(f);
        let g = fs.open(&path).unwrap();
        assert_eq!(read_all(g.as_ref()), b"hello World");
    }

    pub fn create_existing_fails_and_open_missing_fails(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("f");
        let err = fs.open(&path).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let f = fs.create(&path).unwrap();
        f.write_at(b"keep", 0).unwrap();
        let err = fs.create(&path).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(
            read_all(f.as_ref()),
            b"keep",
            "a failed create must not truncate"
        );
        let err = fs.create(root).err().unwrap();
        assert_eq!(
            err.kind(),
            io::ErrorKind::AlreadyExists,
            "a directory is there"
        );
    }

    pub fn create_needs_existing_parent(fs: &dyn FileSystem, root: &Path) {
        let err = fs.create(&root.join("nodir").join("f")).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(!fs.exists(&root.join("nodir")).unwrap());
        fs.create_dir_all(&root.join("nodir")).unwrap();
        fs.create(&root.join("nodir").join("f")).unwrap();
    }

    pub fn write_past_eof_zero_fills_and_extends(fs: &dyn FileSystem, root: &Path) {
        let f = fs.create(&root.join("sparse")).unwrap();
        f.write_at(b"ab", 0).unwrap();
        f.write_at(b"xyz", 1000).unwrap();
        assert_eq!(f.len().unwrap(), 1003);
        let all = read_all(f.as_ref());
        assert_eq!(&all[..2], b"ab");
        assert!(all[2..1000].iter().all(|&b| b == 0));
        assert_eq!(&all[1000..], b"xyz");
    }

    pub fn read_past_eof_is_unexpected_eof(fs: &dyn FileSystem, root: &Path) {
        let f = fs.create(&root.join("short")).unwrap();
        f.write_at(&[5u8; 100], 0).unwrap();
        let mut buf = [0u8; 10];
        let err = f.read_at(&mut buf, 95).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        let err = f.read_at(&mut buf, 1 << 20).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        f.read_at(&mut buf, 90).unwrap();
        assert_eq!(buf, [5u8; 10]);
    }

    pub fn allocate_grows_and_never_shrinks(fs: &dyn FileSystem, root: &Path) {
        let f = fs.create(&root.join("alloc")).unwrap();
        f.write_at(b"data", 0).unwrap();
        f.allocate(16384).unwrap();
        assert_eq!(f.len().unwrap(), 16384);
        let all = read_all(f.as_ref());
        assert_eq!(&all[..4], b"data");
        assert!(all[4..].iter().all(|&b| b == 0));
        f.allocate(10).unwrap();
        assert_eq!(f.len().unwrap(), 16384);
        f.allocate(0).unwrap();
        assert_eq!(f.len().unwrap(), 16384);
        assert_eq!(&read_all(f.as_ref())[..4], b"data");
    }

    pub fn set_len_truncates_and_extends_with_zeros(fs: &dyn FileSystem, root: &Path) {
        let f = fs.create(&root.join("len")).unwrap();
        f.write_at(&[7u8; 100], 0).unwrap();
        f.set_len(40).unwrap();
        assert_eq!(f.len().unwrap(), 40);
        f.set_len(80).unwrap();
        let all = read_all(f.as_ref());
        assert_eq!(all.len(), 80);
        assert!(all[..40].iter().all(|&b| b == 7));
        assert!(
            all[40..].iter().all(|&b| b == 0),
            "re-extension must not resurrect data"
        );
        f.set_len(0).unwrap();
        assert_eq!(f.len().unwrap(), 0);
    }

    pub fn handles_share_one_file(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("shared");
        let a = fs.create(&path).unwrap();
        let b = fs.open(&path).unwrap();
        a.write_at(b"from a", 0).unwrap();
        assert_eq!(read_all(b.as_ref()), b"from a");
        b.set_len(4).unwrap();
        assert_eq!(a.len().unwrap(), 4);
        b.sync_data().unwrap();
        a.sync_data().unwrap();
    }

    pub fn rename_moves_and_replaces(fs: &dyn FileSystem, root: &Path) {
        let (from, to) = (root.join("tmp"), root.join("final"));
        let f = fs.create(&from).unwrap();
        f.write_at(b"new", 0).unwrap();
        let old = fs.create(&to).unwrap();
        old.write_at(b"old content", 0).unwrap();
        fs.rename(&from, &to).unwrap();
        assert!(!fs.exists(&from).unwrap());
        assert_eq!(read_all(fs.open(&to).unwrap().as_ref()), b"new");
        // Both handles keep their own file.
        assert_eq!(read_all(f.as_ref()), b"new");
        assert_eq!(read_all(old.as_ref()), b"old content");
        f.write_at(b"N", 0).unwrap();
        assert_eq!(read_all(fs.open(&to).unwrap().as_ref()), b"New");
        // Into a subdirectory.
        fs.create_dir_all(&root.join("sub")).unwrap();
        let moved = root.join("sub").join("moved");
        fs.rename(&to, &moved).unwrap();
        assert_eq!(fs.read_dir(&root.join("sub")).unwrap(), vec![moved.clone()]);
        fs.sync_dir(root).unwrap();
        fs.sync_dir(&root.join("sub")).unwrap();
        // Renaming onto itself is a no-op.
        fs.rename(&moved, &moved).unwrap();
        assert_eq!(read_all(fs.open(&moved).unwrap().as_ref()), b"New");
    }

    pub fn rename_missing_source_fails(fs: &dyn FileSystem, root: &Path) {
        let err = fs.rename(&root.join("ghost"), &root.join("x")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(!fs.exists(&root.join("x")).unwrap());
        fs.create(&root.join("real")).unwrap();
        let err = fs
            .rename(&root.join("real"), &root.join("no").join("x"))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(fs.exists(&root.join("real")).unwrap());
    }

    pub fn remove_semantics(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("gone");
        let err = fs.remove(&path).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        drop(fs.create(&path).unwrap());
        fs.remove(&path).unwrap();
        assert!(!fs.exists(&path).unwrap());
        assert_eq!(
            fs.open(&path).err().unwrap().kind(),
            io::ErrorKind::NotFound
        );
        fs.sync_dir(root).unwrap();
        // The name can be reused at once.
        let again = fs.create(&path).unwrap();
        assert_eq!(again.len().unwrap(), 0);
        // remove does not remove directories.
        fs.create_dir_all(&root.join("d")).unwrap();
        assert!(fs.remove(&root.join("d")).is_err());
        assert!(fs.is_dir(&root.join("d")).unwrap());
    }

    pub fn unlinked_open_handle_still_works(fs: &dyn FileSystem, root: &Path) {
        let path = root.join("unlinked");
        let f = fs.create(&path).unwrap();
        f.write_at(b"before", 0).unwrap();
        fs.remove(&path).unwrap();
        assert!(!fs.exists(&path).unwrap());
        f.write_at(b"after!", 6).unwrap();
        assert_eq!(read_all(f.as_ref()), b"beforeafter!");
        f.set_len(3).unwrap();
        f.allocate(8).unwrap();
        assert_eq!(f.len().unwrap(), 8);
        f.sync_data().unwrap();
        // A new file under the same name is a different file.
        let g = fs.create(&path).unwrap();
        g.write_at(b"other", 0).unwrap();
        assert_eq!(&read_all(f.as_ref())[..3], b"bef");
        assert_eq!(read_all(g.as_ref()), b"other");
    }

    pub fn directories(fs: &dyn FileSystem, root: &Path) {
        let deep = root.join("a").join("b").join("c");
        fs.create_dir_all(&deep).unwrap();
        fs.create_dir_all(&deep).unwrap(); // ok if it exists
        assert!(fs.is_dir(&deep).unwrap());
        assert!(fs.is_dir(&root.join("a")).unwrap());
        assert!(fs.exists(&deep).unwrap());
        assert!(!fs.is_dir(&root.join("nothing")).unwrap());
        let file = deep.join("f");
        drop(fs.create(&file).unwrap());
        assert!(fs.create_dir_all(&file).is_err(), "a file is there");
        assert!(fs.create_dir_all(&file.join("below")).is_err());
        assert!(fs.remove_dir(&deep).is_err(), "not empty");
        assert!(fs.remove_dir(&file).is_err(), "not a directory");
        assert_eq!(
            fs.remove_dir(&root.join("nothing")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        fs.remove(&file).unwrap();
        fs.remove_dir(&deep).unwrap();
        assert!(!fs.exists(&deep).unwrap());
        assert!(fs.is_dir(&root.join("a").join("b")).unwrap());
        fs.sync_dir(&root.join("a")).unwrap();
        assert_eq!(
            fs.sync_dir(&deep).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    pub fn read_dir_lists_sorted_full_paths(fs: &dyn FileSystem, root: &Path) {
        assert!(fs.read_dir(root).unwrap().is_empty());
        for name in ["zeta", "alpha", "mid.ibd"] {
            drop(fs.create(&root.join(name)).unwrap());
        }
        fs.create_dir_all(&root.join("dir").join("inner")).unwrap();
        drop(fs.create(&root.join("dir").join("nested")).unwrap());
        let expected: Vec<PathBuf> = ["alpha", "dir", "mid.ibd", "zeta"]
            .iter()
            .map(|n| root.join(n))
            .collect();
        assert_eq!(fs.read_dir(root).unwrap(), expected);
        assert_eq!(
            fs.read_dir(&root.join("dir")).unwrap(),
            vec![
                root.join("dir").join("inner"),
                root.join("dir").join("nested")
            ]
        );
        assert_eq!(
            fs.read_dir(&root.join("none")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert!(fs.read_dir(&root.join("zeta")).is_err(), "not a directory");
    }

    pub fn sync_calls_succeed(fs: &dyn FileSystem, root: &Path) {
        let f = fs.create(&root.join("s")).unwrap();
        f.write_at(&[1u8; 8192], 0).unwrap();
        f.sync_data().unwrap();
        fs.sync_dir(root).unwrap();
        f.sync_data().unwrap(); // nothing pending
        assert_eq!(read_all(f.as_ref()).len(), 8192);
    }

    /// Page-sized I/O at page offsets from unaligned buffers (the bounce path), and writes
    /// straddling blocks and the end of the file (the read-modify-write path).
    pub fn direct_requests_of_any_alignment(fs: &dyn FileSystem, root: &Path) {
        let a = DIRECT_IO_ALIGN;
        let f = fs.create(&root.join("d.ibd")).unwrap();
        // A page from a buffer one byte off alignment.
        let mut store = vec![0u8; 3 * a + 1];
        let page: Vec<u8> = (0..2 * a).map(|i| (i % 251) as u8).collect();
        let off = 1 + (a - (store.as_ptr() as usize + 1) % a) % a;
        store[off..off + 2 * a].copy_from_slice(&page);
        f.write_at(&store[off..off + 2 * a], a as u64).unwrap();
        assert_eq!(f.len().unwrap(), 3 * a as u64);
        let mut back = vec![0u8; 3 * a + 1];
        f.read_at(&mut back[off..off + 2 * a], a as u64).unwrap();
        assert_eq!(&back[off..off + 2 * a], &page[..]);
        // A write straddling two blocks keeps the bytes around it.
        f.write_at(b"XY", (2 * a - 1) as u64).unwrap();
        let all = read_all(f.as_ref());
        assert!(all[..a].iter().all(|&b| b == 0));
        assert_eq!(&all[a..2 * a - 1], &page[..a - 1]);
        assert_eq!(&all[2 * a - 1..2 * a + 1], b"XY");
        assert_eq!(&all[2 * a + 1..], &page[a + 1..]);
        // One past the end: the file grows by exactly what was written.
        f.write_at(b"end", 3 * a as u64 + 5).unwrap();
        assert_eq!(f.len().unwrap(), 3 * a as u64 + 8);
        let mut tail = [9u8; 8];
        f.read_at(&mut tail, 3 * a as u64).unwrap();
        assert_eq!(&tail, b"\0\0\0\0\0end");
        // A read that would need bytes past the end fails; one ending at it does not.
        let mut over = [0u8; 9];
        let err = f.read_at(&mut over, 3 * a as u64).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        f.read_at(&mut over[..8], 3 * a as u64).unwrap();
        f.sync_data().unwrap();
    }

    /// A handle keeps the durability it was asked for; O_DIRECT holds on these file systems
    /// (the temporary directory is not on a tmpfs that refuses it; see docs/testing.md).
    pub fn flags_report_what_is_in_force(fs: &dyn FileSystem, root: &Path) {
        let f = fs.create(&root.join("flags")).unwrap();
        let g = fs.open(&root.join("flags")).unwrap();
        assert_eq!(f.flags(), g.flags());
        let plain = fs
            .open_with(&root.join("flags"), OpenFlags::BUFFERED)
            .unwrap();
        assert_eq!(plain.flags(), OpenFlags::BUFFERED);
        for flags in ALL_FLAGS {
            let h = fs.open_with(&root.join("flags"), flags).unwrap();
            assert_eq!(h.flags().dsync, flags.dsync);
            assert!(!h.flags().direct || flags.direct);
        }
    }
}
