//! The web memory panel: static HTML, CSS and JS embedded in the binary
//! (no build step), served at `/`. The page talks only to the `/api`
//! endpoints of the same origin; a Content-Security-Policy allows nothing
//! else (no inline script, no other origin).

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("panel/index.html");
const SCRIPT: &str = include_str!("panel/panel.js");
const STYLE: &str = include_str!("panel/panel.css");
/// The panel's icon (browsers ask for `/favicon.ico` whatever the page
/// links; a 404 there is noise in every log).
const ICON: &str = include_str!("panel/favicon.svg");

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The panel's routes.
pub fn router() -> Router {
    Router::new()
        .route("/", get(|| asset("text/html; charset=utf-8", INDEX)))
        .route(
            "/panel.js",
            get(|| asset("text/javascript; charset=utf-8", SCRIPT)),
        )
        .route(
            "/panel.css",
            get(|| asset("text/css; charset=utf-8", STYLE)),
        )
        .route("/favicon.ico", get(|| asset("image/svg+xml", ICON)))
}

async fn asset(ctype: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, ctype),
            (header::CONTENT_SECURITY_POLICY, CSP),
        ],
        body,
    )
}
