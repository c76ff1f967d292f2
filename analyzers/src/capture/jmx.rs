//! kafka-clients' own metrics, over JMX, when the JVM serves it: read-only. Whether its
//! local JMX agent runs is `jcmd PID ManagementAgent.status` (its connector's address); when
//! it does, a small reader of JDK classes only (`analyzers/java/KgapJmx.java`, run in the
//! target JDK's `java` in source-file mode: no build, no jar) prints the attributes of the
//! `kafka.producer`, `kafka.consumer` and `kafka.network` MBeans, which are written to the
//! bundle redacted like every other output. When it does not run, capture says so and how to
//! get them; `--jmx` starts it (`ManagementAgent.start_local`: a local connector, no network
//! port), the one change capture cannot undo — the JDK has no command that stops it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::jcmd::Jcmd;
use crate::vocab::redact;

/// The reader, compiled by the JDK's source launcher at each capture.
const READER: &str = include_str!("../../java/KgapJmx.java");

/// The MBeans read: kafka-clients' producer, consumer and per-connection metrics.
pub const PATTERNS: [&str; 3] = ["kafka.producer:*", "kafka.consumer:*", "kafka.network:*"];

/// How long the reader may take (the source launcher compiles it first: seconds on 2 cores).
const LIMIT: Duration = Duration::from_secs(60);

/// The attributes shown in the report (the rest are in the file), per MBean type.
const HEADLINE: [(&str, &[&str]); 2] = [
    (
        "producer-metrics",
        &[
            "record-queue-time-avg",
            "request-latency-avg",
            "batch-size-avg",
            "records-per-request-avg",
            "requests-in-flight",
            "buffer-available-bytes",
        ],
    ),
    (
        "consumer-fetch-manager-metrics",
        &[
            "fetch-latency-avg",
            "records-per-request-avg",
            "fetch-size-avg",
            "records-lag-max",
        ],
    ),
];

/// What the JMX step gave, for the manifest.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct JmxSummary {
    /// The JVM served JMX (its local agent ran, or `--jmx` started it).
    pub reachable: bool,
    /// How that was known, or why not.
    pub how: String,
    /// The MBeans read, by pattern's domain (`kafka.producer`: 12).
    pub mbeans: Vec<(String, usize)>,
    /// Headline attributes: (MBean, attribute, value).
    pub headline: Vec<(String, String, String)>,
    /// MBeans gone between the query and their reading (a client closed meanwhile).
    pub skipped_mbeans: usize,
    /// Attributes whose getter threw: not in jmx.txt.
    pub skipped_attributes: usize,
}

/// The reader's last line, `#skipped<TAB>mbeans<TAB>attributes`, taken off its output.
fn split_skipped(text: &str) -> (Vec<&str>, usize, usize) {
    let mut lines = Vec::new();
    let (mut beans, mut attributes) = (0, 0);
    for l in text.lines() {
        match l.strip_prefix("#skipped\t") {
            Some(rest) => {
                let mut n = rest.split('\t').map(|x| x.trim().parse().unwrap_or(0));
                beans = n.next().unwrap_or(0);
                attributes = n.next().unwrap_or(0);
            }
            None => lines.push(l),
        }
    }
    (lines, beans, attributes)
}

/// The step's outcome.
pub struct Jmx {
    pub summary: JmxSummary,
    /// The file written (`jvm/jmx.txt`) and what it holds.
    pub file: Option<(String, String)>,
    /// A change made to the JVM (`--jmx`), in words.
    pub change: Option<String>,
    pub problem: Option<String>,
}

/// The connector address in a `ManagementAgent.status` answer (`URL : service:jmx:…`), when
/// the agent is enabled.
pub fn connector_address(status: &str) -> Option<String> {
    if !status.lines().any(|l| l.trim() == "Agent: enabled") {
        return None;
    }
    status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "URL")
            .then(|| v.trim().to_string())
            .filter(|v| v.starts_with("service:jmx:"))
    })
}

/// One `mbean<TAB>attribute<TAB>value` line, its secrets redacted: an attribute named as a
/// secret loses its value, and a value holding `key=value` pairs loses the secret ones.
pub fn redact_line(line: &str) -> String {
    let mut f = line.splitn(3, '\t');
    match (f.next(), f.next(), f.next()) {
        (Some(bean), Some(attr), Some(value)) => {
            let value = if redact::is_secret(attr) {
                redact::REDACTED.to_string()
            } else {
                redact::scrub_properties(value)
            };
            format!("{}\t{attr}\t{value}", redact::scrub_properties(bean))
        }
        _ => redact::scrub_properties(line),
    }
}

