//! Errors of the probe kit, each with the exit code it maps to.

use std::fmt;

/// Exit codes every probe shares (also in each `--help`).
pub mod exit {
    /// Measured; the verdict is in the output (whether the gap held or not).
    pub const OK: i32 = 0;
    /// The run failed: broker unreachable, topic could not be created, client error.
    pub const FAILED: i32 = 1;
    /// Bad usage or a configuration librdkafka refused (e.g. an unknown `-X` key).
    pub const USAGE: i32 = 2;
    /// Interrupted by Ctrl-C; what was measured so far was printed.
    pub const INTERRUPTED: i32 = 130;
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// librdkafka refused a configuration: its own words, then ours.
    #[error("librdkafka refused the configuration: {0}")]
    Config(String),
    #[error("{0}")]
    Usage(String),
    #[error("broker {bootstrap} unreachable: {reason}")]
    Unreachable { bootstrap: String, reason: String },
    #[error("{0}")]
    Kafka(String),
    /// The Java companion's JVM threw OutOfMemoryError: for probe-java-producers an outcome
    /// (the collapse run to its end), for the other probes a failed run.
    #[error("{0}")]
    JavaOutOfMemory(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl ProbeError {
    pub fn exit_code(&self) -> i32 {
        match self {
            ProbeError::Config(_) | ProbeError::Usage(_) => exit::USAGE,
            _ => exit::FAILED,
        }
    }

    pub fn io(context: impl fmt::Display, source: std::io::Error) -> ProbeError {
        ProbeError::Io {
            context: context.to_string(),
            source,
        }
    }

    pub fn kafka(context: impl fmt::Display, e: impl fmt::Display) -> ProbeError {
        ProbeError::Kafka(format!("{context}: {e}"))
    }
}

/// Turns librdkafka's configuration errors into [`ProbeError::Config`] (exit 2), keeping its
/// message; everything else is a run failure.
pub fn from_kafka(context: &str, e: rdkafka::error::KafkaError) -> ProbeError {
    match e {
        rdkafka::error::KafkaError::ClientConfig(_, desc, key, value) => {
            // librdkafka's description may quote the value too.
            let scrubbed =
                kgap_analyzers::vocab::redact::scrub(&desc, &[(key.clone(), value.clone())]);
            ProbeError::Config(format!(
                "{scrubbed} ({})",
                kgap_analyzers::vocab::redact::pair(&key, &value)
            ))
        }
        rdkafka::error::KafkaError::ClientCreation(msg) => ProbeError::Config(msg),
        other => ProbeError::kafka(context, other),
    }
}

pub type Result<T> = std::result::Result<T, ProbeError>;
