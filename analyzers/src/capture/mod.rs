//! `capture`: diagnose a running Kafka client in one command, without restarting it
//! (issue 40). For the duration it collects what can be had from outside the process —
//! per-thread CPU with Kafka roles (analyze-thread-cpu's live sampler), memory and page
//! faults, the kernel's view of each TCP connection; from a JVM, through jcmd, a JFR
//! recording, GC logging, thread dumps and the heap, and kafka-clients' metrics over JMX
//! when the JVM serves it; from a librdkafka process, its `rdk:*` threads and the native
//! stacks of its busiest threads; and the statistics file or debug log the process already
//! writes — into a bundle with a manifest, then runs gap-report's library on it.
//!
//! Safe by construction: it reads, except for the JFR recording and GC logging it starts
//! and undoes (on Ctrl-C, on an error and on a panic too), the ptrace stops of a native
//! stack, which it times, and, only with `--jmx`, the JVM's local JMX agent, which it says
//! cannot be undone. The jobs, one file each: the target's kind and access ([`target`]), the
//! bundle and manifest, the seconds (sampling), memory, sockets, jcmd and the JVM session,
//! JMX, the busiest threads and their native stacks, included files, what a capture cannot
//! see, the report.

mod bundle;
mod busiest;
mod cannot_see;
pub mod error;
mod include;
mod jcmd;
mod jmx;
mod jvm;
mod memory;
mod native;
mod options;
mod outcome;
mod render;
mod session;
mod sockets;
pub mod target;
mod vm_log;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::findings::scope::JvmRole;
use crate::gap_report;
use crate::thread_cpu::roles::{self, Role};
use crate::thread_cpu::snapshot::{read_paste, PasteOptions};

pub use bundle::{BundleFile, Manifest, SeenThread};
pub use busiest::{StackPoint, StackedThread};
pub use error::CaptureError;
pub use jcmd::catches_sigquit;
pub use jmx::JmxSummary;
pub use jvm::Restored;
pub use options::{parse_seconds, Options};
pub use outcome::Capture;
pub use target::{ClientKind, Target};

static STOP: AtomicBool = AtomicBool::new(false);

/// Ctrl-C, SIGTERM and SIGHUP stop the capture at its next sample; the recording and GC
/// logging are then undone and the partial bundle read as any other.
fn install_interrupt() {
    let _ = ctrlc::set_handler(|| {
        STOP.store(true, Ordering::SeqCst);
        eprintln!("capture: stopping: undoing the JVM's recording and GC logging, then the report");
    });
}

