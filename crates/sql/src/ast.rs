//! The statements and expressions innoxide executes.
//!
//! INVARIANTS
//! - Identifiers are kept as written (unquoted); the executor compares database, table and
//!   column names case-insensitively (lower_case_table_names=1 behaviour for lookups, the
//!   spelling kept for display).
//! - Function names are lower-case; `?` placeholders are numbered from 0 in text order.
//! - Nothing here refers to sqlparser: `parse` lowers into these types.

/// `db.name` or `name`.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectName {
    pub db: Option<String>,
    pub name: String,
}

/// CREATE VIEW / ALTER VIEW as written.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateView {
    pub name: ObjectName,
    pub or_replace: bool,
    /// ALTER VIEW: the view must exist.
    pub alter: bool,
    /// UNDEFINED, MERGE or TEMPTABLE (upper-case).
    pub algorithm: String,
    /// None: the current user.
    pub definer: Option<UserName>,
    /// SQL SECURITY INVOKER (else DEFINER).
    pub invoker: bool,
    /// The column list given after the name (empty: the SELECT's own names).
    pub columns: Vec<String>,
    /// The SELECT as parsed, and as written (what is stored and shown).
    pub query: Box<Select>,
    pub text: String,
    /// WITH [CASCADED | LOCAL] CHECK OPTION: Some("CASCADED") or Some("LOCAL").
    pub check_option: Option<String>,
}

/// What a GRANT or REVOKE applies to.
#[derive(Clone, Debug, PartialEq)]
pub enum GrantOn {
    /// `*.*`
    Global,
    /// `db.*`, or `*`: the current database (None).
    Database(Option<String>),
    /// `db.t` or `t`
    Table(ObjectName),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Select(Box<Select>),
    /// SELECT ... INTO @a, @b (user variable names, lower-case).
    SelectInto(Box<Select>, Vec<String>),
    /// SELECT ... INTO OUTFILE / DUMPFILE.
    SelectOutfile(Box<Select>, Box<Export>),
    Insert(Box<Insert>),
    Update(Box<Update>),
    Delete(Box<Delete>),
    /// UPDATE over a join: `UPDATE t1 JOIN t2 ON ... SET t1.a = t2.b`, `UPDATE t1, t2 SET ...`.
    UpdateMulti(Box<UpdateMulti>),
    /// DELETE over a join: `DELETE t1 FROM t1 JOIN t2 ...`, `DELETE FROM t1 USING t1, t2 ...`.
    DeleteMulti(Box<DeleteMulti>),

    CreateDatabase {
        name: String,
        if_not_exists: bool,
        charset: Option<String>,
        collate: Option<String>,
    },
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    Use(String),
    /// CREATE [OR REPLACE] / ALTER [ALGORITHM = ...] [DEFINER = ...] [SQL SECURITY ...] VIEW
    CreateView(Box<CreateView>),
    /// DROP VIEW [IF EXISTS] v, ... [RESTRICT | CASCADE]
    DropView {
        names: Vec<ObjectName>,
        if_exists: bool,
    },
    CreateTable(Box<CreateTable>),
    DropTable {
        names: Vec<ObjectName>,
        if_exists: bool,
        temporary: bool,
    },
    TruncateTable(ObjectName),
    /// RENAME TABLE a TO b, c TO d
    RenameTable(Vec<(ObjectName, ObjectName)>),
    CreateIndex {
        name: String,
        table: ObjectName,
        columns: Vec<IndexColumn>,
        unique: bool,
    },
    DropIndex {
        name: String,
        table: ObjectName,
    },
    AlterTable {
        table: ObjectName,
        ops: Vec<AlterOp>,
    },
    /// ANALYZE / OPTIMIZE / CHECK TABLE (answered with a result set per table).
    TableMaintenance {
        op: MaintenanceOp,
        tables: Vec<ObjectName>,
    },

    /// BEGIN, START TRANSACTION [WITH CONSISTENT SNAPSHOT] [READ ONLY | READ WRITE]
    Begin {
        consistent_snapshot: bool,
        read_only: bool,
    },
    Commit,
    Rollback,
    Savepoint(String),
    RollbackToSavepoint(String),
    ReleaseSavepoint(String),
    /// SET [GLOBAL | SESSION] TRANSACTION ISOLATION LEVEL ... / READ ONLY | READ WRITE
    SetTransaction {
        scope: TrxScope,
        isolation: Option<IsolationLevel>,
        read_only: Option<bool>,
    },
    /// SET a = 1, @@session.b = 2, @u = 3, ...
    Set(Vec<SetAssignment>),
    /// SET NAMES charset [COLLATE collation] / SET CHARACTER SET charset
    SetNames {
        charset: String,
        collate: Option<String>,
    },
    LockTables(Vec<(ObjectName, bool /* write */)>),
    UnlockTables,
    /// PREPARE name FROM 'text' | @var (names are case-insensitive, kept lower-case).
    Prepare {
        name: String,
        source: PrepareSource,
    },
    /// EXECUTE name [USING @a, @b, ...] (user variable names, lower-case).
    Execute {
        name: String,
        using: Vec<String>,
    },
    /// {DEALLOCATE | DROP} PREPARE name
    DeallocatePrepare(String),

