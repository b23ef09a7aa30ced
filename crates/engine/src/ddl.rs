//! DDL and the dictionary's life cycle: bootstrapping a new data directory, CREATE/DROP TABLE,
//! CREATE/DROP INDEX, loading the dictionary at startup and cleaning up what a crash in the
//! middle of DDL left. (InnoDB: dict0boot, dict0crea, dict0load, ha_innodb DDL, row0merge.)
//!
//! Every DDL is a transaction on SYS_TABLES, durable at commit. File and tree work is ordered
//! around it so that after a crash at any point recovery either finds the change whole or
//! removes its leftovers:
//! - CREATE TABLE: create the file (synced), init its pages, insert the SYS_TABLES row, commit.
//!   A file with no committed row is an orphan, deleted at startup.
//! - DROP TABLE: delete-mark the row, commit, drop the pages from the pool, delete the file.
//! - CREATE INDEX: allocate the root in a pending slot, commit META with the index marked
//!   incomplete, clear the slot, build, commit META complete. An incomplete index is dropped at
//!   startup; a pending index root no META references is freed.
//! - DROP INDEX: put the root in a pending slot, commit META without it, free the tree (root
//!   last), clear the slot.
//! - REDEFINE (ALTER TABLE that changes only names and SQL-layer options: column and index
//!   names, defaults, constraints): commit the new META, with other tables' new options, in
//!   one transaction. No page or file changes.
//! - RENAME TABLE: commit the new names with META naming each file's old path
//!   (`renamed_from`), move the files (via a staging name), commit META without the path. A
//!   committed entry with `renamed_from` is finished at startup: the file is found by the space
//!   id in its page 0 (see `rename_tables`).
//!
//! LATCHING: `Dict::ddl` is held for the whole DDL; a table's `mdl` exclusively while its
//! definition changes. A transaction takes a table lock (lock system) before a table's `mdl`,
//! never while holding it (`Trx::with_table`), so a DDL may hold a table lock while it waits
//! for an `mdl` (ALTER TABLE's copy holds S through the rename that swaps the table). A
//! transaction whose table was replaced waits for `ddl` (holding no `mdl`) until the
//! successor is published; no DDL waits for a table lock while holding `ddl`.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::btree::{self, cursor, Index};
use crate::buffer_pool::LatchMode;
use crate::dict::schema::{ColumnKind, IndexLoc, IndexSpec, TableDef, TableMeta, Value};
use crate::dict::{self, Table, DICT_HDR_PAGE};
use crate::doublewrite::{DBLWR_AREAS, DBLWR_AREA_PAGES, DBLWR_FIRST_PAGE};
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::mach::read_u32;
use crate::mtr::Mtr;
use crate::page::index_page as ip;
use crate::page::record::{self, Tuple};
use crate::page::{self, PageType};
use crate::row::{self, sec, ClustRec};
use crate::tablespace::fsp;
use crate::trx::{undo, TrxState, N_RSEGS};
use crate::types::{PageId, PageNo, SpaceId, TableId, SYSTEM_SPACE};

/// Initial size of ibdata1 in pages.
pub fn initial_system_pages() -> u32 {
    DBLWR_FIRST_PAGE + DBLWR_AREAS * DBLWR_AREA_PAGES + 2 + N_RSEGS + 160
}

/// Formats a new system tablespace: FSP header, dictionary header, doublewrite area,
/// SYS_TABLES roots and rollback segment headers, in one mini-transaction.
pub fn bootstrap(inner: &Inner, size: u32) -> Result<()> {
    let mut mtr = Mtr::new(inner);
    let hdr = fsp::init_space(&mut mtr, SYSTEM_SPACE, size)?;
    let dh_no = fsp::alloc(&mut mtr, hdr, SYSTEM_SPACE)?;
    assert_eq!(
        dh_no, DICT_HDR_PAGE,
        "a fresh tablespace hands out page 1 first"
    );
    let dh = mtr.get_new(PageId::new(SYSTEM_SPACE, dh_no))?;
    mtr.page_init(dh, PageType::Sys);
    mtr.write_u32(dh, dict::DICT_HDR_MAGIC, dict::DICT_MAGIC);
    mtr.write_u32(dh, dict::DICT_HDR_VERSION, 1);
    mtr.write_u64(dh, dict::DICT_HDR_ROW_ID, dict::ROW_ID_WRITE_MARGIN);
    mtr.write_u64(dh, dict::DICT_HDR_TABLE_ID, dict::FIRST_USER_TABLE_ID);
    mtr.write_u64(dh, dict::DICT_HDR_INDEX_ID, dict::FIRST_USER_INDEX_ID);
    mtr.write_u32(dh, dict::DICT_HDR_SPACE_ID, dict::FIRST_USER_SPACE_ID);
    mtr.write_u64(dh, dict::DICT_HDR_TRX_ID, crate::trx::TRX_ID_WRITE_MARGIN);
    // Doublewrite area: allocated, never initialised (its slots hold raw page copies).
    for i in 0..DBLWR_AREAS * DBLWR_AREA_PAGES {
        let p = fsp::alloc(&mut mtr, hdr, SYSTEM_SPACE)?;
        assert_eq!(p, DBLWR_FIRST_PAGE + i);
    }
    mtr.write_u32(dh, dict::DICT_HDR_DBLWR_FIRST, DBLWR_FIRST_PAGE);
    mtr.write_u32(dh, dict::DICT_HDR_DBLWR_AREAS, DBLWR_AREAS);
    mtr.write_u32(dh, dict::DICT_HDR_DBLWR_AREA_PAGES, DBLWR_AREA_PAGES);
    mtr.commit()?;
    // The rest in small mini-transactions, each bounded well below the log capacity.
    for off in [dict::DICT_HDR_TABLES_ROOT, dict::DICT_HDR_NAMES_ROOT] {
        let id = if off == dict::DICT_HDR_TABLES_ROOT {
            dict::SYS_TABLES_CLUSTERED
        } else {
            dict::SYS_TABLES_NAME_INDEX
        };
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let dh = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::X)?;
        let hdr = mtr.get(PageId::new(SYSTEM_SPACE, 0), LatchMode::X)?;
        let p = fsp::alloc(&mut mtr, hdr, SYSTEM_SPACE)?;
        let r = mtr.get_new(PageId::new(SYSTEM_SPACE, p))?;
        mtr.index_init(r, 0, id);
        mtr.write_u32(dh, off, p);
        mtr.commit()?;
    }
    for i in 0..N_RSEGS {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let dh = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::X)?;
        let hdr = mtr.get(PageId::new(SYSTEM_SPACE, 0), LatchMode::X)?;
        let p = fsp::alloc(&mut mtr, hdr, SYSTEM_SPACE)?;
        let r = mtr.get_new(PageId::new(SYSTEM_SPACE, p))?;
        undo::init_rseg(&mut mtr, r);
        mtr.write_u32(dh, dict::DICT_HDR_RSEGS + 4 * i as usize, p);
        if i + 1 == N_RSEGS {
            // Written last: a crash before it leaves a data directory that is initialised again.
            mtr.write_u32(dh, dict::DICT_HDR_N_RSEGS, N_RSEGS);
        }
        mtr.commit()?;
    }
    Ok(())
}

