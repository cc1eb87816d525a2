//! The web panel in headless Chromium, driven as a person would through
//! WebDriver (chromedriver): load it, create, pin, edit and delete a memory,
//! check the record file on disk after each step, and save a screenshot
//! (`target/screenshots/panel.png`).
//!
//! Needs Debian's `chromium` and `chromium-driver`; `.ci/run` installs
//! them. Without them this test fails and says how to install them.

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::server::Server;
use common::Env;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

const INSTALL: &str = "apt-get install -y chromium chromium-driver";

fn find(bin: &str, paths: &[&str]) -> PathBuf {
    paths
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("{bin} not found (looked in {paths:?}); install it with `{INSTALL}`")
        })
}

/// chromedriver on a free port, killed on drop.
struct Driver(Child, u16);

impl Driver {
    fn start() -> Driver {
        let bin = find(
            "chromedriver",
            &["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"],
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Driver(child, port)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn browser(driver: &Driver, profile: &Path) -> Client {
    let chromium = find(
        "chromium",
        &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
    );
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1100,900",
                format!("--user-data-dir={}", profile.display()),
            ]
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.1))
        .await
        .expect("cannot start Chromium through chromedriver")
}

/// The record file of `key` in the project, if any.
fn record_file(env: &Env, key: &str) -> Option<String> {
    common::record_files(&env.home())
        .into_iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .find(|t| t.contains(&format!("key: {key}\n")))
}

async fn wait_for(c: &Client, css: &str) -> fantoccini::elements::Element {
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css} never appeared: {e}"))
}

