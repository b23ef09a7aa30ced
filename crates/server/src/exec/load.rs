//! LOAD DATA [LOCAL] INFILE: the rows of a text file inserted into a table, as MySQL 8.0 reads
//! them; SELECT ... INTO OUTFILE / DUMPFILE: a result written to a server file.
//!
//! INVARIANTS
//! - L1: the file is read as it is split into rows (`Splitter`, a buffer of LOAD_CHUNK bytes
//!   refilled as it is consumed), and the rows go to `Session::insert` LOAD_BATCH at a time
//!   as a multi-row INSERT of string literals (`DEFAULT` for a column a short line lacks), so
//!   no file size makes the statement hold more than a batch; all batches are one statement
//!   (one statement savepoint), and warnings name the file's row (`Session::load_row_base`).
//! - L2: a server file (not LOCAL) needs the FILE privilege and secure_file_priv: NULL refuses
//!   it (1290), a directory must hold it; a relative name is in the table's database
//!   directory's place under the data directory, as mysqld's. LOCAL reads what the client sent
//!   (conn.rs keeps it in a file under tmpdir, `Session::load_local_file`); the client is
//!   asked only with local_infile ON (3948 otherwise).
//! - L3: LOCAL, as IGNORE, turns duplicate keys and bad values into warnings (MySQL: LOCAL
//!   implies IGNORE); REPLACE replaces the rows with a duplicate key. A short line's missing
//!   columns take their default (1261), a long line's extra fields are dropped (1262): errors
//!   under a strict sql_mode without IGNORE/LOCAL, warnings otherwise.
//! - L4: fields split as MySQL splits them: ESCAPED BY escapes the next byte (`\N` alone is
//!   NULL; \0 \b \n \r \t \Z are those bytes; any other stands for itself); a field that begins
//!   with the ENCLOSED BY byte runs to that byte followed by a field or line terminator (a
//!   doubled one inside is one); with ENCLOSED BY, an unquoted `NULL` is NULL; LINES
//!   STARTING BY skips each line up to and including the prefix (a line without it is
//!   skipped).
//! - L5: INTO OUTFILE needs what a server file for LOAD DATA needs (L2), makes a new file
//!   (an existing one is 1086) and writes each row as it is made (`FileSink`, OUT_CHUNK bytes
//!   at a time): fields as the client reads them, NULL as `\N` (`NULL` without an escape
//!   byte), each field enclosed (OPTIONALLY: string columns only), the escape byte before
//!   itself, the quote, NUL (as `0`) and, without a quote, the terminators' first bytes.
//!   DUMPFILE writes one row's values as they are (a second row is 1172). A failed statement
//!   removes the file.
//!
//! No latches of its own.

use std::io::Read;
use std::sync::Arc;

use innoxide_io::{File, FileSystem, OsFs};

use innoxide_sql::ast::{
    self, Export, Expr, FileFormat, Insert, InsertSource, Literal, LoadData, LoadTarget,
};
use innoxide_sql::error::*;
use innoxide_sql::types::{Datum, Level, SqlMode};

use super::expr::EType;
use super::{Column, Output, Session};

/// Rows handed to `Session::insert` at a time (L1).
const LOAD_BATCH: usize = 1000;
/// Bytes read from the file at a time (L1).
const LOAD_CHUNK: usize = 64 * 1024;

/// A field read: its bytes, or None for NULL.
type Field = Option<Vec<u8>>;

/// How a field ended.
#[derive(PartialEq)]
enum End {
    Field,
    Line,
    Eof,
}

/// Splits a file's bytes into rows of fields (L4).
struct Splitter<'a> {
    src: Box<dyn Read>,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    ld: &'a LoadData,
}

