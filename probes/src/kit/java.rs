//! The Java side of a probe: kgap's Java companion (`probes/java/Companion.java`), built by
//! `scripts/java-companion` (kafka-clients 4.3.1 from Maven Central, javac) and run in its own
//! JVM with unified GC logging (and, on request, a JFR recording of the measured window).
//!
//! The companion uses the same payloads as the Rust kit (SplitMix64 seed 42; the pool's
//! SHA-256 is checked against [`crate::kit::payload::Pool`]) and prints one `RESULT {json}` line,
//! parsed here into [`CompanionResult`]. Every file of a run (gc.log, window.jfr, the
//! companion's stderr) is kept in the run's folder.

use crate::kit::error::{ProbeError, Result};
use crate::kit::interrupt;
use crate::kit::placement::OwnCore;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The build script, found beside this crate (override: KGAP_JAVA_COMPANION_SCRIPT).
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/java-companion");

/// The JFR settings of the window recording: every socket read and write (threshold 0).
pub const SOCKET_JFC: &str = include_str!("../../java/socket-io.jfc");

const INSTALL_HINT: &str =
    "install a JDK 17+ and Maven (e.g. apt-get install openjdk-17-jdk-headless maven), \
or set KGAP_JAVA to a java binary";

/// A JVM and the companion's classpath.
#[derive(Debug, Clone)]
pub struct Java {
    pub java: PathBuf,
    pub classpath: String,
    /// `java -version`'s first line.
    pub version: String,
}

impl Java {
    /// Finds java (KGAP_JAVA, $JAVA_HOME/bin/java, else `java` on PATH), builds the companion
    /// if needed and returns its classpath. No JDK is a usage error (exit 2) saying what to
    /// install.
    pub fn locate() -> Result<Java> {
        let java = match std::env::var_os("KGAP_JAVA") {
            Some(j) => PathBuf::from(j),
            None => match std::env::var_os("JAVA_HOME") {
                Some(h) if Path::new(&h).join("bin/java").is_file() => {
                    Path::new(&h).join("bin/java")
                }
                _ => PathBuf::from("java"),
            },
        };
        let out = Command::new(&java)
            .arg("-version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                ProbeError::Usage(format!(
                    "java not found ({}: {e}): the Java probes need a JVM; {INSTALL_HINT}",
                    java.display()
                ))
            })?;
        let version = String::from_utf8_lossy(&out.stderr)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        let script = std::env::var_os("KGAP_JAVA_COMPANION_SCRIPT")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(SCRIPT));
        if !script.is_file() {
            return Err(ProbeError::Usage(format!(
                "{} not found: the Java companion is built from the kgap repository (set \
                 KGAP_JAVA_COMPANION_SCRIPT to its scripts/java-companion)",
                script.display()
            )));
        }
        let mut cmd = Command::new(&script);
        if let Some(dir) = java.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Compile with the JDK that will run it, when java came with a path.
            if dir.join("javac").is_file() {
                cmd.env("KGAP_JAVAC", dir.join("javac"));
            }
        }
        let out = cmd
            .arg("classpath")
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| ProbeError::io(format!("running {}", script.display()), e))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {}
            Some(2) => {
                return Err(ProbeError::Usage(format!(
                    "building the Java companion: {}",
                    stderr.trim()
                )))
            }
            _ => {
                return Err(ProbeError::Kafka(format!(
                    "building the Java companion failed: {}",
                    stderr.trim()
                )))
            }
        }
        let classpath = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if classpath.is_empty() {
            return Err(ProbeError::Kafka(format!(
                "{} printed no classpath",
                script.display()
            )));
        }
        Ok(Java {
            java,
            classpath,
            version,
        })
    }
}

