//! What a probe keeps of its own clients: librdkafka's log lines and statistics.
//!
//! Log lines are written in librdkafka's own stderr format
//! (`%7|<secs>.<ms>|<FAC>|<client>| <message>`), so the analyzers read a probe's capture and a
//! user's log alike. rust-rdkafka forces `log.queue=true` and serves log events on the main
//! queue, i.e. inside the application's poll() — the very thread a consumer probe measures.
//! [`LogQueue`] moves them to a queue of their own, served by a `kgap-log` thread, so logging
//! costs the measured thread nothing and lines are stamped when librdkafka emits them.

use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::ConsumerContext;
use rdkafka::error::KafkaError;
use rdkafka::producer::{DeliveryResult, ProducerContext};
use rdkafka_sys as rdsys;
use std::ffi::CStr;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

/// Where one client's log lines and statistics go. Files are optional: a client without a
/// capture still records its last error for error messages.
#[derive(Default)]
pub struct Sink {
    log: Option<Mutex<BufWriter<File>>>,
    stats: Option<Mutex<BufWriter<File>>>,
    client_name: OnceLock<String>,
    lines: AtomicU64,
    stats_count: AtomicU64,
    last_error: Mutex<Option<String>>,
}

impl Sink {
    /// A sink writing `debug.log` and `stats.jsonl` (either may be None).
    pub fn to_files(log: Option<&Path>, stats: Option<&Path>) -> std::io::Result<Sink> {
        let open = |p: &Path| -> std::io::Result<Mutex<BufWriter<File>>> {
            Ok(Mutex::new(BufWriter::with_capacity(
                256 * 1024,
                File::create(p)?,
            )))
        };
        Ok(Sink {
            log: log.map(open).transpose()?,
            stats: stats.map(open).transpose()?,
            ..Sink::default()
        })
    }

    /// Sets the client name written in every line (`rdkafka#consumer-1`).
    pub fn set_client_name(&self, name: String) {
        let _ = self.client_name.set(name);
    }

    /// Writes one line in librdkafka's stderr format.
    pub fn log_line(&self, level: i32, fac: &str, message: &str) {
        if level <= 3 {
            *self.last_error.lock().expect("last_error") = Some(message.to_string());
        }
        let Some(log) = &self.log else { return };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let client = self.client_name.get().map_or("rdkafka", |s| s.as_str());
        let mut w = log.lock().expect("log sink");
        // A failed write loses a debug line, not the measurement: count, don't abort.
        let _ = writeln!(
            w,
            "%{}|{}.{:03}|{}|{}| {}",
            level,
            now.as_secs(),
            now.subsec_millis(),
            fac,
            client,
            message
        );
        self.lines.fetch_add(1, Ordering::Relaxed);
    }

    /// Writes one statistics emit as a line, flushed: one write a second (an emit is tens of
    /// KB, so a buffered file would get its lines only every ten seconds or at the end), and
    /// the file shows the run as it goes, as an application's statistics file does (capture
    /// --stats reads what it appends).
    pub fn stats_json(&self, json: &[u8]) {
        self.stats_count.fetch_add(1, Ordering::Relaxed);
        if let Some(stats) = &self.stats {
            let mut w = stats.lock().expect("stats sink");
            let _ = w.write_all(json);
            let _ = w.write_all(b"\n");
            let _ = w.flush();
        }
    }

    pub fn lines(&self) -> u64 {
        self.lines.load(Ordering::Relaxed)
    }

    pub fn stats_count(&self) -> u64 {
        self.stats_count.load(Ordering::Relaxed)
    }

    /// The last error-level line librdkafka logged (e.g. a refused connection).
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().expect("last_error").clone()
    }

    pub fn flush(&self) {
        for w in [&self.log, &self.stats].into_iter().flatten() {
            let _ = w.lock().expect("sink").flush();
        }
    }
}

fn level_number(level: RDKafkaLogLevel) -> i32 {
    match level {
        RDKafkaLogLevel::Emerg => 0,
        RDKafkaLogLevel::Alert => 1,
        RDKafkaLogLevel::Critical => 2,
        RDKafkaLogLevel::Error => 3,
        RDKafkaLogLevel::Warning => 4,
        RDKafkaLogLevel::Notice => 5,
        RDKafkaLogLevel::Info => 6,
        RDKafkaLogLevel::Debug => 7,
    }
}

