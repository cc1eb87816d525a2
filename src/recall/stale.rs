//! Newer facts win. Two records about the same thing that state different
//! values for it (a version, a port, a count) are most often an old
//! decision and its update: "the api listens on 8080", then months later
//! "we moved the api to 9090". The newer one is moved to just above the
//! older, and the older is marked with the newer's id ([`Hit::stale_by`]),
//! which `--format prompt` shows as "possibly stale".
//!
//! "About the same thing" is read from the question: the newer record
//! holds every query word the older holds (at least [`MIN_SHARED`], and
//! most of its own), and both state a value about the same one of those
//! words, the newer one the older does not (see `passage::Scorer::stated`).
//! Both are of the same scope, and the newer was written (created) later:
//! pinning or reweighing a record does not make it newer. The selected
//! hits are reordered, never added or dropped, so the limit and the token
//! budget still hold.
//!
//! Only records take part. A record is one fact a person or an extractor
//! wrote down, so two records giving two values for the same words
//! disagree. Session passages mention numbers in passing: on BEAM, where
//! the old statement and its update are both gold, applying the same rule
//! to the user's messages moved later, unrelated mentions above both and
//! cut budget recall from 0.414 to 0.346 (knowledge_update from 0.659 to
//! 0.515).
//!
//! [`Hit::stale_by`]: super::hit::Hit::stale_by

use super::candidates::Candidate;
use super::hit::{HitKind, Lift};
use super::passage::{Scorer, Stated};
use super::plan::Weighted;

/// Query words two records must share to be about the same thing.
const MIN_SHARED: usize = 2;

/// Whether `newer` restates what `older` says with another value.
fn supersedes(newer: (&Stated, &Candidate), older: (&Stated, &Candidate)) -> bool {
    let ((n, nc), (o, oc)) = (newer, older);
    let record = |c: &Candidate| c.hit.kind == HitKind::Record;
    // Records of one scope of one index: a person's own preference is not
    // a project's decision, nor one project's another's.
    if !record(nc) || !record(oc) || nc.hit.scope != oc.hit.scope || nc.target != oc.target {
        return false;
    }
    // When each was written: pinning or reweighing a record moves its
    // `updated`, not what it says.
    let (Some(nt), Some(ot)) = (nc.created, oc.created) else {
        return false;
    };
    if nt <= ot {
        return false;
    }
    // The same subject: the newer holds every query word the older holds
    // ("the database server port" does not update "the api server port"),
    // at least MIN_SHARED, and they are most of its own.
    let shared = o.families.len();
    let holds_all = o
        .families
        .iter()
        .all(|f| n.families.binary_search(f).is_ok());
    if !holds_all || shared < MIN_SHARED || 2 * shared < n.families.len() {
        return false;
    }
    // Values stated about the same query word, the newer's holding one the
    // older's does not: "port 8080", then "moved to port 9090 because 8080
    // clashed".
    n.values.iter().any(|(word, values)| {
        o.values
            .get(word)
            .is_some_and(|old| values.difference(old).next().is_some())
    })
}