impl Splitter<'_> {
    /// At least `n` bytes past `pos` unless the file ends first; false if fewer remain.
    fn fill(&mut self, n: usize) -> std::io::Result<bool> {
        while self.buf.len() - self.pos < n && !self.eof {
            self.buf.drain(..self.pos);
            self.pos = 0;
            let at = self.buf.len();
            self.buf.resize(at + LOAD_CHUNK, 0);
            let got = self.src.read(&mut self.buf[at..])?;
            self.buf.truncate(at + got);
            self.eof = got == 0;
        }
        Ok(self.buf.len() - self.pos >= n)
    }

    /// Consumes `pat` if the input continues with it.
    fn eat(&mut self, pat: &[u8]) -> std::io::Result<bool> {
        if pat.is_empty() || !self.fill(pat.len())? {
            return Ok(false);
        }
        let hit = self.buf[self.pos..].starts_with(pat);
        if hit {
            self.pos += pat.len();
        }
        Ok(hit)
    }

    fn byte(&mut self) -> std::io::Result<Option<u8>> {
        if !self.fill(1)? {
            return Ok(None);
        }
        self.pos += 1;
        Ok(Some(self.buf[self.pos - 1]))
    }

    /// The next row's fields, or None at the end of the file.
    fn row(&mut self) -> std::io::Result<Option<Vec<Field>>> {
        if !self.fill(1)? {
            return Ok(None);
        }
        if !self.ld.format.line_start.is_empty() {
            // Up to and including the prefix (L4).
            let ld = self.ld;
            while !self.eat(&ld.format.line_start)? {
                if self.byte()?.is_none() {
                    return Ok(None);
                }
            }
        }
        let mut fields = Vec::new();
        loop {
            let (f, end) = self.field()?;
            fields.push(f);
            if end != End::Field {
                return Ok(Some(fields));
            }
        }
    }

    /// One field and what ended it (L4).
    fn field(&mut self) -> std::io::Result<(Field, End)> {
        let ld = self.ld;
        let (fe, le) = (&ld.format.field_end, &ld.format.line_end);
        let mut v = Vec::new();
        let quote = self.ld.format.enclosed;
        let quoted = match quote {
            Some(q) => self.eat(&[q])?,
            None => false,
        };
        // `\N` alone, or an unquoted NULL with ENCLOSED BY: NULL.
        let mut escaped_null = false;
        loop {
            if quoted {
                let Some(b) = self.byte()? else {
                    return Ok((Some(v), End::Eof));
                };
                if Some(b) == self.ld.format.escaped {
                    if let Some(n) = self.byte()? {
                        v.push(unescape(n));
                    }
                    continue;
                }
                if Some(b) == quote {
                    if self.eat(&[b])? {
                        v.push(b);
                        continue;
                    }
                    if self.eat(fe)? {
                        return Ok((Some(v), End::Field));
                    }
                    if self.eat(le)? {
                        return Ok((Some(v), End::Line));
                    }
                    if !self.fill(1)? {
                        return Ok((Some(v), End::Eof));
                    }
                }
                v.push(b);
                continue;
            }
            // The bytes up to the next one that may begin a terminator or be the escape byte
            // go in at once.
            let rest = &self.buf[self.pos..];
            let plain = rest
                .iter()
                .position(|b| {
                    fe.first() == Some(b) || le.first() == Some(b) || Some(*b) == ld.format.escaped
                })
                .unwrap_or(rest.len());
            if plain > 0 {
                v.extend_from_slice(&rest[..plain]);
                self.pos += plain;
                escaped_null = false;
                continue;
            }
            let end = if self.eat(fe)? {
                End::Field
            } else if self.eat(le)? {
                End::Line
            } else if !self.fill(1)? {
                End::Eof
            } else {
                let b = self.buf[self.pos];
                self.pos += 1;
                if Some(b) == self.ld.format.escaped {
                    match self.byte()? {
                        Some(b'N') if v.is_empty() => escaped_null = true,
                        Some(n) => {
                            escaped_null = false;
                            v.push(unescape(n));
                        }
                        None => v.push(b),
                    }
                } else {
                    escaped_null = false;
                    v.push(b);
                }
                continue;
            };
            let null = escaped_null && v.is_empty() || quote.is_some() && v == b"NULL";
            return Ok((if null { None } else { Some(v) }, end));
        }
    }
}

