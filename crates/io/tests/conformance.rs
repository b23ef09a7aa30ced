//! One conformance suite for every `FileSystem`: each check runs against the real file system
//! (OsFs in a temporary directory) and the simulated one (SimFs under `/data`), so the
//! simulation cannot drift from the semantics the engine gets in production.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use innoxide_io::{File, FileSystem, OsFs, SimFs};

type Check = fn(&dyn FileSystem, &Path);

/// Runs `check` on OsFs in a fresh temporary directory and on a fresh SimFs.
fn on_both(check: Check) {
    let dir = tempfile::tempdir().expect("tempdir");
    let os: Arc<dyn FileSystem> = Arc::new(OsFs::new());
    check(os.as_ref(), dir.path());

    let sim: Arc<dyn FileSystem> = Arc::new(SimFs::new(1));
    let root = Path::new("/data");
    sim.create_dir_all(root).expect("sim root");
    check(sim.as_ref(), root);
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
}
