//! The JVM side, through `jcmd`: a JFR recording for the capture (the JDK's default settings,
//! which hold the GC events, with every socket read and write: threshold 0), GC logging
//! switched on with `VM.log` and off again, `Thread.print` at the start, middle and end, and
//! `GC.heap_info`. The two changes are undone when the session ends however it ends (its
//! `Drop` too: an error or a panic), and the JVM's logging and recordings are then read
//! again and compared with what they were.

use std::fs;
use std::path::{Path, PathBuf};

use super::error::CaptureError;
use super::jcmd::Jcmd;
use super::vm_log;
use crate::vocab::redact;

/// The recording's name in the JVM (`JFR.check` shows it while the capture runs).
fn recording_name(pid: i32) -> String {
    format!("kgap-capture-{pid}")
}

/// What the JVM was left as.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Restored {
    /// `VM.log list`'s outputs and `JFR.check`'s recordings are as before the capture.
    pub as_before: bool,
    /// What differs, when something does (or why it could not be read).
    pub differences: Vec<String>,
}

/// One capture's changes to one JVM.
pub struct JvmSession {
    jcmd: Jcmd,
    /// `jvm/` in the bundle.
    dir: PathBuf,
    gc_file: Option<String>,
    jfr_on: bool,
    before_outputs: Vec<String>,
    before_recordings: Vec<String>,
    /// Files written, relative to the bundle, with what each holds.
    pub files: Vec<(String, String)>,
    /// Steps that failed, in words.
    pub problems: Vec<String>,
    finished: bool,
}

impl JvmSession {
    /// Attaches (a first `VM.version` tells whether jcmd can), reads the logging and
    /// recordings as they are, then switches GC logging and the recording on.
    pub fn start(jcmd: Jcmd, dir: &Path) -> Result<JvmSession, CaptureError> {
        fs::create_dir_all(dir).map_err(|e| CaptureError::Out {
            path: dir.display().to_string(),
            reason: e.to_string(),
        })?;
        jcmd.wait_until_attachable(std::time::Duration::from_secs(10));
        let version = jcmd
            .call(&["VM.version"])
            .map_err(|e| CaptureError::Attach {
                pid: jcmd.pid,
                reason: e.to_string(),
                fix: "run capture as the JVM's user, with the jcmd of the JDK it runs on (--jcmd \
                  PATH); a JVM started with -XX:+DisableAttachMechanism cannot be attached: \
                  pass --no-jvm"
                    .into(),
            })?;
        let mut s = JvmSession {
            jcmd,
            dir: dir.to_path_buf(),
            gc_file: None,
            jfr_on: false,
            before_outputs: Vec::new(),
            before_recordings: Vec::new(),
            files: Vec::new(),
            problems: Vec::new(),
            finished: false,
        };
        s.write("vm-version.txt", &version, "the JVM's version (VM.version)");
        if let Some(cl) = s.call("VM.command_line", &["VM.command_line"]) {
            let shown: Vec<String> = cl.lines().map(redact::scrub_properties).collect();
            s.write(
                "vm-command-line.txt",
                &shown.join("\n"),
                "the JVM's flags and command (VM.command_line), secrets redacted",
            );
        }
        match s.jcmd.call(&["VM.log", "list"]) {
            Ok(list) => {
                s.before_outputs = vm_log::outputs(&list);
                s.write(
                    "vm-log-before.txt",
                    &s.before_outputs.join("\n"),
                    "the JVM's log outputs before the capture (VM.log list)",
                );
                s.gc_on(&list);
            }
            Err(e) => s.problems.push(format!("GC logging not switched on: {e}")),
        }
        s.before_recordings = s.recordings().unwrap_or_default();
        s.jfr_start();
        Ok(s)
    }

    fn gc_on(&mut self, _list: &str) {
        let file = self.dir.join("gc.log");
        let shown = file.display().to_string();
        if !vm_log::path_ok(&shown) {
            self.problems.push(format!(
                "GC logging not switched on: the JVM's VM.log cannot take the path {shown} \
                 (spaces or commas): give --out a plain absolute path"
            ));
            return;
        }
        let already = vm_log::gc_outputs(&self.before_outputs);
        let args = vm_log::switch_on(&shown);
        let args: Vec<&str> = std::iter::once("VM.log")
            .chain(args.iter().map(String::as_str))
            .collect();
        match self.jcmd.call(&args) {
            Ok(_) => {
                self.gc_file = Some(shown);
                let mut what =
                    "the JVM's GC log for the capture (VM.log what=gc*=info)".to_string();
                if !already.is_empty() {
                    what.push_str(&format!(
                        "; the JVM already logs GC to: {} (its file has the whole run)",
                        already.join("; ")
                    ));
                }
                self.files.push(("jvm/gc.log".into(), what));
            }
            Err(e) => self
                .problems
                .push(format!("GC logging not switched on: {e}")),
        }
    }