/// True once bootstrap finished (its last mini-transaction sets the number of rsegs).
pub fn bootstrap_complete(inner: &Inner) -> Result<bool> {
    let mut mtr = Mtr::new(inner);
    let h = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::S)?;
    let p = mtr.page(h);
    let done = page::page_type(p) == Some(PageType::Sys)
        && read_u32(p, dict::DICT_HDR_MAGIC) == dict::DICT_MAGIC
        && read_u32(p, dict::DICT_HDR_N_RSEGS) != 0;
    mtr.commit()?;
    Ok(done)
}

/// Reads the rseg header page numbers from the dictionary header.
pub fn rseg_pages(inner: &Inner) -> Result<Vec<PageNo>> {
    let mut mtr = Mtr::new(inner);
    let h = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::S)?;
    let p = mtr.page(h);
    if read_u32(p, dict::DICT_HDR_MAGIC) != dict::DICT_MAGIC {
        return Err(Error::corrupted(
            SYSTEM_SPACE,
            DICT_HDR_PAGE,
            "bad dictionary header magic",
        ));
    }
    let n = read_u32(p, dict::DICT_HDR_N_RSEGS) as usize;
    if n == 0 || n > 127 {
        return Err(Error::corrupted(
            SYSTEM_SPACE,
            DICT_HDR_PAGE,
            "bad number of rollback segments",
        ));
    }
    let v = (0..n)
        .map(|i| read_u32(p, dict::DICT_HDR_RSEGS + 4 * i))
        .collect();
    mtr.commit()?;
    Ok(v)
}

/// Builds the SYS_TABLES table object from the dictionary header.
pub fn boot_sys_tables(inner: &Inner) -> Result<Arc<Table>> {
    let tr = dict::header_u32(inner, dict::DICT_HDR_TABLES_ROOT)?;
    let nr = dict::header_u32(inner, dict::DICT_HDR_NAMES_ROOT)?;
    let meta = dict::sys_tables_meta(tr, nr);
    let t = Arc::new(Table::from_meta(dict::SYS_TABLES_ID, &meta)?);
    inner.dict.set_sys_tables(t.clone());
    Ok(t)
}

/// A SYS_TABLES row: (table id, name, META, delete-marked).
struct SysRow {
    id: TableId,
    name: String,
    meta: Vec<u8>,
    deleted: bool,
}

/// Reads every SYS_TABLES row, delete-marked ones included.
fn sys_rows(inner: &Inner) -> Result<Vec<SysRow>> {
    let sys = inner.dict.sys_tables();
    let mut scan = cursor::Scan::new(sys.clustered.clone(), cursor::Start::End, true);
    let mut out = Vec::new();
    while let Some(f) = scan.next(inner)? {
        let vals = row::decode_row(&sys, &f);
        let (Value::UInt(id), Value::Bytes(name), Value::Bytes(meta)) =
            (&vals[0], &vals[1], &vals[2])
        else {
            return Err(Error::corrupted(
                SYSTEM_SPACE,
                sys.clustered.root,
                "malformed SYS_TABLES row",
            ));
        };
        out.push(SysRow {
            id: *id,
            name: String::from_utf8_lossy(name).into_owned(),
            meta: meta.clone(),
            deleted: record::is_deleted(&f.rec),
        });
    }
    Ok(out)
}

fn decode_meta(r: &SysRow) -> Result<TableMeta> {
    TableMeta::decode(&r.name, &r.meta).ok_or_else(|| {
        Error::Startup(format!(
            "InnoDB: the dictionary entry of table {} (id {}) is damaged",
            r.name, r.id
        ))
    })
}

pub fn ibd_path(name: &str) -> PathBuf {
    PathBuf::from(format!("{name}.ibd"))
}

/// Where RENAME TABLE parks the file of space `space` on its way to `<to>.ibd`: in the
/// target's directory, under a name no table's file can have (table files end in `.ibd`).
fn staging_path(to: &str, space: SpaceId) -> PathBuf {
    let dir = Path::new(to).parent().unwrap_or(Path::new(""));
    dir.join(format!("#rename-{space}.tmp"))
}

/// The space id in page 0 of a file, if it can be read.
fn file_space_id(inner: &Inner, rel: &Path) -> Option<SpaceId> {
    let abs = inner.fil.abs(rel);
    if !inner.fs.exists(&abs).ok()? {
        return None;
    }
    let f = inner.fs.open(&abs).ok()?;
    let mut hdr = vec![0u8; page::FIL_HEADER_SIZE];
    if f.len().ok()? < hdr.len() as u64 {
        return None;
    }
    f.read_at(&mut hdr, 0).ok()?;
    Some(page::space_id(&hdr))
}

