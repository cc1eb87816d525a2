//! The web panel in headless Chromium, driven as a person would through
//! WebDriver (chromedriver): load it, create, pin, edit and delete a memory,
//! check the record file on disk after each step, and save a screenshot
//! (`target/screenshots/panel.png`).
//!
//! Needs Debian's `chromium` and `chromium-driver`; `.ci/run` installs
//! them. Without them these tests skip and say how to install them, and
//! fail in CI.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::server::Server;
use crate::common::Env;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

const INSTALL: &str = "apt-get install -y chromium chromium-driver";

const CHROMEDRIVER: [&str; 2] = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"];
const CHROMIUM: [&str; 2] = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

fn find(paths: &[&str]) -> Option<PathBuf> {
    paths.iter().map(PathBuf::from).find(|p| p.exists())
}

/// Whether Chromium and chromedriver are here. Outside CI a test without
/// them skips and says how to install them (issue 37 item 10: they
/// panicked, and the tests after them in the binary never ran); in CI
/// (`CI` or `RECALL_REQUIRE_SHARED` set) a missing browser fails.
fn browser_installed() -> bool {
    if find(&CHROMEDRIVER).is_some() && find(&CHROMIUM).is_some() {
        return true;
    }
    let ci =
        std::env::var_os("CI").is_some() || std::env::var_os("RECALL_REQUIRE_SHARED").is_some();
    assert!(
        !ci,
        "Chromium or chromedriver not found (looked in {CHROMIUM:?}, {CHROMEDRIVER:?}); install them with `{INSTALL}` (.ci/run does)"
    );
    eprintln!("skipped: Chromium or chromedriver is not installed ({INSTALL})");
    false
}

/// chromedriver on a free port, killed on drop.
struct Driver(Child, u16);

