//! The JVM's unified logging as `jcmd VM.log list` shows it, and the one change capture makes:
//! a file output with `gc*=info` for the capture, switched off at the end. HotSpot removes a
//! file output whose every tag is off, so afterwards the list is as it was; that is checked,
//! not assumed.

/// The outputs of a `VM.log list` answer (` #0: stdout all=warning uptime,level,tags`), in
/// order, as lines without their `#N:` index (an index moves when an output is removed).
pub fn outputs(list: &str) -> Vec<String> {
    let mut in_outputs = false;
    let mut out = Vec::new();
    for line in list.lines() {
        if line.starts_with("Log output configuration") {
            in_outputs = true;
            continue;
        }
        if !in_outputs {
            continue;
        }
        let t = line.trim();
        match t.strip_prefix('#').and_then(|r| r.split_once(": ")) {
            Some((_, rest)) => out.push(rest.to_string()),
            // The list may go on with described tag sets or end.
            None if t.is_empty() => {}
            None => break,
        }
    }
    out
}

/// The outputs already logging `gc` at info or finer, e.g. a service started with
/// `-Xlog:gc*:file=…`: their file is the GC log of the whole run.
pub fn gc_outputs(outs: &[String]) -> Vec<String> {
    outs.iter()
        .filter(|o| {
            let what = o.split_whitespace().nth(1).unwrap_or("");
            what.split(',').any(|sel| {
                let (tags, level) = sel.split_once('=').unwrap_or((sel, "info"));
                let gc = tags == "all" || tags.split('+').any(|t| t.trim_end_matches('*') == "gc");
                gc && matches!(level, "info" | "debug" | "trace")
            })
        })
        .cloned()
        .collect()
}

/// The `VM.log` arguments that add capture's output.
pub fn switch_on(file: &str) -> Vec<String> {
    vec![
        format!("output=file={file}"),
        "what=gc*=info".into(),
        "decorators=uptime,level,tags".into(),
    ]
}

/// The `VM.log` arguments that switch it off again (which removes it).
pub fn switch_off(file: &str) -> Vec<String> {
    vec![format!("output=file={file}"), "what=all=off".into()]
}

/// A path the JVM's option parser takes whole: `VM.log` splits on spaces and commas.
pub fn path_ok(path: &str) -> bool {
    path.starts_with('/')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
}

/// What differs between the outputs before and after (empty: as before).
pub fn differences(before: &[String], after: &[String]) -> Vec<String> {
    let mut d = Vec::new();
    for o in after.iter().filter(|o| !before.contains(o)) {
        d.push(format!("now there: {o}"));
    }
    for o in before.iter().filter(|o| !after.contains(o)) {
        d.push(format!("gone: {o}"));
    }
    d
}

// `outputs` and `gc_outputs` read a live JVM's answers in tests/capture.rs (its GC logging
// as before); here the checks of what capture itself writes.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_the_jvm_takes_whole() {
        assert!(path_ok("/tmp/kgap/jvm/gc.log"));
        for bad in ["/tmp/my dir/gc.log", "rel/gc.log", "/a,b", "/a=b"] {
            assert!(!path_ok(bad), "{bad}");
        }
    }

    #[test]
    fn differences_name_what_came_and_went() {
        let a = vec!["stdout all=warning".to_string()];
        let b = vec![
            "stdout all=warning".to_string(),
            "file=/x all=off".to_string(),
        ];
        assert!(differences(&a, &a).is_empty());
        assert_eq!(differences(&a, &b), vec!["now there: file=/x all=off"]);
        assert_eq!(differences(&b, &a), vec!["gone: file=/x all=off"]);
    }
}
