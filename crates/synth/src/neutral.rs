//! Neutral transcripts in the line form recall reads (`ingest/neutral.rs`):
//! a session line, then one JSON object per message.

use crate::conversation::Conversation;

/// `messages` messages of `c` as a neutral transcript, the session named
/// `id`.
pub fn transcript(c: &mut Conversation, id: &str, messages: usize) -> String {
    let head = serde_json::json!({"session": {"id": id, "title": c.title, "cwd": c.cwd}});
    let mut out = format!("{head}\n");
    for m in c.take(messages) {
        // Generated times lie within a few years of now.
        let ts = jiff::Timestamp::from_second(m.ts).expect("a time in range");
        let line = serde_json::json!({
            "role": m.role.as_str(),
            "content": m.text,
            "id": format!("{id}-{}", m.id),
            "timestamp": ts.to_string(),
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Lengths;
    use crate::Vocab;

    #[test]
    fn a_session_line_then_one_line_per_message() {
        let v = Vocab::new(1);
        let mut c = Conversation::new(&v, 1, 0, 1_767_225_600, Lengths::fixed(40));
        let t = transcript(&mut c, "s001", 12);
        let lines: Vec<serde_json::Value> = t
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 13);
        assert_eq!(lines[0]["session"]["id"], "s001");
        assert_eq!(lines[1]["role"], "user");
        assert!(lines[12]["id"].as_str().unwrap().starts_with("s001-"));
        assert!(lines[5]["timestamp"].as_str().unwrap().ends_with('Z'));
    }
}
