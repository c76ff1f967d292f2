//! Why a capture could not start, each with the fix, and the exit statuses `capture`
//! documents.

/// Captured for the whole duration.
pub const EXIT_CAPTURED: i32 = 0;
/// Captured in part: the target exited, or a step failed (the bundle and report still say
/// what was had).
pub const EXIT_PARTIAL: i32 = 1;
/// Bad usage, no such process, or `--out` cannot be written.
pub const EXIT_USAGE: i32 = 2;
/// The process is not a Kafka client (no librdkafka, not a JVM): nothing captured.
pub const EXIT_NOT_A_CLIENT: i32 = 3;
/// No permission to read or attach to the process, or no jcmd for its JVM: nothing
/// captured.
pub const EXIT_NO_ACCESS: i32 = 4;
/// Ctrl-C or SIGTERM: what was had is in the bundle, the recording and GC logging undone.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Why nothing was captured.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{0}")]
    Usage(String),
    #[error("no such process: {0} (check the pid: `pgrep -a java`, `pgrep -af rdkafka`)")]
    NoSuchPid(i32),
    #[error(
        "pid {pid} ({name}) is not a Kafka client: no librdkafka in its memory and no rdk:* \
         thread, and not a JVM; capture reads librdkafka-based processes (any language) and \
         JVMs"
    )]
    NotAClient { pid: i32, name: String },
    #[error("pid {pid}: {what}: permission denied; {fix}")]
    NoPermission { pid: i32, what: String, fix: String },
    #[error(
        "pid {pid} is a JVM but no jcmd was found (looked beside its java, {java}, and on \
         PATH): install the JDK it runs on (a JRE has no jcmd), give --jcmd PATH, or pass \
         --no-jvm to capture /proc and sockets only"
    )]
    NoJcmd { pid: i32, java: String },
    #[error("pid {pid}: jcmd cannot attach: {reason}; {fix}")]
    Attach {
        pid: i32,
        reason: String,
        fix: String,
    },
    #[error("{path}: {reason}")]
    Out { path: String, reason: String },
}

impl CaptureError {
    /// The exit status this error ends `capture` with.
    pub fn exit_code(&self) -> i32 {
        match self {
            CaptureError::Usage(_) | CaptureError::NoSuchPid(_) | CaptureError::Out { .. } => {
                EXIT_USAGE
            }
            CaptureError::NotAClient { .. } => EXIT_NOT_A_CLIENT,
            CaptureError::NoPermission { .. }
            | CaptureError::NoJcmd { .. }
            | CaptureError::Attach { .. } => EXIT_NO_ACCESS,
        }
    }
}
