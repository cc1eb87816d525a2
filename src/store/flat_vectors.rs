//! Flat copies of a scope's vectors, for hybrid recall's dense scan
//! (issue 38): `<scope>/vectors/<table>.bin`, one per vectors table.
//!
//! The scan compares the question with every stored vector. Read through
//! SQLite that costs about 0.35 µs a row, nearly all of it the B-tree walk
//! and the row decoding, not the arithmetic; a file of fixed-size records
//! read through a memory map costs the arithmetic alone. The copy is a
//! cache of the index, never the truth: the scan writes one from the rows
//! whenever it has to read them through SQLite, and reads one only while
//! it still holds exactly the index's rows (see [`Stamp`]). Anything else
//! (no copy, another index's, an older count, a damaged or short file, a
//! folder recall cannot write) falls back to SQLite, with the same result.
//!
//! Layout, little-endian: a 64-byte header (magic, the index's id as 32
//! ASCII characters, the table's change count, the dimension, 4 reserved
//! bytes, the number of records), then one record per vector: its rowid
//! (i64), the sum of its squared values (u32), and its values (one signed
//! byte each, as `semantic::quant` stores them, without the scale, which
//! cancels in a cosine).
//!
//! A copy is only ever replaced whole (written beside, then renamed over),
//! never changed in place, so a map of the old file stays valid while
//! another process writes the new one.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use memmap2::Mmap;
use rusqlite::{Connection, OptionalExtension};

use super::ScopeDir;
use crate::error::Result;

const MAGIC: &[u8; 8] = b"RCLVEC01";
const HEADER: usize = 64;
const UID: usize = 32;
/// Bytes before a record's values: its rowid and its squared length.
const RECORD_HEAD: usize = 12;

/// What a copy must have been written from to be read: the index's id and
/// the table's change count (`meta.index_uid`, `meta.vectors_epoch_<table>`,
/// schema 13).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    uid: String,
    epoch: u64,
}

impl Stamp {
    /// The stamp of `table` (a vectors table) in the index `c` reads, or
    /// `None` for an index whose schema does not count its changes.
    pub fn of(c: &Connection, table: &str) -> Result<Option<Stamp>> {
        if super::schema_version(c)? < super::VECTOR_EPOCHS_SCHEMA {
            return Ok(None);
        }
        let get = |key: &str| -> Result<Option<String>> {
            Ok(c.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
                .query_row([key], |r| r.get(0))
                .optional()?)
        };
        let uid = get("index_uid")?;
        let epoch = get(&format!("vectors_epoch_{table}"))?.and_then(|e| e.parse().ok());
        Ok(match (uid, epoch) {
            (Some(uid), Some(epoch)) if uid.len() == UID && uid.is_ascii() => {
                Some(Stamp { uid, epoch })
            }
            _ => None,
        })
    }
}

/// The copies this process has mapped, by path, with their stamps.
type Kept = HashMap<PathBuf, (Stamp, Arc<Copy>)>;

fn kept() -> std::sync::MutexGuard<'static, Kept> {
    static KEPT: OnceLock<Mutex<Kept>> = OnceLock::new();
    KEPT.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Where the copy of `table`'s vectors lives.
fn path(dir: &ScopeDir, table: &str) -> PathBuf {
    dir.root.join("vectors").join(format!("{table}.bin"))
}

/// One record's rowid, squared length and values.
fn record(r: &[u8]) -> (i64, u32, &[u8]) {
    let rowid = i64::from_le_bytes(r[..8].try_into().unwrap());
    let norm = u32::from_le_bytes(r[8..12].try_into().unwrap());
    (rowid, norm, &r[RECORD_HEAD..])
}

/// A valid copy, mapped.
pub struct Copy {
    map: Mmap,
    count: usize,
    dim: usize,
}

