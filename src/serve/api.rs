//! The REST endpoints: translate HTTP to [`crate::Memory`] calls
//! and back. Project memories live under `/api/projects/{project}/memories`
//! (`{project}` is a name or id, as `--project` takes), the user's under
//! `/api/user/memories`; both take the same bodies.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::routing::{get, patch, post};
use axum::Router;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use super::envelope::{Data, Fail, PathParam, QueryParam, Reply};
use super::{Shared, BODY_LIMIT};
use crate::error::{Error, Result};
use crate::index::{ListFilter, Listed, Located, SecretPolicy, WriteGate};
use crate::memory::{ListOrder, NewRecord, Patch, RecallOptions};
use crate::records::{Category, Source, Status};
use crate::render::{render_json, render_prompt, render_snippets, PromptOptions, Style};
use crate::store::{Scope, ScopeDir};
use crate::Memory;

/// Every API route.
pub fn router(state: Shared) -> Router {
    Router::new()
        .route("/healthz", get(health))
        .route("/api/projects", get(projects))
        .route(
            "/api/projects/{project}/memories",
            get(project_list).post(project_create),
        )
        .route(
            "/api/projects/{project}/memories/{id}",
            get(project_get).patch(project_patch).delete(project_delete),
        )
        .route(
            "/api/projects/{project}/memories/{id}/pin",
            patch(project_pin),
        )
        .route(
            "/api/projects/{project}/memories/{id}/move",
            post(project_move),
        )
        .route("/api/projects/{project}/recall", get(project_recall))
        .route("/api/user/memories", get(user_list).post(user_create))
        .route(
            "/api/user/memories/{id}",
            get(user_get).patch(user_patch).delete(user_delete),
        )
        .route("/api/user/recall", get(user_recall))
        .route("/api/user/memories/{id}/pin", patch(user_pin))
        .route("/api/user/memories/{id}/move", post(user_move))
        .with_state(state)
}

/// Which scope a request is about.
#[derive(Debug, Clone)]
enum Place {
    User,
    Project(String),
}

/// Run `f` on tokio's blocking pool with a memory at the current time and
/// the folder of `place`; writes hold the process's write lock.
///
/// Reads are bounded by the guard's time limit. A write is bounded here,
/// through a [`WriteGate`]: when its time is up before it has changed
/// anything (it is still waiting for a lock), it is cancelled and the
/// answer says nothing was written; once it has passed the gate it
/// finishes, and the answer is its result. A client that retries never
/// gets two writes or a lie.
async fn blocking<T: Send + 'static>(
    state: &Shared,
    place: Place,
    write: bool,
    f: impl FnOnce(&Memory, &ScopeDir) -> Result<T> + Send + 'static,
) -> std::result::Result<T, Fail> {
    let gate = Arc::new(WriteGate::new());
    let task = {
        let (state, gate) = (state.clone(), gate.clone());
        tokio::task::spawn_blocking(move || {
            let _lock = match write {
                true => Some(state.writes.lock().unwrap_or_else(|p| p.into_inner())),
                false => None,
            };
            let mem = state.memory.at(state.now()).with_gate(gate);
            let (mem, dir) = match place {
                Place::User if write => {
                    let dir = mem.ensure_scope(Scope::User)?;
                    (mem, dir)
                }
                Place::User => {
                    let dir = mem.home.user();
                    (mem, dir)
                }
                Place::Project(p) => {
                    let project = mem.existing_project(&p)?;
                    (mem.with_project(&project.info.id), project.dir)
                }
            };
            f(&mem, &dir)
        })
    };
    let mut task = task;
    let joined = match write {
        false => task.await,
        true => match tokio::time::timeout(state.timeout, &mut task).await {
            Ok(joined) => joined,
            Err(_) if gate.cancel() => {
                return Err(Fail(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "the write waited more than {} s for the index (another write or `recall index` holds it) and was cancelled; nothing was written, so try again",
                        state.timeout.as_secs()
                    ),
                ))
            }
            // Past the point of no return: it finishes in moments.
            Err(_) => task.await,
        },
    };
    joined
        .map_err(|e| {
            Fail(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the request failed: {e}"),
            )
        })?
        .map_err(Fail::from)
}