/// The byte an escape sequence stands for (L4).
fn unescape(b: u8) -> u8 {
    match b {
        b'0' => 0,
        b'b' => 8,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 26,
        b => b,
    }
}

fn literal(f: &Field) -> Expr {
    match f {
        None => Expr::Literal(Literal::Null),
        Some(b) => Expr::Literal(Literal::String {
            bytes: b.clone(),
            charset: None,
        }),
    }
}

impl Session {
    /// LOAD DATA (L1-L4).
    pub(crate) fn load_data(
        &mut self,
        ld: &LoadData,
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        let src: Box<dyn Read> = if ld.local {
            let Some(path) = self.load_local_file.clone() else {
                return Err(SqlError::new(ER_CLIENT_LOCAL_FILES_DISABLED, &[]));
            };
            Box::new(open(&path, &ld.file)?)
        } else {
            let db = self.db_of(&ld.table)?;
            let path = self.server_file(&ld.file, db, false)?;
            Box::new(open(&path, &ld.file)?)
        };
        let db = self.db_of(&ld.table)?;
        let t = self.open_table(&db, &ld.table.name)?;
        // The fields' targets (the table's columns when none are named).
        let targets: Vec<LoadTarget> = if ld.targets.is_empty() {
            (t.visible())
                .map(|(_, c)| LoadTarget::Column(c.name.clone()))
                .collect()
        } else {
            ld.targets.clone()
        };
        let mut columns: Vec<String> = (targets.iter())
            .filter_map(|x| match x {
                LoadTarget::Column(c) => Some(c.clone()),
                LoadTarget::Var(_) => None,
            })
            .collect();
        columns.extend(ld.sets.iter().map(|s| s.0.clone()));
        let ignore = ld.local && ld.duplicates != Some(true) || ld.duplicates == Some(false);
        let strict = (self.vars.sql_mode()).has(SqlMode::STRICT_TRANS_TABLES)
            || self.vars.sql_mode().has(SqlMode::STRICT_ALL_TABLES);
        let mut split = Splitter {
            src,
            buf: Vec::new(),
            pos: 0,
            eof: false,
            ld,
        };
        let read_err = |e: std::io::Error| {
            let errno = e.raw_os_error().unwrap_or(0);
            SqlError::new(ER_ERROR_ON_READ, &[&ld.file, &errno, &e.to_string()])
        };
        for _ in 0..ld.skip {
            if split.row().map_err(read_err)?.is_none() {
                break;
            }
        }
        let (mut records, mut affected, mut warnings) = (0u64, 0u64, 0usize);
        let mut last_vars: Vec<(String, Field)> = Vec::new();
        let mut done = false;
        while !done {
            let mut batch: Vec<Vec<Expr>> = Vec::with_capacity(LOAD_BATCH);
            let mut notes: Vec<SqlError> = Vec::new();
            while batch.len() < LOAD_BATCH {
                let Some(fields) = split.row().map_err(read_err)? else {
                    done = true;
                    break;
                };
                records += 1;
                let row_no = records;
                if fields.len() < targets.len() || fields.len() > targets.len() {
                    let e = if fields.len() < targets.len() {
                        SqlError::new(ER_WARN_TOO_FEW_RECORDS, &[&row_no])
                    } else {
                        SqlError::new(ER_WARN_TOO_MANY_RECORDS, &[&row_no])
                    };
                    if strict && !ignore {
                        return Err(e);
                    }
                    notes.push(e);
                }
                let mut values = Vec::with_capacity(columns.len());
                last_vars.clear();
                for (i, target) in targets.iter().enumerate() {
                    let f = fields.get(i);
                    match target {
                        LoadTarget::Column(_) => {
                            values.push(f.map_or(Expr::Default, literal));
                        }
                        LoadTarget::Var(name) => {
                            last_vars.push((name.clone(), f.cloned().flatten()));
                        }
                    }
                }
                // SET's expressions, the user variables standing for this row's fields.
                for (_, e) in &ld.sets {
                    let mut e = e.clone();
                    e.visit_mut(&mut |x| {
                        if let Expr::UserVar(n) = x {
                            if let Some((_, f)) = last_vars.iter().find(|(v, _)| v == n) {
                                *x = literal(f);
                            }
                            return false;
                        }
                        true
                    });
                    values.push(e);
                }
                batch.push(values);
            }
            if batch.is_empty() {
                break;
            }
            let n = batch.len() as u64;
            let ins = Insert {
                table: ld.table.clone(),
                columns: columns.clone(),
                source: InsertSource::Values(batch),
                ignore,
                replace: ld.duplicates == Some(true),
                on_duplicate: Vec::new(),
            };
            self.load_row_base = records - n;
            self.bulk_insert = true;
            let before = self.warnings.len();
            let r = self.insert(&ins, params);
            self.load_row_base = 0;
            self.bulk_insert = false;
            if let Output::Ok { affected: a, .. } = r? {
                affected += a;
            }
            for e in notes {
                self.note(Level::Warning, e);
            }
            warnings += self.warnings.len() - before;
        }
        // The user variables keep the last row's fields, as in MySQL.
        for (name, f) in last_vars {
            let d = f.map_or(Datum::Null, Datum::Bytes);
            self.user_vars.insert(name, d);
        }
        let (deleted, skipped) = match ld.duplicates {
            Some(true) => (affected.saturating_sub(records), 0),
            _ => (0, records.saturating_sub(affected)),
        };
        self.row_count = affected as i64;
        Ok(Output::Ok {
            affected,
            last_insert_id: 0,
            info: format!(
                "Records: {records}  Deleted: {deleted}  Skipped: {skipped}  Warnings: {warnings}"
            ),
        })
    }
}