impl Copy {
    /// The copy of `table` in `dir` when it was written for `stamp` with
    /// vectors of `dim` values; `None` otherwise (see the module doc).
    pub fn open(dir: &ScopeDir, table: &str, stamp: &Stamp, dim: usize) -> Option<Copy> {
        let file = File::open(path(dir, table)).ok()?;
        // SAFETY: copies are replaced by rename, never written in place
        // (see the module doc), so the mapped bytes do not change under us;
        // their length is checked against the header before any is read.
        // Populated: the kernel maps every page in one call, where faulting
        // them in one by one cost more than the scan's arithmetic.
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.ok()?;
        let head = map.get(..HEADER)?;
        let u64_at = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap());
        let found_dim = u32::from_le_bytes(head[48..52].try_into().unwrap()) as usize;
        let count = usize::try_from(u64_at(56)).ok()?;
        let fits = count
            .checked_mul(RECORD_HEAD + dim)
            .and_then(|n| n.checked_add(HEADER))
            == Some(map.len());
        let valid = &head[..8] == MAGIC
            && &head[8..8 + UID] == stamp.uid.as_bytes()
            && u64_at(40) == stamp.epoch
            && found_dim == dim
            && fits;
        valid.then_some(Copy { map, count, dim })
    }

    /// [`Copy::open`], kept for the life of the process while its stamp
    /// holds: `recall mcp` and `recall serve` map a copy once, not once
    /// per question (mapping 80 MB costs milliseconds). A stale copy is
    /// let go when its table's next stamp is asked for.
    pub fn open_kept(dir: &ScopeDir, table: &str, stamp: &Stamp, dim: usize) -> Option<Arc<Copy>> {
        let at = path(dir, table);
        let mut kept = kept();
        if let Some((s, copy)) = kept.get(&at) {
            if s == stamp && copy.dim == dim {
                return Some(copy.clone());
            }
        }
        kept.remove(&at);
        let copy = Arc::new(Copy::open(dir, table, stamp, dim)?);
        kept.insert(at, (stamp.clone(), copy.clone()));
        Some(copy)
    }

    /// Every record: its rowid, its squared length and its values.
    pub fn records(&self) -> impl Iterator<Item = (i64, u32, &[u8])> + '_ {
        self.body().chunks_exact(RECORD_HEAD + self.dim).map(record)
    }

    /// [`Copy::records`], for rayon to split between threads.
    pub fn par_records(
        &self,
    ) -> impl rayon::iter::IndexedParallelIterator<Item = (i64, u32, &[u8])> + '_ {
        use rayon::prelude::*;
        self.body()
            .par_chunks_exact(RECORD_HEAD + self.dim)
            .map(record)
    }

    /// The records' bytes, exactly `count` of them.
    fn body(&self) -> &[u8] {
        &self.map[HEADER..HEADER + (RECORD_HEAD + self.dim) * self.count]
    }

    /// Vectors in the copy.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// A copy being written, from rows read through SQLite; it replaces the
/// old one at [`Writer::finish`] and is dropped, unfinished, on any error.
pub struct Writer {
    out: BufWriter<tempfile::NamedTempFile>,
    target: PathBuf,
    stamp: Stamp,
    dim: usize,
    count: u64,
}

impl Writer {
    /// A new copy of `table` in `dir`, for rows read at `stamp`, of `dim`
    /// values each. `None` when the folder cannot be written (a read-only
    /// home): the scan then reads SQLite alone.
    pub fn create(dir: &ScopeDir, table: &str, stamp: Stamp, dim: usize) -> Option<Writer> {
        let target = path(dir, table);
        let folder = target.parent()?;
        super::create_private_dir(folder).ok()?;
        remove_left_temps(folder);
        let file = tempfile::Builder::new()
            .prefix(&format!(".{table}-"))
            .suffix(".tmp")
            .tempfile_in(folder)
            .ok()?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // The header is written last, once the count is known.
        out.write_all(&[0; HEADER]).ok()?;
        Some(Writer {
            out,
            target,
            stamp,
            dim,
            count: 0,
        })
    }

