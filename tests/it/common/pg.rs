//! A real PostgreSQL server for sync tests, started by the test itself:
//! `initdb` and `pg_ctl` in a temporary folder, on a free loopback port,
//! as the `postgres` user when the tests run as root (initdb refuses root).
//!
//! Without PostgreSQL the server is `None` and the test says it skipped,
//! unless it runs in CI (`CI` or `RECALL_REQUIRE_SHARED` set), where a
//! missing server is a failure that names the install command.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// The superuser tests connect as, and its password.
pub const USER: &str = "recall";
pub const PASSWORD: &str = "pg-test-Secret-9";

/// A running PostgreSQL cluster, stopped when dropped.
pub struct Pg {
    dir: TempDir,
    bin: PathBuf,
    pub port: u16,
    run_as: Option<&'static str>,
    tls: bool,
}

fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.join("initdb").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Pg {
    /// Start a cluster, or `None` (after saying so) where PostgreSQL is
    /// not installed outside CI.
    pub fn start() -> Option<Pg> {
        Self::start_with(false)
    }

    /// The same, with TLS on and plain connections refused.
    pub fn start_tls() -> Option<Pg> {
        Self::start_with(true)
    }

    fn start_with(tls: bool) -> Option<Pg> {
        let Some(bin) = bin_dir() else {
            let ci = std::env::var_os("CI").is_some()
                || std::env::var_os("RECALL_REQUIRE_SHARED").is_some();
            assert!(
                !ci,
                "PostgreSQL is not installed; install it with `apt-get install -y postgresql` (.ci/run does)"
            );
            eprintln!("skipped: PostgreSQL is not installed (apt-get install -y postgresql)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let run_as = is_root().then_some("postgres");
        let mut pg = Pg {
            dir,
            bin,
            port: free_port(),
            run_as,
            tls,
        };
        pg.init();
        // The free port is free when asked, not when the server binds it:
        // another test's server or a connection may take it in between.
        let mut tries = 0;
        while let Err(why) = pg.start_server() {
            tries += 1;
            assert!(
                tries < 5 && why.contains("Address already in use"),
                "pg_ctl start: {why}"
            );
            pg.port = free_port();
        }
        pg.sql("postgres", "CREATE DATABASE team");
        Some(pg)
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn data(&self) -> PathBuf {
        self.root().join("data")
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        let exe = self.bin.join(program);
        let mut c = match self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        c.args(args).env_remove("PGPASSWORD");
        c.output().unwrap()
    }

    fn init(&mut self) {
        let root = self.root().to_path_buf();
        std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let pwfile = root.join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        if let Some(user) = self.run_as {
            let status = Command::new("chown")
                .args(["-R", user])
                .arg(&root)
                .status()
                .unwrap();
            assert!(status.success());
        }
        let data = self.data();
        let out = self.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                USER,
                "--pwfile",
                pwfile.to_str().unwrap(),
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if self.tls {
            self.make_certs();
            std::fs::write(
                data.join("pg_hba.conf"),
                "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\nhostnossl all all 127.0.0.1/32 reject\n",
            )
            .unwrap();
        }
    }

    /// A CA and a server certificate for `localhost` and 127.0.0.1.
    fn make_certs(&self) {
        let d = self.root();
        let sh = format!(
            r#"set -e; cd {d}
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=recall-test-ca -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' > ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out server.crt 2>/dev/null
chmod 600 server.key"#,
            d = d.display()
        );
        let st = Command::new("sh").arg("-c").arg(sh).status().unwrap();
        assert!(st.success(), "openssl failed");
        if let Some(user) = self.run_as {
            Command::new("chown")
                .args([user])
                .arg(d.join("server.key"))
                .status()
                .unwrap();
        }
    }

    /// The CA certificate of a TLS server (for `sslrootcert`).
    pub fn ca(&self) -> PathBuf {
        self.root().join("ca.crt")
    }

    /// Start the server on its port; what went wrong (pg_ctl's stderr and
    /// the server's log) when it does not start.
    fn start_server(&self) -> Result<(), String> {
        let mut opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.root().display()
        );
        if self.tls {
            opts.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={0}/server.crt -c ssl_key_file={0}/server.key",
                self.root().display()
            ));
        }
        let log = self.root().join("log");
        let out = self.run(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-o",
                &opts,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "start",
            ],
        );
        match out.status.success() {
            true => Ok(()),
            false => Err(format!(
                "{} {}",
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(&log).unwrap_or_default()
            )),
        }
    }

    /// Stop the server at once (connections are cut).
    pub fn stop(&self) {
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
    }

    /// Start it again after [`stop`](Self::stop).
    pub fn restart(&self) {
        if let Err(why) = self.start_server() {
            panic!("pg_ctl start: {why}");
        }
    }

    /// `postgres://recall:PASSWORD@127.0.0.1:PORT/team`.
    pub fn url(&self) -> String {
        format!("postgres://{USER}:{PASSWORD}@127.0.0.1:{}/team", self.port)
    }

    /// The URL without a password (credentials from the environment).
    pub fn url_without_password(&self, user: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/team", self.port)
    }

    /// Run SQL through the Unix socket as the superuser; returns rows as
    /// `|`-separated lines.
    pub fn sql(&self, db: &str, sql: &str) -> String {
        self.sql_as(db, USER, sql)
            .unwrap_or_else(|e| panic!("psql {sql}: {e}"))
    }

    /// Run SQL (one or more statements, each in its own transaction, as
    /// psql runs a script) through the Unix socket as the login `user`;
    /// rows as `|`-separated lines, or psql's error.
    pub fn sql_as(&self, db: &str, user: &str, sql: &str) -> Result<String, String> {
        let psql = self.bin.join("psql");
        let exe = if psql.exists() {
            psql
        } else {
            PathBuf::from("psql")
        };
        let out = Command::new(exe)
            .args(["-h"])
            .arg(self.root())
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                user,
                "-d",
                db,
                "-qAtX",
                "-v",
                "ON_ERROR_STOP=1",
                "-f",
                "-",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(sql.as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        if out.status.success() {
            Ok(String::from_utf8(out.stdout).unwrap().trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// `pg_dump` of the team database.
    pub fn dump(&self) -> String {
        let exe = self.bin.join("pg_dump");
        let out = Command::new(exe)
            .args(["-h"])
            .arg(self.root())
            .args(["-p", &self.port.to_string(), "-U", USER, "team"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_dump: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        self.stop();
    }
}
