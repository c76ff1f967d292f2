//! Opens an HTML file in headless Chromium and reports what a reader's browser saw: the
//! console errors and uncaught exceptions, every request the page made, the text of the
//! DOM, whether the page is wider than its window (text that does not wrap, a table that
//! does not scroll in its box), and a full-page screenshot; then what the page answers to
//! the test's own expressions (a click on a table's header, the order after it).
//!
//! It speaks the DevTools protocol over `--remote-debugging-pipe` (fd 3 in, fd 4 out,
//! NUL-separated JSON): no port to race for, no log text to parse. Debian's `chromium`
//! (scripts/setup installs it); `KGAP_CHROMIUM` names another binary. A missing binary
//! fails the test that needs it, with the command that installs it.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::io::FromRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long one answer of the browser may take (a 2-core CI machine under load).
const WAIT: Duration = Duration::from_secs(60);

/// What the browser saw.
#[derive(Debug)]
pub struct Seen {
    /// `document.body.textContent`: every text of the DOM, folded <details> too.
    pub text: String,
    /// `document.body.innerText`: what is rendered on screen.
    pub visible: String,
    /// `console.error`, uncaught exceptions, and the browser's own errors about the page
    /// (a blocked fetch, a refused script).
    pub errors: Vec<String>,
    /// URLs the page asked for, its own file apart.
    pub requests: Vec<String>,
    /// The text of every `<script>` element in the DOM.
    pub scripts: Vec<String>,
    /// Inline `<svg>` elements.
    pub svgs: usize,
    /// The page is wider than the window: something neither wraps nor scrolls in its box.
    pub overflows_x: bool,
    pub screenshot: PathBuf,
    /// The value of each of the test's expressions, evaluated in order after the
    /// screenshot (JSON, as `returnByValue` gives it).
    pub answers: Vec<Value>,
}

/// The binary: `KGAP_CHROMIUM`, else `chromium` (Debian), `chromium-browser`,
/// `google-chrome` on PATH. Panics with how to install it when there is none.
pub fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("KGAP_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "headless Chromium is needed to check the HTML reports and none was found (chromium, \
         chromium-browser or google-chrome on PATH, or KGAP_CHROMIUM): scripts/setup installs \
         it (apt-get install chromium)"
    );
}

/// Opens `file` in a window `width` px wide (`mobile`: a phone's viewport) and writes a
/// full-page screenshot to `screenshot`.
pub fn open(file: &Path, width: u32, mobile: bool, screenshot: &Path) -> Seen {
    open_and_ask(file, width, mobile, screenshot, &[])
}

/// [`open`], then evaluates each of `expressions` in the page, in order, after the
/// screenshot: what they do (a click) happens before the page's errors are collected, so
/// an error they cause fails the test too.
pub fn open_and_ask(
    file: &Path,
    width: u32,
    mobile: bool,
    screenshot: &Path,
    expressions: &[&str],
) -> Seen {
    let file = file.canonicalize().expect("the page exists");
    let url = format!("file://{}", file.display());
    let profile = tempfile_dir("kgap-chromium");
    let mut b = Browser::launch(&profile);
    let seen = b.visit(&url, width, mobile, screenshot, expressions);
    b.close();
    let _ = std::fs::remove_dir_all(&profile);
    seen
}

fn tempfile_dir(prefix: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "{prefix}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&d).expect("a temporary folder");
    d
}

struct Browser {
    child: Child,
    to: File,
    from: Receiver<Value>,
    next: u64,
    events: Vec<Value>,
    stderr: PathBuf,
}