/// The answer to a body over [`BODY_LIMIT`].
pub(super) fn too_large() -> Fail {
    Fail(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the body is larger than {} KiB; a memory's value holds at most 2,000 characters",
            BODY_LIMIT / 1024
        ),
    )
}

/// Read a JSON body of at most [`BODY_LIMIT`] bytes.
async fn json_body<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: Body,
) -> std::result::Result<T, Fail> {
    let ctype = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !ctype
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("application/json")
    {
        return Err(Fail(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "the body must be JSON, sent with `Content-Type: application/json` (got '{ctype}')"
            ),
        ));
    }

    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > BODY_LIMIT) {
        return Err(too_large());
    }
    let bytes = axum::body::to_bytes(body, BODY_LIMIT)
        .await
        .map_err(|_| too_large())?;
    // Every body this API takes is one JSON object: an array or a string
    // would reach serde as "a sequence" of the handler's struct, whose
    // message names the struct (`expected struct Create with 7 elements`).
    // A lone UTF-16 surrogate (a string cut inside an emoji) is valid
    // JSON that serde refuses: it is read as U+FFFD, as the hook and MCP
    // read it.
    let bytes = crate::ingest::surrogate::mend(&bytes);
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| Fail::bad(format!("invalid JSON body: {e}")))?;
    if !value.is_object() {
        return Err(Fail::bad(
            "invalid JSON body: it must be a JSON object of fields, such as {\"key\": \"db\", \"value\": \"We use SQLite.\"}",
        ));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let what = in_words(&e.inner().to_string());
        match field.as_str() {
            "." | "" => Fail::bad(format!("invalid JSON body: {what}")),
            _ => Fail::bad(format!("invalid JSON body: field `{field}`: {what}")),
        }
    })
}

/// serde's words for the types a body's fields take, as a person writes
/// them in JSON.
fn in_words(message: &str) -> String {
    message
        .replace("expected i64", "expected a whole number")
        .replace("expected u64", "expected a whole number")
        .replace("expected u8", "expected a whole number")
        .replace("expected f64", "expected a number")
        .replace("expected a sequence", "expected a list")
        .replace("expected a boolean", "expected true or false")
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Create {
    key: String,
    value: String,
    category: Option<String>,
    pinned: Option<bool>,
    importance: Option<i64>,
    source: Option<String>,
    keywords: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Update {
    value: Option<String>,
    category: Option<String>,
    pinned: Option<bool>,
    importance: Option<i64>,
    status: Option<String>,
    keywords: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pin {
    pinned: bool,
}

/// Where a memory moves: `{"to": "user"}` from a project, `{"to":
/// "project", "project": ID}` from the user's memory.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Move {
    to: String,
    project: Option<String>,
}

fn importance(i: Option<i64>) -> Result<Option<u8>> {
    match i {
        None => Ok(None),
        Some(i) if (0..=100).contains(&i) => Ok(Some(i as u8)),
        Some(i) => Err(Error::invalid(format!(
            "importance {i} is out of range 0-100"
        ))),
    }
}

fn category(c: Option<&str>) -> Result<Option<Category>> {
    c.map(str::parse).transpose()
}

/// A memory as the API shows it.
fn view(l: &Located) -> Value {
    let m = &l.record.meta;
    json!({
        "id": m.id, "key": m.key, "value": l.record.body, "category": m.category.as_str(),
        "scope": m.scope.as_str(), "source": m.source.as_str(), "pinned": m.pinned,
        "importance": m.importance, "status": m.status.as_str(),
        "created": m.created.to_string(), "updated": m.updated.to_string(),
        "path": l.path.to_string_lossy(), "host": l.record.origin_host(),
    })
}

fn view_listed(l: &Listed) -> Value {
    json!({
        "id": l.id, "key": l.key, "value": l.text, "category": l.category,
        "scope": l.scope.as_str(), "source": l.source, "pinned": l.pinned,
        "importance": l.importance, "status": l.status, "updated": l.updated,
        "path": l.path, "host": l.host,
    })
}

/// Open to anyone who can reach the server (no token), so it says nothing
/// about the home.
async fn health() -> Reply {
    Ok(Data::new(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
    })))
}