/// Move each newer record that supersedes an older one above it, and mark
/// the older (see the module doc). `list` is in rank order; `terms` are
/// the question's, over every table.
pub fn newer_first(list: &mut Vec<Candidate>, terms: &[Weighted]) {
    if list
        .iter()
        .filter(|c| c.hit.kind == HitKind::Record)
        .count()
        < 2
    {
        return;
    }
    let subject = Scorer::for_statements(terms);
    let mut stated: Vec<Stated> = list
        .iter()
        .map(|c| match c.hit.kind {
            HitKind::Record => subject.stated(&c.hit.text),
            _ => Stated::default(),
        })
        .collect();
    let mut i = 0;
    while i < list.len() {
        let newer = (i + 1..list.len())
            .find(|&j| supersedes((&stated[j], &list[j]), (&stated[i], &list[i])));
        if let Some(j) = newer {
            let mut c = list.remove(j);
            let s = stated.remove(j);
            // It takes the older one's place, and its score: a lift, so
            // `--explain` still multiplies out.
            let factor = list[i].hit.score / c.hit.score;
            if factor > 1.0 {
                c.hit.score = list[i].hit.score;
                if let Some(e) = c.hit.explain.as_mut() {
                    e.lifts.push(Lift {
                        name: "newer".into(),
                        factor,
                    });
                }
            }
            list[i].hit.stale_by = Some(c.hit.id.clone());
            list.insert(i, c);
            stated.insert(i, s);
            // Stay at i: a still newer record may supersede the one moved
            // up (each move puts a strictly newer one at i, so this ends).
            continue;
        }
        // A newer record already above it makes it stale as well.
        if list[i].hit.stale_by.is_none() {
            let above = (0..i)
                .rev()
                .find(|&k| supersedes((&stated[k], &list[k]), (&stated[i], &list[i])));
            if let Some(k) = above {
                list[i].hit.stale_by = Some(list[k].hit.id.clone());
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::hit::{Hit, HitSource};
    use crate::recall::sanitize::extract_terms;
    use crate::store::{Scope, Table};

    const DAY: i64 = 86_400;

    fn hit(id: &str, day: Option<i64>, text: &str) -> Candidate {
        let hit = Hit {
            rank: 0,
            score: 1.0,
            kind: HitKind::Record,
            scope: Scope::Project,
            id: id.into(),
            category: None,
            title: id.into(),
            snippet: String::new(),
            text: text.into(),
            source: HitSource::default(),
            pinned: false,
            importance: 50,
            updated: day.map(|d| d * DAY),
            explain: None,
            stale_by: None,
            cosine: None,
        };
        Candidate {
            created: day.map(|d| d * DAY),
            ..Candidate::of(hit, Table::Records)
        }
    }

    fn subject(question: &str) -> Vec<Weighted> {
        extract_terms(question)
            .into_iter()
            .map(|term| Weighted {
                term,
                df: 1,
                exact: true,
                weight: 1.0,
            })
            .collect()
    }

    fn order(list: &[Candidate]) -> Vec<(&str, Option<&str>)> {
        list.iter()
            .map(|c| (c.hit.id.as_str(), c.hit.stale_by.as_deref()))
            .collect()
    }

    const Q: &str = "which port does the api server listen on";
    const OLD: &str = "The api server listens on port 8080.";
    const NEW: &str = "We moved the api server: it listens on port 9090 now.";
    const OTHER: &str = "Postgres listens on port 5432.";

    #[test]
    fn the_newer_value_moves_above_the_older_which_is_marked() {
        let mut list = vec![
            hit("old", Some(1), OLD),
            hit("db", Some(2), OTHER),
            hit("new", Some(30), NEW),
        ];
        list[2].hit.score = 0.5;
        newer_first(&mut list, &subject(Q));
        assert_eq!(
            order(&list),
            [("new", None), ("old", Some("new")), ("db", None)]
        );
        assert_eq!(list[0].hit.score, 1.0, "it takes the older one's score");
    }

    #[test]
    fn an_update_that_names_the_old_value_too_still_supersedes_it() {
        let moved = "We moved the api server to port 9090 because 8080 clashed.";
        let mut list = vec![hit("old", Some(1), OLD), hit("new", Some(30), moved)];
        newer_first(&mut list, &subject(Q));
        assert_eq!(order(&list), [("new", None), ("old", Some("new"))]);
    }

    #[test]
    fn a_newer_record_already_above_still_marks_the_older() {
        let mut list = vec![hit("new", Some(30), NEW), hit("old", Some(1), OLD)];
        newer_first(&mut list, &subject(Q));
        assert_eq!(order(&list), [("new", None), ("old", Some("new"))]);
    }

    #[test]
    fn same_values_other_subjects_other_words_or_no_times_change_nothing() {
        let same = "The api server still listens on port 8080.";
        // A new number, but about another of the question's words.
        let elsewhere = "The api server listens on port 8080; the server runs 4 workers.";
        // Another server's port: it lacks "api", which the older holds.
        let database = "The database server listens on port 5432.";
        let cases = [
            vec![hit("old", Some(1), OLD), hit("new", Some(30), same)],
            // Only "port" of the question's words.
            vec![hit("old", Some(1), OLD), hit("db", Some(30), OTHER)],
            vec![hit("old", Some(1), OLD), hit("db", Some(30), database)],
            vec![hit("old", Some(1), OLD), hit("new", Some(30), elsewhere)],
            vec![hit("old", None, OLD), hit("new", Some(30), NEW)],
            vec![hit("old", Some(30), OLD), hit("new", Some(30), NEW)],
        ];
        for mut list in cases {
            let before: Vec<String> = list.iter().map(|c| c.hit.id.clone()).collect();
            newer_first(&mut list, &subject(Q));
            let after: Vec<String> = list.iter().map(|c| c.hit.id.clone()).collect();
            assert_eq!(before, after);
            assert!(list.iter().all(|c| c.hit.stale_by.is_none()), "{before:?}");
        }
    }

    /// Newer is when a record was written: pinning or reweighing the old
    /// one later moves its `updated`, not what it says.
    #[test]
    fn a_record_touched_later_is_still_the_older() {
        let mut list = vec![hit("new", Some(30), NEW), hit("old", Some(1), OLD)];
        list[1].hit.updated = Some(90 * DAY);
        newer_first(&mut list, &subject(Q));
        assert_eq!(order(&list), [("new", None), ("old", Some("new"))]);
    }

    /// A person's own note in the user scope does not update a project's
    /// record, nor one index's record another's.
    #[test]
    fn records_of_other_scopes_or_indexes_are_not_compared() {
        let mut list = vec![hit("old", Some(1), OLD), hit("mine", Some(30), NEW)];
        list[1].hit.scope = Scope::User;
        newer_first(&mut list, &subject(Q));
        assert_eq!(order(&list), [("old", None), ("mine", None)]);
        let mut list = vec![hit("old", Some(1), OLD), hit("there", Some(30), NEW)];
        list[1].target = 1;
        newer_first(&mut list, &subject(Q));
        assert_eq!(order(&list), [("old", None), ("there", None)]);
    }

    #[test]
    fn session_passages_are_left_alone() {
        // Two records, so the comparison runs; the newest is a passage.
        let mut list = vec![
            hit("old", Some(1), OLD),
            hit("db", Some(2), OTHER),
            hit("new", Some(30), NEW),
        ];
        list[2].hit.kind = HitKind::Session;
        newer_first(&mut list, &subject(Q));
        assert_eq!(order(&list), [("old", None), ("db", None), ("new", None)]);
    }

    #[test]
    fn a_chain_of_updates_ends_with_the_newest_first() {
        let newest = "The api server listens on port 7070 since the migration.";
        let mut list = vec![
            hit("old", Some(1), OLD),
            hit("new", Some(30), NEW),
            hit("newest", Some(60), newest),
        ];
        newer_first(&mut list, &subject(Q));
        assert_eq!(list[0].hit.id, "newest");
        assert!(list[1..].iter().all(|c| c.hit.stale_by.is_some()));
    }

    #[test]
    fn values_are_read_after_the_question_words_only() {
        let s = Scorer::for_coverage(&subject(Q))
            .stated("In 2019 I bought a bike. Later: the api server listens on port 8080, v2.1.3.");
        let values: Vec<(usize, Vec<String>)> = s
            .values
            .into_iter()
            .map(|(f, v)| (f, v.into_iter().collect()))
            .collect();
        assert_eq!(values.len(), 1, "{values:?}");
        assert_eq!(values[0].1, ["8080", "v2.1.3"]);
    }
}