/// The file of table `name`: `<name>.ibd`, or, while a RENAME is being finished, wherever the
/// move left it: its old path, the staging path or the new path, whichever holds a file whose
/// page 0 names the table's space. (Page 0's space id never changes after creation, so even a
/// torn page 0 names it.)
fn table_file(inner: &Inner, name: &str, meta: &TableMeta) -> PathBuf {
    let new = ibd_path(name);
    let Some(old) = &meta.renamed_from else {
        return new;
    };
    let candidates = [
        PathBuf::from(old),
        staging_path(name, meta.space),
        new.clone(),
    ];
    candidates
        .into_iter()
        .find(|p| file_space_id(inner, p) == Some(meta.space))
        .unwrap_or(new)
}

/// Tablespaces that redo may refer to: every SYS_TABLES row, committed or not, whose file exists.
/// When a dropped table and a newer one share a name (so a path), the live row wins. A file
/// whose valid page 0 names another space is not the row's; a torn page 0 is trusted if the
/// doublewrite area holds that page of the row's space, or if the row is live.
pub fn recovery_spaces(
    inner: &Inner,
    dblwr: &std::collections::HashMap<PageId, Vec<u8>>,
) -> Result<Vec<(SpaceId, PathBuf)>> {
    let mut by_path: std::collections::BTreeMap<PathBuf, (bool, TableId, SpaceId)> =
        Default::default();
    for r in sys_rows(inner)? {
        let Ok(meta) = decode_meta(&r) else { continue };
        let cand = (!r.deleted, r.id, meta.space);
        let e = by_path
            .entry(table_file(inner, &r.name, &meta))
            .or_insert(cand);
        if (cand.0, cand.1) > (e.0, e.1) {
            *e = cand;
        }
    }
    let mut out = Vec::new();
    for (rel, (live, _, space)) in by_path {
        let abs = inner.fil.abs(&rel);
        if !inner.fs.exists(&abs).unwrap_or(false) {
            continue;
        }
        let Ok(f) = inner.fs.open(&abs) else { continue };
        let mut hdr = vec![0u8; inner.bp.page_size()];
        if f.len().unwrap_or(0) >= hdr.len() as u64 && f.read_at(&mut hdr, 0).is_err() {
            continue;
        }
        let id = PageId::new(space, 0);
        let ours = match page::verify(&hdr, id) {
            Ok(()) => !page::is_all_zero(&hdr) || live,
            Err(page::PageDefect::WrongPage { .. }) => false,
            Err(_) => dblwr.contains_key(&id) || live,
        };
        if ours {
            out.push((space, rel));
        }
    }
    Ok(out)
}

/// Loads a table for rollback or purge by id (None if it has been dropped).
pub fn table_for_undo(inner: &Inner, id: TableId) -> Result<Option<Arc<Table>>> {
    if let Some(t) = inner.dict.by_id(id) {
        return Ok(Some(t));
    }
    let sys = inner.dict.sys_tables();
    let mut key = Tuple::new();
    key.push(Some(&id.to_be_bytes()));
    let Some(vals) = row::get(inner, &sys, &key, row::ReadMode::Latest)? else {
        return Ok(None);
    };
    let (Value::Bytes(name), Value::Bytes(meta)) = (&vals[1], &vals[2]) else {
        return Ok(None);
    };
    let r = SysRow {
        id,
        name: String::from_utf8_lossy(name).into_owned(),
        meta: meta.clone(),
        deleted: false,
    };
    let meta = decode_meta(&r)?;
    inner
        .fil
        .open_space(meta.space, &table_file(inner, &r.name, &meta))?;
    let t = Arc::new(Table::from_meta(id, &meta)?);
    inner.dict.insert(t.clone());
    Ok(Some(t))
}

/// Loads the dictionary cache from the committed rows and opens every tablespace.
pub fn load_dictionary(inner: &Inner) -> Result<()> {
    for r in sys_rows(inner)? {
        if r.deleted {
            continue;
        }
        let meta = decode_meta(&r)?;
        inner
            .fil
            .open_space(meta.space, &table_file(inner, &r.name, &meta))?;
        let t = Arc::new(Table::from_meta(r.id, &meta)?);
        inner.dict.insert(t);
    }
    Ok(())
}

/// Creates the directory of a file to be (and syncs its parent) if it does not exist.
fn ensure_dir(inner: &Inner, abs: &Path) -> Result<()> {
    let Some(dir) = abs.parent() else {
        return Ok(());
    };
    if !inner
        .fs
        .exists(dir)
        .map_err(|e| inner.fil.io_error(dir, e, false))?
    {
        inner
            .fs
            .create_dir_all(dir)
            .map_err(|e| inner.fil.io_error(dir, e, false))?;
        let up = dir.parent().unwrap_or(Path::new("."));
        inner
            .fs
            .sync_dir(up)
            .map_err(|e| inner.fil.io_error(up, e, true))?;
    }
    Ok(())
}

fn validate_name(name: &str) -> Result<()> {
    let parts: Vec<&str> = name.split('/').collect();
    if parts.len() != 2
        || parts
            .iter()
            .any(|p| p.is_empty() || p.contains('\0') || *p == "." || *p == "..")
    {
        return Err(Error::InvalidArgument(format!(
            "table name '{name}' must be db/table"
        )));
    }
    Ok(())
}

fn validate_def(inner: &Inner, def: &TableDef) -> Result<()> {
    validate_name(&def.name)?;
    if def.columns.is_empty() {
        return Err(Error::InvalidArgument(
            "a table needs at least one column".into(),
        ));
    }
    let mut names = HashSet::new();
    for c in &def.columns {
        if !names.insert(c.name.to_lowercase()) {
            return Err(Error::InvalidArgument(format!(
                "Duplicate column name '{}'",
                c.name
            )));
        }
        if let ColumnKind::Int { bytes, .. } = c.kind {
            if ![1, 2, 3, 4, 8].contains(&bytes) {
                return Err(Error::InvalidArgument(format!("integer width {bytes}")));
            }
        }
    }
    if let Some(pk) = &def.primary_key {
        if pk.is_empty() || pk.iter().any(|&c| c >= def.columns.len()) {
            return Err(Error::InvalidArgument("bad primary key columns".into()));
        }
        check_key_len(inner, def, pk, "PRIMARY")?;
    }
    let mut inames = HashSet::new();
    for s in &def.indexes {
        validate_index(inner, def, s)?;
        if !inames.insert(s.name.to_lowercase()) {
            return Err(Error::IndexExists(s.name.clone()));
        }
    }
    Ok(())
}