    Show(Show),
    /// EXPLAIN / DESCRIBE of a statement.
    Explain(Box<Statement>),
    /// KILL [CONNECTION | QUERY] id
    Kill {
        id: Expr,
        query_only: bool,
    },
    /// DO expr, ...
    Do(Vec<Expr>),
    /// SHUTDOWN: stop the server as SIGTERM does.
    Shutdown,
    /// FLUSH ... (accepted: tables, privileges, logs, status)
    Flush(Vec<String>),

    CreateUser {
        if_not_exists: bool,
        users: Vec<(UserName, Option<UserAuth>)>,
    },
    AlterUser {
        if_exists: bool,
        users: Vec<(UserName, Option<UserAuth>)>,
    },
    DropUser {
        if_exists: bool,
        users: Vec<UserName>,
    },
    /// CREATE ROLE [IF NOT EXISTS] role, ...
    CreateRole {
        if_not_exists: bool,
        roles: Vec<UserName>,
    },
    /// DROP ROLE [IF EXISTS] role, ...
    DropRole {
        if_exists: bool,
        roles: Vec<UserName>,
    },
    /// GRANT role, ... TO user, ... [WITH ADMIN OPTION]
    GrantRole {
        roles: Vec<UserName>,
        users: Vec<UserName>,
        admin: bool,
    },
    /// REVOKE role, ... FROM user, ...
    RevokeRole {
        roles: Vec<UserName>,
        users: Vec<UserName>,
    },
    /// SET ROLE ...
    SetRole(RoleSpec),
    /// SET DEFAULT ROLE ... TO user, ... / ALTER USER user DEFAULT ROLE ...
    SetDefaultRole {
        spec: RoleSpec,
        users: Vec<UserName>,
    },
    /// GRANT privileges ON what TO users [WITH GRANT OPTION]
    /// (privilege names upper-case, words joined by one space; WITH GRANT OPTION adds
    /// "GRANT OPTION")
    Grant {
        privileges: Vec<String>,
        /// Column privileges: `SELECT (a, b)` as ("SELECT", ["a", "b"]).
        columns: Vec<(String, Vec<String>)>,
        on: GrantOn,
        users: Vec<UserName>,
    },
    /// REVOKE privileges ON what FROM users
    Revoke {
        privileges: Vec<String>,
        columns: Vec<(String, Vec<String>)>,
        on: GrantOn,
        users: Vec<UserName>,
    },
    /// LOAD DATA [LOCAL] INFILE 'file' ... INTO TABLE t ...
    LoadData(Box<LoadData>),
    /// REVOKE ALL [PRIVILEGES], GRANT OPTION FROM users
    RevokeAll {
        users: Vec<UserName>,
    },

    /// XA START/END/PREPARE/COMMIT/ROLLBACK/RECOVER
    Xa(XaCommand),
}