/// The Java probes need a real broker: librdkafka's mock cluster (2.12.1) answers the Java
/// client's ApiVersions and then closes its connection, so kafka-clients 4.3.1 retries
/// forever (checked: `Bootstrap broker … disconnected`, no Metadata ever answered).
pub fn require_brokers(brokers: Option<&str>) -> Result<&str> {
    brokers.ok_or_else(|| {
        ProbeError::Usage(
            "the Java probes need a Kafka broker: pass --brokers HOST:PORT (a local one: \
             scripts/kafka up, then --brokers 127.0.0.1:9092). librdkafka's embedded mock \
             cluster cannot stand in: it closes the Java client's connection right after \
             ApiVersions"
                .into(),
        )
    })
}

/// Which client runs a probe's sweep: librdkafka (the probe's subject), the Java companion at
/// the same points, or both side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Client {
    Rust,
    Java,
    Both,
}

impl Client {
    /// The clients the kit runs at every point for this choice (librdkafka first).
    pub fn clients(self) -> Vec<kgap_analyzers::findings::probe_result::Client> {
        use kgap_analyzers::findings::probe_result::Client as C;
        match self {
            Client::Rust => vec![C::Librdkafka],
            Client::Java => vec![C::Java],
            Client::Both => vec![C::Librdkafka, C::Java],
        }
    }
}

/// One point of a probe's sweep on the Java side: the companion in its own JVM on a fresh
/// topic of the probe's (`kgap` gets its name and partitions; deleted after), its payload
/// pool checked against the Rust one (`payload_sha256`). Returns the run and the topic's name;
/// Ok(None): Ctrl-C stopped the JVM, and the probe prints what was measured.
#[allow(clippy::too_many_arguments)]
pub fn run_point(
    java: &Java,
    broker: &crate::kit::broker::Broker,
    probe: &str,
    partitions: i32,
    dir: &Path,
    jvm: &Jvm,
    kgap: &[(&str, String)],
    client: &[(String, String)],
    timeout: Duration,
    payload_sha256: &str,
) -> Result<Option<(CompanionRun, String)>> {
    let topic = broker.create_topic(probe, partitions)?;
    let mut args: Vec<(&str, String)> = vec![
        ("topic", topic.name.clone()),
        ("partitions", partitions.to_string()),
    ];
    args.extend(kgap.iter().cloned());
    let run = run(java, dir, jvm, &args, client, timeout);
    let name = topic.name.clone();
    topic.delete()?;
    let run = match run {
        Err(_) if interrupt::stopped() => return Ok(None),
        r => r?,
    };
    if run.result.payload_sha256.as_deref() != Some(payload_sha256) {
        return Err(ProbeError::Kafka(format!(
            "the Java companion's payload pool differs from the Rust kit's ({:?} vs {payload_sha256})",
            run.result.payload_sha256
        )));
    }
    Ok(Some((run, name)))
}

/// Warmup rounds of a second at most before a run that asks for them (the companion's
/// `kgap.warmup-passes`), until the JIT's compiler threads take under a tenth of one: on a
/// pinned core a fresh JVM's C2 took half the core through a 2 s consumer window after one
/// read of the topic at 100 B, and a third of a producer's 3 s window.
pub const WARMUP_PASSES: u32 = 8;

/// How to start the JVM of one run.
#[derive(Debug, Clone)]
pub struct Jvm {
    /// -Xms and -Xmx (e.g. "512m"): fixed, so the heap does not resize under the window.
    pub heap: String,
    /// Record the measured window with JFR (SocketRead/SocketWrite at threshold 0).
    pub jfr: bool,
    /// Extra JVM options, after kgap's.
    pub extra: Vec<String>,
    /// Threads of the JVM pinned alone to a cpu while it runs (`--own-core`): the rest of
    /// the JVM keeps the probe's affinity, which leaves that cpu out.
    pub own_core: Option<OwnCore>,
}

impl Jvm {
    /// A JVM with a fixed `heap`, no JFR, no extra options.
    pub fn heap(heap: &str) -> Jvm {
        Jvm {
            heap: heap.into(),
            jfr: false,
            extra: Vec::new(),
            own_core: None,
        }
    }
}

/// One garbage collector MXBean's figures over the window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CollectorFigures {
    pub name: String,
    pub count: u64,
    pub time_ms: u64,
}