/// Captures `opts.pid` and reads the bundle. An error only when nothing could be captured.
pub fn run(opts: &Options) -> Result<Capture, CaptureError> {
    if opts.duration.is_zero() || opts.interval.is_zero() {
        return Err(CaptureError::Usage(
            "--duration and --interval must be positive".into(),
        ));
    }
    let t = target::inspect(opts.pid, Path::new("/proc"))?;
    let jcmd = match (t.kind, opts.no_jvm) {
        (ClientKind::Jvm, false) => Some(
            jcmd::find(t.exe.as_deref(), opts.jcmd.as_deref()).ok_or_else(|| {
                CaptureError::NoJcmd {
                    pid: t.pid,
                    java: t
                        .exe
                        .as_ref()
                        .map_or("unknown".into(), |e| e.display().to_string()),
                }
            })?,
        ),
        _ => None,
    };
    let mut included = Vec::new();
    for (path, name, redact) in [
        (&opts.stats, "included/stats.jsonl", false),
        (&opts.log, "included/debug.log", true),
    ] {
        if let Some(p) = path {
            included.push(
                include::Included::mark(p, name, redact)
                    .map_err(|e| CaptureError::Usage(format!("{}: {e}", p.display())))?,
            );
        }
    }
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let dir = opts
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("kgap-capture-{}-{started}", t.pid)));
    let manifest = Manifest {
        target: t.clone(),
        started_unix_s: started,
        duration_s: opts.duration.as_secs_f64(),
        captured_s: 0.0,
        ended: "running".into(),
        complete: false,
        files: Vec::new(),
        problems: Vec::new(),
        changes: Vec::new(),
        jvm_restored: None,
        kafka_client: None,
        kafka_client_shown_by: None,
        client_threads: Vec::new(),
        memory: None,
        connections: Vec::new(),
        stacks: Vec::new(),
        jmx: None,
    };
    let mut b = bundle::Bundle::create(&dir, manifest)?;
    install_interrupt();
    STOP.store(false, Ordering::SeqCst);

    // The JVM first: its thread dump names the threads the sampler then records.
    let mut jvm = None;
    let mut names: HashMap<i32, String> = HashMap::new();
    let mut kafka: Option<(JvmRole, String)> = None;
    if let Some(path) = jcmd {
        let jdir = b.dir.join("jvm");
        let _ = std::fs::create_dir_all(&jdir);
        give_to_target(&jdir, t.uid);
        let mut s = jvm::JvmSession::start(jcmd::Jcmd { path, pid: t.pid }, &jdir)?;
        b.manifest.changes.push(
            "JFR recording kgap-capture-PID started (default settings, socket I/O at 0 ms) and GC \
             logging switched on (VM.log gc*=info to jvm/gc.log): both undone at the end"
                .replace("PID", &t.pid.to_string()),
        );
        if let Some(text) = s.thread_print("start") {
            read_dump(&text, &mut names, &mut kafka);
        }
        s.heap_info("start");
        jvm = Some(s);
    }
    let stack_tool = (t.kind == ClientKind::Librdkafka && !opts.no_stacks)
        .then(native::find)
        .flatten();
    let mut points: Vec<StackPoint> = Vec::new();
    let mut stack_problems = Vec::new();
    // The busiest threads' stacks at a point: early, middle, end.
    let mut stacks = |p: &busiest::Point, b_dir: &Path| {
        let Some(tool) = &stack_tool else { return };
        if points.iter().any(|q| q.at_s == p.at_s) {
            return; // the end's interval was the middle's: its stacks are there
        }
        let (point, problem) = busiest::take_at(tool, t.pid, p, b_dir);
        points.push(point);
        stack_problems.extend(problem);
    };

    let open = |name: &str| {
        File::create(b.dir.join(name)).map_err(|e| CaptureError::Out {
            path: b.dir.join(name).display().to_string(),
            reason: e.to_string(),
        })
    };
    let files = session::Files {
        threads: open("threads.jsonl")?,
        memory: open("memory.csv")?,
        sockets: open("sockets.csv")?,
    };
    let mut at_point = |p: &busiest::Point| {
        if p.label == "middle" {
            if let Some(s) = jvm.as_mut() {
                if let Some(text) = s.thread_print("middle") {
                    read_dump(&text, &mut HashMap::new(), &mut kafka);
                }
            }
        }
        stacks(p, &b.dir);
    };
    let seconds = session::run(
        t.pid,
        opts.duration,
        opts.interval,
        files,
        &names,
        &STOP,
        &mut at_point,
    );
    drop(at_point);
    let mut jmx_read = None;
    let alive = !matches!(
        target::inspect(t.pid, Path::new("/proc")),
        Err(CaptureError::NoSuchPid(_))
    );
    if alive {
        if let Some(s) = jvm.as_mut() {
            if let Some(text) = s.thread_print("end") {
                read_dump(&text, &mut HashMap::new(), &mut kafka);
            }
            s.heap_info("end");
            jmx_read = Some(jmx::read(s.jcmd(), &b.dir.join("jvm"), opts.jmx));
        }
        if let Ok(Some(p)) = seconds.as_ref().map(|s| s.last_point.clone()) {
            let p = busiest::Point { label: "end", ..p };
            stacks(&p, &b.dir);
        }
    }
    drop(stacks);
    if let Some(mut s) = jvm.take() {
        let restored = s.finish(alive);
        for (path, what) in std::mem::take(&mut s.files) {
            let analysed = path.ends_with(".jfr") || path.ends_with("gc.log");
            b.add(&path, what, analysed);
        }
        b.manifest.problems.append(&mut s.problems);
        b.manifest.jvm_restored = Some(restored);
    }
    if let Some(j) = jmx_read {
        if let Some((path, what)) = j.file {
            b.add(&path, what, false);
        }
        b.manifest.changes.extend(j.change);
        b.manifest.problems.extend(j.problem);
        b.manifest.jmx = Some(j.summary);
    }
    b.manifest.problems.extend(stack_problems);
    for p in &points {
        if let Some(f) = &p.file {
            b.add(
                f,
                format!(
                    "native stacks ({}) of the busiest threads at {:.1} s: {}",
                    p.tool, p.at_s, p.why
                ),
                false,
            );
        }
    }
    b.manifest.stacks = points;
    let mut had = cannot_see::Had {
        kind: Some(t.kind),
        jmx: b.manifest.jmx.clone(),
        stacks: b.manifest.stacks.iter().any(|p| p.file.is_some()),
        stacks_why_not: if opts.no_stacks {
            Some("native stacks: not taken (--no-stacks)".into())
        } else if stack_tool.is_none() {
            Some(native::NO_TOOL.into())
        } else {
            None
        },
        ..cannot_see::Had::default()
    };
    for inc in &included {
        match inc.copy(&b.dir) {
            Ok(c) => {
                b.add(&c.name, format!("{} ({} bytes)", c.what, c.bytes), true);
                had.stats |= c.name.contains("stats");
                had.log |= c.name.contains("debug");
            }
            Err(e) => b
                .manifest
                .problems
                .push(format!("{}: {e}", inc.source.display())),
        }
    }
    let seconds = match seconds {
        Ok(s) => s,
        Err(e) => {
            b.manifest.problems.push(format!("sampling stopped: {e}"));
            b.manifest.ended = "a capture step failed".into();
            let _ = b.write_manifest();
            return finish(b, had, kafka, EXIT_PARTIAL_CODE);
        }
    };
    b.add("threads.jsonl", "per-thread CPU each interval (analyze-thread-cpu's recording; JVM thread names completed from Thread.print by tid)", true);
    b.add(
        "memory.csv",
        "resident set and page faults each interval",
        false,
    );
    b.add(
        "sockets.csv",
        "each TCP connection each interval (ss -tinp: rtt, queues, retransmits, bytes)",
        false,
    );
    b.manifest.problems.extend(seconds.problems);
    b.manifest.captured_s = seconds.captured_s;
    b.manifest.complete = seconds.ended == "--duration reached";
    b.manifest.ended = seconds.ended;
    b.manifest.memory = seconds.memory;
    b.manifest.connections = seconds.connections.list;
    b.manifest.client_threads = seconds
        .last_threads
        .iter()
        .filter_map(|(tid, name)| {
            let role = roles::classify(name);
            let kafka_role = role.is_rdk()
                || matches!(
                    role,
                    Role::JavaProducerNetwork | Role::JavaHeartbeat | Role::JavaConsumerBackground
                );
            kafka_role.then(|| SeenThread {
                tid: *tid,
                name: name.clone(),
                role: role.as_str(),
            })
        })
        .collect();
    had.jvm_artifacts = b.manifest.files.iter().any(|f| f.path.ends_with(".jfr"));
    let code = if b.manifest.ended == "interrupted" {
        error::EXIT_INTERRUPTED
    } else if b.manifest.complete {
        error::EXIT_CAPTURED
    } else {
        error::EXIT_PARTIAL
    };
    finish(b, had, kafka, code)
}