async fn projects(State(state): State<Shared>) -> Reply {
    let rows = blocking(&state, Place::User, false, |mem, _| {
        // The project of the folder `recall serve` runs in, which the panel
        // opens when the URL names none.
        let here = mem.project().ok().map(|p| p.info.id);
        let mut out = Vec::new();
        for p in mem.projects()? {
            let dir = mem.home.project(&p.id);
            let current = here.as_deref() == Some(p.id.as_str());
            // One project's damaged index does not hide the others: it is
            // listed with what is wrong, and no count.
            let mut row = json!({"id": p.id, "name": p.name, "root": p.root, "current": current});
            match mem.count_records(&dir) {
                Ok(n) => row["records"] = json!(n),
                Err(e) => {
                    row["records"] = Value::Null;
                    row["error"] = json!(e.chain());
                }
            }
            out.push(row);
        }
        Ok(out)
    })
    .await?;
    Ok(Data::new(rows))
}

async fn list(state: Shared, place: Place, q: HashMap<String, String>) -> Reply {
    let order = match place {
        Place::User => ListOrder::Key,
        Place::Project(_) => ListOrder::Recent,
    };
    let rows = blocking(&state, place, false, move |mem, dir| {
        let filter = ListFilter {
            category: category(q.get("category").map(String::as_str))?,
            status: q.get("status").map(|s| s.parse()).transpose()?,
            source: q.get("source").map(|s| s.parse()).transpose()?,
        };
        mem.list(std::slice::from_ref(dir), &filter, order)
    })
    .await?;
    Ok(Data::new(rows.iter().map(view_listed).collect::<Vec<_>>()))
}

async fn create(state: Shared, place: Place, headers: HeaderMap, body: Body) -> Reply {
    let c: Create = json_body(&headers, body).await?;
    let (loc, created) = blocking(&state, place, true, move |mem, dir| {
        let source: Source = c.source.as_deref().unwrap_or("manual").parse()?;
        let category = category(c.category.as_deref())?;
        let new = NewRecord {
            key: c.key,
            text: c.value,
            category,
            pinned: c.pinned,
            importance: importance(c.importance)?,
            keywords: c.keywords,
            source,
            secrets: SecretPolicy::Refuse,
            keep_generated: true,
        };
        mem.upsert(dir, new)
    })
    .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(Data(status, view(&loc)))
}

async fn update(state: Shared, place: Place, id: String, u: Update) -> Reply {
    let loc = blocking(&state, place, true, move |mem, dir| {
        let patch = Patch {
            text: u.value,
            category: category(u.category.as_deref())?,
            pinned: u.pinned,
            importance: importance(u.importance)?,
            keywords: u.keywords,
            status: u.status.as_deref().map(str::parse::<Status>).transpose()?,
            secrets: SecretPolicy::Refuse,
            keep_generated: true,
        };
        mem.patch(std::slice::from_ref(dir), &id, patch)
    })
    .await?;
    Ok(Data::new(view(&loc)))
}

async fn one(state: Shared, place: Place, id: String) -> Reply {
    let loc = blocking(&state, place, false, move |mem, dir| {
        mem.get_redacted(std::slice::from_ref(dir), &id)
    })
    .await?;
    Ok(Data::new(view(&loc)))
}

async fn project_get(
    State(s): State<Shared>,
    PathParam((project, id)): PathParam<(String, String)>,
) -> Reply {
    one(s, Place::Project(project), id).await
}

