//! A resident process lends its loaded model to one-shot processes.
//!
//! The prompt hook is a fresh process per prompt: with `[semantic]
//! hook_gate` set, it pays the model's load (about 130 ms for
//! all-MiniLM-L6-v2, see docs/semantic.md) to embed one prompt. `recall
//! mcp` runs for a launcher's whole session, and `recall serve` for as
//! long as its panel is open, each with the model loaded once. Such a
//! process [`lend`]s it: it listens on a Unix socket in the home
//! (`<home>/run/embed-<pid>.sock`, in a folder only its owner can enter),
//! and a one-shot process [`borrow`]s a vector from it instead of loading
//! the model, when one is there and lends the same model.
//!
//! One request per connection, each a JSON line: the client sends
//! `{"model": PATH, "text": TEXT}`; the lender answers `{"identity": ID,
//! "bits": [u32, ...]}` (the vector's `f32`s by their bits, so nothing is
//! lost in decimal) or `{"error": TEXT}`. A borrow that fails in any way
//! (no lender, a socket left by a process that died, another model, a
//! lender slower than the wait) is `None`, and the caller loads the model
//! itself: lending only ever saves time.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The largest request read: a long ticket pasted as a prompt is far
/// below it.
const MOST_REQUEST: u64 = 4 << 20;

/// How long a lender waits for a client to send its request, so one that
/// never does cannot hold up the others.
const CLIENT_WAIT: Duration = Duration::from_secs(1);

#[derive(Serialize, Deserialize)]
struct Request {
    model: PathBuf,
    text: String,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Reply {
    Vector { identity: String, bits: Vec<u32> },
    Error { error: String },
}

/// A model lent on a socket; dropping it stops lending and removes the
/// socket.
#[derive(Debug)]
pub struct Lending {
    socket: PathBuf,
    stop: Arc<AtomicBool>,
}

impl Lending {
    /// The socket clients connect to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Lending {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accepting thread so it sees the stop.
        let _ = UnixStream::connect(&self.socket);
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// The socket of this process in `dir`.
fn socket_in(dir: &Path) -> PathBuf {
    dir.join(format!("embed-{}.sock", std::process::id()))
}

/// The same path for a model however it was written (relative parts,
/// links): both sides compare it before a vector is lent.
fn canonical(model: &Path) -> PathBuf {
    std::fs::canonicalize(model).unwrap_or_else(|_| model.to_path_buf())
}

/// Lend the model at `model` on a socket in `dir` (created private):
/// `embed` turns a text into its vector and the model's identity (see
/// [`super::identity`]). `warm` runs first on the lending thread (load
/// the model there, so the first borrower does not wait for the load and
/// the caller not at all).
pub fn lend<E, W>(dir: &Path, model: &Path, warm: W, embed: E) -> Result<Lending>
where
    E: Fn(&str) -> Result<(Vec<f32>, String)> + Send + 'static,
    W: FnOnce() + Send + 'static,
{
    crate::store::create_private_dir(dir)?;
    let socket = socket_in(dir);
    // A socket of a process that had this pid and died.
    let _ = std::fs::remove_file(&socket);
    let listener =
        UnixListener::bind(&socket).map_err(|e| Error::io("cannot listen on", &socket, e))?;
    let stop = Arc::new(AtomicBool::new(false));
    let lent = canonical(model);
    let stopped = stop.clone();
    std::thread::Builder::new()
        .name("recall-lend".into())
        .spawn(move || {
            warm();
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                match stream {
                    Ok(s) => serve_one(s, &lent, &embed),
                    Err(e) => tracing::debug!("lending the model: accept failed: {e}"),
                }
            }
        })
        .map_err(|e| Error::io("cannot start the thread that lends", model, e))?;
    Ok(Lending { socket, stop })
}

/// Answer one client; what goes wrong is only logged.
fn serve_one<E>(stream: UnixStream, lent: &Path, embed: &E)
where
    E: Fn(&str) -> Result<(Vec<f32>, String)>,
{
    let answer = || -> std::io::Result<()> {
        stream.set_read_timeout(Some(CLIENT_WAIT))?;
        stream.set_write_timeout(Some(CLIENT_WAIT))?;
        let mut line = String::new();
        BufReader::new((&stream).take(MOST_REQUEST)).read_line(&mut line)?;
        let reply = match serde_json::from_str::<Request>(&line) {
            Err(e) => Reply::Error {
                error: format!("not a request: {e}"),
            },
            Ok(req) if canonical(&req.model) != lent => Reply::Error {
                error: format!("this process lends {}", lent.display()),
            },
            Ok(req) => match embed(&req.text) {
                Ok((vector, identity)) => Reply::Vector {
                    identity,
                    bits: vector.iter().map(|x| x.to_bits()).collect(),
                },
                Err(e) => Reply::Error {
                    error: e.to_string(),
                },
            },
        };
        let mut out = serde_json::to_vec(&reply)?;
        out.push(b'\n');
        (&stream).write_all(&out)
    };
    if let Err(e) = answer() {
        tracing::debug!("lending the model: a client was not answered: {e}");
    }
}

/// `text` embedded by a process lending the model at `model` in `dir`,
/// with that model's identity; `None` when none does (sockets of
/// processes that died are removed on the way) or none answers within
/// `wait`.
pub fn borrow(dir: &Path, model: &Path, text: &str, wait: Duration) -> Option<(Vec<f32>, String)> {
    let mut sockets: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("embed-") && name.ends_with(".sock")
        })
        .map(|e| {
            let at = e
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            (at, e.path())
        })
        .collect();
    // The newest lender first: the likeliest to have the model the
    // config names now.
    sockets.sort_by_key(|s| std::cmp::Reverse(s.0));
    let request = Request {
        model: canonical(model),
        text: text.to_string(),
    };
    sockets.into_iter().find_map(|(_, socket)| {
        let asked = ask(&socket, &request, wait);
        if let Err(e) = &asked {
            tracing::debug!("no vector lent by {}: {e}", socket.display());
        }
        asked.ok()
    })
}