/// The report's headline attributes among the (redacted) lines, and the MBean count per domain.
fn summarise(lines: &[String]) -> (Vec<(String, usize)>, Vec<(String, String, String)>) {
    let mut beans: Vec<&str> = lines.iter().filter_map(|l| l.split('\t').next()).collect();
    beans.dedup();
    let mbeans = PATTERNS
        .iter()
        .map(|p| {
            let domain = p.trim_end_matches(":*");
            let n = beans
                .iter()
                .filter(|b| b.split(':').next() == Some(domain))
                .count();
            (domain.to_string(), n)
        })
        .collect();
    let mut headline = Vec::new();
    for l in lines {
        let mut f = l.splitn(3, '\t');
        let (Some(bean), Some(attr), Some(value)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let ty = bean
            .split_once(':')
            .map(|(_, keys)| keys)
            .and_then(|keys| keys.split(',').find_map(|k| k.strip_prefix("type=")));
        let wanted = HEADLINE
            .iter()
            .any(|(t, attrs)| ty == Some(*t) && attrs.contains(&attr));
        if wanted {
            headline.push((bean.to_string(), attr.to_string(), value.to_string()));
        }
    }
    (mbeans, headline)
}

/// The `java` of the JDK `jcmd` belongs to (the target's own JDK, or the one found).
fn java_beside(jcmd: &Path) -> Option<PathBuf> {
    let beside = |p: &Path| p.parent().map(|d| d.join("java")).filter(|j| j.is_file());
    beside(jcmd).or_else(|| std::fs::canonicalize(jcmd).ok().and_then(|p| beside(&p)))
}

/// Reads the JVM's kafka-clients MBeans into `jvm_dir/jmx.txt` when its local JMX agent runs
/// (`start`: starting it first when it does not).
pub fn read(jcmd: &Jcmd, jvm_dir: &Path, start: bool) -> Jmx {
    let mut out = Jmx {
        summary: JmxSummary::default(),
        file: None,
        change: None,
        problem: None,
    };
    let status = match jcmd.call(&["ManagementAgent.status"]) {
        Ok(s) => s,
        Err(e) => {
            out.summary.how = format!("not known: {e}");
            return out;
        }
    };
    let mut address = connector_address(&status);
    if address.is_none() && start {
        match jcmd.call(&["ManagementAgent.start_local"]) {
            Ok(_) => {
                out.change = Some(
                    "the JVM's local JMX agent started (--jmx: jcmd ManagementAgent.start_local; \
                     a local connector, no network port): it cannot be stopped again and stays \
                     until the JVM exits"
                        .into(),
                );
                address = jcmd
                    .call(&["ManagementAgent.status"])
                    .ok()
                    .and_then(|s| connector_address(&s));
            }
            Err(e) => out.problem = Some(format!("--jmx: the local JMX agent not started: {e}")),
        }
    }
    let Some(address) = address else {
        out.summary.how =
            "its local JMX agent is not running (ManagementAgent.status: disabled)".into();
        return out;
    };
    out.summary.reachable = true;
    out.summary.how = if out.change.is_some() {
        "started by --jmx (ManagementAgent.start_local)".into()
    } else {
        "its local JMX agent was already running (ManagementAgent.status)".into()
    };
    let Some(java) = java_beside(&jcmd.path) else {
        out.problem = Some(format!(
            "JMX: no java beside {} to read it with",
            jcmd.path.display()
        ));
        return out;
    };
    match run_reader(&java, &address) {
        Ok(text) => {
            let (read, skipped_mbeans, skipped_attributes) = split_skipped(&text);
            out.summary.skipped_mbeans = skipped_mbeans;
            out.summary.skipped_attributes = skipped_attributes;
            let lines: Vec<String> = read.into_iter().map(redact_line).collect();
            let (mbeans, headline) = summarise(&lines);
            out.summary.mbeans = mbeans;
            out.summary.headline = headline;
            let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
            match std::fs::write(jvm_dir.join("jmx.txt"), body) {
                Ok(()) => {
                    out.file = Some((
                        "jvm/jmx.txt".into(),
                        format!(
                            "kafka-clients' metrics at the end of the capture, over JMX: every \
                             attribute of {} (mbean, attribute, value; secrets redacted)",
                            PATTERNS.join(", ")
                        ),
                    ))
                }
                Err(e) => out.problem = Some(format!("jvm/jmx.txt: {e}")),
            }
        }
        Err(e) => out.problem = Some(format!("JMX not read: {e}")),
    }
    out
}

/// Runs the reader with the connector's address on stdin (never on a command line).
fn run_reader(java: &Path, address: &str) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("kgap-capture-jmx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let src = dir.join("KgapJmx.java");
    let result = (|| {
        std::fs::write(&src, READER).map_err(|e| format!("{}: {e}", src.display()))?;
        let mut child = Command::new(java)
            .arg(&src)
            .args(PATTERNS)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", java.display()))?;
        if let Some(mut i) = child.stdin.take() {
            let _ = writeln!(i, "{address}");
        }
        let mut o = child.stdout.take().expect("piped");
        let mut er = child.stderr.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let (mut a, mut b) = (String::new(), String::new());
            let _ = std::io::Read::read_to_string(&mut o, &mut a);
            let _ = std::io::Read::read_to_string(&mut er, &mut b);
            (a, b)
        });
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
                break s;
            }
            if t0.elapsed() > LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the reader took over {} s: stopped",
                    LIMIT.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let (text, err) = reader.join().unwrap_or_default();
        if !status.success() {
            let why = err.lines().last().unwrap_or("failed").trim().to_string();
            return Err(redact::scrub_properties(&why));
        }
        Ok(text)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readers_skipped_counts_are_taken_off_its_lines() {
        let text = "kafka.producer:type=app-info,client-id=p\tversion\t4.3.1\n#skipped\t2\t5\n";
        let (lines, beans, attributes) = split_skipped(text);
        assert_eq!(
            lines,
            ["kafka.producer:type=app-info,client-id=p\tversion\t4.3.1"]
        );
        assert_eq!((beans, attributes), (2, 5));
        // A reader of an older kgap (no such line): nothing skipped is claimed.
        assert_eq!(split_skipped("a\tb\tc\n").1, 0);
    }

    #[test]
    fn the_address_only_when_the_agent_is_enabled() {
        let on = "Agent: enabled\n\nConnection Type: local\nProtocol       : rmi\nHost           \
                  : 127.0.0.1\nURL            : service:jmx:rmi://127.0.0.1/stub/rO0AB=\n";
        assert_eq!(
            connector_address(on).as_deref(),
            Some("service:jmx:rmi://127.0.0.1/stub/rO0AB=")
        );
        assert_eq!(connector_address("Agent: disabled\n"), None);
        assert_eq!(connector_address("Agent: enabled\nURL : nonsense\n"), None);
    }

    #[test]
    fn secrets_in_attributes_are_redacted() {
        assert_eq!(
            redact_line("kafka.producer:type=app-info,client-id=p\tsasl-password\thunter2"),
            "kafka.producer:type=app-info,client-id=p\tsasl-password\t[redacted]"
        );
        assert_eq!(
            redact_line("kafka.x:type=y\tconfig\tsasl.password=hunter2 acks=1"),
            "kafka.x:type=y\tconfig\tsasl.password=[redacted] acks=1"
        );
        let plain = "kafka.producer:type=producer-metrics,client-id=p\tbatch-size-avg\t16384.0";
        assert_eq!(redact_line(plain), plain);
    }

    #[test]
    fn the_headline_and_the_count_per_domain() {
        let lines: Vec<String> = [
            "kafka.producer:type=producer-metrics,client-id=p\tbatch-size-avg\t900.0",
            "kafka.producer:type=producer-metrics,client-id=p\tbatch-split-rate\t0.0",
            "kafka.producer:type=producer-node-metrics,client-id=p,node-id=node-1\trequest-latency-avg\t2.0",
            "kafka.consumer:type=consumer-fetch-manager-metrics,client-id=c\tfetch-latency-avg\t5.0",
        ]
        .map(String::from)
        .to_vec();
        let (mbeans, headline) = summarise(&lines);
        assert_eq!(
            mbeans,
            vec![
                ("kafka.producer".to_string(), 2),
                ("kafka.consumer".to_string(), 1),
                ("kafka.network".to_string(), 0)
            ]
        );
        let attrs: Vec<&str> = headline.iter().map(|h| h.1.as_str()).collect();
        assert_eq!(attrs, vec!["batch-size-avg", "fetch-latency-avg"]);
    }
}
