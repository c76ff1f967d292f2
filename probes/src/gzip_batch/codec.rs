//! The codec of a sweep, and whether this build of librdkafka has it.

use crate::kit::error::{ProbeError, Result};
use serde::{Deserialize, Serialize};

/// The codecs librdkafka knows; whether this build has one is in `builtin.features`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Codec {
    Gzip,
    Lz4,
    Zstd,
    Snappy,
}

impl Codec {
    pub const ALL: [Codec; 4] = [Codec::Gzip, Codec::Lz4, Codec::Zstd, Codec::Snappy];

    /// compression.type's value, and the name in `builtin.features`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
            Codec::Snappy => "snappy",
        }
    }

    /// The rdkafka-sys cargo feature that builds it in.
    fn cargo_feature(self) -> &'static str {
        match self {
            Codec::Gzip => "libz",
            Codec::Zstd => "zstd",
            Codec::Lz4 | Codec::Snappy => self.name(),
        }
    }
}

pub use crate::kit::build_info::builtin_features;

/// A codec this librdkafka was built without is bad usage (exit 2), said plainly, with the
/// codecs it has and the rdkafka-sys feature that would add it. The build is not this
/// probe's to change: the message reads the features, it does not assume them.
pub fn check_codec(codec: Codec, features: &[String]) -> Result<()> {
    if features.iter().any(|f| f == codec.name()) {
        return Ok(());
    }
    let available: Vec<&str> = Codec::ALL
        .iter()
        .filter(|c| features.iter().any(|f| f == c.name()))
        .map(|c| c.name())
        .collect();
    Err(ProbeError::Usage(format!(
        "--codec {}: this build's librdkafka {} has no {} codec (builtin.features: {}); \
         rdkafka-sys builds it in with its \"{}\" cargo feature. This build has --codec {}",
        codec.name(),
        rdkafka::util::get_rdkafka_version().1,
        codec.name(),
        features.join(","),
        codec.cargo_feature(),
        available.join("|"),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_codec_missing_from_the_build_is_usage() {
        let f: Vec<String> = ["gzip", "snappy", "ssl", "lz4"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(check_codec(Codec::Gzip, &f).is_ok());
        let e = check_codec(Codec::Zstd, &f).unwrap_err();
        assert_eq!(e.exit_code(), crate::kit::error::exit::USAGE);
        let msg = e.to_string();
        assert!(
            msg.contains("no zstd codec") && msg.contains("gzip|lz4|snappy"),
            "{msg}"
        );
        assert!(msg.contains("\"zstd\" cargo feature"), "{msg}");
    }

    #[test]
    fn this_builds_features_are_read_not_assumed() {
        let f = builtin_features().unwrap();
        assert!(f.iter().any(|x| x == "gzip"), "{f:?}");
        // Whatever the build has, the check agrees with builtin.features.
        for c in Codec::ALL {
            assert_eq!(
                check_codec(c, &f).is_ok(),
                f.iter().any(|x| x == c.name()),
                "{c:?}"
            );
        }
    }
}