fn check_key_len(inner: &Inner, def: &TableDef, cols: &[usize], name: &str) -> Result<()> {
    let max_key = (ip::max_rec_size(inner.bp.page_size()) / 2 - 64).min(3072);
    let len: u64 = cols
        .iter()
        .map(|&c| match def.columns[c].kind {
            ColumnKind::Int { bytes, .. } => u64::from(bytes),
            ColumnKind::Float => 4,
            ColumnKind::Double => 8,
            ColumnKind::Fixed(n) => u64::from(n),
            ColumnKind::Var { max_len } => u64::from(max_len),
        })
        .sum();
    if len > max_key as u64 {
        return Err(Error::InvalidArgument(format!(
            "Specified key '{name}' was too long; max key length is {max_key} bytes"
        )));
    }
    Ok(())
}

fn validate_index(inner: &Inner, def: &TableDef, s: &IndexSpec) -> Result<()> {
    if s.name.is_empty() || s.name.eq_ignore_ascii_case("PRIMARY") {
        return Err(Error::InvalidArgument(format!(
            "Incorrect index name '{}'",
            s.name
        )));
    }
    if s.columns.is_empty() || s.columns.iter().any(|&c| c >= def.columns.len()) {
        return Err(Error::InvalidArgument(format!(
            "bad columns for index {}",
            s.name
        )));
    }
    check_key_len(inner, def, &s.columns, &s.name)
}

/// Creates an empty B-tree root (level 0) in `space`.
fn new_root(
    mtr: &mut Mtr<'_>,
    hdr: crate::mtr::PageRef,
    space: SpaceId,
    index_id: u64,
) -> Result<PageNo> {
    let p = fsp::alloc(mtr, hdr, space)?;
    let r = mtr.get_new(PageId::new(space, p))?;
    mtr.index_init(r, 0, index_id);
    Ok(p)
}

fn commit_ddl(inner: &Inner, trx: &mut TrxState) -> Result<()> {
    let lsn = trx.commit(inner)?;
    inner.log.write_up_to(lsn, true) // DDL is always durable at commit
}

fn run_ddl_trx(inner: &Inner, f: impl FnOnce(&mut TrxState) -> Result<()>) -> Result<()> {
    let mut trx = TrxState::new();
    match f(&mut trx) {
        Ok(()) => commit_ddl(inner, &mut trx),
        Err(e) => {
            if !e.is_fatal() {
                trx.rollback(inner)?;
            }
            Err(e)
        }
    }
}

/// CREATE TABLE.
pub fn create_table(inner: &Inner, def: TableDef) -> Result<Arc<Table>> {
    let _g = inner.dict.ddl.lock();
    inner.check_writable()?;
    validate_def(inner, &def)?;
    if inner.dict.get(&def.name).is_some() {
        return Err(Error::TableExists(def.name.clone()));
    }
    let table_id = dict::alloc_ids(inner, dict::DICT_HDR_TABLE_ID, 1)?;
    let first_index =
        dict::alloc_ids(inner, dict::DICT_HDR_INDEX_ID, 1 + def.indexes.len() as u64)?;
    let space = dict::alloc_space_id(inner)?;
    let rel = ibd_path(&def.name);
    let abs = inner.fil.abs(&rel);
    ensure_dir(inner, &abs)?;
    if inner
        .fs
        .exists(&abs)
        .map_err(|e| inner.fil.io_error(&abs, e, false))?
    {
        return Err(Error::TableExists(format!(
            "{} (the file {} already exists)",
            def.name,
            rel.display()
        )));
    }
    let pages = 4 + 1 + def.indexes.len() as u32;
    inner.fil.create_space(space, &rel, pages.max(8))?;
    let result = (|| -> Result<Arc<Table>> {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let hdr = fsp::init_space(&mut mtr, space, pages.max(8))?;
        let croot = new_root(&mut mtr, hdr, space, first_index)?;
        let mut secondary = Vec::new();
        for i in 0..def.indexes.len() {
            let id = first_index + 1 + i as u64;
            secondary.push(IndexLoc {
                id,
                root: new_root(&mut mtr, hdr, space, id)?,
                incomplete: false,
            });
        }
        mtr.commit()?;
        let meta = TableMeta {
            def: def.clone(),
            space,
            clustered: (first_index, croot),
            secondary,
            renamed_from: None,
        };
        let t = Arc::new(Table::from_meta(table_id, &meta)?);
        let sys = inner.dict.sys_tables();
        run_ddl_trx(inner, |trx| {
            row::insert(
                inner,
                trx,
                &sys,
                &[
                    Value::UInt(table_id),
                    Value::Bytes(def.name.clone().into_bytes()),
                    Value::Bytes(meta.encode()),
                ],
            )
        })?;
        Ok(t)
    })();
    match result {
        Ok(t) => {
            inner.dict.insert(t.clone());
            tracing::info!("InnoDB: created table {} (space {space})", def.name);
            Ok(t)
        }
        Err(e) => {
            if !e.is_fatal() {
                inner.bp.evict_space(space);
                let _ = inner.fil.remove_space(space);
            }
            Err(match e {
                Error::DuplicateKey { .. } => Error::TableExists(def.name.clone()),
                e => e,
            })
        }
    }
}

/// DROP TABLE.
pub fn drop_table(inner: &Inner, name: &str) -> Result<()> {
    let _g = inner.dict.ddl.lock();
    inner.check_writable()?;
    let t = inner
        .dict
        .get(name)
        .ok_or_else(|| Error::NoSuchTable(name.into()))?;
    let _m = t.mdl.write();
    let sys = inner.dict.sys_tables();
    run_ddl_trx(inner, |trx| {
        let key = row::encode_key(&sys, &[Value::UInt(t.id)])?;
        row::delete(inner, trx, &sys, &key).map(|_| ())
    })?;
    t.dropped.store(true, Ordering::Release);
    inner.dict.remove(t.id);
    let ids: Vec<u64> = std::iter::once(t.clustered.id)
        .chain(t.secondary.iter().map(|s| s.index.id))
        .collect();
    inner.ahi.drop_indexes(&ids);
    inner.bp.evict_space(t.space);
    inner.fil.remove_space(t.space)?;
    tracing::info!("InnoDB: dropped table {name}");
    Ok(())
}