/// A file read from its start through `innoxide_io` (positional reads).
struct FileReader {
    file: Arc<dyn File>,
    at: u64,
    len: u64,
}

impl Read for FileReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.len - self.at) as usize;
        if n > 0 {
            self.file.read_at(&mut buf[..n], self.at)?;
            self.at += n as u64;
        }
        Ok(n)
    }
}

/// Opens the file to load, read-only: error 29 as mysqld words it when it cannot be.
fn open(path: &std::path::Path, shown: &str) -> Result<FileReader, SqlError> {
    let r = OsFs.open_read(path).and_then(|file| {
        let len = file.len()?;
        Ok(FileReader { file, at: 0, len })
    });
    r.map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        let text = e.to_string();
        let text = text.split(" (os error").next().unwrap_or("").to_string();
        SqlError::new(ER_FILE_NOT_FOUND, &[&shown, &errno, &text])
    })
}

/// Bytes SELECT ... INTO OUTFILE gathers before writing them (L5).
const OUT_CHUNK: usize = 64 * 1024;

/// Where SELECT ... INTO OUTFILE / DUMPFILE sends its rows (L5): formatted and written to
/// the file as they come.
struct FileSink {
    file: Arc<dyn File>,
    at: u64,
    buf: Vec<u8>,
    export: Export,
    columns: Vec<Column>,
    rows: u64,
}

