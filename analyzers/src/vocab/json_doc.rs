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
    let kind = if kind.is_empty() {
        String::new()
    } else {
        format!(".{kind}")
    };
    let doc = Document {
        schema: format!("kgap.{tool}{kind}"),
        schema_version: VERSION,
        tool: (!has_tool).then_some(tool),
        body,
    };
    String::from_utf8(to_vec_pretty_rounded(&doc)).expect("JSON is UTF-8") + "\n"
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
        let s = pretty(
            "analyze-x",
            &WithTool {
                tool: "analyze-x",
                z_first: 1,
                a_second: 2,
            },
        );
        let keys: Vec<&str> = s
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"').and_then(|l| l.split('"').next()))
            .collect();
        assert_eq!(
            keys,
            ["schema", "schema_version", "tool", "z_first", "a_second"],
            "{s}"
        );
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

/// A figure rounded to what it can mean: at most 6 significant digits, but never fewer than
/// 3 decimals (so Unix seconds keep their milliseconds). The models keep full precision;
/// only what is printed is rounded (`2.4630000591278076` → `2.463`).
pub fn round_figure(v: f64) -> f64 {
    let a = v.abs();
    if !v.is_finite() || a == 0.0 {
        return v;
    }
    let int_digits = a.log10().floor() as i32 + 1;
    let decimals = (6 - int_digits).clamp(3, 15);
    let scale = 10f64.powi(decimals);
    let r = (v * scale).round() / scale;
    if r.is_finite() {
        r
    } else {
        v
    }
}

/// serde_json's pretty printer with every float rounded by [`round_figure`].
pub struct RoundingFormatter(serde_json::ser::PrettyFormatter<'static>);

impl Default for RoundingFormatter {
    fn default() -> Self {
        RoundingFormatter(serde_json::ser::PrettyFormatter::new())
    }
}

impl serde_json::ser::Formatter for RoundingFormatter {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
        let r = round_figure(v);
        if r.fract() == 0.0 && r.abs() < 1e15 {
            // As serde_json prints a whole f64: "3.0".
            write!(w, "{r:.1}")
        } else {
            let mut buf = ryu::Buffer::new();
            w.write_all(buf.format_finite(r).as_bytes())
        }
    }
    fn write_f32<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f32) -> std::io::Result<()> {
        self.write_f64(w, v as f64)
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// `value` pretty-printed with its floats rounded ([`round_figure`]), for every document a
/// kgap tool writes.
pub fn to_vec_pretty_rounded<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, RoundingFormatter::default());
    value.serialize(&mut ser).expect("a report serializes");
    out
}

#[cfg(test)]
mod rounding_tests {
    use super::*;

    #[test]
    fn figures_lose_their_float_noise_and_keep_their_meaning() {
        assert_eq!(round_figure(2.4630000591278076), 2.463);
        assert_eq!(round_figure(182.82000000000002), 182.82);
        assert_eq!(round_figure(1541190.817473116), 1541190.817);
        assert_eq!(
            round_figure(1796027442.4641),
            1796027442.464,
            "Unix s keep their ms"
        );
        assert_eq!(round_figure(0.000123456789), 0.000123457);
        assert_eq!(round_figure(-0.5), -0.5);
        assert!(round_figure(f64::NAN).is_nan());
        let s = String::from_utf8(to_vec_pretty_rounded(&serde_json::json!({
            "duration_s": 2.4630000591278076, "whole": 3.0, "n": 7, "list": [0.1, 1e-9]
        })))
        .unwrap();
        assert!(s.contains("\"duration_s\": 2.463"), "{s}");
        assert!(s.contains("\"whole\": 3.0"), "{s}");
        assert!(s.contains("\"n\": 7"), "{s}");
        assert!(s.contains("1e-9"), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["list"][0], 0.1);
    }
}
