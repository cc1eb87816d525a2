//! The PostgreSQL remote: its URL, where its credentials come from, TLS,
//! and turning the server's failures into messages a person can act on.
//!
//! Credentials come from the URL, then `PGPASSWORD`, then the password file
//! (`PGPASSFILE` or `~/.pgpass`), the places libpq reads. They are never
//! printed or logged: every message shows [`RemoteUrl::masked`].
//!
//! TLS follows libpq's `sslmode`: `disable`, `prefer` (the default: TLS
//! when the server offers it), `require` (encrypted, certificate not
//! checked), `verify-ca` and `verify-full` (certificate checked against
//! `sslrootcert` or the web PKI roots, and the host name). rustls with the
//! ring provider does the TLS.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use postgres::config::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{pem::PemObject, CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::{Error, Result};

/// How TLS is used, as libpq names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tls {
    Disable,
    Prefer,
    Require,
    /// `verify-ca` and `verify-full`: both check the host name too.
    Verify,
}

/// A parsed `postgres://` URL with the parts recall handles itself.
#[derive(Clone)]
pub struct RemoteUrl {
    /// The URL as given, without `sslmode`/`sslrootcert`.
    config: postgres::Config,
    masked: String,
    tls: Tls,
    root_cert: Option<PathBuf>,
}

impl std::fmt::Debug for RemoteUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.masked)
    }
}

