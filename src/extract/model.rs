//! The `model` extractor: a launcher's own model, through its
//! non-interactive mode (`claude -p`, `codex exec`, `gemini -p`). recall
//! writes the extraction prompt (what to keep, the transcript, the records
//! not to repeat, the answer's JSON form) on the command's stdin and reads
//! the facts from its answer, which a model may wrap in prose or a code
//! fence. The same guardrails as every extractor then decide what becomes
//! a record.
//!
//! The command runs in a folder of its own (`<home>/extract-work`), so the
//! launcher files its transcript of the extraction apart from the
//! project's sessions, and with `RECALL_HOOKS=off`, so recall's own hooks
//! in that launcher neither inject memory into the prompt nor index the
//! extraction as a session.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::command::{parse_response, run_program, ExtractRequest, Facts};
use crate::error::{Error, Result};

/// The variable that turns recall's hooks off for one launcher process.
pub const HOOKS_OFF: (&str, &str) = ("RECALL_HOOKS", "off");

/// The instructions before the request.
const INSTRUCTIONS: &str = "\
You distil a finished coding-agent session into at most {max} durable facts \
for the team's memory, or none. Keep only what a later session on this \
codebase would need and could not see in the code: decisions and why, \
procedures that worked (commands, steps), principles the team holds, \
incidents with their cause and fix, and the user's stated preferences. \
Never keep secrets, credentials, one-off task details, speculation or your \
own reasoning. Do not repeat the existing records listed below. Do not use \
any tool.

Answer with one JSON object and nothing else, in this form:
{\"facts\": [{\"category\": \"decisions|procedures|principles|incidents|preferences\", \
\"scope\": \"project|user\", \"key\": \"a short title\", \"text\": \"the fact, one or \
two self-contained sentences\", \"confidence\": 0.0 to 1.0, \"evidence\": [\"message ids\"]}]}
Use scope user only for the person's preferences across projects. \
Answer {\"facts\": []} when nothing is worth keeping.
";

/// The prompt for `req`.
pub fn prompt(req: &ExtractRequest) -> Result<String> {
    let mut out = INSTRUCTIONS.replace("{max}", &req.max_facts.to_string());
    out.push_str("\nThe session and the existing records, as JSON:\n");
    out.push_str(&serde_json::to_string_pretty(req)?);
    out.push('\n');
    Ok(out)
}

/// Run `cmd` (a launcher's non-interactive mode, reading the prompt on
/// stdin) in `workdir` on `req`; the facts its answer holds.
pub fn run(cmd: &str, req: &ExtractRequest, timeout: Duration, workdir: &Path) -> Result<Facts> {
    std::fs::create_dir_all(workdir).map_err(|e| Error::io("create", workdir, e))?;
    let mut sh = Command::new("sh");
    sh.current_dir(workdir).env(HOOKS_OFF.0, HOOKS_OFF.1);
    let answer = run_program(cmd, prompt(req)?.into_bytes(), timeout, &mut sh)?;
    facts_in(&answer)
}

/// The facts of a model's answer: the first JSON object in it that holds
/// `facts` (the answer may be fenced, or have a sentence around it).
pub fn facts_in(answer: &[u8]) -> Result<Facts> {
    let text = String::from_utf8_lossy(answer);
    for (at, _) in text.match_indices('{') {
        let mut objects =
            serde_json::Deserializer::from_str(&text[at..]).into_iter::<serde_json::Value>();
        if let Some(Ok(v)) = objects.next() {
            if v.get("facts").is_some_and(serde_json::Value::is_array) {
                return parse_response(v.to_string().as_bytes());
            }
        }
    }
    let (shown, _) = crate::secrets::redact(crate::text::truncate_chars(text.trim(), 200));
    Err(Error::invalid(format!(
        "the model's answer holds no {{\"facts\": [...]}} object: {shown}"
    )))
}

#[cfg(test)]
mod tests {
    use super::super::command::SessionInfo;
    use super::*;

    fn request() -> ExtractRequest<'static> {
        ExtractRequest {
            version: 1,
            session: SessionInfo {
                id: "s1",
                title: Some("deploys"),
                launcher: "claude-code",
                cwd: None,
            },
            transcript: "user: how do we deploy?\n\nassistant: make ship-it".into(),
            existing: &[],
            categories: vec!["decisions", "procedures"],
            max_facts: 5,
        }
    }

    #[test]
    fn the_prompt_holds_the_instructions_the_form_and_the_transcript() -> Result<()> {
        let p = prompt(&request())?;
        assert!(p.contains("at most 5 durable facts"), "{p}");
        assert!(p.contains("{\"facts\": [{\"category\""), "{p}");
        assert!(p.contains("make ship-it"), "{p}");
        Ok(())
    }

    #[test]
    fn facts_are_found_in_a_fenced_or_wrapped_answer() -> Result<()> {
        let fact = r#"{"facts": [{"category": "procedures", "key": "deploy", "text": "Deploy with make ship-it.", "confidence": 0.9}]}"#;
        for answer in [
            fact.to_string(),
            format!("```json\n{fact}\n```\n"),
            format!("Here are the facts {{as asked}}:\n{fact}\nDone."),
        ] {
            let f = facts_in(answer.as_bytes())?;
            assert_eq!(f.candidates.len(), 1, "{answer}");
            assert_eq!(f.candidates[0].key, "deploy");
        }
        assert_eq!(facts_in(br#"{"facts": []}"#)?.candidates.len(), 0);
        let err = facts_in(b"I could not find anything.")
            .unwrap_err()
            .to_string();
        assert!(err.contains("holds no"), "{err}");
        Ok(())
    }
}