/// The companion's `RESULT` line. Fields a mode does not report are absent (None).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CompanionResult {
    pub mode: String,
    pub messages: u64,
    pub seconds: f64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    pub process_cpu_s: f64,
    /// Over the window, from the GC MXBeans.
    pub gc_count: u64,
    pub gc_time_ms: u64,
    pub gc_fraction: f64,
    pub gc_collectors: Vec<CollectorFigures>,
    pub rss_bytes: i64,
    pub rss_peak_bytes: i64,
    pub heap_max_bytes: i64,
    pub java_version: String,
    pub kafka_clients_version: String,
    pub payload_sha256: Option<String>,
    pub pool_count: Option<u64>,
    pub producers: Option<u32>,
    pub latency_sample_every: Option<u64>,
    pub latency_samples: Option<u64>,
    pub latency_samples_skipped: Option<u64>,
    pub send_to_ack_ms_p50: Option<f64>,
    pub send_to_ack_ms_p99: Option<f64>,
    pub send_to_ack_ms_max: Option<f64>,
    pub delivery_errors: Option<u64>,
    /// produce: messages handed to send() per second in the window; at its end, messages not
    /// yet acknowledged and the accumulators' bytes in use; seconds send() spent blocked on a
    /// full buffer.memory (all producers, so up to K × the window).
    pub sent_per_s: Option<f64>,
    pub backlog_messages_end: Option<i64>,
    pub buffer_used_bytes_end: Option<i64>,
    pub buffer_wait_s: Option<f64>,
    pub first_error: Option<String>,
    /// produce: bytes and records the producers drained to the wire in the window
    /// (producer-topic-metrics byte-total, record-send-total: batches as sent, compressed).
    pub wire_bytes_window: Option<u64>,
    pub records_sent_window: Option<u64>,
    /// produce: kafka-clients' per-batch means over about the window (1 s samples):
    /// batch-size-avg (bytes of a batch as sent), compression-rate-avg (compressed over
    /// uncompressed), records-per-request-avg.
    pub batch_size_avg: Option<f64>,
    pub compression_rate_avg: Option<f64>,
    pub records_per_request_avg: Option<f64>,
    /// produce: CPU seconds in the window of the threads calling send() (where kafka-clients
    /// compresses) and of the producers' network threads; -1 when the JVM cannot tell.
    pub send_thread_cpu_s: Option<f64>,
    pub network_thread_cpu_s: Option<f64>,
    /// produce: the network threads' user-space part of network_thread_cpu_s (the rest is
    /// the kernel's); -1 when the JVM cannot tell.
    pub network_thread_user_cpu_s: Option<f64>,
    /// e2e: the paced rate asked for and reached in the window, the pacer's worst lag and
    /// late sends; end-to-end latency (consumer receive − stamped send time, same JVM) of
    /// every window message received, and how many never arrived within 15 s.
    pub rate_target_per_s: Option<f64>,
    pub rate_achieved_per_s: Option<f64>,
    pub worst_lag_ms: Option<f64>,
    /// Sends more than 1 ms after their slot (the pacer catches up, dropping none).
    pub late_sends: Option<u64>,
    pub e2e_samples: Option<u64>,
    pub e2e_missing: Option<i64>,
    pub e2e_ms_p50: Option<f64>,
    pub e2e_ms_p90: Option<f64>,
    pub e2e_ms_p99: Option<f64>,
    pub e2e_ms_p999: Option<f64>,
    /// End-to-end from each message's intended send time (its pacer slot).
    pub e2e_intended_ms_p50: Option<f64>,
    pub e2e_intended_ms_p99: Option<f64>,
    pub e2e_intended_ms_p999: Option<f64>,
    pub e2e_ms_max: Option<f64>,
    /// consume: CPU seconds of the thread that calls poll() (and reads the socket) over
    /// the window; -1 when the JVM cannot tell.
    pub poll_thread_cpu_s: Option<f64>,
    pub expected_messages: Option<u64>,
    pub complete: Option<bool>,
}

