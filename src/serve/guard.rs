//! The checks every request passes before a handler runs: the `Host`
//! header on a loopback bind (DNS rebinding), the bearer token on `/api`,
//! a time limit, and headers that keep the panel from being framed or
//! sniffed. CORS stays off: no `Access-Control-*` header is ever sent, so
//! another site's script cannot read an answer, and writes need
//! `Content-Type: application/json`, which a cross-site form cannot send.

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::envelope::Fail;
use super::Shared;

/// The middleware.
pub async fn guard(State(state): State<Shared>, req: Request, next: Next) -> Response {
    if state.loopback {
        let host = req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok());
        if !host.is_some_and(|h| loopback_host(h, state.port)) {
            return Fail(
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                    "Host '{}' is not this server: a loopback server answers only to localhost, 127.0.0.1 or [::1] on port {} (this guards against DNS rebinding)",
                    host.unwrap_or(""),
                    state.port
                ),
            )
            .into_response();
        }
    }
    if let Some(token) = &state.token {
        if req.uri().path().starts_with("/api") && !authorized(&req, token) {
            let mut r = Fail(
                StatusCode::UNAUTHORIZED,
                "missing or wrong token: send `Authorization: Bearer <token>` with the token `recall serve` was started with".into(),
            )
            .into_response();
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return r;
        }
    }
    // A write is never dropped here: one that was abandoned mid-way could
    // still commit. It is bounded where it runs, before it changes
    // anything (see `api::blocking`).
    let timed = req.method().is_safe();
    // A write's body is read here, within the time limit: a client that
    // sends headers and then stalls holds nothing for long. The write
    // itself is bounded where it runs.
    let req = if timed {
        req
    } else {
        let (parts, body) = req.into_parts();
        let read = axum::body::to_bytes(body, super::BODY_LIMIT + 1);
        match tokio::time::timeout(state.timeout, read).await {
            Ok(Ok(bytes)) => Request::from_parts(parts, axum::body::Body::from(bytes)),
            Ok(Err(_)) => return super::api::too_large().into_response(),
            Err(_) => {
                return Fail(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request body did not arrive within {} s; send it whole and try again",
                        state.timeout.as_secs()
                    ),
                )
                .into_response()
            }
        }
    };
    let run = next.run(req);
    let outcome = match timed {
        true => tokio::time::timeout(state.timeout, run).await,
        false => Ok(run.await),
    };
    let mut resp = match outcome {
        Ok(r) => r,
        Err(_) => Fail(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the request took longer than {} s and was abandoned; try again, or narrow it (a smaller limit, a shorter query)",
                state.timeout.as_secs()
            ),
        )
        .into_response(),
    };
    let h = resp.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// Whether `host` (a `Host` header) names this loopback server.
fn loopback_host(host: &str, port: u16) -> bool {
    let (name, p) = match host.rsplit_once(':') {
        // `[::1]:7077`, `localhost:7077`; a bare `[::1]` has its colons
        // inside the brackets.
        Some((n, p)) if !p.contains(']') => (n, Some(p)),
        _ => (host, None),
    };
    let port_ok = p.is_none_or(|p| p.parse::<u16>().is_ok_and(|p| p == port));
    let name = name.to_ascii_lowercase();
    let name_ok = name == "localhost"
        || name == "[::1]"
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    port_ok && name_ok
}

/// Whether the request carries `Authorization: Bearer <token>`.
fn authorized(req: &Request, token: &str) -> bool {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(bearer)
        .unwrap_or("");
    constant_time_eq(given.as_bytes(), token.as_bytes())
}

/// The credentials of a `Bearer` authorization value. The scheme name is
/// case-insensitive and may be followed by several spaces (RFC 9110
/// section 11.1), so `bearer <token>` is the same as `Bearer <token>`.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim_start_matches(' '))
}

/// Compare without returning early on the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i % b.len().max(1)).copied().unwrap_or(0));
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        for ok in ["Bearer tok", "bearer tok", "BEARER tok", "Bearer   tok"] {
            assert_eq!(bearer(ok), Some("tok"), "{ok}");
        }
        for bad in ["Basic tok", "Bearertok", "tok", "", "Bearer"] {
            assert_eq!(bearer(bad), None, "{bad}");
        }
    }

    #[test]
    fn loopback_hosts() {
        for ok in [
            "localhost",
            "localhost:7077",
            "LOCALHOST:7077",
            "127.0.0.1:7077",
            "127.0.0.1",
            "127.1.2.3:7077",
            "[::1]:7077",
            "[::1]",
        ] {
            assert!(loopback_host(ok, 7077), "{ok}");
        }
        for bad in [
            "evil.example:7077",
            "localhost.evil.example",
            "127.0.0.1:8080",
            "10.0.0.1:7077",
            "localhost:",
            "",
            "[::2]:7077",
        ] {
            assert!(!loopback_host(bad, 7077), "{bad}");
        }
    }

    #[test]
    fn token_comparison() {
        assert!(constant_time_eq(b"abcdef", b"abcdef"));
        assert!(!constant_time_eq(b"abcdeg", b"abcdef"));
        assert!(!constant_time_eq(b"abc", b"abcdef"));
        assert!(!constant_time_eq(b"", b"abcdef"));
        assert!(!constant_time_eq(b"abcdefabcdef", b"abcdef"));
    }
}