/// Send-to-ack latency, recorded in the delivery callback without a lock.
///
/// librdkafka runs delivery callbacks inside poll(), so they run on the one thread that polls
/// the producer; the histogram is only touched there, and read with [`AckLatency::take`] after
/// that thread stopped polling. Messages carry their send time (ns since `origin`) as the
/// librdkafka message opaque; it marks the window. The latency recorded is librdkafka's own
/// (`rd_kafka_message_latency`: from inside produce() to the moment the report is served),
/// so it is only as good as the serving: a report that waits in the queue counts its wait
/// (see `paced::Deliveries`, which serves reports as they arrive).
pub struct AckLatency {
    origin: std::time::Instant,
    /// Messages sent before this (ns since origin) are warmup: not recorded.
    window_start_ns: AtomicU64,
    hist: std::cell::UnsafeCell<hdrhistogram::Histogram<u64>>,
}

// SAFETY: see the type's doc: one recording thread, reads only after it is done.
unsafe impl Sync for AckLatency {}

impl AckLatency {
    pub fn new(origin: std::time::Instant) -> AckLatency {
        AckLatency {
            origin,
            window_start_ns: AtomicU64::new(u64::MAX),
            hist: std::cell::UnsafeCell::new(crate::kit::measure::latency_histogram()),
        }
    }

    /// Nanoseconds since origin: the opaque a message is sent with (never 0).
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64 + 1
    }

    pub fn open_window(&self, at_ns: u64) {
        self.window_start_ns.store(at_ns, Ordering::Relaxed);
    }

    #[inline]
    fn record(&self, sent_ns: u64) {
        if sent_ns >= self.window_start_ns.load(Ordering::Relaxed) {
            let us = (self.now_ns().saturating_sub(sent_ns) / 1000).max(1);
            // SAFETY: only the polling thread records (see the type's doc).
            let h = unsafe { &mut *self.hist.get() };
            h.saturating_record(us);
        }
    }

    /// Records a delivered message: librdkafka's own latency for it (its clock from inside
    /// produce() to now), or our send stamp's when librdkafka has none; only messages sent
    /// inside the window (the opaque is the send stamp).
    ///
    /// # Safety
    /// `m` must be a live message of a delivery report being served on the recording thread.
    #[inline]
    pub unsafe fn record_message(&self, m: *const rdsys::rd_kafka_message_t) {
        let sent_ns = (*m)._private as usize as u64;
        if sent_ns == 0 || sent_ns < self.window_start_ns.load(Ordering::Relaxed) {
            return;
        }
        let latency_us = rdsys::rd_kafka_message_latency(m);
        if latency_us < 0 {
            self.record(sent_ns);
            return;
        }
        // SAFETY: only the polling thread records (see the type's doc).
        let h = &mut *self.hist.get();
        h.saturating_record((latency_us as u64).max(1));
    }

    /// The histogram (µs). Call only once the producer is no longer polled.
    pub fn take(&self) -> hdrhistogram::Histogram<u64> {
        // SAFETY: the caller stopped polling, so no callback records concurrently.
        unsafe {
            std::mem::replace(
                &mut *self.hist.get(),
                crate::kit::measure::latency_histogram(),
            )
        }
    }
}

/// The client context of every probe client: logs and statistics to the [`Sink`], deliveries
/// counted with relaxed atomics (no lock, no allocation per message).
pub struct KgapContext {
    pub sink: Arc<Sink>,
    delivered: AtomicU64,
    delivery_errors: AtomicU64,
    last_delivery_error: Mutex<Option<String>>,
    ack: Option<Arc<AckLatency>>,
}

impl KgapContext {
    pub fn new(sink: Arc<Sink>) -> KgapContext {
        KgapContext {
            sink,
            delivered: AtomicU64::new(0),
            delivery_errors: AtomicU64::new(0),
            last_delivery_error: Mutex::new(None),
            ack: None,
        }
    }

    /// A context that records send-to-ack latency of messages sent with a send time opaque.
    pub fn with_ack_latency(sink: Arc<Sink>, ack: Arc<AckLatency>) -> KgapContext {
        KgapContext {
            ack: Some(ack),
            ..KgapContext::new(sink)
        }
    }

    pub fn delivered(&self) -> u64 {
        self.delivered.load(Ordering::Relaxed)
    }

    pub fn delivery_errors(&self) -> u64 {
        self.delivery_errors.load(Ordering::Relaxed)
    }

    pub fn last_delivery_error(&self) -> Option<String> {
        self.last_delivery_error
            .lock()
            .expect("delivery error")
            .clone()
    }
}

impl KgapContext {
    /// Accounts for every message of one delivery report event, as [`ProducerContext::delivery`]
    /// would, without rust-rdkafka's per-message `BorrowedMessage` and `Arc` clone: one
    /// atomic add per event, not per message.
    ///
    /// # Safety
    /// `ev` must be a live RD_KAFKA_EVENT_DR event of a producer with this context.
    pub unsafe fn account_dr_event(&self, ev: *mut rdsys::rd_kafka_event_t) {
        let mut ok = 0u64;
        loop {
            let m = rdsys::rd_kafka_event_message_next(ev);
            if m.is_null() {
                break;
            }
            if (*m).err == rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                ok += 1;
                if let Some(ack) = &self.ack {
                    ack.record_message(m);
                }
            } else if self.delivery_errors.fetch_add(1, Ordering::Relaxed) == 0 {
                let e = KafkaError::MessageProduction((*m).err.into());
                *self.last_delivery_error.lock().expect("delivery error") = Some(e.to_string());
            }
        }
        self.delivered.fetch_add(ok, Ordering::Relaxed);
    }
}

