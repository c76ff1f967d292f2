//! Secrets never leave the process: every client property whose name marks it as a secret
//! (a password, a key, a token, a JAAS line) is shown as `[redacted]` wherever kgap writes
//! it — text, JSON, CSV, error messages, a run's command file — for librdkafka's `-X` and
//! kafka-clients' `-J` alike. [`foreign_command_line`] and [`scrub_properties`] do the same
//! for what another program holds (capture's target: its argv, its JVM's `-D` properties, a
//! log it wrote).

/// What a secret's value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Parts of a property name that make its value a secret.
const SECRET_NAME_PARTS: [&str; 7] = [
    "password",
    "secret",
    "sasl.jaas.config",
    "ssl.key.pem",
    "ssl.keystore",
    "oauthbearer",
    "token",
];

/// Whether a property's value must not be shown.
pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    SECRET_NAME_PARTS.iter().any(|p| k.contains(p))
}

/// The value as it may be shown.
pub fn shown<'a>(key: &str, value: &'a str) -> &'a str {
    if is_secret(key) {
        REDACTED
    } else {
        value
    }
}

/// `key=value` as it may be shown.
pub fn pair(key: &str, value: &str) -> String {
    format!("{key}={}", shown(key, value))
}

/// `text` with every value of `secrets` replaced: for messages that quote a configuration
/// librdkafka or the JVM wrote (which may carry the value anywhere in the text).
pub fn scrub(text: &str, properties: &[(String, String)]) -> String {
    let mut out = text.to_string();
    for (k, v) in properties {
        if is_secret(k) && !v.is_empty() {
            out = out.replace(v.as_str(), REDACTED);
        }
    }
    out
}

/// A command line as it may be shown: the program's file name, every `-X`/`-J` value of a
/// secret replaced (`-X k=v` and `-Xk=v` alike), each word quoted for a POSIX shell where
/// it needs it.
pub fn command_line(args: impl IntoIterator<Item = String>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut after_flag = false;
    for (i, a) in args.into_iter().enumerate() {
        let shown = if i == 0 {
            std::path::Path::new(&a)
                .file_name()
                .map_or(a.clone(), |n| n.to_string_lossy().into_owned())
        } else if after_flag {
            property(&a)
        } else if let Some(rest) = a.strip_prefix("-X").or_else(|| a.strip_prefix("-J")) {
            if rest.is_empty() {
                a.clone()
            } else {
                format!("{}{}", &a[..2], property(rest))
            }
        } else {
            a.clone()
        };
        after_flag = a == "-X" || a == "-J";
        out.push(quote(&shown));
    }
    out.join(" ")
}

/// Another program's command line as it may be shown (capture's target, whose flags kgap
/// does not know): every `key=value` word whose key names a secret (`-Dsasl.password=…`,
/// `--ssl.key.password=…`, `sasl.jaas.config=…`) and the word after a flag whose name does
/// (`--password hunter2`) are replaced; each word quoted for a POSIX shell.
pub fn foreign_command_line(args: impl IntoIterator<Item = String>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut secret_next = false;
    for a in args {
        let shown = if secret_next {
            REDACTED.to_string()
        } else if let Some((k, v)) = a.split_once('=') {
            pair(k, v)
        } else {
            a.clone()
        };
        secret_next = a.starts_with('-') && !a.contains('=') && is_secret(&a);
        out.push(quote(&shown));
    }
    out.join(" ")
}

/// `text` (a line another program wrote: a librdkafka configuration dump, a JVM's system
/// properties) with the value of every `key=value`, `key = value` or `"key": "value"` whose
/// key names a secret replaced, up to the end of the line or the closing quote.
pub fn scrub_properties(text: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"(?P<key>[A-Za-z0-9_.\-]+)(?P<sep>"?\s*[=:]\s*"?)(?P<value>[^"\s,;]+)"#)
            .expect("redaction pattern")
    });
    re.replace_all(text, |c: &regex::Captures| {
        if is_secret(&c["key"]) {
            format!("{}{}{REDACTED}", &c["key"], &c["sep"])
        } else {
            c[0].to_string()
        }
    })
    .into_owned()
}

fn property(kv: &str) -> String {
    match kv.split_once('=') {
        Some((k, v)) => pair(k, v),
        None => kv.to_string(),
    }
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+[]".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_shows_no_secret() {
        let args = [
            "/x/target/release/probe-fetch-backoff",
            "-X",
            "sasl.password=hunter2",
            "-Xsasl.jaas.config=a b",
            "-J",
            "linger.ms=5",
            "--out",
            "my dir",
        ]
        .map(String::from);
        let line = command_line(args);
        assert!(!line.contains("hunter2"), "{line}");
        assert_eq!(
            line,
            "probe-fetch-backoff -X sasl.password=[redacted] -Xsasl.jaas.config=[redacted] \
             -J linger.ms=5 --out 'my dir'"
        );
    }

    #[test]
    fn secret_names_are_recognised_whatever_their_case() {
        for k in [
            "sasl.password",
            "ssl.key.password",
            "SSL.KEYSTORE.PASSWORD",
            "sasl.jaas.config",
            "ssl.key.pem",
            "ssl.keystore.location",
            "sasl.oauthbearer.client.secret",
            "sasl.oauthbearer.config",
            "some.token",
        ] {
            assert!(is_secret(k), "{k}");
        }
        for k in [
            "sasl.username",
            "security.protocol",
            "linger.ms",
            "ssl.ca.location",
        ] {
            assert!(!is_secret(k), "{k}");
        }
        assert_eq!(pair("sasl.password", "hunter2"), "sasl.password=[redacted]");
        assert_eq!(pair("sasl.username", "alice"), "sasl.username=alice");
    }

    #[test]
    fn a_foreign_command_line_shows_no_secret() {
        let args = [
            "java",
            "-Dssl.keystore.password=hunter2",
            "-Xmx1g",
            "--password",
            "hunter3",
            "sasl.jaas.config=a",
            "-cp",
            "/x.jar",
        ]
        .map(String::from);
        let line = foreign_command_line(args);
        assert!(!line.contains("hunter"), "{line}");
        assert!(
            line.contains(" -Xmx1g ") && line.ends_with("-cp /x.jar"),
            "{line}"
        );
        assert!(line.contains("--password [redacted]"), "{line}");
    }

    #[test]
    fn properties_are_scrubbed_in_any_notation() {
        for (text, keep) in [
            ("sasl.password = hunter2", "sasl.password = [redacted]"),
            (
                "\"sasl.password\": \"hunter2\"",
                "\"sasl.password\": \"[redacted]\"",
            ),
            (
                "a=1 ssl.key.password=hunter2 b=2",
                "a=1 ssl.key.password=[redacted] b=2",
            ),
        ] {
            assert_eq!(scrub_properties(text), keep);
        }
        assert_eq!(scrub_properties("linger.ms=5"), "linger.ms=5");
    }

    #[test]
    fn scrub_removes_a_secret_quoted_anywhere() {
        let props = vec![("sasl.password".to_string(), "hunter2".to_string())];
        assert_eq!(
            scrub("Invalid value \"hunter2\" for sasl.password", &props),
            "Invalid value \"[redacted]\" for sasl.password"
        );
    }
}