    fn jfr_start(&mut self) {
        let name = recording_name(self.jcmd.pid);
        let file = self.dir.join("recording.jfr");
        let shown = file.display().to_string();
        if !vm_log::path_ok(&shown) {
            self.problems.push(format!(
                "no JFR recording: the JVM cannot take the path {shown} (spaces or commas): \
                 give --out a plain absolute path"
            ));
            return;
        }
        // dumponexit: a JVM that exits mid-capture still leaves what it recorded. The events
        // that copy the JVM's arguments, system properties and environment, and every
        // process's command line (jdk.SystemProcess), are off: they carry secrets
        // (-Dsasl.password=…) that no kgap output may hold.
        let r = self.jcmd.call(&[
            "JFR.start",
            &format!("name={name}"),
            "settings=default",
            "jdk.SocketRead#threshold=0ms",
            "jdk.SocketWrite#threshold=0ms",
            "jdk.JVMInformation#enabled=false",
            "jdk.InitialSystemProperty#enabled=false",
            "jdk.InitialEnvironmentVariable#enabled=false",
            "jdk.SystemProcess#enabled=false",
            "dumponexit=true",
            &format!("filename={shown}"),
        ]);
        match r {
            Ok(_) => {
                self.jfr_on = true;
                self.files.push((
                    "jvm/recording.jfr".into(),
                    "JFR for the capture: the default settings (GC, CPU, threads) and every \
                     socket read and write; without the JVM's arguments, properties and \
                     environment, nor the host's processes (secrets)"
                        .into(),
                ));
            }
            Err(e) => self.problems.push(format!("no JFR recording: {e}")),
        }
    }

    /// The jcmd this session attaches with.
    pub fn jcmd(&self) -> &Jcmd {
        &self.jcmd
    }

    /// `Thread.print -l` into `jvm/threads-<label>.txt`; its text for the caller.
    pub fn thread_print(&mut self, label: &str) -> Option<String> {
        let t = self.call("Thread.print", &["Thread.print", "-l"])?;
        self.write(
            &format!("threads-{label}.txt"),
            &t,
            &format!("a thread dump at the {label} (Thread.print -l)"),
        );
        Some(t)
    }

    /// `GC.heap_info` into `jvm/heap-<label>.txt`.
    pub fn heap_info(&mut self, label: &str) {
        if let Some(t) = self.call("GC.heap_info", &["GC.heap_info"]) {
            self.write(
                &format!("heap-{label}.txt"),
                &t,
                &format!("the heap at the {label} (GC.heap_info)"),
            );
        }
    }

    /// Stops the recording (written to the bundle) and GC logging, then reads the JVM's
    /// logging and recordings again and says whether they are as before. A JVM that is gone
    /// has nothing to undo.
    pub fn finish(&mut self, target_alive: bool) -> Restored {
        if !target_alive {
            self.finished = true;
            return Restored {
                as_before: true,
                differences: vec!["the JVM exited: nothing of the capture's is left in it".into()],
            };
        }
        self.undo();
        let mut differences = Vec::new();
        match self.jcmd.call(&["VM.log", "list"]) {
            Ok(list) => differences.extend(vm_log::differences(
                &self.before_outputs,
                &vm_log::outputs(&list),
            )),
            Err(e) => differences.push(format!("logging not read again: {e}")),
        }
        match self.recordings() {
            Ok(now) => {
                for r in now.iter().filter(|r| !self.before_recordings.contains(r)) {
                    differences.push(format!("recording now there: {r}"));
                }
            }
            Err(e) => differences.push(format!("recordings not read again: {e}")),
        }
        // A JVM that ended its run while being checked keeps nothing of the capture's.
        if !differences.is_empty() && super::target::exited(self.jcmd.pid) {
            return Restored {
                as_before: true,
                differences: vec![
                    "the JVM exited as it was checked: nothing of the capture's is left in it"
                        .into(),
                ],
            };
        }
        Restored {
            as_before: differences.is_empty(),
            differences,
        }
    }

    /// The recordings `JFR.check` lists, by name (sizes and durations change as they run).
    fn recordings(&self) -> Result<Vec<String>, String> {
        let t = self.jcmd.call(&["JFR.check"]).map_err(|e| e.to_string())?;
        Ok(t.lines()
            .filter(|l| l.starts_with("Recording "))
            .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("name=")))
            .map(str::to_string)
            .collect())
    }

    fn undo(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        if self.jfr_on {
            let name = recording_name(self.jcmd.pid);
            if let Err(e) = self.jcmd.call(&["JFR.stop", &format!("name={name}")]) {
                self.problems.push(format!("JFR.stop: {e}"));
            }
            self.jfr_on = false;
        }
        if let Some(file) = self.gc_file.take() {
            let args = vm_log::switch_off(&file);
            let args: Vec<&str> = std::iter::once("VM.log")
                .chain(args.iter().map(String::as_str))
                .collect();
            if let Err(e) = self.jcmd.call(&args) {
                self.problems
                    .push(format!("GC logging not switched off: {e}"));
            }
        }
    }

    fn call(&mut self, what: &str, args: &[&str]) -> Option<String> {
        match self.jcmd.call(args) {
            Ok(t) => Some(t),
            Err(e) => {
                self.problems.push(format!("{what}: {e}"));
                None
            }
        }
    }

    fn write(&mut self, name: &str, text: &str, what: &str) {
        match fs::write(self.dir.join(name), text) {
            Ok(()) => self.files.push((format!("jvm/{name}"), what.to_string())),
            Err(e) => self.problems.push(format!("jvm/{name}: {e}")),
        }
    }
}

impl Drop for JvmSession {
    /// An error or a panic between start and finish: the JVM is put back all the same.
    fn drop(&mut self) {
        self.undo();
    }
}
