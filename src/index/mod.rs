//! The single FTS5 writer: everything that puts rows into a scope's
//! `index.db` (records from files, and later session chunks and tickets).

mod budget;
mod gate;
mod pipeline;
mod progress;
mod record_ops;
mod records;
mod shared;
mod sources;
mod vectors;

pub use gate::WriteGate;
pub use pipeline::{index_sources, indexed_as_it_is, IndexReport, RunOptions};
pub use progress::Progress;
pub use record_ops::{
    find_record, list_records, screen_key, screen_secrets, ListFilter, Listed, Located,
    RecordStore, SecretPolicy,
};
pub use records::{
    drift, files_with_secrets, has_record_files, records_changed, remove_record, sync_records,
    truncate_wal, unreadable_files, upsert_record, upsert_records, Drift, SyncReport,
};
pub use shared::{
    export_source, has_source_at, import_source, prepare_import, remove_source_at, write_import,
    Import, PassageDoc, SessionDoc, SourceDoc,
};
pub use sources::{
    delete_source, load_sources, note_root, note_semantic_model, rebuild_source_fts,
};
pub use vectors::{
    fill as fill_vectors, fill_records as fill_record_vectors, records_without_vectors,
    vectors_model, Filled,
};