async fn user_get(State(s): State<Shared>, PathParam(id): PathParam<String>) -> Reply {
    one(s, Place::User, id).await
}

async fn remove(state: Shared, place: Place, id: String) -> Reply {
    let loc = blocking(&state, place, true, move |mem, dir| {
        mem.delete(std::slice::from_ref(dir), &id)
    })
    .await?;
    Ok(Data::new(view(&loc)))
}

async fn project_list(
    State(s): State<Shared>,
    PathParam(project): PathParam<String>,
    QueryParam(q): QueryParam<HashMap<String, String>>,
) -> Reply {
    list(s, Place::Project(project), q).await
}

async fn user_list(
    State(s): State<Shared>,
    QueryParam(q): QueryParam<HashMap<String, String>>,
) -> Reply {
    list(s, Place::User, q).await
}

async fn project_create(
    State(s): State<Shared>,
    PathParam(project): PathParam<String>,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    create(s, Place::Project(project), headers, body).await
}

async fn user_create(State(s): State<Shared>, headers: HeaderMap, body: Body) -> Reply {
    create(s, Place::User, headers, body).await
}

async fn project_patch(
    State(s): State<Shared>,
    PathParam((project, id)): PathParam<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    let u = json_body(&headers, body).await?;
    update(s, Place::Project(project), id, u).await
}

async fn user_patch(
    State(s): State<Shared>,
    PathParam(id): PathParam<String>,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    let u = json_body(&headers, body).await?;
    update(s, Place::User, id, u).await
}

/// A pin body as the update it stands for.
async fn pin_body(headers: &HeaderMap, body: Body) -> std::result::Result<Update, Fail> {
    let p: Pin = json_body(headers, body).await?;
    Ok(Update {
        pinned: Some(p.pinned),
        ..Update::default()
    })
}

async fn project_pin(
    State(s): State<Shared>,
    PathParam((project, id)): PathParam<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    let u = pin_body(&headers, body).await?;
    update(s, Place::Project(project), id, u).await
}

async fn user_pin(
    State(s): State<Shared>,
    PathParam(id): PathParam<String>,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    let u = pin_body(&headers, body).await?;
    update(s, Place::User, id, u).await
}

async fn project_delete(
    State(s): State<Shared>,
    PathParam((project, id)): PathParam<(String, String)>,
) -> Reply {
    remove(s, Place::Project(project), id).await
}

async fn user_delete(State(s): State<Shared>, PathParam(id): PathParam<String>) -> Reply {
    remove(s, Place::User, id).await
}

/// `GET /api/projects/{project}/recall?q=…&format=json|prompt|snippets&limit=N`:
/// the CLI's recall over the project's and the user's scopes.
async fn project_recall(
    State(s): State<Shared>,
    PathParam(project): PathParam<String>,
    QueryParam(q): QueryParam<HashMap<String, String>>,
) -> Reply {
    recall_in(s, Place::Project(project), q).await
}

/// `GET /api/user/recall?q=…`: the same over the user scope alone.
async fn user_recall(
    State(s): State<Shared>,
    QueryParam(q): QueryParam<HashMap<String, String>>,
) -> Reply {
    recall_in(s, Place::User, q).await
}