    /// Add one row: its rowid, its squared length and its `dim` values.
    pub fn push(&mut self, rowid: i64, norm: u32, values: &[u8]) -> std::io::Result<()> {
        debug_assert_eq!(values.len(), self.dim);
        self.out.write_all(&rowid.to_le_bytes())?;
        self.out.write_all(&norm.to_le_bytes())?;
        self.out.write_all(values)?;
        self.count += 1;
        Ok(())
    }

    /// Write the header and put the copy in place of the old one.
    pub fn finish(self) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        let mut file = self.out.into_inner().map_err(|e| e.into_error())?;
        let mut head = [0u8; HEADER];
        head[..8].copy_from_slice(MAGIC);
        head[8..8 + UID].copy_from_slice(self.stamp.uid.as_bytes());
        head[40..48].copy_from_slice(&self.stamp.epoch.to_le_bytes());
        head[48..52].copy_from_slice(&(self.dim as u32).to_le_bytes());
        head[56..64].copy_from_slice(&self.count.to_le_bytes());
        file.as_file_mut().seek(SeekFrom::Start(0))?;
        file.as_file_mut().write_all(&head)?;
        file.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Remove the scope's copies: a record deleted by a person leaves no copy
/// of its vector behind (the next hybrid query writes them again).
pub fn forget(dir: &ScopeDir) {
    let folder = dir.root.join("vectors");
    // Nor a map of one this process holds (`recall serve`, `recall mcp`).
    kept().retain(|p, _| !p.starts_with(&folder));
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().ends_with(".bin") {
            let _ = std::fs::remove_file(e.path());
        }
    }
    remove_left_temps(&folder);
}