impl RemoteUrl {
    /// Parse `text`; `env` reads `PGPASSWORD`, `PGUSER`, `PGSSLMODE`,
    /// `PGSSLROOTCERT`, `PGPASSFILE` and `HOME`.
    pub fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<RemoteUrl> {
        let bad = |why: &str| {
            Error::invalid(format!(
                "the sync url is not a PostgreSQL URL ({why}); write it as postgres://USER@HOST:PORT/DATABASE?sslmode=require"
            ))
        };
        let mut url = url::Url::parse(text.trim()).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "postgres" | "postgresql") {
            return Err(bad(&format!("scheme '{}'", url.scheme())));
        }
        if url.host_str().is_none_or(|h| h.is_empty()) {
            return Err(bad("no host"));
        }
        let mut sslmode = env("PGSSLMODE");
        let mut root_cert = env("PGSSLROOTCERT").map(PathBuf::from);
        let mut kept = Vec::new();
        for (k, v) in url.query_pairs() {
            match &*k {
                "sslmode" => sslmode = Some(v.into_owned()),
                "sslrootcert" => root_cert = Some(PathBuf::from(&*v)),
                _ => kept.push((k.into_owned(), v.into_owned())),
            }
        }
        let tls = match sslmode.as_deref().unwrap_or("prefer") {
            "disable" => Tls::Disable,
            "allow" | "prefer" => Tls::Prefer,
            "require" => Tls::Require,
            "verify-ca" | "verify-full" => Tls::Verify,
            other => {
                return Err(Error::invalid(format!(
                    "sslmode '{other}' in the sync url is not one of disable, prefer, require, verify-ca, verify-full"
                )))
            }
        };
        url.set_query(None);
        if !kept.is_empty() {
            url.query_pairs_mut().extend_pairs(kept);
        }
        let mut masked_url = url.clone();
        if masked_url.password().is_some() {
            // Only fails for URLs that cannot have a password; this one has one.
            let _ = masked_url.set_password(Some("***"));
        }
        // libpq also reads the password from the query (`?password=…`).
        if masked_url.query_pairs().any(|(k, _)| k == "password") {
            let pairs: Vec<(String, String)> = masked_url
                .query_pairs()
                .map(|(k, v)| match &*k {
                    "password" => (k.into_owned(), "***".to_string()),
                    _ => (k.into_owned(), v.into_owned()),
                })
                .collect();
            masked_url.set_query(None);
            masked_url.query_pairs_mut().extend_pairs(pairs);
        }
        let masked = masked_url.to_string();
        let mut config: postgres::Config = url.as_str().parse().map_err(|e| {
            Error::invalid(format!(
                "cannot read the sync url {masked}: {e}; write it as postgres://USER@HOST:PORT/DATABASE"
            ))
        })?;
        if config.get_user().is_none() {
            if let Some(user) = env("PGUSER").or_else(|| env("USER")) {
                config.user(&user);
            }
        }
        if config.get_password().is_none() {
            if let Some(pw) = env("PGPASSWORD").or_else(|| password_file(&config, env)) {
                config.password(pw);
            }
        }
        config.application_name("recall");
        Ok(RemoteUrl {
            config,
            masked,
            tls,
            root_cert,
        })
    }

    /// The URL with any password replaced by `***`: safe to print.
    pub fn masked(&self) -> &str {
        &self.masked
    }

    /// Connect, waiting at most `timeout` for the server to answer: for the
    /// socket, and for the whole handshake (TLS, authentication) after it.
    /// A server that takes the connection and never answers (stopped, or a
    /// proxy holding it) would otherwise hold the sync, and the home's sync
    /// lock, for as long as the process lives; the handshake runs on a
    /// thread of its own, left to end with the process when it times out.
    pub fn connect(&self, timeout: Duration) -> Result<postgres::Client> {
        let this = self.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("recall-sync-connect".into())
            .spawn(move || {
                let _ = tx.send(this.connect_now(timeout));
            })
            .map_err(|e| Error::Sync(format!("cannot start the connection: {e}")))?;
        // The socket has `timeout`; the handshake after it as long again.
        match rx.recv_timeout(timeout * 2) {
            Ok(result) => result,
            Err(_) => Err(Error::Sync(format!(
                "{}: the server took the connection but did not answer within {} s (a stopped server, or a proxy that holds connections); nothing was synced. Raise [sync] connect_timeout_secs if it is only slow",
                self.masked,
                (timeout * 2).as_secs()
            ))),
        }
    }

    fn connect_now(&self, timeout: Duration) -> Result<postgres::Client> {
        let mut config = self.config.clone();
        config.connect_timeout(timeout);
        config.tcp_user_timeout(timeout.max(Duration::from_secs(10)));
        config.keepalives(true);
        config.ssl_mode(match self.tls {
            Tls::Disable => SslMode::Disable,
            Tls::Prefer => SslMode::Prefer,
            Tls::Require | Tls::Verify => SslMode::Require,
        });
        let client = if self.tls == Tls::Disable {
            config.connect(postgres::NoTls)
        } else {
            let tls = tokio_postgres_rustls::MakeRustlsConnect::new(self.tls_config()?);
            config.connect(tls)
        };
        client.map_err(|e| describe(&e, self))
    }

    fn tls_config(&self) -> Result<ClientConfig> {
        let provider = Arc::new(ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Sync(format!("cannot set up TLS: {e}")))?;
        let config = match self.tls {
            Tls::Verify => builder
                .with_root_certificates(self.roots()?)
                .with_no_client_auth(),
            _ => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(EncryptOnly(provider)))
                .with_no_client_auth(),
        };
        Ok(config)
    }

    fn roots(&self) -> Result<RootCertStore> {
        let mut roots = RootCertStore::empty();
        let Some(path) = &self.root_cert else {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            return Ok(roots);
        };
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(|e| {
                Error::Sync(format!(
                    "cannot read the sslrootcert {}: {e}; point sslrootcert at the PEM file of the CA that signed the server's certificate",
                    path.display()
                ))
            })?;
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(Error::Sync(format!(
                "the sslrootcert {} holds no usable certificate; point it at the PEM file of the server's CA",
                path.display()
            )));
        }
        Ok(roots)
    }
}

/// `sslmode=require`: the connection is encrypted and the handshake's
/// signatures are checked, but the certificate's issuer and name are not
/// (libpq's meaning; use `verify-full` to check them).
#[derive(Debug)]
struct EncryptOnly(Arc<CryptoProvider>);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The password for this connection from the password file, as libpq
/// looks it up: the first `host:port:database:user:password` line whose
/// fields match (`*` matches anything; `\:` and `\\` are escapes).
fn password_file(
    config: &postgres::Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let path = env("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
    let text = std::fs::read_to_string(path).ok()?;
    let host = match config.get_hosts().first()? {
        postgres::config::Host::Tcp(h) => h.clone(),
        #[cfg(unix)]
        postgres::config::Host::Unix(_) => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    let wanted = [host.as_str(), &port, &db, &user];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(split_pgpass)
        .find(|f| f.len() == 5 && wanted.iter().zip(f).all(|(w, f)| f == "*" || f == w))
        .map(|mut f| f.remove(4))
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("never empty").extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("never empty").push(c),
        }
    }
    fields
}

