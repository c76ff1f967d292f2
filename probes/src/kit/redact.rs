//! Secrets never leave the process: every client property whose name marks it as a secret
//! (a password, a key, a token, a JAAS line) is shown as `[redacted]` wherever kgap writes
//! it — text, JSON, CSV, error messages, a run's command file — for librdkafka's `-X` and
//! kafka-clients' `-J` alike.

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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn scrub_removes_a_secret_quoted_anywhere() {
        let props = vec![("sasl.password".to_string(), "hunter2".to_string())];
        assert_eq!(
            scrub("Invalid value \"hunter2\" for sasl.password", &props),
            "Invalid value \"[redacted]\" for sasl.password"
        );
    }
}
