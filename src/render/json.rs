//! The versioned JSON output. Schema: `schema/recall-output.schema.json`.

use serde_json::{json, Value};

use super::highlight_ranges;
use crate::recall::Response;

/// Render `resp` as one JSON document (version 1). `project` names the
/// project searched, when there is one.
#[tracing::instrument(level = "debug", skip_all)]
pub fn render_json(resp: &Response, project: Option<&str>) -> String {
    let hits: Vec<Value> = resp
        .hits
        .iter()
        .map(|h| {
            // Matches as ranges beside the text, right after it: any
            // marker put inside it could be the text's own Markdown or
            // markup.
            let (snippet, ranges) = highlight_ranges(&h.snippet);
            let Ok(Value::Object(fields)) = serde_json::to_value(h) else {
                return Value::Null;
            };
            let mut out = serde_json::Map::new();
            for (k, v) in fields {
                if k == "snippet" {
                    out.insert(k, Value::String(snippet.clone()));
                    out.insert("highlights".into(), json!(ranges));
                } else {
                    out.insert(k, v);
                }
            }
            Value::Object(out)
        })
        .collect();
    let doc = json!({
        "version": 2,
        "query": resp.query,
        "terms": resp.terms,
        "project": project,
        "hits": hits,
        "timings_ms": resp.timings_ms,
    });
    // Serialising a Value cannot fail.
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}