/// RENAME TABLE a TO b [, c TO d ...] (names `db/table`): the steps apply in order, each to
/// the names the previous ones left (so `a TO tmp, b TO a, tmp TO b` swaps), and all of them
/// or none survive a crash.
///
/// 1. One DDL transaction updates every moved table's SYS_TABLES row: the new NAME, and META
///    with `renamed_from` = the file's current path. Its commit is the rename's commit point.
/// 2. Each file moves to a staging name in the target directory, then to `<new name>.ibd`
///    (two passes, so a swap never overwrites a file), each move followed by directory syncs.
/// 3. A second transaction clears `renamed_from`.
///
/// A crash before 1 commits leaves the old names (rollback restores the rows; no file moved).
/// After it, startup finds each file by its page 0 (`table_file`) and repeats 2 and 3
/// (`finish_renames`).
///
/// `options` gives tables (by the names the renames leave) new SQL-layer options, written
/// by the same transaction as the names (a table whose foreign keys name a renamed table).
pub fn rename_tables(
    inner: &Inner,
    renames: &[(String, String)],
    options: &[(String, String)],
) -> Result<()> {
    let _g = inner.dict.ddl.lock();
    inner.check_writable()?;
    // Resolve the steps against the namespace as the earlier steps leave it.
    let mut overlay: std::collections::HashMap<String, Option<TableId>> = Default::default();
    let mut tables: std::collections::BTreeMap<TableId, Arc<Table>> = Default::default();
    let mut steps: Vec<(TableId, String)> = Vec::new();
    for (from, to) in renames {
        validate_name(to)?;
        let lookup = |n: &str| match overlay.get(n) {
            Some(v) => *v,
            None => inner.dict.get(n).map(|t| t.id),
        };
        let id = lookup(from).ok_or_else(|| Error::NoSuchTable(from.clone()))?;
        if lookup(to).is_some() {
            return Err(Error::TableExists(to.clone()));
        }
        if id == dict::SYS_TABLES_ID {
            return Err(Error::InvalidArgument("cannot rename SYS_TABLES".into()));
        }
        let t = inner
            .dict
            .by_id(id)
            .ok_or_else(|| Error::NoSuchTable(from.clone()))?;
        tables.insert(id, t);
        overlay.insert(from.clone(), None);
        overlay.insert(to.clone(), Some(id));
        steps.push((id, to.clone()));
    }
    let mut new_options: Vec<(TableId, &str)> = Vec::new();
    for (name, opts) in options {
        let id = match overlay.get(name) {
            Some(v) => *v,
            None => inner.dict.get(name).map(|t| t.id),
        }
        .ok_or_else(|| Error::NoSuchTable(name.clone()))?;
        let t = inner
            .dict
            .by_id(id)
            .ok_or_else(|| Error::NoSuchTable(name.clone()))?;
        tables.insert(id, t);
        new_options.push((id, opts));
    }
    // Metadata locks in id order (DDL holds `ddl`, so only DML competes).
    let _mdl: Vec<_> = tables.values().map(|t| t.mdl.write()).collect();
    let mut metas: std::collections::BTreeMap<TableId, TableMeta> = Default::default();
    let mut current: std::collections::HashMap<TableId, PathBuf> = Default::default();
    for (id, t) in &tables {
        let sp = inner.fil.space(t.space)?;
        let mut m = meta_of(t);
        m.renamed_from = Some(sp.rel_path().to_string_lossy().into_owned());
        current.insert(*id, sp.rel_path());
        metas.insert(*id, m);
    }
    for (id, opts) in &new_options {
        if let Some(m) = metas.get_mut(id) {
            m.def.options = opts.to_string();
        }
    }
    // A final file name must be free unless a moved table's file holds it now.
    let mut final_name: std::collections::HashMap<TableId, &str> = Default::default();
    for (id, to) in &steps {
        final_name.insert(*id, to);
    }
    for to in final_name.values() {
        let rel = ibd_path(to);
        let abs = inner.fil.abs(&rel);
        let busy = inner
            .fs
            .exists(&abs)
            .map_err(|e| inner.fil.io_error(&abs, e, false))?;
        if busy && !current.values().any(|p| *p == rel) {
            return Err(Error::TableExists(format!(
                "{to} (the file {} already exists)",
                rel.display()
            )));
        }
    }
    let sys = inner.dict.sys_tables();
    let result = run_ddl_trx(inner, |trx| {
        for (id, to) in &steps {
            let m = metas.get_mut(id).expect("every step's table has a meta");
            m.def.name.clone_from(to);
            let key = row::encode_key(&sys, &[Value::UInt(*id)])?;
            let changes = [
                (1, Value::Bytes(to.clone().into_bytes())),
                (2, Value::Bytes(m.encode())),
            ];
            if !row::update(inner, trx, &sys, &key, &changes)? {
                return Err(Error::NoSuchTable(to.clone()));
            }
        }
        for (id, _) in &new_options {
            if steps.iter().any(|(s, _)| s == id) {
                continue;
            }
            let m = &metas[id];
            let key = row::encode_key(&sys, &[Value::UInt(*id)])?;
            if !row::update(inner, trx, &sys, &key, &[(2, Value::Bytes(m.encode()))])? {
                return Err(Error::NoSuchTable(m.def.name.clone()));
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        return Err(match e {
            Error::DuplicateKey { key, .. } => Error::TableExists(key),
            e => e,
        });
    }
    // Committed (I1): the cache shows the new names from now on (all old names go first: a
    // swap reuses them).
    let mut fresh = Vec::new();
    for (id, t) in &tables {
        fresh.push(Arc::new(Table::from_meta(*id, &metas[id])?));
        t.dropped.store(true, Ordering::Release);
        inner.dict.remove(*id);
    }
    for nt in fresh {
        inner.dict.insert(nt);
    }
    let pending: Vec<(TableId, TableMeta)> = metas.into_iter().collect();
    finish_renames(inner, &pending)?;
    for (from, to) in renames {
        tracing::info!("InnoDB: renamed table {from} to {to}");
    }
    Ok(())
}

/// Gives table `def.name` the definition `def`, under which its stored rows read as they are
/// (`TableDef::readable_as`: names and options change, columns may be added instantly), and the
/// tables in `options` new SQL-layer options, in one DDL transaction (ALTER TABLE's
/// metadata-only changes, and the children of a renamed parent column, fk.rs F5). Open
/// handles become obsolete: a statement on one finds the new table (`Trx::with_table`).
pub fn redefine_table(inner: &Inner, def: TableDef, options: &[(String, String)]) -> Result<()> {
    let _g = inner.dict.ddl.lock();
    inner.check_writable()?;
    let t = inner
        .dict
        .get(&def.name)
        .ok_or_else(|| Error::NoSuchTable(def.name.clone()))?;
    if t.id == dict::SYS_TABLES_ID {
        return Err(Error::InvalidArgument("cannot redefine SYS_TABLES".into()));
    }
    if !t.def.readable_as(&def) {
        return Err(Error::InvalidArgument(format!(
            "the new definition of {} stores rows differently: it needs a rebuild",
            def.name
        )));
    }
    let mut tables: std::collections::BTreeMap<TableId, (Arc<Table>, TableMeta)> =
        Default::default();
    let mut m = meta_of(&t);
    m.def = def;
    tables.insert(t.id, (t.clone(), m));
    for (name, opts) in options {
        let c = inner
            .dict
            .get(name)
            .ok_or_else(|| Error::NoSuchTable(name.clone()))?;
        if c.id == t.id {
            return Err(Error::InvalidArgument(format!(
                "{name}: its own options are in its definition"
            )));
        }
        let mut m = meta_of(&c);
        m.def.options.clone_from(opts);
        tables.insert(c.id, (c, m));
    }
    // Metadata locks in id order (DDL holds `ddl`, so only DML competes).
    let _mdl: Vec<_> = tables.values().map(|(t, _)| t.mdl.write()).collect();
    let sys = inner.dict.sys_tables();
    run_ddl_trx(inner, |trx| {
        for (id, (t, m)) in &tables {
            let key = row::encode_key(&sys, &[Value::UInt(*id)])?;
            if !row::update(inner, trx, &sys, &key, &[(2, Value::Bytes(m.encode()))])? {
                return Err(Error::NoSuchTable(t.name.clone()));
            }
        }
        Ok(())
    })?;
    for (t, m) in tables.values() {
        republish(inner, t, m, None)?;
    }
    tracing::info!("InnoDB: redefined table {}", t.name);
    Ok(())
}

/// Steps 2 and 3 of `rename_tables` for tables whose committed META has `renamed_from` and
/// whose space is open at its file's current path. Repeatable after a crash at any point.
fn finish_renames(inner: &Inner, pending: &[(TableId, TableMeta)]) -> Result<()> {
    let mut moves = Vec::new();
    for (_, m) in pending {
        let cur = inner.fil.space(m.space)?.rel_path();
        let dest = ibd_path(&m.def.name);
        if cur != dest {
            moves.push((m.space, staging_path(&m.def.name, m.space), dest));
        }
    }
    for (space, staging, _) in &moves {
        if inner.fil.space(*space)?.rel_path() != *staging {
            ensure_dir(inner, &inner.fil.abs(staging))?;
            inner.fil.rename_file(*space, staging)?;
        }
    }
    for (space, _, dest) in &moves {
        inner.fil.rename_file(*space, dest)?;
    }
    let sys = inner.dict.sys_tables();
    run_ddl_trx(inner, |trx| {
        for (id, m) in pending {
            let mut m = m.clone();
            m.renamed_from = None;
            let key = row::encode_key(&sys, &[Value::UInt(*id)])?;
            if !row::update(inner, trx, &sys, &key, &[(2, Value::Bytes(m.encode()))])? {
                return Err(Error::NoSuchTable(m.def.name.clone()));
            }
        }
        Ok(())
    })
}

/// Writes a new META for table `t` in its own DDL transaction.
fn write_meta(inner: &Inner, t: &Table, meta: &TableMeta) -> Result<()> {
    let sys = inner.dict.sys_tables();
    run_ddl_trx(inner, |trx| {
        let key = row::encode_key(&sys, &[Value::UInt(t.id)])?;
        if !row::update(inner, trx, &sys, &key, &[(2, Value::Bytes(meta.encode()))])? {
            return Err(Error::NoSuchTable(t.name.clone()));
        }
        Ok(())
    })
}

fn meta_of(t: &Table) -> TableMeta {
    TableMeta {
        def: t.def.clone(),
        space: t.space,
        clustered: (t.clustered.id, t.clustered.root),
        secondary: t
            .secondary
            .iter()
            .map(|s| IndexLoc {
                id: s.index.id,
                root: s.index.root,
                incomplete: false,
            })
            .collect(),
        renamed_from: None,
    }
}

/// Replaces a table's cache entry after its definition changed (old handles become obsolete).
/// Publishes a new table object for `meta`, replacing `old`. Indexes keep their
/// `created_by`; `fresh` gives the one an index just built takes (index id, stamp).
fn republish(
    inner: &Inner,
    old: &Table,
    meta: &TableMeta,
    fresh: Option<(u64, u64)>,
) -> Result<Arc<Table>> {
    let mut t = Table::from_meta(old.id, meta)?;
    for s in &mut t.secondary {
        s.created_by = match fresh {
            Some((id, stamp)) if id == s.index.id => stamp,
            _ => old
                .secondary
                .iter()
                .find(|o| o.index.id == s.index.id)
                .map_or(0, |o| o.created_by),
        };
    }
    let t = Arc::new(t);
    // The successor is in the cache before the old handle says it is obsolete, so whoever
    // sees the flag finds it (`Trx::with_table`).
    inner.dict.insert(t.clone());
    old.dropped.store(true, Ordering::Release);
    Ok(t)
}

fn set_pending_root(inner: &Inner, space: SpaceId, root: PageNo, add: bool) -> Result<()> {
    let mut mtr = Mtr::new(inner);
    let hdr = mtr.get(PageId::new(space, 0), LatchMode::X)?;
    if add {
        if fsp::pending_add(&mut mtr, hdr, root).is_none() {
            return Err(Error::InvalidArgument(
                "too many concurrent tablespace operations".into(),
            ));
        }
    } else if let Some((slot, _)) = fsp::pending(mtr.page(hdr))
        .into_iter()
        .find(|&(_, p)| p == root)
    {
        fsp::pending_clear(&mut mtr, hdr, slot);
    }
    mtr.commit()?;
    Ok(())
}

/// CREATE INDEX on an existing table (the table's DML waits while it is built).
pub fn create_index(inner: &Inner, name: &str, spec: IndexSpec) -> Result<()> {
    let _g = inner.dict.ddl.lock();
    inner.check_writable()?;
    let t = inner
        .dict
        .get(name)
        .ok_or_else(|| Error::NoSuchTable(name.into()))?;
    let _m = t.mdl.write();
    validate_index(inner, &t.def, &spec)?;
    if t.secondary_by_name(&spec.name).is_some() {
        return Err(Error::IndexExists(spec.name));
    }
    let id = dict::alloc_ids(inner, dict::DICT_HDR_INDEX_ID, 1)?;
    inner.log_free_check()?;
    let root = {
        let mut mtr = Mtr::new(inner);
        let hdr = mtr.get(PageId::new(t.space, 0), LatchMode::X)?;
        fsp::reserve(&mut mtr, hdr, t.space, 1)?;
        let root = new_root(&mut mtr, hdr, t.space, id)?;
        if fsp::pending_add(&mut mtr, hdr, root).is_none() {
            return Err(Error::InvalidArgument(
                "too many concurrent tablespace operations".into(),
            ));
        }
        mtr.commit()?;
        root
    };
    let mut meta = meta_of(&t);
    meta.def.indexes.push(spec.clone());
    meta.secondary.push(IndexLoc {
        id,
        root,
        incomplete: true,
    });
    write_meta(inner, &t, &meta)?;
    set_pending_root(inner, t.space, root, false)?;
    let building = Table::from_meta(t.id, &meta)?;
    let s = building.secondary.last().expect("new index");
    if let Err(e) = build_index(inner, &building, s) {
        if !e.is_fatal() {
            remove_index_after_failure(inner, &t, &meta, s.index.clone())?;
        }
        return Err(e);
    }
    meta.secondary.last_mut().expect("new index").incomplete = false;
    write_meta(inner, &t, &meta)?;
    // Views taken from now on see this id; older ones may miss rows through the index.
    let stamp = inner.trx.new_id(inner)?;
    republish(inner, &t, &meta, Some((id, stamp)))?;
    tracing::info!("InnoDB: created index {} on {name}", spec.name);
    Ok(())
}

/// Fills a new secondary index from the clustered index.
fn build_index(inner: &Inner, t: &Table, s: &crate::dict::SecIndex) -> Result<()> {
    let mut scan = cursor::Scan::new(t.clustered.clone(), cursor::Start::End, true);
    while let Some(f) = scan.next(inner)? {
        if record::is_deleted(&f.rec) {
            continue;
        }
        let cr = ClustRec::parse(t, &f.rec);
        let e = row::sec_entry(inner, t, s, &cr)?;
        sec::insert_entry(inner, t, s, &e, true, None)?;
    }
    Ok(())
}

fn remove_index_after_failure(
    inner: &Inner,
    t: &Table,
    meta: &TableMeta,
    idx: Arc<Index>,
) -> Result<()> {
    let mut m = meta.clone();
    m.def.indexes.pop();
    m.secondary.pop();
    set_pending_root(inner, t.space, idx.root, true)?;
    write_meta(inner, t, &m)?;
    drop_tree(inner, &idx)?;
    set_pending_root(inner, t.space, idx.root, false)
}

/// DROP INDEX.
pub fn drop_index(inner: &Inner, name: &str, index: &str) -> Result<()> {
    let _g = inner.dict.ddl.lock();
    inner.check_writable()?;
    let t = inner
        .dict
        .get(name)
        .ok_or_else(|| Error::NoSuchTable(name.into()))?;
    let _m = t.mdl.write();
    let i = t
        .secondary_by_name(index)
        .ok_or_else(|| Error::NoSuchIndex(index.into()))?;
    let idx = t.secondary[i].index.clone();
    let mut meta = meta_of(&t);
    meta.def.indexes.remove(i);
    meta.secondary.remove(i);
    set_pending_root(inner, t.space, idx.root, true)?;
    write_meta(inner, &t, &meta)?;
    republish(inner, &t, &meta, None)?;
    inner.ahi.drop_indexes(&[idx.id]);
    drop_tree(inner, &idx)?;
    set_pending_root(inner, t.space, idx.root, false)?;
    tracing::info!("InnoDB: dropped index {index} on {name}");
    Ok(())
}

/// Frees every page of an index tree, leaves first and the root last. Pages that are no longer
/// part of this index (freed earlier, reused) are skipped, so a repeat after a crash is safe.
pub fn drop_tree(inner: &Inner, idx: &Index) -> Result<()> {
    let mut order = Vec::new();
    let mut queue = VecDeque::from([idx.root]);
    let mut seen = HashSet::new();
    while let Some(p) = queue.pop_front() {
        if !seen.insert(p) {
            continue;
        }
        let mut mtr = Mtr::new(inner);
        let r = mtr.get(PageId::new(idx.space, p), LatchMode::S)?;
        let pg = mtr.page(r);
        if page::page_type(pg) == Some(PageType::Index) && ip::index_id(pg) == idx.id {
            order.push(p);
            if !ip::is_leaf(pg) {
                for s in 0..ip::n_recs(pg) {
                    queue.push_back(btree::child_of(idx, ip::rec(pg, s)));
                }
            }
        }
        mtr.commit()?;
    }
    // BFS order puts the root first: free in reverse.
    for chunk in order.rchunks(32) {
        inner.log_free_check()?;
        let mut mtr = Mtr::new(inner);
        let mut pages = Vec::new();
        for &p in chunk.iter().rev() {
            pages.push(mtr.get(PageId::new(idx.space, p), LatchMode::X)?);
        }
        let hdr = mtr.get(PageId::new(idx.space, 0), LatchMode::X)?;
        for r in pages {
            let pg = mtr.page(r);
            if page::page_type(pg) == Some(PageType::Index) && ip::index_id(pg) == idx.id {
                fsp::free(&mut mtr, hdr, r)?;
            }
        }
        mtr.commit()?;
    }
    Ok(())
}

/// Startup: finishes DDL a crash interrupted. Finishes committed renames, drops incomplete
/// indexes, frees index roots left in pending slots that no dictionary entry references, and
/// frees pending BLOB chains.
pub fn finish_interrupted_ddl(inner: &Inner) -> Result<()> {
    let mut renames = Vec::new();
    for t in inner.dict.tables() {
        let m = meta_of_stored(inner, &t)?;
        if m.renamed_from.is_some() {
            tracing::warn!(
                "InnoDB: finishing the interrupted rename of table {}",
                t.name
            );
            renames.push((t.id, m));
        }
    }
    if !renames.is_empty() {
        finish_renames(inner, &renames)?;
    }
    let mut tables = inner.dict.tables();
    tables.push(inner.dict.sys_tables());
    for t in tables {
        // Pending slots: BLOB chains and index roots.
        let pending = {
            let mut mtr = Mtr::new(inner);
            let hdr = mtr.get(PageId::new(t.space, 0), LatchMode::S)?;
            let v = fsp::pending(mtr.page(hdr));
            mtr.commit()?;
            v
        };
        let roots: HashSet<PageNo> = std::iter::once(t.clustered.root)
            .chain(t.secondary.iter().map(|s| s.index.root))
            .collect();
        for (slot, p) in pending {
            let ty = {
                let mut mtr = Mtr::new(inner);
                let r = mtr.get(PageId::new(t.space, p), LatchMode::S)?;
                let ty = page::page_type(mtr.page(r));
                let iid = ip::index_id(mtr.page(r));
                mtr.commit()?;
                (ty, iid)
            };
            match ty.0 {
                Some(PageType::Index) if roots.contains(&p) => {
                    set_pending_root(inner, t.space, p, false)?
                }
                Some(PageType::Index) => {
                    tracing::warn!(
                        "InnoDB: freeing index tree at page {p} of {} left by an interrupted DDL",
                        t.name
                    );
                    let idx = Index::new(
                        ty.1,
                        "orphan".into(),
                        t.space,
                        p,
                        t.clustered.leaf.clone(),
                        0,
                        false,
                    );
                    drop_tree(inner, &idx)?;
                    set_pending_root(inner, t.space, p, false)?;
                }
                _ => btree::blob::free_from_slot(inner, t.space, slot, p)?,
            }
        }
        // Incomplete indexes.
        let meta = if t.id == dict::SYS_TABLES_ID {
            continue;
        } else {
            meta_of_stored(inner, &t)?
        };
        if meta.secondary.iter().any(|l| l.incomplete) {
            let mut m = meta.clone();
            let mut dropped = Vec::new();
            let mut i = 0;
            while i < m.secondary.len() {
                if m.secondary[i].incomplete {
                    let loc = m.secondary.remove(i);
                    let spec = m.def.indexes.remove(i);
                    dropped.push((loc, spec));
                } else {
                    i += 1;
                }
            }
            for (loc, spec) in &dropped {
                tracing::warn!(
                    "InnoDB: dropping index {} of {}: its creation was interrupted",
                    spec.name,
                    t.name
                );
                set_pending_root(inner, t.space, loc.root, true)?;
            }
            write_meta(inner, &t, &m)?;
            let newt = republish(inner, &t, &m, None)?;
            for (loc, _) in &dropped {
                let idx = Index::new(
                    loc.id,
                    "incomplete".into(),
                    t.space,
                    loc.root,
                    newt.clustered.leaf.clone(),
                    0,
                    false,
                );
                drop_tree(inner, &idx)?;
                set_pending_root(inner, t.space, loc.root, false)?;
            }
        }
    }
    Ok(())
}

/// META as stored (with incomplete flags), read back from SYS_TABLES.
fn meta_of_stored(inner: &Inner, t: &Table) -> Result<TableMeta> {
    let sys = inner.dict.sys_tables();
    let key = row::encode_key(&sys, &[Value::UInt(t.id)])?;
    let vals = row::get(inner, &sys, &key, row::ReadMode::Latest)?
        .ok_or_else(|| Error::NoSuchTable(t.name.clone()))?;
    let Value::Bytes(m) = &vals[2] else {
        return Err(Error::NoSuchTable(t.name.clone()));
    };
    TableMeta::decode(&t.name, m)
        .ok_or_else(|| Error::Startup(format!("damaged dictionary entry for {}", t.name)))
}

/// Startup: deletes `.ibd` files no committed table owns (left by a crash during CREATE or
/// DROP TABLE).
pub fn remove_orphan_files(inner: &Inner) -> Result<()> {
    let known: HashSet<PathBuf> = inner
        .dict
        .tables()
        .iter()
        .map(|t| ibd_path(&t.name))
        .collect();
    let datadir = inner.fil.datadir().to_path_buf();
    let io = |p: &Path, e| inner.fil.io_error(p, e, false);
    for dir in inner.fs.read_dir(&datadir).map_err(|e| io(&datadir, e))? {
        if !inner.fs.is_dir(&dir).map_err(|e| io(&dir, e))? {
            continue;
        }
        for f in inner.fs.read_dir(&dir).map_err(|e| io(&dir, e))? {
            if f.extension().is_some_and(|x| x == "ibd") {
                let rel = f.strip_prefix(&datadir).unwrap_or(&f).to_path_buf();
                if !known.contains(&rel) {
                    tracing::warn!(
                        "InnoDB: removing {}: no table owns it (interrupted DDL)",
                        rel.display()
                    );
                    inner.fil.delete_file(&rel)?;
                }
            }
        }
    }
    Ok(())
}