impl CompanionResult {
    /// Full GCs in the window: the old-generation collectors' counts (G1 Old Generation,
    /// PS MarkSweep, MarkSweepCompact).
    pub fn full_gcs(&self) -> u64 {
        self.gc_collectors
            .iter()
            .filter(|c| c.name.contains("Old") || c.name.contains("MarkSweep"))
            .map(|c| c.count)
            .sum()
    }
}

/// A finished run: the parsed result and where its files are.
#[derive(Debug, Clone)]
pub struct CompanionRun {
    pub result: CompanionResult,
    pub result_line: String,
    pub gc_log: PathBuf,
    pub jfr: Option<PathBuf>,
    pub stderr: PathBuf,
    /// Threads of the JVM found pinned to its `own_core` (0 without one).
    pub own_core_threads: usize,
}

/// Parses the one `RESULT {json}` line of the companion's stdout.
pub fn parse_result(stdout: &str) -> Result<(CompanionResult, String)> {
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("RESULT "))
        .collect();
    match lines.as_slice() {
        [line] => {
            let r: CompanionResult = serde_json::from_str(&line["RESULT ".len()..])
                .map_err(|e| ProbeError::Kafka(format!("the companion's RESULT line: {e}")))?;
            Ok((r, line.to_string()))
        }
        [] => Err(ProbeError::Kafka(
            "the Java companion printed no RESULT line".into(),
        )),
        _ => Err(ProbeError::Kafka(format!(
            "the Java companion printed {} RESULT lines, expected one",
            lines.len()
        ))),
    }
}

/// Runs the companion once in `dir`: `kgap` are its own settings (`kgap.mode`, …, without the
/// prefix), `client` the kafka-clients properties passed through. GC log: `dir/gc.log`;
/// JFR (if asked): `dir/window.jfr`; stderr: `dir/companion.stderr`. Killed after `timeout`
/// or on Ctrl-C.
pub fn run(
    java: &Java,
    dir: &Path,
    jvm: &Jvm,
    kgap: &[(&str, String)],
    client: &[(String, String)],
    timeout: Duration,
) -> Result<CompanionRun> {
    let gc_log = dir.join("gc.log");
    let stderr_path = dir.join("companion.stderr");
    let mut args: Vec<String> = vec![
        format!("-Xms{}", jvm.heap),
        format!("-Xmx{}", jvm.heap),
        "-XX:+UseG1GC".into(),
        // Every heap page faulted in before the run, not inside the window: a fresh JVM's
        // first touch of its heap otherwise costs its allocating thread half a core on
        // a short window (page clearing in the kernel, docs/perf.md), a cost a service
        // that has run a while no longer pays.
        "-XX:+AlwaysPreTouch".into(),
        format!("-Xlog:gc*:file={}:time,uptime,level,tags", gc_log.display()),
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn".into(),
    ];
    args.extend(jvm.extra.iter().cloned());
    args.extend(["-cp".into(), java.classpath.clone(), "Companion".into()]);
    args.extend(kgap.iter().map(|(k, v)| format!("kgap.{k}={v}")));
    let jfr = if jvm.jfr {
        let jfc = dir.join("socket-io.jfc");
        std::fs::write(&jfc, SOCKET_JFC)
            .map_err(|e| ProbeError::io(format!("writing {}", jfc.display()), e))?;
        let path = dir.join("window.jfr");
        args.push(format!("kgap.jfr={}", path.display()));
        args.push(format!("kgap.jfc={}", jfc.display()));
        Some(path)
    } else {
        None
    };
    // Secret properties go on the JVM's stdin, not its command line (which ps shows).
    let (secret, plain): (Vec<_>, Vec<_>) = client
        .iter()
        .partition(|(k, _)| kgap_analyzers::vocab::redact::is_secret(k));
    args.extend(plain.iter().map(|(k, v)| format!("{k}={v}")));
    if !secret.is_empty() {
        args.push("kgap.secrets=stdin".into());
    }
    std::fs::write(dir.join("companion.cmd"), shell_line(&java.java, &args))
        .map_err(|e| ProbeError::io(format!("writing in {}", dir.display()), e))?;
    let err_file = std::fs::File::create(&stderr_path)
        .map_err(|e| ProbeError::io(format!("creating {}", stderr_path.display()), e))?;
    let mut child = Command::new(&java.java)
        .args(&args)
        .stdin(if secret.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(err_file)
        .spawn()
        .map_err(|e| ProbeError::io(format!("starting {}", java.java.display()), e))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        let mut lines = String::new();
        for (k, v) in &secret {
            lines.push_str(&format!("{k}={v}\n"));
        }
        lines.push('\n');
        stdin
            .write_all(lines.as_bytes())
            .map_err(|e| ProbeError::io("handing the JVM its secret properties", e))?;
    }
    // Stdout is one line at the end: read it on a thread so a chatty child never blocks.
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let mut own_core_threads = 0;
    let status = loop {
        if let Some(own) = jvm.own_core.filter(|_| own_core_threads == 0) {
            // Every 50 ms until found: a thread started later (a consumer's poll thread) is
            // pinned within that, long before the companion's warmup rounds end.
            own_core_threads = own.pin(child.id());
        }
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(ProbeError::io("waiting for the Java companion", e)),
        }
        if interrupt::stopped() || start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ProbeError::Kafka(if interrupt::stopped() {
                "interrupted: the Java companion was stopped".into()
            } else {
                format!(
                    "the Java companion did not finish within {} s (stderr: {})",
                    timeout.as_secs(),
                    stderr_path.display()
                )
            }));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = reader.join().unwrap_or_default();
    if !status.success() {
        let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        return Err(companion_failure(status.code(), &err, &stderr_path));
    }
    let (result, result_line) = parse_result(&stdout)?;
    std::fs::write(dir.join("result.line"), format!("{result_line}\n"))
        .map_err(|e| ProbeError::io(format!("writing in {}", dir.display()), e))?;
    Ok(CompanionRun {
        result,
        result_line,
        gc_log,
        jfr,
        stderr: stderr_path,
        own_core_threads,
    })
}