impl ClientContext for KgapContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        self.sink.log_line(level_number(level), fac, log_message);
    }

    fn stats_raw(&self, statistics: &[u8]) {
        self.sink.stats_json(statistics);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        *self.sink.last_error.lock().expect("last_error") = Some(format!("{error}: {reason}"));
    }
}

impl ConsumerContext for KgapContext {}

impl ProducerContext for KgapContext {
    /// The send time (ns since the [`AckLatency`] origin), or 0 when not measured.
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, sent_ns: usize) {
        match result {
            Ok(m) => {
                self.delivered.fetch_add(1, Ordering::Relaxed);
                if let (Some(ack), true) = (&self.ack, sent_ns != 0) {
                    // SAFETY: the message lives through this callback, on the polling thread.
                    unsafe { ack.record_message(m.ptr()) };
                }
            }
            Err((e, _)) => {
                if self.delivery_errors.fetch_add(1, Ordering::Relaxed) == 0 {
                    *self.last_delivery_error.lock().expect("delivery error") = Some(e.to_string());
                }
            }
        }
    }
}

/// Raw handles moved into the log thread. librdkafka's queue and client handles are
/// thread-safe; the client outlives the thread because [`LogQueue`] is dropped first.
struct Handles {
    rk: *mut rdsys::rd_kafka_t,
    queue: *mut rdsys::rd_kafka_queue_t,
}
unsafe impl Send for Handles {}
// Shared references never touch the handles (only Drop does).
unsafe impl Sync for Handles {}

/// librdkafka's log events on a queue of their own, written by a `kgap-log` thread.
/// Must be dropped before the client it was attached to (declare it first in a struct).
pub struct LogQueue {
    handles: Handles,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl LogQueue {
    /// Redirects `rk`'s log events to a new queue served by a dedicated thread.
    ///
    /// # Safety
    /// `rk` must be a live client handle that outlives the returned value.
    pub unsafe fn attach(rk: *mut rdsys::rd_kafka_t, sink: Arc<Sink>) -> LogQueue {
        let name = CStr::from_ptr(rdsys::rd_kafka_name(rk))
            .to_string_lossy()
            .into_owned();
        sink.set_client_name(name);
        let queue = rdsys::rd_kafka_queue_new(rk);
        // log.queue is always true under rust-rdkafka, so this cannot be NOT_CONFIGURED.
        rdsys::rd_kafka_set_log_queue(rk, queue);
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let thread_handles = Handles { rk, queue };
        let thread = std::thread::Builder::new()
            .name("kgap-log".into())
            .spawn(move || serve_log_queue(thread_handles, &sink, &thread_stop))
            .expect("spawn kgap-log thread");
        LogQueue {
            handles: Handles { rk, queue },
            stop,
            thread: Some(thread),
        }
    }
}

fn serve_log_queue(h: Handles, sink: &Sink, stop: &AtomicBool) {
    loop {
        let ev = unsafe { rdsys::rd_kafka_queue_poll(h.queue, 100) };
        if ev.is_null() {
            if stop.load(Ordering::Acquire) {
                break;
            }
            continue;
        }
        unsafe {
            if rdsys::rd_kafka_event_type(ev) == rdsys::RD_KAFKA_EVENT_LOG {
                let mut fac: *const std::os::raw::c_char = std::ptr::null();
                let mut msg: *const std::os::raw::c_char = std::ptr::null();
                let mut level: i32 = 0;
                if rdsys::rd_kafka_event_log(ev, &mut fac, &mut msg, &mut level) == 0 {
                    let fac = CStr::from_ptr(fac).to_string_lossy();
                    let msg = CStr::from_ptr(msg).to_string_lossy();
                    sink.log_line(level, fac.trim(), msg.trim_end());
                }
            }
            rdsys::rd_kafka_event_destroy(ev);
        }
    }
    let _ = h.rk; // the client pointer is only needed by the owner's Drop
}

impl Drop for LogQueue {
    fn drop(&mut self) {
        unsafe {
            // Back to the main queue (served by rust-rdkafka into the same sink), so nothing
            // logged during shutdown is lost, then drain ours.
            rdsys::rd_kafka_set_log_queue(self.handles.rk, std::ptr::null_mut());
        }
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        unsafe { rdsys::rd_kafka_queue_destroy(self.handles.queue) };
    }
}
