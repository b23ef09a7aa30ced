//! Data dictionary: table definitions persisted in SYS_TABLES, and the in-memory cache of open
//! tables. (InnoDB: dict0dict, dict0boot, dict0load.) Formats: docs/format/dictionary.md and
//! the dictionary header in docs/format/tablespace.md.
//!
//! OVERVIEW
//! SYS_TABLES is an ordinary table (clustered on TABLE_ID, unique index on NAME) in the system
//! tablespace whose definition is built in; its roots are in the dictionary header (page 1).
//! Every other table is a row in it whose META column encodes the definition and index roots.
//! The cache maps ids and names to `Table`s, which carry the record layouts of their indexes.
//!
//! INVARIANTS
//! - I1: a table is in the cache iff its SYS_TABLES row is committed (DDL updates the cache
//!   only after its transaction commits; recovery loads the cache after rollback).
//! - I2: table, index and space ids come from counters in the dictionary header that only grow
//!   and are written in the same mini-transaction that hands them out.
//!
//! LATCHING: `ddl` serialises DDL. The cache maps are RwLocks read on every statement; a
//! table's `mdl` RwLock is held shared by DML and exclusively by DDL on that table.
//! Waits on the cache maps count as `dict_sys`, on `ddl` as `dict_operation_lock` (sync_stats).

pub mod schema;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::latch::RwLock;

use crate::btree::Index;
use crate::buffer_pool::LatchMode;
use crate::collation::Collation;
use crate::engine::Inner;
use crate::error::{Error, Result};
use crate::mach::{read_u32, read_u64};
use crate::mtr::Mtr;
use crate::page::record::{FieldDef, RecLayout};
use crate::sync_stats::{WaitMutex, WaitRwLock, WaitStat};
use crate::types::{IndexId, PageId, PageNo, SpaceId, TableId, SYSTEM_SPACE};
use schema::{ColumnDef, ColumnKind, IndexSpec, TableDef, TableMeta};

// Dictionary header (page 1 of the system tablespace).
pub const DICT_HDR_PAGE: PageNo = 1;
pub const DICT_HDR_MAGIC: usize = 38;
pub const DICT_HDR_VERSION: usize = 42;
pub const DICT_HDR_ROW_ID: usize = 46;
pub const DICT_HDR_TABLE_ID: usize = 54;
pub const DICT_HDR_INDEX_ID: usize = 62;
pub const DICT_HDR_SPACE_ID: usize = 70;
pub const DICT_HDR_TABLES_ROOT: usize = 74;
pub const DICT_HDR_NAMES_ROOT: usize = 78;
pub const DICT_HDR_DBLWR_FIRST: usize = 82;
pub const DICT_HDR_DBLWR_AREAS: usize = 86;
pub const DICT_HDR_DBLWR_AREA_PAGES: usize = 90;
pub const DICT_HDR_TRX_ID: usize = 94;
pub const DICT_HDR_N_RSEGS: usize = 102;
pub const DICT_HDR_RSEGS: usize = 106;
pub const DICT_MAGIC: u32 = 0x494E_4E58;

pub const SYS_TABLES_ID: TableId = 1;
pub const SYS_TABLES_CLUSTERED: IndexId = 1;
pub const SYS_TABLES_NAME_INDEX: IndexId = 2;
pub const FIRST_USER_TABLE_ID: TableId = 16;
pub const FIRST_USER_INDEX_ID: IndexId = 16;
pub const FIRST_USER_SPACE_ID: SpaceId = 1;
/// Hidden row ids are persisted every this many ids (+ this much at start).
pub const ROW_ID_WRITE_MARGIN: u64 = 256;

/// Size of the system columns in a clustered record.
pub const DB_ROW_ID_LEN: u16 = 6;
pub const DB_TRX_ID_LEN: u16 = 6;
pub const DB_ROLL_PTR_LEN: u16 = 7;

/// Where a field of a secondary index comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldSrc {
    Col(usize),
    /// The hidden clustered key of a table without a primary key.
    RowId,
}

