//! Docs that cannot drift: every `<!-- run: COMMAND -->` (or `run-raw`) block of docs/ must
//! equal a fresh run of its command with this build's analyzers (scripts/regen-docs
//! rewrites them).

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_sample_in_docs_is_what_the_tools_print_now() {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_gap-report"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut blocks = 0;
    let mut pages = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect::<Vec<_>>();
    pages.sort();
    for page in pages {
        let doc = std::fs::read_to_string(&page).unwrap();
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let mut rest = doc.as_str();
        while let Some(i) = rest.find("<!-- run") {
            let after = &rest[i + "<!-- ".len()..];
            let (raw, after) = if let Some(a) = after.strip_prefix("run-raw: ") {
                (true, a)
            } else if let Some(a) = after.strip_prefix("run: ") {
                (false, a)
            } else {
                rest = after;
                continue;
            };
            let end = after.find(" -->\n").expect("a run marker closes with -->");
            let cmd = &after[..end];
            let body = &after[end + " -->\n".len()..];
            let close = body.find("<!-- end -->").expect("a run block ends");
            let shown = &body[..close];
            let out = Command::new("bash")
                .args(["-o", "pipefail", "-c", cmd])
                .current_dir(root())
                .env("PATH", &path)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let want = if raw {
                stdout.into_owned()
            } else {
                format!("```text\n$ {cmd}\n{stdout}```\n")
            };
            assert_eq!(
                shown, want,
                "docs/{name} is stale for `{cmd}`: run scripts/regen-docs"
            );
            blocks += 1;
            rest = &body[close..];
        }
    }
    assert!(blocks >= 5, "only {blocks} run blocks in docs/");
}