#[derive(Clone, Debug, PartialEq)]
pub enum XaCommand {
    Start(Vec<u8>),
    End(Vec<u8>),
    Prepare(Vec<u8>),
    Commit { xid: Vec<u8>, one_phase: bool },
    Rollback(Vec<u8>),
    Recover,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaintenanceOp {
    Analyze,
    Optimize,
    Check,
}

/// 'user'@'host'
#[derive(Clone, Debug, PartialEq)]
pub struct UserName {
    pub user: String,
    /// '%' when not given.
    pub host: String,
}

/// The roles SET ROLE activates or SET DEFAULT ROLE names.
#[derive(Clone, Debug, PartialEq)]
pub enum RoleSpec {
    /// The account's default roles (SET ROLE only).
    Default,
    None,
    /// Every role granted, but those listed (ALL EXCEPT ...).
    All(Vec<UserName>),
    List(Vec<UserName>),
}

/// `IDENTIFIED [WITH plugin] [BY 'password' | AS 'hash']` of CREATE / ALTER USER.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct UserAuth {
    /// The authentication plugin named (lower-case).
    pub plugin: Option<String>,
    pub password: Option<String>,
    /// The stored form given with AS.
    pub hash: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrxScope {
    /// SET TRANSACTION: the next transaction only.
    Next,
    Session,
    Global,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsolationLevel {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarScope {
    /// @@name or a bare name in SET: the session value where one exists.
    Default,
    Session,
    Global,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SetTarget {
    /// A system variable (name lower-case).
    System { scope: VarScope, name: String },
    /// @name (name lower-case; user variables are case-insensitive).
    User(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct SetAssignment {
    pub target: SetTarget,
    /// `Expr::Default` for SET x = DEFAULT. A bare word on the right (SET autocommit=ON,
    /// SET sql_mode=TRADITIONAL) is a string literal.
    pub value: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ShowFilter {
    Like(String),
    Where(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Show {
    Databases {
        filter: Option<ShowFilter>,
    },
    Tables {
        db: Option<String>,
        full: bool,
        filter: Option<ShowFilter>,
    },
    Columns {
        table: ObjectName,
        full: bool,
        filter: Option<ShowFilter>,
    },
    Index {
        table: ObjectName,
    },
    CreateTable(ObjectName),
    CreateView(ObjectName),
    /// SHOW CREATE USER user
    CreateUser(UserName),
    /// SHOW CREATE DATABASE [IF NOT EXISTS] name (the clause shows in the statement given).
    CreateDatabase {
        name: String,
        if_not_exists: bool,
    },
    TableStatus {
        db: Option<String>,
        filter: Option<ShowFilter>,
    },
    /// SHOW WARNINGS / SHOW ERRORS [LIMIT [offset,] n]; SHOW COUNT(*) WARNINGS is `count`.
    Warnings {
        errors_only: bool,
        count: bool,
        limit: Option<(u64, u64)>,
    },
    Variables {
        global: bool,
        filter: Option<ShowFilter>,
    },
    Status {
        global: bool,
        filter: Option<ShowFilter>,
    },
    Processlist {
        full: bool,
    },
    Engines,
    Collation {
        filter: Option<ShowFilter>,
    },
    CharacterSet {
        filter: Option<ShowFilter>,
    },
    /// SHOW ENGINE name STATUS | MUTEX
    EngineStatus {
        engine: String,
        mutex: bool,
    },
    /// SHOW GRANTS [FOR user [USING role, ...]]
    Grants {
        user: Option<UserName>,
        using: Vec<UserName>,
    },
    Plugins,
    /// SHOW PROFILES
    Profiles,
    /// SHOW PROFILE [FOR QUERY n]
    Profile {
        query: Option<u64>,
    },
    /// SHOW MASTER STATUS, SHOW BINARY LOGS, SHOW SLAVE/REPLICA STATUS: empty results.
    Replication(String),
    /// SHOW EVENTS, SHOW TRIGGERS, SHOW PROCEDURE STATUS, SHOW FUNCTION STATUS: innoxide has
    /// no such objects, so empty results with MySQL's columns.
    NoObjects(ObjectKind),
}

/// Schema objects innoxide does not have (events, triggers, stored routines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    Events,
    Triggers,
    Procedures,
    Functions,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Select {
    pub distinct: bool,
    pub items: Vec<SelectItem>,
    /// Comma-separated FROM items (a comma is an inner join without condition). Empty: no
    /// FROM (or FROM DUAL).
    pub from: Vec<TableRef>,
    pub selection: Option<Expr>,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
    pub order_by: Vec<OrderItem>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    pub lock: Option<LockClause>,
    /// `FOR UPDATE OF t` / `FOR SHARE OF t` clauses: the table each names (as the FROM clause
    /// names it) and how it is locked; a table none names takes `lock`.
    pub lock_of: Vec<(String, LockClause)>,
    /// UNION [ALL | DISTINCT] with further selects, in order.
    pub unions: Vec<(bool /* all */, Select)>,
}

impl Select {
    /// `SELECT * FROM (<sub>) AS <alias>`: a query over another as a derived table (a UNION
    /// under ORDER BY or LIMIT, a UNION DISTINCT).
    pub fn star_from(sub: Select, alias: &str) -> Select {
        Select::star_over(TableRef::Derived {
            subquery: Box::new(sub),
            alias: alias.to_string(),
        })
    }

    /// `left INTERSECT|EXCEPT [ALL] right` as a SELECT of every column of its rows.
    pub fn star_from_set(op: SetOp, all: bool, left: Select, right: Select) -> Select {
        Select::star_over(TableRef::SetOp {
            op,
            all,
            left: Box::new(left),
            right: Box::new(right),
            alias: String::new(),
        })
    }

    fn star_over(from: TableRef) -> Select {
        Select {
            distinct: false,
            items: vec![SelectItem::Wildcard],
            from: vec![from],
            selection: None,
            group_by: Vec::new(),
            having: None,
            order_by: Vec::new(),
            limit: None,
            offset: None,
            lock: None,
            lock_of: Vec::new(),
            unions: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockClause {
    /// FOR UPDATE [NOWAIT | SKIP LOCKED]
    ForUpdate { nowait: bool, skip_locked: bool },
    /// FOR SHARE / LOCK IN SHARE MODE
    ForShare { nowait: bool, skip_locked: bool },
}

#[derive(Clone, Debug, PartialEq)]
pub enum SelectItem {
    Expr {
        expr: Expr,
        alias: Option<String>,
        /// The expression as written (the column name MySQL shows without an alias).
        text: String,
    },
    /// `*`
    Wildcard,
    /// `t.*`
    QualifiedWildcard(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum IndexHint {
    Use(Vec<String>),
    Force(Vec<String>),
    Ignore(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum TableRef {
    Table {
        name: ObjectName,
        alias: Option<String>,
        hints: Vec<IndexHint>,
    },
    Derived {
        subquery: Box<Select>,
        alias: String,
    },
    /// A reference to a recursive common table expression (WITH RECURSIVE).
    Recursive {
        cte: Box<RecursiveCte>,
        alias: String,
    },
    /// JSON_TABLE(expr, path COLUMNS (...)) AS alias: rows made from a JSON document; `expr`
    /// may read the columns of the tables before it in FROM.
    JsonTable(Box<JsonTable>),
    /// `left INTERSECT|EXCEPT [ALL|DISTINCT] right`, the only FROM item of the SELECT that
    /// stands for it (`Select::star_from_set`).
    SetOp {
        op: SetOp,
        all: bool,
        left: Box<Select>,
        right: Box<Select>,
        alias: String,
    },
    Join {
        left: Box<TableRef>,
        right: Box<TableRef>,
        kind: JoinKind,
        /// ON condition (None for CROSS JOIN or USING).
        on: Option<Expr>,
        using: Vec<String>,
        /// NATURAL [LEFT | RIGHT] JOIN: USING the columns both sides have.
        natural: bool,
    },
}

/// `WITH RECURSIVE name AS (anchor UNION [ALL] recursive ...)`: the SELECTs that do not read
/// `name` (the anchor, with its own UNIONs) and those that do, run until they add no row.
#[derive(Clone, Debug, PartialEq)]
pub struct RecursiveCte {
    pub name: String,
    pub anchor: Select,
    pub recursive: Vec<Select>,
    /// UNION DISTINCT somewhere between the parts: rows already produced are not added again.
    pub distinct: bool,
}

/// INTERSECT or EXCEPT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOp {
    Intersect,
    Except,
}

/// `JSON_TABLE(expr, path COLUMNS (columns)) AS alias`.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonTable {
    pub expr: Expr,
    /// The path whose matches are the rows (each a row source for the columns' paths).
    pub path: String,
    pub columns: Vec<JtColumn>,
    pub alias: String,
}

/// A column of a JSON_TABLE's COLUMNS clause.
#[derive(Clone, Debug, PartialEq)]
pub enum JtColumn {
    /// `name FOR ORDINALITY`: the row source's number, from 1, within its parent.
    Ordinality(String),
    /// `name type [EXISTS] PATH path [on_empty ON EMPTY] [on_error ON ERROR]`.
    Path {
        name: String,
        ty: ColumnType,
        path: String,
        /// EXISTS PATH: 1 if the path matches something, else 0.
        exists: bool,
        on_empty: JtResponse,
        on_error: JtResponse,
    },
    /// `NESTED [PATH] path COLUMNS (columns)`: rows from the matches of `path` within each
    /// row source of the level above.
    Nested {
        path: String,
        columns: Vec<JtColumn>,
    },
}

/// What a JSON_TABLE column holds when its path matches nothing (ON EMPTY) or what it
/// matched does not fit (ON ERROR).
#[derive(Clone, Debug, PartialEq)]
pub enum JtResponse {
    Null,
    /// DEFAULT 'json text'.
    Default(String),
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Cross,
    Straight,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OrderItem {
    pub expr: Expr,
    pub desc: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Insert {
    pub table: ObjectName,
    /// Empty: all columns in table order.
    pub columns: Vec<String>,
    pub source: InsertSource,
    pub ignore: bool,
    /// REPLACE INTO
    pub replace: bool,
    /// ON DUPLICATE KEY UPDATE col = expr, ... (expr may use `Expr::Values(col)`).
    pub on_duplicate: Vec<(String, Expr)>,
}

/// LOAD DATA [LOCAL] INFILE: where the rows come from, how the text splits into them, and
/// where their fields go.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadData {
    /// LOCAL: the client sends the file.
    pub local: bool,
    pub file: String,
    /// REPLACE (Some(true)) or IGNORE (Some(false)) for rows with a duplicate key.
    pub duplicates: Option<bool>,
    pub table: ObjectName,
    pub format: FileFormat,
    /// IGNORE n LINES.
    pub skip: u64,
    /// The fields' targets in order: a column, or a user variable (`@name`, lower-case).
    /// Empty: the table's columns in order.
    pub targets: Vec<LoadTarget>,
    /// SET col = expr, evaluated per row (the user variables hold that row's fields).
    pub sets: Vec<(String, Expr)>,
}

/// The FIELDS and LINES options of LOAD DATA and SELECT ... INTO OUTFILE.
#[derive(Clone, Debug, PartialEq)]
pub struct FileFormat {
    /// FIELDS TERMINATED BY (default tab).
    pub field_end: Vec<u8>,
    /// [OPTIONALLY] ENCLOSED BY (default none).
    pub enclosed: Option<u8>,
    /// OPTIONALLY: INTO OUTFILE encloses only string values.
    pub optionally: bool,
    /// ESCAPED BY (default backslash; '' for none).
    pub escaped: Option<u8>,
    /// LINES STARTING BY (default none).
    pub line_start: Vec<u8>,
    /// LINES TERMINATED BY (default newline).
    pub line_end: Vec<u8>,
}

impl Default for FileFormat {
    fn default() -> Self {
        FileFormat {
            field_end: b"\t".to_vec(),
            enclosed: None,
            optionally: false,
            escaped: Some(b'\\'),
            line_start: Vec::new(),
            line_end: b"\n".to_vec(),
        }
    }
}

/// SELECT ... INTO OUTFILE 'file' [options] or INTO DUMPFILE 'file'.
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    pub file: String,
    /// DUMPFILE: one row, its one value's bytes as they are.
    pub dump: bool,
    pub format: FileFormat,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LoadTarget {
    Column(String),
    Var(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum InsertSource {
    /// VALUES (...), (...); `Expr::Default` for DEFAULT.
    Values(Vec<Vec<Expr>>),
    Select(Box<Select>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    pub table: ObjectName,
    pub alias: Option<String>,
    /// USE / FORCE / IGNORE INDEX on the table.
    pub hints: Vec<IndexHint>,
    /// (column, value); the column may be qualified `t.c` (qualifier dropped here).
    pub assignments: Vec<(String, Expr)>,
    pub selection: Option<Expr>,
    pub order_by: Vec<OrderItem>,
    pub limit: Option<Expr>,
    pub ignore: bool,
}

/// A multiple-table UPDATE: the rows of the join `from` that WHERE keeps change their
/// target tables' columns (each row once).
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateMulti {
    pub from: Vec<TableRef>,
    /// (table qualifier, column, value).
    pub assignments: Vec<(Option<String>, String, Expr)>,
    pub selection: Option<Expr>,
    pub ignore: bool,
}

/// A multiple-table DELETE: the rows of the `targets` tables (names or aliases of `from`'s
/// tables) that a row of the join WHERE keeps takes part in.
#[derive(Clone, Debug, PartialEq)]
pub struct DeleteMulti {
    pub targets: Vec<ObjectName>,
    pub from: Vec<TableRef>,
    pub selection: Option<Expr>,
    pub ignore: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    pub table: ObjectName,
    pub alias: Option<String>,
    pub selection: Option<Expr>,
    pub order_by: Vec<OrderItem>,
    pub limit: Option<Expr>,
    pub ignore: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CreateTable {
    pub name: ObjectName,
    pub if_not_exists: bool,
    pub temporary: bool,
    pub columns: Vec<ColumnSpec>,
    /// PRIMARY KEY, UNIQUE, KEY/INDEX from both the column list and inline column options
    /// (an inline PRIMARY KEY / UNIQUE appears here too, with the column's name).
    pub keys: Vec<KeySpec>,
    /// CHECK constraints, columns' first, in the order written.
    pub checks: Vec<CheckSpec>,
    pub foreign_keys: Vec<ForeignKeySpec>,
    pub options: TableOptions,
    /// CREATE TABLE t LIKE other
    pub like: Option<ObjectName>,
    /// CREATE TABLE t [AS] SELECT ...
    pub as_select: Option<Box<Select>>,
    /// CREATE TABLE ... IGNORE SELECT (Some(false)) / REPLACE SELECT (Some(true)).
    pub on_duplicate: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct TableOptions {
    pub engine: Option<String>,
    pub row_format: Option<String>,
    pub charset: Option<String>,
    pub collate: Option<String>,
    pub auto_increment: Option<u64>,
    pub key_block_size: Option<u64>,
    pub comment: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSpec {
    pub name: String,
    pub ty: ColumnType,
    /// NULL / NOT NULL as written (None: not given).
    pub nullable: Option<bool>,
    pub default: Option<Expr>,
    /// DEFAULT (expr) (MySQL 8.0.13's expression default, evaluated for each row): the
    /// expression as written back; None for a constant or CURRENT_TIMESTAMP.
    pub default_text: Option<String>,
    pub auto_increment: bool,
    /// ON UPDATE CURRENT_TIMESTAMP[(fsp)]
    pub on_update_now: bool,
    pub comment: Option<String>,
    /// [GENERATED ALWAYS] AS (expr) [VIRTUAL | STORED]
    pub generated: Option<GeneratedSpec>,
}

/// A generated column's expression: as parsed, as written back (what is stored and shown),
/// and whether it was declared STORED (else VIRTUAL).
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedSpec {
    pub expr: Expr,
    pub text: String,
    pub stored: bool,
}

/// A column type as written.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnType {
    pub name: TypeName,
    /// (M) or (M,D): display width, length, precision or fractional seconds.
    pub length: Option<u64>,
    pub scale: Option<u64>,
    pub unsigned: bool,
    pub zerofill: bool,
    pub charset: Option<String>,
    pub collate: Option<String>,
    /// ENUM / SET members.
    pub values: Vec<String>,
}

impl ColumnType {
    /// `name` with no length, scale, attributes, character set or members.
    pub fn plain(name: TypeName) -> ColumnType {
        ColumnType {
            name,
            length: None,
            scale: None,
            unsigned: false,
            zerofill: false,
            charset: None,
            collate: None,
            values: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeName {
    TinyInt,
    SmallInt,
    MediumInt,
    Int,
    BigInt,
    /// BOOL / BOOLEAN (TINYINT(1))
    Bool,
    Decimal,
    Float,
    Double,
    Bit,
    Char,
    VarChar,
    Binary,
    VarBinary,
    TinyText,
    Text,
    MediumText,
    LongText,
    TinyBlob,
    Blob,
    MediumBlob,
    LongBlob,
    Date,
    DateTime,
    Timestamp,
    Time,
    Year,
    Enum,
    Set,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    Primary,
    Unique,
    Index,
    Fulltext,
}

/// `[CONSTRAINT [name]] FOREIGN KEY [index] (cols) REFERENCES parent (cols) [ON DELETE a]
/// [ON UPDATE a]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignKeySpec {
    pub name: Option<String>,
    /// The index name written after FOREIGN KEY (the name of the index made for it).
    pub index: Option<String>,
    pub columns: Vec<String>,
    pub parent: ObjectName,
    pub parent_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

/// A referential action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FkAction {
    Restrict,
    Cascade,
    SetNull,
    NoAction,
    SetDefault,
}

impl FkAction {
    /// As SHOW CREATE TABLE and information_schema write it.
    pub fn name(self) -> &'static str {
        match self {
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
            FkAction::NoAction => "NO ACTION",
            FkAction::SetDefault => "SET DEFAULT",
        }
    }
}

/// `[CONSTRAINT [name]] CHECK (expr) [[NOT] ENFORCED]`, of a column or of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckSpec {
    pub name: Option<String>,
    pub expr: Expr,
    /// The expression as sqlparser writes it back: what is stored and shown.
    pub text: String,
    pub enforced: bool,
    /// The column it was written with (such a CHECK reads that column only: 3813).
    pub column: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct KeySpec {
    pub kind: KeyKind,
    pub name: Option<String>,
    pub columns: Vec<IndexColumn>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct IndexColumn {
    pub name: String,
    /// name(10): a prefix of this many characters.
    pub prefix: Option<u64>,
    pub desc: bool,
}

/// ROWS or RANGE BETWEEN start AND end.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFrame {
    pub rows: bool,
    pub start: FrameBound,
    pub end: FrameBound,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameBound {
    UnboundedPreceding,
    /// ROWS: this many rows before.
    Preceding(u64),
    CurrentRow,
    Following(u64),
    UnboundedFollowing,
    /// RANGE: the rows whose ORDER BY value is within this much before the current one's.
    ValuePreceding(RangeOffset),
    ValueFollowing(RangeOffset),
}

/// A RANGE frame's offset: a number as written, or (`unit` set) a count of an INTERVAL unit
/// for a temporal ORDER BY.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeOffset {
    pub value: String,
    pub unit: Option<IntervalUnit>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AlterOp {
    AddColumn {
        column: ColumnSpec,
        /// FIRST: Some(None); AFTER c: Some(Some(c)); at the end: None.
        position: Option<Option<String>>,
    },
    DropColumn(String),
    /// CHANGE [COLUMN] old new_def / MODIFY [COLUMN] def (then `old` is the column's name).
    ChangeColumn {
        old: String,
        column: ColumnSpec,
        /// As for AddColumn; None keeps the column where it is.
        position: Option<Option<String>>,
    },
    AddKey(KeySpec),
    /// ADD [CONSTRAINT [name]] CHECK (expr) [[NOT] ENFORCED]
    AddCheck(CheckSpec),
    /// DROP CONSTRAINT name (a CHECK constraint or a UNIQUE key).
    DropConstraint(String),
    /// DROP CHECK name
    DropCheck(String),
    /// ALGORITHM = DEFAULT | INSTANT | INPLACE | COPY (upper-case)
    Algorithm(String),
    /// LOCK = DEFAULT | NONE | SHARED | EXCLUSIVE (upper-case)
    Lock(String),
    /// ALTER {CHECK | CONSTRAINT} name [NOT] ENFORCED
    CheckEnforced {
        name: String,
        enforced: bool,
    },
    AddForeignKey(ForeignKeySpec),
    /// DROP FOREIGN KEY name
    DropForeignKey(String),
    /// RENAME COLUMN old TO new
    RenameColumn {
        old: String,
        new: String,
    },
    DropIndex(String),
    DropPrimaryKey,
    /// ALTER [COLUMN] c SET DEFAULT v (Some) / DROP DEFAULT (None); `text` as
    /// `ColumnSpec::default_text`.
    AlterDefault {
        column: String,
        default: Option<Expr>,
        text: Option<String>,
    },
    /// RENAME {INDEX | KEY} old TO new
    RenameIndex {
        old: String,
        new: String,
    },
    RenameTo(ObjectName),
    /// ENGINE=, ROW_FORMAT=, ... as table options.
    Options(TableOptions),
    /// DISABLE KEYS (false) / ENABLE KEYS (true): MyISAM's, a note for InnoDB.
    Keys(bool),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Null,
    /// A numeric literal as written (integer, decimal or with an exponent): the executor
    /// types it (INT, DECIMAL or DOUBLE) as MySQL does.
    Number(String),
    /// A quoted string with escapes resolved; `charset` is an introducer such as _utf8mb4 or
    /// _binary.
    String {
        bytes: Vec<u8>,
        charset: Option<String>,
    },
    /// X'0A', 0x0A, B'101': a binary string.
    Hex(Vec<u8>),
    Bool(bool),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    BitNot,
    /// BINARY expr
    Binary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    /// DIV
    IntDiv,
    /// % / MOD
    Mod,
    Eq,
    /// <=>
    NullSafeEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntervalUnit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

/// CAST(x AS type) / CONVERT(x, type) targets.
#[derive(Clone, Debug, PartialEq)]
pub enum CastType {
    Signed,
    Unsigned,
    Decimal(Option<u64>, Option<u64>),
    Double,
    Char(Option<u64>, Option<String>),
    Binary(Option<u64>),
    Date,
    DateTime(Option<u64>),
    Time(Option<u64>),
    Json,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Literal(Literal),
    /// [db.][table.]column
    Column {
        table: Option<String>,
        name: String,
    },
    /// `?` placeholder number (from 0).
    Param(usize),
    /// @name (lower-case)
    UserVar(String),
    /// @@[global.|session.]name (name lower-case)
    SysVar {
        scope: VarScope,
        name: String,
    },
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// expr IS [NOT] TRUE / FALSE
    IsBool {
        expr: Box<Expr>,
        value: bool,
        negated: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    InSubquery {
        expr: Box<Expr>,
        subquery: Box<Select>,
        negated: bool,
    },
    /// expr op ANY | SOME | ALL (subquery), op a comparison.
    Quantified {
        expr: Box<Expr>,
        op: BinaryOp,
        all: bool,
        subquery: Box<Select>,
    },
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
        negated: bool,
    },
    /// A function call, name lower-case: scalar functions and the aggregates count, sum, avg,
    /// min, max, group_concat, bit_and, bit_or, bit_xor, std, variance...
    Function {
        name: String,
        args: Vec<Expr>,
        distinct: bool,
        /// COUNT(*)
        star: bool,
    },
    /// `func OVER ([PARTITION BY ...] [ORDER BY ...] [frame])`: a window function (ROW_NUMBER,
    /// RANK, LAG, ...) or an aggregate over a window; `func` is an `Expr::Function`.
    Window {
        func: Box<Expr>,
        partition_by: Vec<Expr>,
        order_by: Vec<OrderItem>,
        frame: Option<WindowFrame>,
    },
    /// GROUP_CONCAT([DISTINCT] args [ORDER BY ...] [SEPARATOR 'sep']).
    GroupConcat {
        args: Vec<Expr>,
        distinct: bool,
        order_by: Vec<OrderItem>,
        /// None: ','.
        separator: Option<Vec<u8>>,
    },
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        else_: Option<Box<Expr>>,
    },
    Cast {
        expr: Box<Expr>,
        ty: CastType,
    },
    Collate {
        expr: Box<Expr>,
        collation: String,
    },
    /// INTERVAL expr unit (only as an operand of + and - or DATE_ADD/DATE_SUB).
    Interval {
        value: Box<Expr>,
        unit: IntervalUnit,
    },
    Subquery(Box<Select>),
    Exists {
        subquery: Box<Select>,
        negated: bool,
    },
    /// (a, b, ...)
    Row(Vec<Expr>),
    /// VALUES(col) in ON DUPLICATE KEY UPDATE.
    Values(String),
    /// DEFAULT (in VALUES lists and SET).
    Default,
    /// JSON_VALUE(doc, path [RETURNING type] [on_empty ON EMPTY] [on_error ON ERROR]).
    JsonValue(Box<JsonValue>),
}

/// Whether a function of this (lower-case) name is an aggregate.
pub fn is_aggregate(name: &str) -> bool {
    matches!(
        name,
        "count"
            | "sum"
            | "avg"
            | "min"
            | "max"
            | "bit_and"
            | "bit_or"
            | "bit_xor"
            | "group_concat"
            | "json_arrayagg"
            | "json_objectagg"
            | "std"
            | "stddev"
            | "stddev_pop"
            | "stddev_samp"
            | "variance"
            | "var_pop"
            | "var_samp"
    )
}

impl Expr {
    /// Calls `f` on this expression and, while `f` returns true, on each of its
    /// sub-expressions in turn (depth first; not inside subqueries, which `f` sees whole).
    /// `f` may change what it is given.
    pub fn visit_mut(&mut self, f: &mut dyn FnMut(&mut Expr) -> bool) {
        if !f(self) {
            return;
        }
        match self {
            Expr::InSubquery { expr, .. } | Expr::Quantified { expr, .. } => expr.visit_mut(f),
            Expr::Unary { expr, .. }
            | Expr::IsNull { expr, .. }
            | Expr::IsBool { expr, .. }
            | Expr::Cast { expr, .. }
            | Expr::Collate { expr, .. }
            | Expr::Interval { value: expr, .. } => expr.visit_mut(f),
            Expr::Binary { left, right, .. } => {
                left.visit_mut(f);
                right.visit_mut(f);
            }
            Expr::InList { expr, list, .. } => {
                expr.visit_mut(f);
                list.iter_mut().for_each(|x| x.visit_mut(f));
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                for x in [expr, low, high] {
                    x.visit_mut(f);
                }
            }
            Expr::Like {
                expr,
                pattern,
                escape,
                ..
            } => {
                expr.visit_mut(f);
                pattern.visit_mut(f);
                if let Some(x) = escape {
                    x.visit_mut(f);
                }
            }
            Expr::Function { args, .. } | Expr::Row(args) => {
                args.iter_mut().for_each(|x| x.visit_mut(f));
            }
            Expr::GroupConcat { args, order_by, .. } => {
                args.iter_mut().for_each(|x| x.visit_mut(f));
                order_by.iter_mut().for_each(|o| o.expr.visit_mut(f));
            }
            Expr::Window {
                func,
                partition_by,
                order_by,
                ..
            } => {
                func.visit_mut(f);
                partition_by.iter_mut().for_each(|x| x.visit_mut(f));
                order_by.iter_mut().for_each(|o| o.expr.visit_mut(f));
            }
            Expr::Case {
                operand,
                whens,
                else_,
            } => {
                if let Some(x) = operand {
                    x.visit_mut(f);
                }
                for (a, b) in whens {
                    a.visit_mut(f);
                    b.visit_mut(f);
                }
                if let Some(x) = else_ {
                    x.visit_mut(f);
                }
            }
            Expr::JsonValue(j) => {
                j.doc.visit_mut(f);
                j.path.visit_mut(f);
                for r in [&mut j.on_empty, &mut j.on_error] {
                    if let OnJson::Default(x) = r {
                        x.visit_mut(f);
                    }
                }
            }
            Expr::Subquery(_)
            | Expr::Exists { .. }
            | Expr::Literal(_)
            | Expr::Column { .. }
            | Expr::Param(_)
            | Expr::UserVar(_)
            | Expr::SysVar { .. }
            | Expr::Values(_)
            | Expr::Default => {}
        }
    }
}

/// A JSON_VALUE call: the value at `path` in `doc`, as `returning` (VARCHAR(512) with
/// utf8mb4_bin when None).
#[derive(Clone, Debug, PartialEq)]
pub struct JsonValue {
    pub doc: Expr,
    pub path: Expr,
    pub returning: Option<CastType>,
    pub on_empty: OnJson,
    pub on_error: OnJson,
}

/// JSON_VALUE's answer when the path finds nothing (ON EMPTY) or what it finds does not fit
/// (ON ERROR).
#[derive(Clone, Debug, PartialEq)]
pub enum OnJson {
    Null,
    Default(Expr),
    Error,
}

/// The text of a SQL-level PREPARE.
#[derive(Clone, Debug, PartialEq)]
pub enum PrepareSource {
    Text(String),
    /// A user variable holding the text.
    UserVar(String),
}