#[derive(Debug)]
pub struct SecIndex {
    pub spec: IndexSpec,
    pub index: Arc<Index>,
    /// Source of each field of the index's leaf records.
    pub fields: Vec<FieldSrc>,
    /// A transaction id handed out when CREATE INDEX finished in this run (0 for an index
    /// older than the server): a read view that does not see it was taken before the index
    /// had its entries, so it may not read through it (Error::TableDefChanged, MySQL 1412).
    pub created_by: u64,
}

/// An open table.
#[derive(Debug)]
pub struct Table {
    pub id: TableId,
    pub name: String,
    pub def: TableDef,
    pub space: SpaceId,
    pub clustered: Arc<Index>,
    pub secondary: Vec<SecIndex>,
    /// Table columns forming the clustered key (empty: hidden DB_ROW_ID).
    pub pk_cols: Vec<usize>,
    /// Table columns stored after the system fields, in record order.
    pub other_cols: Vec<usize>,
    /// Position of each table column in the clustered record.
    pub col_pos: Vec<usize>,
    /// (clustered record field, table column) of every column, in field order.
    pub field_cols: Vec<(usize, usize)>,
    /// Metadata lock: DML shared, DDL on this table exclusive.
    pub mdl: RwLock<()>,
    pub dropped: AtomicBool,
    /// Rows inserted, updated or deleted through this table object. Counted with a plain
    /// load and store, not an atomic add (InnoDB's stat_modified_counter): concurrent changes
    /// may lose counts. It only decides when statistics are worth computing again.
    pub modified: AtomicU64,
}

impl Table {
    /// Builds the runtime table from its dictionary entry.
    pub fn from_meta(id: TableId, meta: &TableMeta) -> Result<Table> {
        let def = &meta.def;
        let cols = &def.columns;
        let check_col = |c: usize| {
            if c < cols.len() {
                Ok(c)
            } else {
                Err(Error::InvalidArgument(format!(
                    "column number {c} out of range"
                )))
            }
        };
        let pk_cols: Vec<usize> = match &def.primary_key {
            Some(pk) => pk.iter().map(|&c| check_col(c)).collect::<Result<_>>()?,
            None => Vec::new(),
        };
        let mut fields: Vec<FieldDef> = Vec::new();
        if pk_cols.is_empty() {
            fields.push(FieldDef::fixed(DB_ROW_ID_LEN));
        } else {
            for &c in &pk_cols {
                let mut f = cols[c].field();
                f.nullable = false;
                fields.push(f);
            }
        }
        let n_key = fields.len();
        fields.push(FieldDef::fixed(DB_TRX_ID_LEN));
        fields.push(FieldDef::fixed(DB_ROLL_PTR_LEN));
        let other_cols: Vec<usize> = (0..cols.len()).filter(|c| !pk_cols.contains(c)).collect();
        for &c in &other_cols {
            fields.push(cols[c].field());
        }
        // Instantly added columns are the last fields (record.rs I3), never key columns.
        let added: Vec<usize> = (other_cols.iter().copied())
            .skip_while(|&c| cols[c].instant.is_none())
            .collect();
        if added.iter().any(|&c| cols[c].instant.is_none())
            || pk_cols.iter().any(|&c| cols[c].instant.is_some())
        {
            return Err(Error::InvalidArgument(format!(
                "{}: instantly added columns must be the last non-key columns",
                def.name
            )));
        }
        let added: Vec<Option<Vec<u8>>> = (added.iter())
            .map(|&c| cols[c].instant.as_ref().and_then(|v| v.bytes()))
            .collect();
        let mut col_pos = vec![0; cols.len()];
        for (i, &c) in pk_cols.iter().enumerate() {
            col_pos[c] = i;
        }
        for (i, &c) in other_cols.iter().enumerate() {
            col_pos[c] = n_key + 2 + i;
        }
        let mut field_cols: Vec<(usize, usize)> = col_pos
            .iter()
            .enumerate()
            .map(|(c, &pos)| (pos, c))
            .collect();
        field_cols.sort_unstable();
        let clustered = Arc::new(Index::new(
            meta.clustered.0,
            "PRIMARY".into(),
            meta.space,
            meta.clustered.1,
            RecLayout::new(fields, n_key).with_added(&added),
            n_key,
            true,
        ));
        let mut secondary = Vec::new();
        for (spec, loc) in def.indexes.iter().zip(&meta.secondary) {
            let (iid, root) = (loc.id, loc.root);
            let mut src: Vec<FieldSrc> = spec
                .columns
                .iter()
                .map(|&c| check_col(c).map(FieldSrc::Col))
                .collect::<Result<_>>()?;
            if pk_cols.is_empty() {
                src.push(FieldSrc::RowId);
            } else {
                for &c in &pk_cols {
                    if !spec.columns.contains(&c) {
                        src.push(FieldSrc::Col(c));
                    }
                }
            }
            let fdefs: Vec<FieldDef> = src
                .iter()
                .map(|s| match s {
                    FieldSrc::Col(c) => cols[*c].field(),
                    FieldSrc::RowId => FieldDef::fixed(DB_ROW_ID_LEN),
                })
                .collect();
            let n = fdefs.len();
            let n_unique = if spec.unique { spec.columns.len() } else { 0 };
            let index = Arc::new(Index::new(
                iid,
                spec.name.clone(),
                meta.space,
                root,
                RecLayout::new(fdefs, n),
                n_unique,
                false,
            ));
            secondary.push(SecIndex {
                spec: spec.clone(),
                index,
                fields: src,
                created_by: 0,
            });
        }
        Ok(Table {
            id,
            name: def.name.clone(),
            def: def.clone(),
            space: meta.space,
            clustered,
            secondary,
            pk_cols,
            other_cols,
            col_pos,
            field_cols,
            mdl: RwLock::new(()),
            dropped: AtomicBool::new(false),
            modified: AtomicU64::new(0),
        })
    }

