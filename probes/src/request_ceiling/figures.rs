//! One run's figures: librdkafka's, or the Java companion's.

use super::java_side::JavaFigures;
use super::librdkafka::LibrdkafkaFigures;
use serde::Serialize;

/// One run's figures: librdkafka's, or the Java companion's.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Figures {
    // Boxed: librdkafka's figures are four times Java's.
    Librdkafka(Box<LibrdkafkaFigures>),
    Java(JavaFigures),
}

impl Figures {
    pub fn librdkafka(&self) -> Option<&LibrdkafkaFigures> {
        match self {
            Figures::Librdkafka(f) => Some(f.as_ref()),
            Figures::Java(_) => None,
        }
    }

    pub fn java(&self) -> Option<&JavaFigures> {
        match self {
            Figures::Java(f) => Some(f),
            Figures::Librdkafka(_) => None,
        }
    }

    pub fn msgs_per_s(&self) -> f64 {
        match self {
            Figures::Librdkafka(f) => f.window.msgs_per_s,
            Figures::Java(f) => f.msgs_per_s,
        }
    }

    pub fn mb_per_s(&self) -> f64 {
        match self {
            Figures::Librdkafka(f) => f.window.mb_per_s,
            Figures::Java(f) => f.mb_per_s,
        }
    }

    pub fn cpu_s_per_million(&self) -> f64 {
        match self {
            Figures::Librdkafka(f) => f.window.cpu_s_per_million,
            Figures::Java(f) => f.cpu_s_per_million,
        }
    }

    /// The run's own topic (created for it, deleted after it).
    pub fn topic(&self) -> &str {
        match self {
            Figures::Librdkafka(f) => &f.topic,
            Figures::Java(f) => &f.topic,
        }
    }
}