/// Temporary copies a killed scan left (older than a minute: a live one
/// is being written right now).
fn remove_left_temps(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().unwrap_or_default() > std::time::Duration::from_secs(60));
        if name.starts_with('.') && name.ends_with(".tmp") && old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Scope;

    fn scope() -> (tempfile::TempDir, ScopeDir) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ScopeDir {
            scope: Scope::Project,
            root: tmp.path().join("p"),
        };
        std::fs::create_dir_all(&dir.root).unwrap();
        (tmp, dir)
    }

    /// Write a copy of `rows` (rowid, squared length, values).
    fn write(dir: &ScopeDir, table: &str, stamp: Stamp, dim: usize, rows: &[(i64, u32, &[u8])]) {
        let mut w = Writer::create(dir, table, stamp, dim).unwrap();
        for (rowid, norm, values) in rows {
            w.push(*rowid, *norm, values).unwrap();
        }
        w.finish().unwrap();
    }

    fn stamp(epoch: u64) -> Stamp {
        Stamp {
            uid: "0123456789abcdef0123456789abcdef".into(),
            epoch,
        }
    }

    #[test]
    fn a_copy_reads_back_what_was_written_for_its_stamp_only() {
        let (_t, dir) = scope();
        write(
            &dir,
            "chunk_vectors",
            stamp(7),
            3,
            &[(5, 14, &[1, 2, 3]), (9, 3, &[255, 1, 1])],
        );
        let copy = Copy::open(&dir, "chunk_vectors", &stamp(7), 3).unwrap();
        let rows: Vec<(i64, u32, Vec<u8>)> =
            copy.records().map(|(r, n, v)| (r, n, v.to_vec())).collect();
        assert_eq!(rows, [(5, 14, vec![1, 2, 3]), (9, 3, vec![255, 1, 1])]);
        assert_eq!(copy.len(), 2);
        // Another count, another index, another dimension, another table:
        // not read.
        assert!(Copy::open(&dir, "chunk_vectors", &stamp(8), 3).is_none());
        let other = Stamp {
            uid: "ffffffffffffffffffffffffffffffff".into(),
            epoch: 7,
        };
        assert!(Copy::open(&dir, "chunk_vectors", &other, 3).is_none());
        assert!(Copy::open(&dir, "chunk_vectors", &stamp(7), 4).is_none());
        assert!(Copy::open(&dir, "record_vectors", &stamp(7), 3).is_none());
        // A short file (a copy cut off) is not read either.
        let file = path(&dir, "chunk_vectors");
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 1]).unwrap();
        assert!(Copy::open(&dir, "chunk_vectors", &stamp(7), 3).is_none());
        // Forgotten, it is gone.
        std::fs::write(&file, &bytes).unwrap();
        forget(&dir);
        assert!(!file.exists());
    }

    #[test]
    fn a_kept_copy_is_mapped_once_per_stamp_and_let_go_when_forgotten() {
        let (_t, dir) = scope();
        write(&dir, "chunk_vectors", stamp(3), 2, &[(1, 2, &[1, 1])]);
        let a = Copy::open_kept(&dir, "chunk_vectors", &stamp(3), 2).unwrap();
        let b = Copy::open_kept(&dir, "chunk_vectors", &stamp(3), 2).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "mapped once");
        assert!(Copy::open_kept(&dir, "chunk_vectors", &stamp(4), 2).is_none());
        write(&dir, "chunk_vectors", stamp(3), 2, &[(1, 2, &[1, 1])]);
        let c = Copy::open_kept(&dir, "chunk_vectors", &stamp(3), 2).unwrap();
        assert!(!Arc::ptr_eq(&a, &c), "a stale stamp let the old map go");
        forget(&dir);
        assert!(kept().keys().all(|p| !p.starts_with(&dir.root)));
    }

    /// Every change to a vectors table, a cascade from its rows included,
    /// moves that table's stamp and no other's.
    #[test]
    fn a_change_to_a_vectors_table_moves_its_stamp() -> Result<()> {
        let mut c = Connection::open_in_memory()?;
        crate::store::migrate_for_tests(&mut c);
        c.execute_batch("PRAGMA foreign_keys=ON;")?;
        let first = Stamp::of(&c, "chunk_vectors")?.unwrap();
        let records = Stamp::of(&c, "record_vectors")?.unwrap();
        assert_eq!(first.uid.len(), 32);
        c.execute_batch(
            "INSERT INTO sources(id, path, kind, format, size, mtime, hash, parser_version, offset, indexed_at)
             VALUES(1, 'a', 'session', 'neutral', 0, 0, '', 1, 0, 0);
             INSERT INTO chunks(rowid, source_id, session_id, seq, msg_first, msg_last, message_ids, spans, roles, speakers, launcher)
             VALUES(1, 1, 's', 0, 0, 0, '[]', '[]', '[]', '[]', 'x');
             INSERT INTO chunk_vectors(rowid, v) VALUES(1, x'00000000010203');",
        )?;
        let added = Stamp::of(&c, "chunk_vectors")?.unwrap();
        assert_eq!(
            (added.uid == first.uid, added.epoch),
            (true, first.epoch + 1)
        );
        c.execute_batch("DELETE FROM chunks WHERE rowid = 1;")?;
        let gone = Stamp::of(&c, "chunk_vectors")?.unwrap();
        assert_eq!(gone.epoch, first.epoch + 2, "the cascade counts");
        assert_eq!(Stamp::of(&c, "record_vectors")?.unwrap(), records);
        Ok(())
    }

    #[test]
    fn an_unfinished_copy_leaves_the_old_one_and_no_file_behind() {
        let (_t, dir) = scope();
        write(&dir, "record_vectors", stamp(1), 2, &[(1, 2, &[1, 1])]);
        let mut w = Writer::create(&dir, "record_vectors", stamp(2), 2).unwrap();
        w.push(1, 8, &[2, 2]).unwrap();
        drop(w);
        let names: Vec<String> = std::fs::read_dir(dir.root.join("vectors"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["record_vectors.bin"]);
        assert!(Copy::open(&dir, "record_vectors", &stamp(1), 2).is_some());
    }
}