    /// Counts one row changed (`modified`).
    pub fn note_modified(&self) {
        let n = self.modified.load(Ordering::Relaxed);
        self.modified.store(n.wrapping_add(1), Ordering::Relaxed);
    }

    /// Index of the DB_TRX_ID field in clustered records.
    pub fn trx_id_pos(&self) -> usize {
        self.clustered.leaf.n_order
    }

    pub fn has_hidden_pk(&self) -> bool {
        self.pk_cols.is_empty()
    }

    pub fn secondary_by_name(&self, name: &str) -> Option<usize> {
        self.secondary
            .iter()
            .position(|s| s.spec.name.eq_ignore_ascii_case(name))
    }
}

/// The definition of SYS_TABLES (built in; roots from the dictionary header).
pub fn sys_tables_meta(tables_root: PageNo, names_root: PageNo) -> TableMeta {
    let def = TableDef::new(
        "mysql/SYS_TABLES",
        vec![
            ColumnDef::new(
                "TABLE_ID",
                ColumnKind::Int {
                    bytes: 8,
                    unsigned: true,
                },
            ),
            ColumnDef::new("NAME", ColumnKind::Var { max_len: 384 }).collation(Collation::Binary),
            ColumnDef::new("META", ColumnKind::Var { max_len: 64 << 20 }),
        ],
        Some(vec![0]),
    )
    .index("NAME", vec![1], true);
    TableMeta {
        def,
        space: SYSTEM_SPACE,
        clustered: (SYS_TABLES_CLUSTERED, tables_root),
        secondary: vec![schema::IndexLoc {
            id: SYS_TABLES_NAME_INDEX,
            root: names_root,
            incomplete: false,
        }],
        renamed_from: None,
    }
}

pub struct Dict {
    by_id: WaitRwLock<HashMap<TableId, Arc<Table>>>,
    by_name: WaitRwLock<HashMap<String, TableId>>,
    sys: WaitRwLock<Option<Arc<Table>>>,
    /// Serialises DDL.
    pub ddl: WaitMutex<()>,
    /// Next hidden row id (persisted every ROW_ID_WRITE_MARGIN ids).
    row_id: AtomicU64,
}

impl Default for Dict {
    fn default() -> Self {
        Self::new()
    }
}

impl Dict {
    pub fn new() -> Self {
        Dict {
            by_id: WaitRwLock::new(HashMap::new()),
            by_name: WaitRwLock::new(HashMap::new()),
            sys: WaitRwLock::new(None),
            ddl: WaitMutex::new(()),
            row_id: AtomicU64::new(1),
        }
    }

