//! What this build of the probes is: kgap's version, the librdkafka linked in and the
//! features it was built with (`--version` prints it; a user comparing runs needs it first).

use std::sync::OnceLock;

use crate::kit::error::{ProbeError, Result};

/// librdkafka's `builtin.features` of this build (e.g. "gzip,snappy,ssl,…,lz4").
pub fn builtin_features() -> Result<Vec<String>> {
    let conf = rdkafka::config::ClientConfig::new()
        .create_native_config()
        .map_err(|e| ProbeError::kafka("reading builtin.features", e))?;
    let f = conf
        .get("builtin.features")
        .map_err(|e| ProbeError::kafka("reading builtin.features", e))?;
    Ok(f.split(',').map(|s| s.trim().to_string()).collect())
}

/// `--version`'s text: "0.1.0 (librdkafka 2.12.1, builtin.features gzip,snappy,…)".
pub fn version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        let features = builtin_features()
            .map(|f| f.join(","))
            .unwrap_or_else(|e| format!("unknown ({e})"));
        format!(
            "{} (librdkafka {}, builtin.features {features}; the Java side: kafka-clients {})",
            env!("CARGO_PKG_VERSION"),
            rdkafka::util::get_rdkafka_version().1,
            kafka_clients_version(),
        )
    })
}

/// The kafka-clients version the Java companion is built with: its pom, read at compile time,
/// so this cannot disagree with what scripts/java-companion fetches.
pub fn kafka_clients_version() -> &'static str {
    const POM: &str = include_str!("../../java/pom.xml");
    POM.split("<artifactId>kafka-clients</artifactId>")
        .nth(1)
        .and_then(|rest| rest.split("<version>").nth(1))
        .and_then(|v| v.split("</version>").next())
        .map(str::trim)
        .unwrap_or("unknown")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_names_librdkafka_its_features_and_kafka_clients() {
        let v = super::version();
        assert!(v.contains("librdkafka 2."), "{v}");
        // The build the project needs for real clusters (TLS, SASL, zstd).
        for f in ["ssl", "sasl_scram", "zstd", "gzip"] {
            assert!(v.contains(f), "{f} missing from {v}");
        }
        assert_eq!(super::kafka_clients_version(), "4.3.1");
    }
}
