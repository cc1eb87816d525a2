//! A minimal stand-in for the `sqlite3` command-line tool, linked against
//! the same bundled SQLite as `recall`: `sqlite_floor DB "SQL"` opens DB
//! read-only, runs the SQL (one statement, or several separated by `;`)
//! and prints every row tab-separated, like `sqlite3 -separator $'\t' DB SQL`.
//!
//! It exists for `scripts/bench-recall.sh`: the system `sqlite3` (3.40 here)
//! cannot read recall's indexes, because `secure-delete` bumps the FTS5
//! on-disk format ("invalid fts5 file format (found 5, expected 4)"). The
//! benchmark times this program as a whole process, like `recall`, so both
//! sides pay process start-up and the database open.
//!
//! Like the CLI it does nothing else: no migrations, no pragmas beyond the
//! defaults, no busy timeout. NULLs print as empty fields, blobs as
//! `<blob N bytes>`. The exit code is 0 on success and 1 on an SQL error.

use std::io::{BufWriter, Write};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

fn field(out: &mut impl Write, v: ValueRef<'_>) -> std::io::Result<()> {
    match v {
        ValueRef::Null => Ok(()),
        ValueRef::Integer(i) => write!(out, "{i}"),
        ValueRef::Real(f) => write!(out, "{f}"),
        ValueRef::Text(t) => out.write_all(t),
        ValueRef::Blob(b) => write!(out, "<blob {} bytes>", b.len()),
    }
}

fn run(db: &str, sql: &str) -> Result<(), Box<dyn std::error::Error>> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut rest = sql.trim();
    while !rest.is_empty() {
        // One statement at a time, like the CLI (`--` comments are not
        // understood; the benchmark's SQL has none).
        let (stmt_sql, tail) = split_first(rest);
        rest = tail.trim();
        if stmt_sql.trim().is_empty() {
            continue;
        }
        let mut st = conn.prepare(stmt_sql)?;
        let n = st.column_count();
        let mut rows = st.raw_query();
        while let Some(row) = rows.next()? {
            for i in 0..n {
                if i > 0 {
                    out.write_all(b"\t")?;
                }
                field(&mut out, row.get_ref(i)?)?;
            }
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The first statement of `sql` (up to a `;` outside quotes) and the rest.
fn split_first(sql: &str) -> (&str, &str) {
    let b = sql.as_bytes();
    let mut quote: Option<u8> = None;
    for (i, &c) in b.iter().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' || c == b'`' => quote = Some(c),
            None if c == b'[' => quote = Some(b']'),
            None if c == b';' => return (&sql[..i], &sql[i + 1..]),
            None => {}
        }
    }
    (sql, "")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (db, sql) = match args.as_slice() {
        [db, sql] => (db.clone(), sql.clone()),
        [db] => {
            // SQL on stdin, like `sqlite3 DB < file.sql`.
            let mut s = String::new();
            if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
                eprintln!("sqlite_floor: cannot read stdin: {e}");
                std::process::exit(2);
            }
            (db.clone(), s)
        }
        _ => {
            eprintln!("usage: sqlite_floor DB [SQL]   (SQL from stdin when omitted)");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&db, &sql) {
        eprintln!("sqlite_floor: {e}");
        std::process::exit(1);
    }
}