impl Driver {
    fn start() -> Driver {
        let bin = find(&CHROMEDRIVER).expect("checked by browser_installed");
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
    let chromium = find(&CHROMIUM).expect("checked by browser_installed");
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
    crate::common::record_files(&env.home())
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
    if !browser_installed() {
        return;
    }
    let env = Env::new();
    env.add("decisions", "use-pnpm", "We use pnpm, never npm.");
    // The api's port, written down twice, months apart.
    let decisions = env.project_dir().join("records").join("decisions");
    for (id, at, body) in [
        (
            "api-port-old",
            "2025-01-10T00:00:00Z",
            "The api server port is 8080.",
        ),
        (
            "api-port-new",
            "2025-06-10T00:00:00Z",
            "We moved the api server to port 9090.",
        ),
    ] {
        let text = crate::common::dated_record_text(id, id, "decisions", at, body);
        std::fs::write(decisions.join(format!("{id}.md")), text).unwrap();
    }
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
        // A generated entry's text is read-only: a note says so, and its
        // edit box changes only the category and importance, its text
        // shown as text.
        let auto = wait_for(&c, "li[data-key='ci-runner']").await;
        assert!(auto
            .text()
            .await
            .unwrap()
            .contains("auto-captured · its text is read-only"));
        click(&c, "li[data-key='ci-runner'] button.edit").await;
        wait_for(&c, "li[data-key='ci-runner'] select.edit-category").await;
        assert!(c
            .find_all(Locator::Css("li[data-key='ci-runner'] textarea"))
            .await
            .unwrap()
            .is_empty());
        assert!(text_of(&c, "li[data-key='ci-runner'] .editing")
            .await
            .contains("CI runs on two cores."));
        click(&c, "li[data-key='ci-runner'] button.cancel-edit").await;
        wait_gone(&c, "li[data-key='ci-runner'] .editing").await;

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

        // Of two records giving the api's port, the newer comes first and
        // the older says it may be stale.
        let q = wait_for(&c, "#q").await;
        q.clear().await.unwrap();
        q.send_keys("api server port").await.unwrap();
        click(&c, "#search-form button").await;
        let note = text_of(&c, "#hits li .stale").await;
        assert_eq!(
            note,
            "possibly stale: the newer api-port-new says otherwise"
        );
        let first = text_of(&c, "#hits li").await;
        assert!(first.contains("port 9090"), "{first}");

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
    if !browser_installed() {
        return;
    }
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

/// The text of the first element `css` matches.
/// A home with two projects: `alpha` (the folder's, with `use-pnpm`) and
/// `zeta` (with `z`), added after it.
fn two_projects() -> Env {
    let env = Env::new();
    env.add("decisions", "use-pnpm", "We use pnpm, never npm.");
    env.cmd_in("zeta")
        .args([
            "record",
            "add",
            "--category",
            "decisions",
            "--key",
            "z",
            "Zeta's fact.",
        ])
        .assert()
        .success();
    env
}

async fn text_of(c: &Client, css: &str) -> String {
    wait_for(c, css).await.text().await.unwrap()
}

/// Issue 25 part 5, the panel as a user found it: it opens the folder's
/// project (not the last in the list) and the URL follows the scope; a
/// 255-character key wraps; a failed edit keeps what was typed and says
/// why in its row; Esc cancels; category and importance can be changed;
/// the list filters by source and category; search works in the user
/// scope and says which scope it searches; a message about one scope
/// clears when another is chosen; a stopped server is named as such.
#[test]
fn panel_rough_edges_as_a_user_found_them() {
    if !browser_installed() {
        return;
    }
    let env = two_projects();
    let mut server = Server::start(&env, &[]);
    let long_key = "k".repeat(255);
    let mem = "/api/projects/alpha/memories";
    for body in [
        json!({"key": long_key, "value": "A memory with the longest key."}),
        json!({"key": "ci-runner", "value": "CI runs on two cores.", "source": "auto"}),
    ] {
        assert_eq!(server.call("POST", mem, Some(&body)).0, 201);
    }
    server.call(
        "POST",
        "/api/user/memories",
        Some(&json!({"key": "editor", "value": "I edit in Helix, with pnpm scripts."})),
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
        // `recall serve` runs for alpha: the panel opens alpha, though zeta
        // came later, and the URL says so.
        wait_for(&c, "li[data-key='use-pnpm']").await;
        let url_now = c.current_url().await.unwrap();
        assert!(url_now.as_str().contains("?project=alpha-"), "{url_now}");

        // The longest key wraps: every button stays on the page.
        let overflow: bool = c
            .execute(
                "return [...document.querySelectorAll('#entries button')]
                   .some(b => b.getBoundingClientRect().right > document.documentElement.clientWidth);",
                vec![],
            )
            .await
            .unwrap()
            .as_bool()
            .unwrap();
        assert!(!overflow, "a button was pushed off the page");

        // A failed edit keeps the typed text and says why, in its row.
        click(&c, "li[data-key='use-pnpm'] button.edit").await;
        let area = wait_for(&c, "li[data-key='use-pnpm'] textarea").await;
        area.clear().await.unwrap();
        let secret = format!("Deploy with ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        area.send_keys(&secret).await.unwrap();
        click(&c, "li[data-key='use-pnpm'] button.save").await;
        let e = text_of(&c, "li[data-key='use-pnpm'] .row-error:not([hidden])").await;
        assert!(e.contains("secret") || e.contains("github"), "{e}");
        let kept = c
            .find(Locator::Css("li[data-key='use-pnpm'] textarea"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap();
        assert_eq!(kept.as_deref(), Some(secret.as_str()));
        let png = c.screenshot().await.unwrap();
        std::fs::write(shots.join("panel-row-error.png"), png).unwrap();
        // Esc cancels the edit: the value is back, unchanged on disk.
        area.send_keys("\u{e00c}").await.unwrap();
        wait_gone(&c, "li[data-key='use-pnpm'] textarea").await;
        assert!(record_file(&env, "use-pnpm").unwrap().contains("We use pnpm, never npm."));

        // Category and importance change through the edit box.
        click(&c, "li[data-key='use-pnpm'] button.edit").await;
        wait_for(&c, "li[data-key='use-pnpm'] select.edit-category").await
            .select_by_value("procedures")
            .await
            .unwrap();
        let imp = wait_for(&c, "li[data-key='use-pnpm'] input.edit-importance").await;
        imp.clear().await.unwrap();
        imp.send_keys("80").await.unwrap();
        click(&c, "li[data-key='use-pnpm'] button.save").await;
        wait_gone(&c, "li[data-key='use-pnpm'] textarea").await;
        let file = record_file(&env, "use-pnpm").unwrap();
        assert!(file.contains("category: procedures") && file.contains("importance: 80"), "{file}");

        // Filters: by source, then by category.
        wait_for(&c, "#filter-source").await.select_by_value("auto").await.unwrap();
        wait_gone(&c, "li[data-key='use-pnpm']").await;
        wait_for(&c, "li[data-key='ci-runner']").await;
        wait_for(&c, "#filter-source").await.select_by_value("").await.unwrap();
        wait_for(&c, "#filter-category").await.select_by_value("procedures").await.unwrap();
        wait_gone(&c, "li[data-key='ci-runner']").await;
        wait_for(&c, "li[data-key='use-pnpm']").await;
        wait_for(&c, "#filter-category").await.select_by_value("").await.unwrap();

        // A message about alpha goes when the user scope is chosen; the
        // search there says it searches the user's memory, and finds it.
        click(&c, "li[data-key='ci-runner'] button.pin").await;
        wait_for(&c, "li.pinned[data-key='ci-runner']").await;
        assert!(text_of(&c, "#status").await.contains("Pinned ci-runner"));
        wait_for(&c, "#scope").await.select_by_value("user").await.unwrap();
        wait_for(&c, "li[data-key='editor']").await;
        assert_eq!(text_of(&c, "#status").await, "");
        assert!(c.current_url().await.unwrap().as_str().ends_with("?scope=user"));
        assert_eq!(text_of(&c, "#q-label").await, "Search your memory (all projects)");
        type_into(&c, "#q", "helix").await;
        click(&c, "#search-form button").await;
        assert!(text_of(&c, "#hits li").await.contains("editor"));

        // A stopped server is named, not "Failed to fetch".
        // SAFETY: kill(2) on our own child has no memory effects.
        unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
        let _ = server.child.wait();
        wait_for(&c, "#scope").await.select_by_index(0).await.unwrap();
        let t0 = Instant::now();
        loop {
            let s = text_of(&c, "#status").await;
            if s.contains("the server is not running: start it with `recall serve`") {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "status: {s}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        c.close().await.unwrap();
    });
}

/// Whether the page scrolls sideways: anything wider than the window.
async fn scrolls_sideways(c: &Client) -> String {
    c.execute(
        "const w = document.documentElement.clientWidth;
         if (document.documentElement.scrollWidth <= w) return '';
         return [...document.querySelectorAll('body *')]
           .filter(e => e.getBoundingClientRect().right > w + 0.5)
           .map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className)
           .join(', ') || 'scrollWidth ' + document.documentElement.scrollWidth;",
        vec![],
    )
    .await
    .unwrap()
    .as_str()
    .unwrap()
    .to_string()
}

/// The places where the text of the first `css` element goes on to a new
/// line, each as the characters on both sides of the break.
async fn line_breaks(c: &Client, css: &str) -> Vec<String> {
    let v = c
        .execute(
            "const node = document.querySelector(arguments[0]).firstChild;
             const text = node.textContent, out = [];
             let top = null;
             for (let i = 0; i < text.length; i++) {
               const r = document.createRange();
               r.setStart(node, i); r.setEnd(node, i + 1);
               const t = r.getBoundingClientRect().top;
               if (top !== null && t > top + 2) out.push(text.slice(Math.max(0, i - 3), i) + '|' + text.slice(i, i + 3));
               top = t;
             }
             return out;",
            vec![json!(css)],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}

/// Issue 37 item 12: the panel could not archive (only Restore existed); a
/// 256-character key was cut to 255 by the input box without a word; keys
/// broke mid-word; a 390 px window scrolled sideways; an auto record's
/// read-only text was clipped in its edit box; backticks showed raw.
#[test]
fn r37_panel_archives_refuses_a_long_key_and_fits_a_phone() {
    if !browser_installed() {
        return;
    }
    let env = Env::new();
    env.add(
        "procedures",
        "run-the-integration-tests-before-every-release-candidate",
        "Run `cargo test --test it` before tagging.",
    );
    env.add("decisions", "use-pnpm", "We use pnpm, never npm.");
    let server = Server::start(&env, &[]);
    let long_text = (1..=60)
        .map(|i| format!("Step {i} of the nightly job."))
        .collect::<Vec<_>>()
        .join(" ");
    let (status, _) = server.call(
        "POST",
        "/api/projects/alpha/memories",
        Some(&json!({"key": "nightly", "value": long_text, "source": "auto"})),
    );
    assert_eq!(status, 201);
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
        c.set_window_size(390, 844).await.unwrap();
        c.goto(&format!("{url}/")).await.unwrap();
        let key = "run-the-integration-tests-before-every-release-candidate";
        wait_for(&c, &format!("li[data-key='{key}']")).await;
        std::fs::write(shots.join("panel-390.png"), c.screenshot().await.unwrap()).unwrap();
        let wide = scrolls_sideways(&c).await;
        assert!(wide.is_empty(), "at 390 px the page scrolls sideways: {wide}");

        // A long key goes on to a new line after a hyphen, not mid-word.
        let breaks = line_breaks(&c, &format!("li[data-key='{key}'] .key")).await;
        assert!(!breaks.is_empty(), "the key fits one line: make it longer");
        for b in &breaks {
            assert!(b.contains("-|"), "the key breaks mid-word at {b:?}");
        }

        // Backticks become inline code.
        let code = text_of(&c, &format!("li[data-key='{key}'] .value code")).await;
        assert_eq!(code, "cargo test --test it");
        let value = text_of(&c, &format!("li[data-key='{key}'] .value")).await;
        assert!(!value.contains('`'), "{value}");

        // An auto record's text, read-only in its edit box, is shown whole.
        click(&c, "li[data-key='nightly'] button.edit").await;
        wait_for(&c, "li[data-key='nightly'] select.edit-category").await;
        let clipped: bool = c
            .execute(
                "const li = document.querySelector(\"li[data-key='nightly']\");
                 return [...li.querySelectorAll('.value, .value *')]
                   .some(e => e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1);",
                vec![],
            )
            .await
            .unwrap()
            .as_bool()
            .unwrap();
        std::fs::write(shots.join("panel-390-readonly.png"), c.screenshot().await.unwrap()).unwrap();
        assert!(!clipped, "the read-only text is clipped");
        let shown = text_of(&c, "li[data-key='nightly']").await;
        assert!(shown.contains("Step 60 of the nightly job."), "{shown}");
        click(&c, "li[data-key='nightly'] button.cancel-edit").await;
        wait_gone(&c, "li[data-key='nightly'] select.edit-category").await;

        // Search hits, with their record paths, fit too.
        type_into(&c, "#q", "integration tests release").await;
        click(&c, "#search-form button").await;
        wait_for(&c, "#hits li").await;
        std::fs::write(shots.join("panel-390-hits.png"), c.screenshot().await.unwrap()).unwrap();
        // Issue 37 item 13: the hit's matches are marked from the JSON's
        // highlights, its backticks are code, and no marker shows as text.
        let snippet = text_of(&c, "#hits li .snippet").await;
        assert!(!snippet.contains('`') && !snippet.contains("**"), "{snippet}");
        let parts = c
            .execute(
                "const s = document.querySelector('#hits li .snippet');
                 return [[...s.querySelectorAll('mark')].map(m => m.textContent),
                         [...s.querySelectorAll('code')].map(m => m.textContent).join('')];",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(parts, json!([["test", "test"], "cargo test --test it"]), "{snippet}");
        let wide = scrolls_sideways(&c).await;
        assert!(wide.is_empty(), "with hits, at 390 px the page scrolls sideways: {wide}");

        // Archive: the record file says so, the entry goes, and the count
        // says where it went.
        click(&c, "li[data-key='use-pnpm'] button.archive").await;
        wait_gone(&c, "li[data-key='use-pnpm']").await;
        assert!(record_file(&env, "use-pnpm").unwrap().contains("status: archived"));
        assert_eq!(text_of(&c, "#count").await, "(2, 1 archived)");
        assert!(text_of(&c, "#status").await.contains("Archived use-pnpm"));

        // A 256-character key is refused with the reason, not cut to 255.
        let long_key = "k".repeat(256);
        type_into(&c, "#new-key", &long_key).await;
        type_into(&c, "#new-value", "A fact with too long a key.").await;
        click(&c, "#create-form button[type=submit]").await;
        let note = text_of(&c, "#create-note:not([hidden])").await;
        assert!(note.contains("256 characters") && note.contains("255"), "{note}");
        assert!(record_file(&env, &"k".repeat(255)).is_none(), "the key was cut to 255");
        let wide = scrolls_sideways(&c).await;
        assert!(wide.is_empty(), "with the note, at 390 px the page scrolls sideways: {wide}");
        c.close().await.unwrap();
    });
}

/// Stop 46: a memory filed in the wrong scope moves from the panel, a
/// project's to your memory and back to a project chosen in its row (as
/// `recall record move`); the panel could only archive or delete it.
#[test]
fn r46_panel_moves_a_memory_between_a_project_and_yours() {
    if !browser_installed() {
        return;
    }
    let env = Env::new();
    env.add("decisions", "use-pnpm", "We use pnpm, never npm.");
    env.add("preferences", "editor", "I edit in Helix, everywhere.");
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
        c.goto(&format!("{url}/?project=alpha")).await.unwrap();
        wait_for(&c, "li[data-key='editor'] button.move").await;
        click(&c, "li[data-key='editor'] button.move").await;
        wait_gone(&c, "li[data-key='editor']").await;
        assert!(text_of(&c, "#status")
            .await
            .contains("Moved editor to your memory"));
        let file = record_file(&env, "editor").unwrap();
        assert!(file.contains("scope: user"), "{file}");
        assert_eq!(text_of(&c, "#count").await, "(1)");

        c.goto(&format!("{url}/?scope=user")).await.unwrap();
        wait_for(&c, "li[data-key='editor'] button.move").await;
        click(&c, "li[data-key='editor'] button.move").await;
        wait_for(&c, "li[data-key='editor'] select.move-to").await;
        std::fs::write(shots.join("panel-move.png"), c.screenshot().await.unwrap()).unwrap();
        let choices = text_of(&c, "li[data-key='editor'] select.move-to").await;
        assert!(choices.contains("alpha"), "{choices}");
        // Keep puts the row back as it was; Move moves it.
        click(&c, "li[data-key='editor'] button.cancel").await;
        wait_gone(&c, "li[data-key='editor'] select.move-to").await;
        click(&c, "li[data-key='editor'] button.move").await;
        wait_for(&c, "li[data-key='editor'] button.confirm-move").await;
        click(&c, "li[data-key='editor'] button.confirm-move").await;
        wait_gone(&c, "li[data-key='editor']").await;
        assert!(text_of(&c, "#status")
            .await
            .contains("Moved editor to alpha"));
        let file = record_file(&env, "editor").unwrap();
        assert!(file.contains("scope: project"), "{file}");
        c.close().await.unwrap();
    });
}

/// Regression (review, stop 59): on a server with a token, the first
/// listing of projects is refused until the token is entered, and the
/// panel took the empty answer for "no projects": it chose your own
/// memory, wrote `?scope=user` into the URL, and once the token was in,
/// opened that instead of the project asked for (or the folder's).
#[test]
fn r_the_panel_opens_the_project_asked_for_once_its_token_is_in() {
    if !browser_installed() {
        return;
    }
    let env = two_projects();
    let token = "0123456789abcdef0123";
    let server = Server::start(&env, &["--token", token]);
    let driver = Driver::start();
    let profile = env.tmp.path().join("chromium-profile");
    let url = server.url.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = browser(&driver, &profile).await;
        for (asked, key) in [("?project=zeta", "z"), ("", "use-pnpm")] {
            // A fresh tab's session storage holds no token yet.
            c.goto(&format!("{url}/{asked}")).await.unwrap();
            c.execute("sessionStorage.clear(); return null;", vec![])
                .await
                .unwrap();
            c.goto(&format!("{url}/{asked}")).await.unwrap();
            wait_for(&c, "#token-dialog[open]").await;
            type_into(&c, "#token", token).await;
            click(&c, "#token-form button[type='submit']").await;
            wait_for(&c, &format!("li[data-key='{key}']")).await;
            let now = c.current_url().await.unwrap();
            assert!(!now.as_str().contains("scope=user"), "{asked}: {now}");
        }
        c.close().await.unwrap();
    });
}