/// One request to the lender at `socket`.
fn ask(
    socket: &Path,
    request: &Request,
    wait: Duration,
) -> std::result::Result<(Vec<f32>, String), String> {
    let stream = match UnixStream::connect(socket) {
        Ok(s) => s,
        Err(e) => {
            if e.kind() == std::io::ErrorKind::ConnectionRefused {
                // Nobody listens: the process that bound it is gone.
                let _ = std::fs::remove_file(socket);
            }
            return Err(e.to_string());
        }
    };
    let exchange = || -> std::io::Result<String> {
        stream.set_read_timeout(Some(wait))?;
        stream.set_write_timeout(Some(wait))?;
        let mut line = serde_json::to_vec(request)?;
        line.push(b'\n');
        (&stream).write_all(&line)?;
        let mut reply = String::new();
        BufReader::new(&stream).read_line(&mut reply)?;
        Ok(reply)
    };
    let reply = exchange().map_err(|e| e.to_string())?;
    match serde_json::from_str::<Reply>(&reply).map_err(|e| format!("not a reply: {e}"))? {
        Reply::Vector { identity, bits } => {
            Ok((bits.into_iter().map(f32::from_bits).collect(), identity))
        }
        Reply::Error { error } => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(text: &str) -> Result<(Vec<f32>, String)> {
        Ok((vec![text.len() as f32, 0.1, -2.5e-7], "fake dim=3".into()))
    }

    /// A lent vector arrives bit for bit, with the lender's identity;
    /// another model, and a lender that is gone, lend nothing; a socket
    /// left by a process that died is removed by the next borrower.
    #[test]
    fn a_lent_vector_arrives_whole_and_only_for_the_model_lent() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        let model = tmp.path().join("model");
        std::fs::create_dir(&model).unwrap();
        let wait = Duration::from_secs(5);
        assert_eq!(borrow(&run, &model, "x", wait), None, "no folder yet");

        let lending = lend(&run, &model, || {}, fake).unwrap();
        let (vector, identity) = borrow(&run, &model, "deploy", wait).unwrap();
        assert_eq!(identity, "fake dim=3");
        let bits: Vec<u32> = vector.iter().map(|x| x.to_bits()).collect();
        let want: Vec<u32> = fake("deploy")
            .unwrap()
            .0
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(bits, want);
        // The same folder written another way is the same model.
        let other_way = tmp.path().join("run/../model");
        assert!(borrow(&run, &other_way, "deploy", wait).is_some());
        let elsewhere = tmp.path().join("other");
        std::fs::create_dir(&elsewhere).unwrap();
        assert_eq!(borrow(&run, &elsewhere, "deploy", wait), None);

        let socket = lending.socket().to_path_buf();
        drop(lending);
        assert!(!socket.exists(), "the socket goes with the lending");
        assert_eq!(borrow(&run, &model, "deploy", wait), None);

        // A process that died left its socket: nobody listens on it.
        let dead = run.join("embed-999999999.sock");
        drop(UnixListener::bind(&dead).unwrap());
        assert!(dead.exists());
        assert_eq!(borrow(&run, &model, "deploy", wait), None);
        assert!(!dead.exists(), "a dead lender's socket is removed");
    }

    /// A lender that cannot embed answers with why, and the borrower
    /// gets nothing (it loads the model itself).
    #[test]
    fn a_lender_that_fails_lends_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        let failing = |_: &str| -> Result<(Vec<f32>, String)> {
            Err(Error::invalid("the model does not load"))
        };
        let _lending = lend(&run, tmp.path(), || {}, failing).unwrap();
        assert_eq!(borrow(&run, tmp.path(), "x", Duration::from_secs(5)), None);
    }
}
