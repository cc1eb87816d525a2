//! `recall completions` and `recall man`, generated from the clap
//! definitions: every shell gets a script that knows the subcommands, the
//! bash one parses, and the man pages cover every command.

use crate::common::Env;

#[test]
fn completions_know_every_subcommand_in_every_shell() {
    let env = Env::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = env.run(&["completions", shell]);
        for sub in [
            "query", "record", "index", "reindex", "doctor", "extract", "hook",
        ] {
            assert!(out.contains(sub), "{shell}: no {sub}");
        }
    }
    let script = env.tmp.path().join("recall.bash");
    std::fs::write(&script, env.run(&["completions", "bash"])).unwrap();
    let ok = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .unwrap();
    assert!(ok.success(), "the bash completion script does not parse");
    let out = env.cmd().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("possible values"));
}

#[test]
fn man_prints_the_page_and_writes_one_per_command() {
    let env = Env::new();
    let page = env.run(&["man"]);
    assert!(page.starts_with(".ie"), "{}", &page[..40.min(page.len())]);
    assert!(page.contains(".TH recall 1"), "roff title");
    assert!(page.contains("reindex"), "lists the subcommands");
    let dir = env.tmp.path().join("man");
    env.run(&["man", "--out", dir.to_str().unwrap()]);
    for page in [
        "recall.1",
        "recall-query.1",
        "recall-index.1",
        "recall-hook-install.1",
    ] {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        assert!(text.contains(".TH"), "{page}");
    }
    // Regression: the page `recall man` prints listed recall-help(1), a
    // page `--out` never wrote. Every page a page names is there.
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let named = regex::Regex::new(r"(recall(?:\\-[a-z]+)*)\((\d)\)").unwrap();
    let mut seen = 0;
    let printed = env.run(&["man"]);
    for page in &pages {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        let text = if page == "recall.1" {
            printed.clone()
        } else {
            text
        };
        for c in named.captures_iter(&text) {
            seen += 1;
            let want = format!("{}.{}", c[1].replace("\\-", "-"), &c[2]);
            assert!(
                pages.contains(&want),
                "{page} names {want}, not written: {pages:?}"
            );
        }
    }
    assert!(seen > 10, "the pages name each other as recall\\-query(1)");
}
