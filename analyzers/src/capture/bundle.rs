//! The bundle: a new folder with everything captured and `manifest.json`, which says what
//! each file holds, what was done to the target and undone, and what failed. The manifest is
//! written at the start and rewritten at the end, so a capture cut short still has one.

use std::fs;
use std::path::{Path, PathBuf};

use super::busiest::StackPoint;
use super::error::CaptureError;
use super::jmx::JmxSummary;
use super::jvm::Restored;
use super::memory::MemorySummary;
use super::sockets::Connection;
use super::target::Target;

/// The manifest's file name; gap-report lists it as not a capture of its kind.
pub const MANIFEST: &str = "manifest.json";

/// One file of the bundle.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BundleFile {
    pub path: String,
    pub what: String,
    /// Read by gap-report (false: for a person to read).
    pub analysed: bool,
}

/// A thread the capture saw, with its role.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SeenThread {
    pub tid: i32,
    pub name: String,
    pub role: &'static str,
}

/// Everything the bundle says about itself.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Manifest {
    pub target: Target,
    pub started_unix_s: u64,
    pub duration_s: f64,
    /// Seconds actually captured.
    pub captured_s: f64,
    /// Why the capture ended: `--duration reached`, `the process exited`, `interrupted`.
    pub ended: String,
    pub complete: bool,
    pub files: Vec<BundleFile>,
    /// Steps that failed, in words.
    pub problems: Vec<String>,
    /// What the capture did to the target, and that it was undone.
    pub changes: Vec<String>,
    pub jvm_restored: Option<Restored>,
    /// The Kafka client the thread dumps show (a JVM), e.g. `java-producer`.
    pub kafka_client: Option<String>,
    pub kafka_client_shown_by: Option<String>,
    /// librdkafka's threads and the Kafka client threads, with their roles.
    pub client_threads: Vec<SeenThread>,
    pub memory: Option<MemorySummary>,
    pub connections: Vec<Connection>,
    /// Where native stacks were taken: which threads, why, and how long each stopped them.
    pub stacks: Vec<StackPoint>,
    /// kafka-clients' metrics over JMX (a JVM): whether it was reachable, what was read.
    pub jmx: Option<JmxSummary>,
}

/// The folder being written.
pub struct Bundle {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

impl Bundle {
    /// Creates `dir` (or takes an empty one): a folder that already holds files would mix
    /// another capture into this one's report.
    pub fn create(dir: &Path, manifest: Manifest) -> Result<Bundle, CaptureError> {
        let err = |reason: String| CaptureError::Out {
            path: dir.display().to_string(),
            reason,
        };
        if let Ok(mut entries) = fs::read_dir(dir) {
            if entries.next().is_some() {
                return Err(err(
                    "not empty: give --out a new folder (gap-report reads all of it)".into(),
                ));
            }
        }
        fs::create_dir_all(dir).map_err(|e| err(format!("cannot create: {e}")))?;
        let dir = fs::canonicalize(dir).map_err(|e| err(e.to_string()))?;
        let b = Bundle { dir, manifest };
        b.write_manifest()
            .map_err(|e| err(format!("cannot write: {e}")))?;
        Ok(b)
    }

    pub fn add(&mut self, path: &str, what: impl Into<String>, analysed: bool) {
        self.manifest.files.push(BundleFile {
            path: path.into(),
            what: what.into(),
            analysed,
        });
    }

    pub fn write_manifest(&self) -> std::io::Result<()> {
        let text = crate::vocab::json_doc::pretty("capture", &self.manifest);
        let tmp = self.dir.join(".manifest.json.tmp");
        fs::write(&tmp, text)?;
        fs::rename(tmp, self.dir.join(MANIFEST))
    }

    /// Files in the bundle that are for a person, not for gap-report.
    pub fn unanalysed(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .manifest
            .files
            .iter()
            .filter(|f| !f.analysed)
            .map(|f| f.path.clone())
            .collect();
        v.push(MANIFEST.into());
        v
    }
}