impl FileSink {
    fn flush(&mut self) -> Result<(), SqlError> {
        if !self.buf.is_empty() {
            self.file.write_at(&self.buf, self.at).map_err(|e| {
                let errno = e.raw_os_error().unwrap_or(0);
                SqlError::new(
                    ER_ERROR_ON_WRITE,
                    &[&self.export.file, &errno, &e.to_string()],
                )
            })?;
            self.at += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }

    /// One field as INTO OUTFILE writes it (L5).
    fn field(buf: &mut Vec<u8>, f: &FileFormat, c: &Column, d: &Datum) {
        let Some(text) = text_of(c, d) else {
            match f.escaped {
                Some(e) => buf.extend([e, b'N']),
                None => buf.extend(b"NULL"),
            }
            return;
        };
        let string = match &c.ety {
            EType::Column(ty) => ty.is_string(),
            EType::Str { .. } => true,
            _ => false,
        };
        let quote = f.enclosed.filter(|_| !f.optionally || string);
        // What the escape byte goes before: itself, the quote, NUL, and without a quote the
        // first bytes of the terminators.
        let special = |b: u8| {
            Some(b) == f.escaped
                || Some(b) == f.enclosed
                || b == 0
                || f.enclosed.is_none()
                    && (f.field_end.first() == Some(&b) || f.line_end.first() == Some(&b))
        };
        if let Some(q) = quote {
            buf.push(q);
        }
        for &b in &text {
            match f.escaped {
                Some(e) if special(b) => {
                    buf.push(e);
                    buf.push(if b == 0 { b'0' } else { b });
                }
                _ => buf.push(b),
            }
        }
        if let Some(q) = quote {
            buf.push(q);
        }
    }
}

impl super::RowSink for FileSink {
    fn begin(&mut self, columns: &[Column]) -> Result<(), SqlError> {
        self.columns = columns.to_vec();
        Ok(())
    }

    fn row(&mut self, row: &[Datum]) -> Result<(), SqlError> {
        self.rows += 1;
        let (buf, columns) = (&mut self.buf, &self.columns);
        if self.export.dump {
            if self.rows > 1 {
                return Err(SqlError::new(ER_TOO_MANY_ROWS, &[]));
            }
            for (d, c) in row.iter().zip(columns) {
                buf.extend(text_of(c, d).unwrap_or_default());
            }
        } else {
            let f = &self.export.format;
            buf.extend(&f.line_start);
            for (i, (d, c)) in row.iter().zip(columns).enumerate() {
                if i > 0 {
                    buf.extend(&f.field_end);
                }
                FileSink::field(buf, f, c, d);
            }
            buf.extend(&f.line_end);
        }
        if self.buf.len() >= OUT_CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// A value's text as the client would read it (NULL: None).
fn text_of(c: &Column, d: &Datum) -> Option<Vec<u8>> {
    match &c.ety {
        EType::Column(ty) => ty.render(d),
        _ => d.to_text(),
    }
}

impl Session {
    /// SELECT ... INTO OUTFILE / DUMPFILE (L5).
    pub(crate) fn select_outfile(
        &mut self,
        q: &ast::Select,
        export: &Export,
        params: &[Datum],
    ) -> Result<Output, SqlError> {
        let path = self.server_file(&export.file, self.db.clone().unwrap_or_default(), true)?;
        let file = OsFs.create(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                SqlError::new(ER_FILE_EXISTS_ERROR, &[&export.file])
            } else {
                let errno = e.raw_os_error().unwrap_or(0);
                SqlError::new(ER_CANT_CREATE_FILE, &[&export.file, &errno, &e.to_string()])
            }
        })?;
        let sink = FileSink {
            file,
            at: 0,
            buf: Vec::new(),
            export: export.clone(),
            columns: Vec::new(),
            rows: 0,
        };
        let before = self.sink.replace(Box::new(sink));
        let r = self.select_output(q, params);
        let sink = std::mem::replace(&mut self.sink, before);
        let mut sink = match sink.map(|s| s.into_any().downcast::<FileSink>()) {
            Some(Ok(s)) => s,
            _ => {
                return Err(SqlError::new(
                    ER_INTERNAL_ERROR,
                    &[&"INTO OUTFILE lost its file"],
                ))
            }
        };
        let done = (|| {
            if let Output::Rows { columns, rows } = r? {
                use super::RowSink;
                sink.begin(&columns)?;
                for row in rows {
                    sink.row(&row)?;
                }
            }
            sink.flush()
        })();
        if let Err(e) = done {
            let _ = OsFs.remove(&path);
            return Err(e);
        }
        self.row_count = sink.rows as i64;
        Ok(Output::Ok {
            affected: sink.rows,
            last_insert_id: 0,
            info: String::new(),
        })
    }