const EXIT_PARTIAL_CODE: i32 = error::EXIT_PARTIAL;

/// Writes the manifest and reads the bundle with gap-report.
fn finish(
    mut b: bundle::Bundle,
    mut had: cannot_see::Had,
    kafka: Option<(JvmRole, String)>,
    code: i32,
) -> Result<Capture, CaptureError> {
    had.kafka_threads = kafka.is_some();
    if let Some((role, shown_by)) = &kafka {
        b.manifest.kafka_client = Some(
            match role {
                JvmRole::Producer => "java-producer",
                JvmRole::Consumer => "java-consumer",
                JvmRole::Other => "other",
            }
            .into(),
        );
        b.manifest.kafka_client_shown_by = Some(shown_by.clone());
    }
    let _ = b.write_manifest();
    // The JVM's role, from its own thread dumps: its GC log and recording are that client's.
    let gopts = gap_report::Options {
        jvm_role: kafka.map(|(r, _)| r),
        ..gap_report::Options::default()
    };
    let mut report = gap_report::gap_report(&b.dir, &gopts).map_err(|e| CaptureError::Out {
        path: b.dir.display().to_string(),
        reason: e.to_string(),
    })?;
    let aside = b.unanalysed();
    report.files.retain(|f| !aside.contains(&f.path));
    report.files_seen = report.files.len();
    let cannot_see = cannot_see::lines(&had);
    Ok(Capture {
        dir: b.dir.clone(),
        manifest: b.manifest,
        report,
        cannot_see,
        exit_code: code,
    })
}

/// The JVM writes the recording and GC log itself, as its own user.
fn give_to_target(dir: &Path, uid: u32) {
    let me = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|r| r.split_whitespace().next())
                .and_then(|u| u.parse::<u32>().ok())
        });
    if me == Some(0) && uid != 0 {
        let _ = std::os::unix::fs::chown(dir, Some(uid), None);
    }
}

/// Reads a thread dump: full names by tid, and the Kafka client its threads show.
fn read_dump(text: &str, names: &mut HashMap<i32, String>, kafka: &mut Option<(JvmRole, String)>) {
    let Ok(r) = read_paste(text.as_bytes(), "Thread.print", &PasteOptions::default()) else {
        return;
    };
    for th in &r.threads {
        names.insert(th.tid, th.name.clone());
        let role = match th.role {
            Role::JavaProducerNetwork => Some(JvmRole::Producer),
            Role::JavaHeartbeat | Role::JavaConsumerPoll | Role::JavaConsumerBackground => {
                Some(JvmRole::Consumer)
            }
            _ => None,
        };
        // A producer's network thread decides: its role is the one the post's Java findings
        // mostly need; a consumer's threads count when no producer shows.
        if let Some(role) = role {
            let better = match kafka {
                None => true,
                Some((JvmRole::Producer, _)) => false,
                Some(_) => role == JvmRole::Producer,
            };
            if better {
                *kafka = Some((role, format!("thread '{}'", th.name)));
            }
        }
    }
}

impl Capture {
    /// The terminal report: what was captured, gap-report's reading, what could not be seen.
    pub fn render_text(&self) -> String {
        render::text(self)
    }
}