async fn recall_in(s: Shared, place: Place, q: HashMap<String, String>) -> Reply {
    let scope = match place {
        Place::User => Some(Scope::User),
        Place::Project(_) => None,
    };
    let text = q.get("q").map(|t| t.trim().to_string()).unwrap_or_default();
    if text.is_empty() {
        return Err(Fail::bad("missing query: pass ?q=<what to look for>"));
    }
    let format = q
        .get("format")
        .map(String::as_str)
        .unwrap_or("json")
        .to_string();
    if !matches!(format.as_str(), "json" | "prompt" | "snippets") {
        return Err(Fail::bad(format!(
            "unknown format '{format}': use json, prompt or snippets"
        )));
    }
    let limit = match q.get("limit") {
        None => None,
        Some(l) => match l.parse::<usize>() {
            Ok(n) if (1..=200).contains(&n) => Some(n),
            _ => {
                return Err(Fail::bad(format!(
                    "limit '{l}' is not a number from 1 to 200"
                )))
            }
        },
    };
    let data = blocking(&s, place, false, move |mem, _| {
        let opts = RecallOptions {
            limit,
            prompt: format == "prompt",
            ..RecallOptions::default()
        };
        let req = mem.request(text, opts)?;
        // A GET has no side effects: no salience note (any web page can
        // make a browser send this request, so it must not move ranking).
        let found = mem.recall(&req, scope)?;
        let project = scope.is_none().then_some(found.project.as_str());
        let data = match format.as_str() {
            "json" => serde_json::from_str(&render_json(&found.response, project))?,
            "prompt" => Value::String(render_prompt(
                &found.response,
                PromptOptions {
                    max_tokens: crate::render::PROMPT_TOKENS,
                },
            )),
            _ => Value::String(render_snippets(&found.response, Style::Plain)),
        };
        Ok(data)
    })
    .await?;
    Ok(Data::new(data))
}

/// Move a misfiled memory to the other scope (as `recall record move`):
/// a project's to the user's memory, or the user's to a project. It
/// keeps its id, key, text and times; the answer is the memory where it
/// now is.
async fn project_move(
    State(s): State<Shared>,
    PathParam((project, id)): PathParam<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    let m: Move = json_body(&headers, body).await?;
    match (m.to.as_str(), m.project) {
        ("user", None) => {}
        ("user", Some(_)) => {
            return Err(Fail::bad(
                "\"project\" names the project a user memory moves to; to move this one to your memory send {\"to\": \"user\"} alone",
            ))
        }
        ("project", _) => {
            return Err(Fail::bad(
                "this memory is a project's already; to move it to your own memory send {\"to\": \"user\"}",
            ))
        }
        (other, _) => return Err(Fail::bad(bad_target(other))),
    }
    moved(s, Place::Project(project), Scope::Project, id, Scope::User).await
}

async fn user_move(
    State(s): State<Shared>,
    PathParam(id): PathParam<String>,
    headers: HeaderMap,
    body: Body,
) -> Reply {
    let m: Move = json_body(&headers, body).await?;
    let project = match (m.to.as_str(), m.project) {
        ("project", Some(p)) => p,
        ("project", None) => {
            return Err(Fail::bad(
                "say which project: {\"to\": \"project\", \"project\": ID} (GET /api/projects lists their ids)",
            ))
        }
        ("user", _) => {
            return Err(Fail::bad(
                "this memory is in your own memory already; to move it to a project send {\"to\": \"project\", \"project\": ID}",
            ))
        }
        (other, _) => return Err(Fail::bad(bad_target(other))),
    };
    moved(s, Place::Project(project), Scope::User, id, Scope::Project).await
}

fn bad_target(to: &str) -> String {
    format!(
        "\"to\" is '{to}'; it must be \"user\" (from a project) or \"project\" (from your memory)"
    )
}

/// The move itself, with the memory of `place` (the project involved),
/// the record looked for in scope `from` only.
async fn moved(s: Shared, place: Place, from: Scope, id: String, to: Scope) -> Reply {
    let loc = blocking(&s, place, true, move |mem, _| {
        mem.move_record(Some(from), &id, to)
    })
    .await?;
    Ok(Data::new(view(&loc)))
}

/// Any path no route takes.
pub async fn not_found() -> Fail {
    Fail(
        StatusCode::NOT_FOUND,
        "no such endpoint: see docs/rest-api.md for the API".into(),
    )
}

/// A path some route takes, with a method it does not.
pub async fn not_allowed() -> Fail {
    Fail(
        StatusCode::METHOD_NOT_ALLOWED,
        "this endpoint does not take that method: see docs/rest-api.md for the API".into(),
    )
}
