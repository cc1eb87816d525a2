//! The response envelope: `{"success": true, "data": …}` or
//! `{"success": false, "error": "…"}`, and the mapping from library errors
//! to HTTP statuses.

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::error::Error;

/// A successful answer with its status.
pub struct Data(pub StatusCode, pub Value);

impl Data {
    pub fn new(data: impl serde::Serialize) -> Data {
        Data(
            StatusCode::OK,
            serde_json::to_value(data).unwrap_or(Value::Null),
        )
    }
}

impl IntoResponse for Data {
    fn into_response(self) -> Response {
        (self.0, axum::Json(json!({"success": true, "data": self.1}))).into_response()
    }
}

/// A failed request: the status and a message that says what was wrong,
/// where, and how to fix it.
#[derive(Debug)]
pub struct Fail(pub StatusCode, pub String);

impl Fail {
    pub fn bad(msg: impl Into<String>) -> Fail {
        Fail(StatusCode::BAD_REQUEST, msg.into())
    }
}

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        if self.0.is_server_error() {
            tracing::error!("{} {}", self.0.as_u16(), self.1);
        }
        (
            self.0,
            axum::Json(json!({"success": false, "error": self.1})),
        )
            .into_response()
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        let status = match &e {
            Error::Invalid(_) | Error::Secret { .. } => StatusCode::BAD_REQUEST,
            Error::NotFound(_) | Error::NoRecord { .. } => StatusCode::NOT_FOUND,
            Error::Conflict(_) => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let msg = match &e {
            Error::Secret { kind, location } => format!(
                "refusing to store a secret: {kind} at {location}; remove it (describe where the secret lives instead) and send the request again"
            ),
            // The CLI's `recall record list` is no help to an HTTP client.
            Error::NoRecord { id_or_key, .. } => format!(
                "no record with id or key '{id_or_key}' here; GET /api/projects/{{project}}/memories or /api/user/memories lists them"
            ),
            _ => e.chain(),
        };
        Fail(status, msg)
    }
}

/// What a handler returns.
pub type Reply = std::result::Result<Data, Fail>;

/// axum's `Path`, rejecting a bad path (say, `%FF` that is not UTF-8) with
/// the JSON envelope instead of a plain-text body.
pub struct PathParam<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathParam<T> {
    type Rejection = Fail;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Fail> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(t)) => Ok(PathParam(t)),
            Err(e) => Err(Fail(
                e.status(),
                format!("bad URL path {}: {}", parts.uri.path(), e.body_text()),
            )),
        }
    }
}

/// axum's `Query`, rejecting a bad query string with the JSON envelope.
pub struct QueryParam<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for QueryParam<T> {
    type Rejection = Fail;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Fail> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(t)) => Ok(QueryParam(t)),
            Err(e) => Err(Fail(
                e.status(),
                format!("bad query string: {}", e.body_text()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_errors_map_to_statuses() {
        let cases = [
            (Error::invalid("bad"), 400),
            (Error::NotFound("gone".into()), 404),
            (
                Error::NoRecord {
                    id_or_key: "k".into(),
                    scope: None,
                },
                404,
            ),
            (Error::Conflict("auto".into()), 409),
            (
                Error::Secret {
                    kind: "github-token".into(),
                    location: "text, line 1".into(),
                },
                400,
            ),
            (
                Error::io("cannot read", "/x", std::io::Error::other("disk on fire")),
                500,
            ),
        ];
        for (e, want) in cases {
            assert_eq!(Fail::from(e).0.as_u16(), want);
        }
    }

    #[test]
    fn a_secret_refusal_does_not_suggest_a_cli_flag() {
        let f = Fail::from(Error::Secret {
            kind: "aws-key".into(),
            location: "text, line 2".into(),
        });
        assert!(!f.1.contains("--redact"), "{}", f.1);
        assert!(f.1.contains("aws-key"), "{}", f.1);
    }

    #[test]
    fn io_errors_keep_their_cause() {
        let f = Fail::from(Error::io(
            "cannot read",
            "/x/y.md",
            std::io::Error::other("permission denied"),
        ));
        assert_eq!(f.1, "cannot read /x/y.md: permission denied");
    }
}