    /// Waits on the cache maps (sync_stats `dict_sys`).
    pub fn cache_waits(&self) -> [&WaitStat; 3] {
        [self.by_id.stat(), self.by_name.stat(), self.sys.stat()]
    }

    pub fn sys_tables(&self) -> Arc<Table> {
        self.sys.read().clone().expect("dictionary booted")
    }

    pub fn set_sys_tables(&self, t: Arc<Table>) {
        *self.sys.write() = Some(t);
    }

    pub fn get(&self, name: &str) -> Option<Arc<Table>> {
        let id = *self.by_name.read().get(name)?;
        self.by_id.read().get(&id).cloned()
    }

    pub fn by_id(&self, id: TableId) -> Option<Arc<Table>> {
        if id == SYS_TABLES_ID {
            return self.sys.read().clone();
        }
        self.by_id.read().get(&id).cloned()
    }

    pub fn insert(&self, t: Arc<Table>) {
        self.by_name.write().insert(t.name.clone(), t.id);
        self.by_id.write().insert(t.id, t);
    }

    pub fn remove(&self, id: TableId) -> Option<Arc<Table>> {
        let t = self.by_id.write().remove(&id)?;
        self.by_name.write().remove(&t.name);
        Some(t)
    }

    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.by_name.read().keys().cloned().collect();
        v.sort();
        v
    }

    pub fn tables(&self) -> Vec<Arc<Table>> {
        let mut v: Vec<Arc<Table>> = self.by_id.read().values().cloned().collect();
        v.sort_by_key(|t| t.id);
        v
    }

    pub fn set_row_id(&self, v: u64) {
        self.row_id.store(v, Ordering::Release);
    }
}

/// Reads a counter of the dictionary header.
pub fn header_u64(inner: &Inner, off: usize) -> Result<u64> {
    let mut mtr = Mtr::new(inner);
    let h = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::S)?;
    let v = read_u64(mtr.page(h), off);
    mtr.commit()?;
    Ok(v)
}

pub fn header_u32(inner: &Inner, off: usize) -> Result<u32> {
    let mut mtr = Mtr::new(inner);
    let h = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::S)?;
    let v = read_u32(mtr.page(h), off);
    mtr.commit()?;
    Ok(v)
}

/// Hands out `n` consecutive ids from a 64-bit header counter (I2).
pub fn alloc_ids(inner: &Inner, off: usize, n: u64) -> Result<u64> {
    inner.log_free_check()?;
    let mut mtr = Mtr::new(inner);
    let h = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::X)?;
    let v = read_u64(mtr.page(h), off);
    mtr.write_u64(h, off, v + n);
    mtr.commit()?;
    Ok(v)
}

/// Hands out a tablespace id (I2).
pub fn alloc_space_id(inner: &Inner) -> Result<SpaceId> {
    inner.log_free_check()?;
    let mut mtr = Mtr::new(inner);
    let h = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::X)?;
    let v = read_u32(mtr.page(h), DICT_HDR_SPACE_ID);
    mtr.write_u32(h, DICT_HDR_SPACE_ID, v + 1);
    mtr.commit()?;
    Ok(v)
}

/// Next hidden row id; the header is advanced every ROW_ID_WRITE_MARGIN ids.
pub fn next_row_id(inner: &Inner) -> Result<u64> {
    let id = inner.dict.row_id.fetch_add(1, Ordering::AcqRel);
    if id.is_multiple_of(ROW_ID_WRITE_MARGIN) {
        let mut mtr = Mtr::new(inner);
        let h = mtr.get(PageId::new(SYSTEM_SPACE, DICT_HDR_PAGE), LatchMode::X)?;
        if read_u64(mtr.page(h), DICT_HDR_ROW_ID) < id + ROW_ID_WRITE_MARGIN {
            mtr.write_u64(h, DICT_HDR_ROW_ID, id + ROW_ID_WRITE_MARGIN);
        }
        mtr.commit()?;
    }
    Ok(id)
}