    /// A server file for LOAD DATA or INTO OUTFILE (L2): FILE needed; secure_file_priv NULL
    /// refuses (1290), a directory must hold it; a relative name is under the data directory's
    /// `db`.
    fn server_file(
        &mut self,
        name: &str,
        db: String,
        new: bool,
    ) -> Result<std::path::PathBuf, SqlError> {
        self.check_global(crate::privs::bit("FILE"), "FILE")?;
        let refused = || SqlError::new(ER_OPTION_PREVENTS_STATEMENT, &[&"--secure-file-priv"]);
        let Some(dir) = self.server.vars.secure_file_priv() else {
            return Err(refused());
        };
        let path = std::path::Path::new(name);
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.server
                .catalog
                .engine
                .inner()
                .cfg
                .datadir
                .join(db)
                .join(path)
        };
        if !dir.is_empty() {
            // A file still to create: its directory must be inside.
            let probe = match new {
                true => path
                    .parent()
                    .map(std::path::Path::to_path_buf)
                    .unwrap_or_default(),
                false => path.clone(),
            };
            let (Ok(p), Ok(d)) = (
                probe.canonicalize(),
                std::path::Path::new(&dir).canonicalize(),
            ) else {
                return Err(refused());
            };
            if !p.starts_with(d) {
                return Err(refused());
            }
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &[u8], ld: &LoadData) -> Vec<Vec<Field>> {
        let mut s = Splitter {
            src: Box::new(std::io::Cursor::new(text.to_vec())),
            buf: Vec::new(),
            pos: 0,
            eof: false,
            ld,
        };
        let mut out = Vec::new();
        while let Some(r) = s.row().unwrap() {
            out.push(r);
        }
        out
    }

    fn base() -> LoadData {
        LoadData {
            local: false,
            file: String::new(),
            duplicates: None,
            table: ast::ObjectName {
                db: None,
                name: "t".into(),
            },
            format: ast::FileFormat::default(),
            skip: 0,
            targets: Vec::new(),
            sets: Vec::new(),
        }
    }

    fn f(s: &str) -> Field {
        Some(s.as_bytes().to_vec())
    }

    #[test]
    fn default_format_escapes_and_null() {
        let ld = base();
        assert_eq!(
            rows(b"1\ta\\tb\n2\t\\N\n3\t\\\\N\n\n", &ld),
            vec![
                vec![f("1"), f("a\tb")],
                vec![f("2"), None],
                vec![f("3"), f("\\N")],
                vec![f("")],
            ]
        );
        // No newline at the end: the last line still counts.
        assert_eq!(rows(b"1\tx", &ld), vec![vec![f("1"), f("x")]]);
    }

    #[test]
    fn csv_with_quotes_and_crlf() {
        let mut ld = base();
        ld.format.field_end = b",".to_vec();
        ld.format.enclosed = Some(b'"');
        ld.format.line_end = b"\r\n".to_vec();
        assert_eq!(
            rows(
                b"1,\"a,b\",\"say \"\"hi\"\"\"\r\n2,NULL,\"NULL\"\r\n3,\"x\r\ny\",\r\n",
                &ld
            ),
            vec![
                vec![f("1"), f("a,b"), f("say \"hi\"")],
                vec![f("2"), None, f("NULL")],
                vec![f("3"), f("x\r\ny"), f("")],
            ]
        );
    }

    #[test]
    fn line_prefix_and_long_terminators() {
        let mut ld = base();
        ld.format.field_end = b"||".to_vec();
        ld.format.line_start = b"xxx".to_vec();
        ld.format.line_end = b"##".to_vec();
        ld.format.escaped = None;
        assert_eq!(
            rows(b"xxx1||a\\b##junk##xxx2||c##", &ld),
            vec![vec![f("1"), f("a\\b")], vec![f("2"), f("c")]]
        );
    }
}