/// One message for a failed connection or statement: what, where, the fix.
pub fn describe(e: &postgres::Error, url: &RemoteUrl) -> Error {
    let at = url.masked();
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        let fix = match code {
            "28P01" | "28000" => "the server refused the credentials; put the password in ~/.pgpass (host:port:database:user:password, mode 0600) or PGPASSWORD, or fix the user in the url",
            "3D000" => "the database does not exist; create it (createdb) or fix the url",
            "42501" => "this role may not do that: a read-only role can pull but not push, and a member writes only shared projects and its own person's scope (see docs/team-memory.md for the grants)",
            "42P01" => "the recall tables are missing; run `recall sync --init URL` once",
            "53100" => "the server's disk is full; free space on the PostgreSQL host, then run `recall sync` again (nothing was lost)",
            "57P01" | "57P02" | "57P03" => "the server is shutting down or starting; run `recall sync` again when it is up (nothing was lost)",
            _ => "run `recall sync` again; nothing is lost, a sync resumes where it stopped",
        };
        return Error::Sync(format!(
            "sync server {at} said: {} (SQLSTATE {code}); {fix}",
            db.message()
        ));
    }
    let mut cause = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        cause = format!("{cause}: {s}");
        src = s.source();
    }
    let fix = if e.is_closed() {
        "the connection dropped; run `recall sync` again (nothing was lost)"
    } else if cause.contains("certificate") || cause.contains("tls") || cause.contains("TLS") {
        "check sslmode and sslrootcert in the url (verify-full needs the server's CA in sslrootcert)"
    } else if cause.contains("password missing") {
        "no password was found; put it in ~/.pgpass (host:port:database:user:password, mode 0600) or PGPASSWORD"
    } else {
        "check that PostgreSQL runs there and the url is right (the URL given to `recall sync --init`, else `[sync] url` in config.toml or RECALL_SYNC_URL); reads keep working from the local index meanwhile"
    };
    Error::Sync(format!("cannot sync with {at}: {cause}; {fix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// Regression: a password given as `?password=` was printed by `sync
    /// --status` and in errors, which end up in the hook and sync logs.
    #[test]
    fn r_a_password_in_the_query_never_shows() -> Result<()> {
        let u = RemoteUrl::parse(
            "postgres://bob@db:5432/recall?password=change-me-bob&sslmode=disable&application_name=x",
            &|_| None,
        )?;
        assert!(!u.masked().contains("change-me-bob"), "{}", u.masked());
        assert!(u.masked().contains("password=***"), "{}", u.masked());
        assert!(u.masked().contains("application_name=x"), "{}", u.masked());
        assert_eq!(u.config.get_password(), Some(&b"change-me-bob"[..]));
        Ok(())
    }

    #[test]
    fn the_password_never_shows() -> Result<()> {
        let u = RemoteUrl::parse(
            "postgres://alice:s3cret@db.example:5433/team?sslmode=require",
            &no_env,
        )?;
        assert!(!u.masked().contains("s3cret"), "{}", u.masked());
        assert!(!format!("{u:?}").contains("s3cret"));
        assert_eq!(u.tls, Tls::Require);
        assert!(
            u.masked().contains("alice:***@db.example:5433/team"),
            "{}",
            u.masked()
        );
        Ok(())
    }

    #[test]
    fn bad_urls_say_how_to_write_one() {
        for bad in [
            "mysql://x/y",
            "not a url",
            "postgres:///db",
            "postgres://h/db?sslmode=maybe",
        ] {
            let e = RemoteUrl::parse(bad, &no_env).unwrap_err().to_string();
            assert!(
                e.contains("postgres://") || e.contains("sslmode"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn the_password_file_is_read_like_libpq() -> Result<()> {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("pgpass");
        std::fs::write(
            &f,
            "# comment\nother:5432:*:bob:nope\ndb.example:5433:team:alice:pa\\:ss\n*:*:*:*:fallback\n",
        )
        .unwrap();
        let path = f.to_string_lossy().into_owned();
        let env = move |k: &str| (k == "PGPASSFILE").then(|| path.clone());
        let u = RemoteUrl::parse("postgres://alice@db.example:5433/team", &env)?;
        assert_eq!(u.config.get_password(), Some(&b"pa:ss"[..]));
        let u = RemoteUrl::parse("postgres://carol@elsewhere/x", &env)?;
        assert_eq!(u.config.get_password(), Some(&b"fallback"[..]));
        Ok(())
    }
}
