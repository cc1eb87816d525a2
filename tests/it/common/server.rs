//! A `recall serve` child process on a free loopback port, stopped with
//! SIGTERM when dropped, and a small HTTP client for it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use serde_json::Value;

use super::Env;

/// A running server.
pub struct Server {
    pub child: Child,
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub url: String,
    pub token: Option<String>,
    agent: ureq::Agent,
}

impl Server {
    /// Start `recall serve --addr 127.0.0.1:0 EXTRA...` for `env`.
    pub fn start(env: &Env, extra: &[&str]) -> Server {
        let mut child = env
            .std_cmd()
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .trim_end_matches('/')
            .to_string();
        let token = extra
            .iter()
            .position(|a| *a == "--token")
            .map(|i| extra[i + 1].to_string());
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        Server {
            child,
            url,
            token,
            agent,
        }
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.url.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Send a request; returns the status and the parsed envelope.
    pub fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let (status, text) = self.raw(
            method,
            path,
            body.map(|b| b.to_string()),
            "application/json",
        );
        let v = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {text}"));
        (status, v)
    }

    /// Send a request with any body and content type; status and text.
    pub fn raw(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
        ctype: &str,
    ) -> (u16, String) {
        let url = format!("{}{path}", self.url);
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut resp = match body {
            None => {
                let mut r = match method {
                    "GET" => self.agent.get(&url),
                    "DELETE" => self.agent.delete(&url),
                    m => panic!("{m} needs a body"),
                };
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                r.call().unwrap()
            }
            Some(b) => {
                let mut r = match method {
                    "POST" => self.agent.post(&url),
                    "PATCH" => self.agent.patch(&url),
                    "PUT" => self.agent.put(&url),
                    m => panic!("{m} takes no body here"),
                };
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                r.header("Content-Type", ctype).send(b).unwrap()
            }
        };
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap();
        (status, text)
    }

    /// A hand-written GET with the given headers, for what an HTTP client
    /// library will not send (a foreign Host); returns the status line.
    pub fn get_with_headers(&self, path: &str, headers: &[(&str, &str)]) -> String {
        self.send_raw("GET", path, headers, b"")
    }

    /// A hand-written request whose body may be cut short by the server's
    /// answer (a 413 before the body is read): write errors are ignored and
    /// the response read all the same.
    pub fn send_raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port())).unwrap();
        let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port()));
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        if !body.is_empty() {
            req.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).unwrap();
        let _ = s.write_all(body);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// SIGTERM and wait; returns the exit code and stderr.
    pub fn stop(mut self) -> (Option<i32>, String) {
        let (code, err) = self.terminate();
        std::mem::forget(self);
        (code, err)
    }

    fn terminate(&mut self) -> (Option<i32>, String) {
        if let Ok(Some(st)) = self.child.try_wait() {
            return (st.code(), String::new());
        }
        // SAFETY: kill(2) on our own child's pid has no memory effects.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        (status.code(), err)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.terminate();
    }
}