impl Browser {
    fn launch(profile: &Path) -> Browser {
        let (cmd_r, cmd_w) = pipe();
        let (ev_r, ev_w) = pipe();
        let stderr = profile.join("chromium.stderr");
        let log = File::create(&stderr).expect("stderr file");
        let mut c = Command::new(binary());
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-pipe",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--mute-audio",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
        unsafe {
            c.pre_exec(move || {
                // The protocol's fds: 3 is what the browser reads, 4 what it writes. Both
                // are first copied above 10, so neither dup2 below can close the other's
                // source, or be a no-op that keeps close-on-exec.
                let a = libc::fcntl(cmd_r, libc::F_DUPFD_CLOEXEC, 10);
                let b = libc::fcntl(ev_w, libc::F_DUPFD_CLOEXEC, 10);
                if a < 0 || b < 0 || libc::dup2(a, 3) < 0 || libc::dup2(b, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = c.spawn().unwrap_or_else(|e| {
            panic!(
                "starting {}: {e} (scripts/setup installs chromium)",
                binary().display()
            )
        });
        unsafe {
            libc::close(cmd_r);
            libc::close(ev_w);
        }
        let to = unsafe { File::from_raw_fd(cmd_w) };
        let mut reader = unsafe { File::from_raw_fd(ev_r) };
        let (tx, from) = channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            loop {
                match reader.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
                while let Some(end) = buf.iter().position(|&b| b == 0) {
                    let msg: Vec<u8> = buf.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice::<Value>(&msg[..msg.len() - 1]) {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Browser {
            child,
            to,
            from,
            next: 0,
            events: Vec::new(),
            stderr,
        }
    }

    fn stderr_tail(&self) -> String {
        let s = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }

    fn recv(&mut self, what: &str, deadline: Instant) -> Value {
        match self
            .from
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => panic!(
                "chromium did not answer {what} within {} s; its stderr:\n{}",
                WAIT.as_secs(),
                self.stderr_tail()
            ),
            Err(RecvTimeoutError::Disconnected) => panic!(
                "chromium closed its pipe before {what}; its stderr:\n{}",
                self.stderr_tail()
            ),
        }
    }

    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to
            .write_all(&bytes)
            .unwrap_or_else(|e| panic!("writing {method} to chromium: {e}"));
        let deadline = Instant::now() + WAIT;
        loop {
            let v = self.recv(method, deadline);
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(e) = v.get("error") {
                    panic!("chromium refused {method}: {e}");
                }
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn wait_event(&mut self, method: &str) {
        if self.events.iter().any(|e| e["method"] == method) {
            return;
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let v = self.recv(method, deadline);
            let hit = v["method"] == method;
            self.events.push(v);
            if hit {
                return;
            }
        }
    }

    fn eval(&mut self, session: &str, expression: &str) -> Value {
        let r = self.call(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("the page threw on {expression}: {e}");
        }
        r["result"]["value"].clone()
    }

    fn visit(
        &mut self,
        url: &str,
        width: u32,
        mobile: bool,
        screenshot: &Path,
        expressions: &[&str],
    ) -> Seen {
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"]
            .as_str()
            .expect("a target id")
            .to_string();
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        let sid = attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string();
        let s = Some(sid.as_str());
        for m in [
            "Page.enable",
            "Runtime.enable",
            "Log.enable",
            "Network.enable",
        ] {
            self.call(s, m, json!({}));
        }
        self.call(
            s,
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": mobile}),
        );
        self.events.clear();
        self.call(s, "Page.navigate", json!({"url": url}));
        self.wait_event("Page.loadEventFired");
        let facts = self.eval(
            &sid,
            "JSON.stringify({text: document.body.textContent, visible: document.body.innerText, \
             scripts: Array.from(document.scripts, s => s.text), svgs: document.querySelectorAll('svg').length, \
             overflows: document.documentElement.scrollWidth > window.innerWidth})",
        );
        let facts: Value = serde_json::from_str(facts.as_str().expect("facts")).unwrap();
        let metrics = self.call(s, "Page.getLayoutMetrics", json!({}));
        let h = metrics["cssContentSize"]["height"]
            .as_f64()
            .unwrap_or(900.0)
            .min(12000.0);
        let w = metrics["cssContentSize"]["width"]
            .as_f64()
            .unwrap_or(width as f64);
        let shot = self.call(
            s,
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}}),
        );
        let png = base64(shot["data"].as_str().expect("screenshot data"));
        if let Some(dir) = screenshot.parent() {
            std::fs::create_dir_all(dir).expect("screenshot folder");
        }
        std::fs::write(screenshot, png).expect("screenshot written");
        let answers = expressions.iter().map(|e| self.eval(&sid, e)).collect();
        // Whatever the page did while it loaded, and what the browser said about it.
        let mut errors = Vec::new();
        let mut requests = Vec::new();
        for e in &self.events {
            let p = &e["params"];
            match e["method"].as_str().unwrap_or("") {
                "Runtime.consoleAPICalled"
                    if matches!(p["type"].as_str(), Some("error" | "assert")) =>
                {
                    errors.push(format!("console.{}: {}", p["type"], p["args"]))
                }
                "Runtime.exceptionThrown" => {
                    errors.push(format!("exception: {}", p["exceptionDetails"]))
                }
                "Log.entryAdded" if p["entry"]["level"] == "error" => {
                    errors.push(format!("{}: {}", p["entry"]["source"], p["entry"]["text"]))
                }
                "Network.requestWillBeSent" => {
                    let u = p["request"]["url"].as_str().unwrap_or("").to_string();
                    if u != url {
                        requests.push(u);
                    }
                }
                "Network.loadingFailed" => {
                    errors.push(format!("request failed: {}", p["errorText"]))
                }
                _ => {}
            }
        }
        Seen {
            text: facts["text"].as_str().unwrap_or("").to_string(),
            visible: facts["visible"].as_str().unwrap_or("").to_string(),
            errors,
            requests,
            scripts: facts["scripts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| s.as_str().unwrap_or("").to_string())
                .collect(),
            svgs: facts["svgs"].as_u64().unwrap_or(0) as usize,
            overflows_x: facts["overflows"].as_bool().unwrap_or(true),
            screenshot: screenshot.to_path_buf(),
            answers,
        }
    }

    fn close(&mut self) {
        self.next += 1;
        let mut bytes =
            serde_json::to_vec(&json!({"id": self.next, "method": "Browser.close"})).unwrap();
        bytes.push(0);
        let _ = self.to.write_all(&bytes);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn pipe() -> (i32, i32) {
    let mut fds = [0i32; 2];
    // Close-on-exec: only the dup2'd copies (3 and 4) reach the browser.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    (fds[0], fds[1])
}

/// Standard base64 (the screenshot's PNG).
fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in s.bytes().filter_map(val) {
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// Where a test's screenshot goes: `<target>/tmp/html-screenshots/NAME.png`, kept for a
/// person to look at.
pub fn screenshot_path(tmpdir: &str, name: &str) -> PathBuf {
    Path::new(tmpdir)
        .join("html-screenshots")
        .join(format!("{name}.png"))
}
