//! docs/json.md is the JSON contract: each `<!-- json: COMMAND -->` block's table lists the
//! top-level fields of the document COMMAND prints. A field printed but not listed, or
//! listed (without "(optional)") but not printed, fails here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Block {
    command: String,
    listed: BTreeSet<String>,
    optional: BTreeSet<String>,
}

fn blocks(doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    for line in doc.lines() {
        if let Some(cmd) = line
            .strip_prefix("<!-- json: ")
            .and_then(|l| l.strip_suffix(" -->"))
        {
            current = Some(Block {
                command: cmd.to_string(),
                listed: BTreeSet::new(),
                optional: BTreeSet::new(),
            });
        } else if line == "<!-- end -->" {
            out.extend(current.take());
        } else if let Some(b) = current.as_mut() {
            let mut cells = line.split('|').skip(1);
            let (Some(fields), Some(what)) = (cells.next(), cells.next()) else {
                continue;
            };
            for f in fields.split(',') {
                let f = f.trim();
                if let Some(name) = f.strip_prefix('`').and_then(|f| f.strip_suffix('`')) {
                    b.listed.insert(name.to_string());
                    if what.trim().starts_with("(optional)") {
                        b.optional.insert(name.to_string());
                    }
                }
            }
        }
    }
    assert!(current.is_none(), "a json block without its <!-- end -->");
    out
}

#[test]
fn every_documents_top_level_fields_are_the_ones_docs_json_md_lists() {
    let doc = std::fs::read_to_string(root().join("docs/json.md")).expect("docs/json.md");
    let blocks = blocks(&doc);
    assert!(
        blocks.len() >= 8,
        "only {} json blocks in docs/json.md",
        blocks.len()
    );
    let bins = Path::new(env!("CARGO_BIN_EXE_gap-report"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bins.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut problems = Vec::new();
    for b in &blocks {
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", &b.command])
            .current_dir(root())
            .env("PATH", &path)
            .output()
            .expect("run");
        let v: serde_json::Value = match serde_json::from_slice(&out.stdout) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("`{}`: not JSON ({e})", b.command));
                continue;
            }
        };
        let printed: BTreeSet<String> = v.as_object().expect("an object").keys().cloned().collect();
        for f in printed.difference(&b.listed) {
            problems.push(format!(
                "`{}` prints `{f}`, which docs/json.md does not list",
                b.command
            ));
        }
        for f in b.listed.difference(&printed) {
            if !b.optional.contains(f) {
                problems.push(format!(
                    "docs/json.md lists `{f}`, which `{}` does not print",
                    b.command
                ));
            }
        }
        for key in ["schema", "schema_version"] {
            if !printed.contains(key) {
                problems.push(format!("`{}` has no `{key}`", b.command));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_block_reader_finds_fields_and_optional_ones() {
    let b = blocks("<!-- json: x -->\n| field | what |\n|---|---|\n| `a`, `b` | two |\n| `c` | (optional) one |\n<!-- end -->\n");
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].listed.iter().collect::<Vec<_>>(), ["a", "b", "c"]);
    assert_eq!(b[0].optional.iter().collect::<Vec<_>>(), ["c"]);
}
