//! The versioned JSON output. Schema: `schema/recall-output.schema.json`.

use serde_json::{json, Value};

use super::highlight;
use crate::recall::Response;

/// Render `resp` as one JSON document (version 1). `project` names the
/// project searched, when there is one.
#[tracing::instrument(level = "debug", skip_all)]
pub fn render_json(resp: &Response, project: Option<&str>) -> String {
    let hits: Vec<Value> = resp
        .hits
        .iter()
        .map(|h| {
            let mut v = serde_json::to_value(h).unwrap_or(Value::Null);
            v["snippet"] = Value::String(highlight(&h.snippet, "**", "**"));
            v
        })
        .collect();
    let doc = json!({
        "version": 1,
        "query": resp.query,
        "terms": resp.terms,
        "project": project,
        "hits": hits,
        "timings_ms": resp.timings_ms,
    });
    // Serialising a Value cannot fail.
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}