/// What a failed companion run means, from its exit code and stderr: 2 is a setting
/// kafka-clients refused (usage), an OutOfMemoryError is the heap running out, anything else
/// a failed run. The message is the companion's own `ERROR` line, else stderr's last lines.
pub fn companion_failure(code: Option<i32>, stderr: &str, stderr_path: &Path) -> ProbeError {
    let msg = stderr
        .lines()
        .find_map(|l| l.strip_prefix("ERROR "))
        .map(str::to_string)
        .unwrap_or_else(|| {
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        });
    let msg = format!(
        "Java companion: {msg} (exit {}; stderr: {})",
        code.unwrap_or(-1),
        stderr_path.display()
    );
    if code == Some(2) {
        ProbeError::Usage(msg)
    } else if stderr.contains("java.lang.OutOfMemoryError") {
        ProbeError::JavaOutOfMemory(msg)
    } else {
        ProbeError::Kafka(msg)
    }
}

/// The Java pool's SHA-256 for `size` and `kind` (mode pool-sha; no broker needed).
pub fn pool_sha256(
    java: &Java,
    size: usize,
    kind: crate::kit::payload::PayloadKind,
) -> Result<String> {
    let dir = std::env::temp_dir().join(format!("kgap-java-pool-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| ProbeError::io(format!("creating {}", dir.display()), e))?;
    let r = run(
        java,
        &dir,
        &Jvm::heap("256m"),
        &[
            ("mode", "pool-sha".into()),
            ("size", size.to_string()),
            ("kind", kind.to_string()),
        ],
        &[],
        Duration::from_secs(60),
    );
    let _ = std::fs::remove_dir_all(&dir);
    r?.result
        .payload_sha256
        .ok_or_else(|| ProbeError::Kafka("pool-sha gave no payload_sha256".into()))
}

/// The note a Java probe ends its sweep with: the load average when it began and now.
pub fn load_note(before: Option<&str>) -> String {
    format!(
        "load average (1/5/15 min) before {} and after {}: other work on this machine shares \
         its cores",
        before.unwrap_or("?"),
        load_average().as_deref().unwrap_or("?")
    )
}

/// The 1-, 5- and 15-minute load averages (/proc/loadavg), to print beside numbers measured
/// on a shared machine.
pub fn load_average() -> Option<String> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

fn shell_line(java: &Path, args: &[String]) -> String {
    let q = |s: &str| {
        if s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,:=/+@%".contains(c))
        {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    let mut line = q(&java.to_string_lossy());
    for a in args {
        line.push(' ');
        // Client properties go as key=value: a secret's value stays out of the file.
        let a = match a.split_once('=') {
            Some((k, v)) => kgap_analyzers::vocab::redact::pair(k, v),
            None => a.clone(),
        };
        line.push_str(&q(&a));
    }
    line.push('\n');
    line
}

/// Parses a JVM-style size (`2M`, `512k`, `33554432`) into bytes.
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m' | 'M') => (&t[..t.len() - 1], 1 << 20),
        Some('g' | 'G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("bad size {s:?} (e.g. 2M, 512k, 33554432)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_line_parses_and_must_be_unique() {
        let out = "noise\nRESULT {\"mode\":\"produce\",\"messages\":10,\"msgs_per_s\":5.0,\
                   \"gc_collectors\":[{\"name\":\"G1 Young Generation\",\"count\":3,\"time_ms\":7},\
                   {\"name\":\"G1 Old Generation\",\"count\":1,\"time_ms\":90}],\
                   \"send_to_ack_ms_p99\":1.5,\"unknown_field\":1}\n";
        let (r, line) = parse_result(out).unwrap();
        assert_eq!(r.messages, 10);
        assert_eq!(r.send_to_ack_ms_p99, Some(1.5));
        assert_eq!(r.full_gcs(), 1);
        assert!(line.starts_with("RESULT {"));
        assert!(parse_result("nothing\n").is_err());
        assert!(parse_result("RESULT {}\nRESULT {}\n").is_err());
        assert!(parse_result("RESULT {oops\n").is_err());
    }

    #[test]
    fn a_companion_that_ran_out_of_heap_is_told_apart() {
        // Real stderr of a K=16 run in a 256m JVM (fixtures/gc/companion).
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/gc/companion/k16-default-256m-oom-jdk17.stderr");
        let oom = std::fs::read_to_string(&path).unwrap();
        let e = companion_failure(Some(1), &oom, &path);
        assert!(matches!(e, ProbeError::JavaOutOfMemory(_)), "{e:?}");
        assert!(e.to_string().contains("Java heap space"), "{e}");
        assert_eq!(e.exit_code(), crate::kit::error::exit::FAILED);
        let e = companion_failure(Some(2), "ERROR acks: Invalid value banana\n", &path);
        assert!(
            matches!(e, ProbeError::Usage(ref m) if m.contains("banana")),
            "{e:?}"
        );
        let e = companion_failure(Some(1), "a\nb\nTimeoutException\n", &path);
        assert!(
            matches!(e, ProbeError::Kafka(ref m) if m.contains("TimeoutException")),
            "{e:?}"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("2M").unwrap(), 2 << 20);
        assert_eq!(parse_size("512k").unwrap(), 512 << 10);
        assert_eq!(parse_size("33554432").unwrap(), 33554432);
        assert!(parse_size("0").is_err());
        assert!(parse_size("2X").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn shell_line_quotes_what_needs_it() {
        let l = shell_line(Path::new("java"), &["-Xmx1g".into(), "a b".into()]);
        assert_eq!(l, "java -Xmx1g 'a b'\n");
    }

    #[test]
    fn shell_line_never_writes_a_secret() {
        let l = shell_line(
            Path::new("java"),
            &["sasl.jaas.config=x password=\"p\"".into()],
        );
        assert_eq!(l, "java 'sasl.jaas.config=[redacted]'\n");
    }
}
