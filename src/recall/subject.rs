//! The subject of a question in an assistant chat. "Have I worked with
//! Flask routes?", "How long is my commute?": a question in the first
//! person is about the user, and the user's own messages hold the answer
//! far more often than the assistant's replies (78% of BEAM's evidence for
//! such questions, where each side writes half the messages; the
//! assistant's long replies repeat the question's words without holding
//! the fact). `search::recall` lifts the session hits the user wrote
//! (`Tuning::subject_boost`), in the same idf form as the answer type:
//! where most candidates are the user's, the lift fades.
//!
//! Only messages of an unnamed user count: in a chat log whose speakers
//! have names (`alice: …`, `bob: …`), which of them is "I" is unknown, and
//! a question that names a speaker already matches that speaker's label,
//! which is part of each message's indexed text. Lifting the named
//! speaker's messages on top of that cost LoCoMo 0.003.
//!
//! The question side reads whitespace-separated words and allocates
//! nothing per word; the text side reads the passage's stored role and
//! speaker columns.

/// First-person words. "we" and "our" are left out: in an agent session
/// they mean the user and the assistant together.
const FIRST_PERSON: &[&str] = &[
    "i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll", "im", "ive",
];

/// Whether `question` is in the first person, so about the user.
pub fn asks_about_user(question: &str) -> bool {
    crate::recall::sanitize::question_words(question)
        .any(|w| FIRST_PERSON.iter().any(|f| is_word(w, f)))
}

/// `word` is `lower`, in any case and with either apostrophe (`I’m`).
fn is_word(word: &str, lower: &str) -> bool {
    word.chars()
        .map(|c| match c {
            '\u{2019}' => '\'',
            c => c.to_ascii_lowercase(),
        })
        .eq(lower.chars())
}

/// Whether a stored passage is the user's message in a chat with unnamed
/// speakers, from its `roles` and `speakers` JSON columns (a passage is
/// one message, so one entry each).
pub fn user_wrote(roles: &str, speakers: &str) -> bool {
    let parse = |json: &str| serde_json::from_str::<Vec<String>>(json).ok();
    let unnamed = parse(speakers).is_some_and(|s| s.iter().all(|n| n.trim().is_empty()));
    let user = crate::ingest::model::Role::User.as_str();
    unnamed && parse(roles).is_some_and(|r| r.first().is_some_and(|r| r == user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_person_question_is_about_the_user() {
        assert!(asks_about_user("Have I worked with Flask routes?"));
        assert!(asks_about_user("how long is my commute"));
        assert!(asks_about_user("What did you tell me about (me)?"));
        assert!(asks_about_user("I'm stuck on the parser"));
        assert!(asks_about_user("I’m stuck on the parser"));
        assert!(asks_about_user("Is this 'my' fault?"));
        assert!(asks_about_user("Is this ‘my’ fault?"));
        assert!(!asks_about_user("Why does the cache miss?"));
        assert!(!asks_about_user("When did we move the cache to Redis?"));
        // Words that only contain a first-person word do not count.
        assert!(!asks_about_user("Is mine-craft imported in main.rs?"));
        assert!(!asks_about_user(""));
    }

    #[test]
    fn only_an_unnamed_user_counts() {
        assert!(user_wrote(r#"["user"]"#, "[]"));
        assert!(!user_wrote(r#"["assistant"]"#, "[]"));
        assert!(!user_wrote(r#"["user"]"#, r#"["Jon"]"#));
        assert!(!user_wrote("[]", "[]"));
        assert!(!user_wrote("not json", "[]"));
    }
}
