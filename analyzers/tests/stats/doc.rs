//! docs/analyze-stats.md shows real output: every `<!-- run: COMMAND -->` block must equal a
//! fresh run of its command (scripts/doc-analyze-stats rewrites them).

use std::process::Command;

use crate::common::*;

#[test]
fn the_doc_page_shows_what_the_tool_prints_now() {
    let doc = std::fs::read_to_string(root().join("docs/analyze-stats.md")).unwrap();
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_analyze-stats"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut blocks = 0;
    let mut rest = doc.as_str();
    while let Some(i) = rest.find("<!-- run: ") {
        let after = &rest[i + "<!-- run: ".len()..];
        let end = after.find(" -->\n").expect("run marker closes");
        let cmd = &after[..end];
        let body = &after[end + " -->\n".len()..];
        let close = body.find("<!-- end -->").expect("block ends");
        let shown = &body[..close];
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", cmd])
            .current_dir(root())
            .env("PATH", &path)
            .output()
            .unwrap();
        let want = format!(
            "```text\n$ {cmd}\n{}```\n",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(
            shown, want,
            "docs/analyze-stats.md is stale for `{cmd}`: run scripts/doc-analyze-stats"
        );
        blocks += 1;
        rest = &body[close..];
    }
    assert!(blocks >= 4, "{blocks} run blocks");
}