async fn click(c: &Client, css: &str) {
    let e = c
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    e.click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

async fn type_into(c: &Client, css: &str, text: &str) {
    let e = c
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    e.send_keys(text)
        .await
        .unwrap_or_else(|e| panic!("type into {css}: {e}"));
}

async fn wait_gone(c: &Client, css: &str) {
    let t0 = Instant::now();
    while !c.find_all(Locator::Css(css)).await.unwrap().is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{css} never went away"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn panel_creates_pins_edits_and_deletes_a_memory() {
    let env = Env::new();
    env.add("decisions", "use-pnpm", "We use pnpm, never npm.");
    let server = Server::start(&env, &[]);
    server.call(
        "POST",
        "/api/projects/alpha/memories",
        Some(&json!({"key": "ci-runner", "value": "CI runs on two cores.", "source": "auto", "importance": 60})),
    );
    let driver = Driver::start();
    let profile = env.tmp.path().join("chromium-profile");
    let url = server.url.clone();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = browser(&driver, &profile).await;
        c.goto(&format!("{url}/")).await.unwrap();
        wait_for(&c, "li[data-key='use-pnpm']").await;
        // A generated entry is read-only: no edit button, a note instead.
        let auto = wait_for(&c, "li[data-key='ci-runner']").await;
        assert!(auto
            .find_all(Locator::Css("button.edit"))
            .await
            .unwrap()
            .is_empty());
        assert!(auto
            .text()
            .await
            .unwrap()
            .contains("auto-captured · read-only"));

        // Create through the inline row.
        type_into(&c, "#new-key", "db-engine").await;
        type_into(&c, "#new-value", "The index is SQLite FTS5.").await;
        click(&c, "#create-form button[type=submit]").await;
        wait_for(&c, "li[data-key='db-engine']").await;
        let file = record_file(&env, "db-engine").expect("created file");
        assert!(file.contains("The index is SQLite FTS5."), "{file}");
        assert!(file.contains("source: manual"), "{file}");

        // Pin it: it moves to the top and the file says so.
        click(&c, "li[data-key='db-engine'] button.pin").await;
        wait_for(&c, "li.pinned[data-key='db-engine']").await;
        let first = c.find(Locator::Css("#entries li")).await.unwrap();
        assert_eq!(
            first.attr("data-key").await.unwrap().as_deref(),
            Some("db-engine")
        );
        assert!(record_file(&env, "db-engine")
            .unwrap()
            .contains("pinned: true"));

        // Edit its value.
        click(&c, "li[data-key='db-engine'] button.edit").await;
        let area = wait_for(&c, "li[data-key='db-engine'] textarea").await;
        area.clear().await.unwrap();
        area.send_keys("The index is SQLite FTS5 with bm25 ranking.")
            .await
            .unwrap();
        click(&c, "li[data-key='db-engine'] button.save").await;
        let t0 = Instant::now();
        while !record_file(&env, "db-engine")
            .unwrap()
            .contains("bm25 ranking")
        {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "the edit never reached the file"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        wait_for(&c, "li[data-key='db-engine'] button.edit").await;

        // Search shows hits with their sources.
        type_into(&c, "#q", "sqlite bm25").await;
        click(&c, "#search-form button").await;
        let hit = wait_for(&c, "#hits li").await;
        assert!(hit.text().await.unwrap().contains("db-engine"));

        // Nothing shows a missing value as text.
        let page = c
            .find(Locator::Css("main"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for word in ["null", "undefined", "NaN", "[object"] {
            assert!(!page.contains(word), "the page shows '{word}':\n{page}");
        }
        let png = c.screenshot().await.unwrap();
        std::fs::write(shots.join("panel.png"), png).unwrap();

        // Delete asks first; "Keep" cancels, "Really delete" deletes.
        click(&c, "li[data-key='db-engine'] button.delete").await;
        click(&c, "li[data-key='db-engine'] button.cancel").await;
        assert!(record_file(&env, "db-engine").is_some());
        click(&c, "li[data-key='db-engine'] button.delete").await;
        c.find(Locator::Css(
            "li[data-key='db-engine'] button.confirm-delete",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
        wait_gone(&c, "li[data-key='db-engine']").await;
        assert!(record_file(&env, "db-engine").is_none());
        c.close().await.unwrap();
    });
}

/// Issue 26 items 18 and 19, the panel's half: the add row silently
/// overwrote a memory with the same key and said only "Saved", and an
/// archived memory showed as active with no way back. Now the add row
/// warns first and replaces only when asked; archived memories are hidden
/// until shown, and Restore brings one back.
#[test]
fn r26_panel_warns_before_overwriting_and_restores_archived() {
    let env = Env::new();
    env.add("decisions", "use-pnpm", "We use pnpm, never npm.");
    env.add("procedures", "deploy", "Deploy with make release.");
    env.run(&["record", "archive", "deploy"]);
    let server = Server::start(&env, &[]);
    let driver = Driver::start();
    let profile = env.tmp.path().join("chromium-profile");
    let url = server.url.clone();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = browser(&driver, &profile).await;
        c.goto(&format!("{url}/")).await.unwrap();
        wait_for(&c, "li[data-key='use-pnpm']").await;
        // The archived memory is hidden and counted.
        assert!(c
            .find_all(Locator::Css("li[data-key='deploy']"))
            .await
            .unwrap()
            .is_empty());
        let count = c.find(Locator::Css("#count")).await.unwrap();
        assert_eq!(count.text().await.unwrap(), "(1, 1 archived)");

        // The add row warns before it overwrites a key that exists.
        type_into(&c, "#new-key", "use-pnpm").await;
        type_into(&c, "#new-value", "We use yarn.").await;
        click(&c, "#create-form button[type=submit]").await;
        let note = wait_for(&c, "#create-note:not([hidden])").await;
        let text = note.text().await.unwrap();
        assert!(text.contains("We use pnpm, never npm."), "{text}");
        assert!(record_file(&env, "use-pnpm")
            .unwrap()
            .contains("We use pnpm, never npm."));
        let png = c.screenshot().await.unwrap();
        std::fs::write(shots.join("panel-overwrite.png"), png).unwrap();
        let submit = c
            .find(Locator::Css("#create-form button[type=submit]"))
            .await
            .unwrap();
        assert_eq!(submit.text().await.unwrap(), "Replace");
        submit.click().await.unwrap();
        wait_gone(&c, "#create-note:not([hidden])").await;
        let t0 = Instant::now();
        while !record_file(&env, "use-pnpm")
            .unwrap()
            .contains("We use yarn.")
        {
            assert!(t0.elapsed() < Duration::from_secs(10), "never replaced");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        // Shown on request, marked, and restored.
        click(&c, "#show-archived").await;
        wait_for(&c, "li.archived[data-key='deploy'] .badge.archived").await;
        click(&c, "li[data-key='deploy'] button.restore").await;
        wait_for(&c, "li[data-key='deploy']:not(.archived)").await;
        assert!(record_file(&env, "deploy")
            .unwrap()
            .contains("status: active"));
        let count = c.find(Locator::Css("#count")).await.unwrap();
        assert_eq!(count.text().await.unwrap(), "(2)");
        c.close().await.unwrap();
    });
}
