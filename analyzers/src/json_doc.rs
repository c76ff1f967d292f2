//! Every JSON document a kgap tool prints starts with what it is: `schema` (its name),
//! `schema_version` (bumped when a field changes meaning or goes away; the probes' result
//! document, `kgap.probe-result`, has the same two fields) and `tool`. A script that reads
//! kgap's output checks the schema before trusting a field (docs/json.md lists them).

use serde::Serialize;

/// The schema version of every analyzer's document. Adding a field keeps it; renaming,
/// removing or changing a field's unit bumps it.
pub const VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a, T: Serialize + ?Sized> {
    schema: String,
    schema_version: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    #[serde(flatten)]
    body: &'a T,
}

/// `body` (a struct or a JSON object) as a pretty-printed document headed by
/// `"schema": "kgap.<tool>"`, `"schema_version"` and, unless the body carries its own, `"tool"`.
pub fn pretty<T: Serialize + ?Sized>(tool: &str, body: &T) -> String {
    pretty_kind(tool, "", body)
}

/// As [`pretty`], for a second kind of document of one tool (`analyze-jfr --events`):
/// `"kgap.<tool>.<kind>"`.
pub fn pretty_kind<T: Serialize + ?Sized>(tool: &str, kind: &str, body: &T) -> String {
    let has_tool = serde_json::to_value(body)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.contains_key("tool")))
        .unwrap_or(false);
    let kind = if kind.is_empty() { String::new() } else { format!(".{kind}") };
    let doc = Document {
        schema: format!("kgap.{tool}{kind}"),
        schema_version: VERSION,
        tool: (!has_tool).then_some(tool),
        body,
    };
    serde_json::to_string_pretty(&doc).expect("a report serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct WithTool {
        tool: &'static str,
        z_first: u32,
        a_second: u32,
    }

    #[derive(Serialize)]
    struct Bare {
        events: u32,
    }

    #[test]
    fn schema_comes_first_and_the_body_keeps_its_order() {
        let s = pretty("analyze-x", &WithTool { tool: "analyze-x", z_first: 1, a_second: 2 });
        let keys: Vec<&str> = s
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"').and_then(|l| l.split('"').next()))
            .collect();
        assert_eq!(keys, ["schema", "schema_version", "tool", "z_first", "a_second"], "{s}");
        assert!(s.contains(r#""schema": "kgap.analyze-x""#), "{s}");
        assert_eq!(s.matches(r#""tool""#).count(), 1, "{s}");
    }

    #[test]
    fn a_body_without_a_tool_gets_one() {
        let s = pretty_kind("analyze-jfr", "events", &Bare { events: 3 });
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["schema"], "kgap.analyze-jfr.events");
        assert_eq!(v["schema_version"], VERSION);
        assert_eq!(v["tool"], "analyze-jfr");
        assert_eq!(v["events"], 3);
    }
}
