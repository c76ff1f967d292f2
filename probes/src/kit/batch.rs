//! A safe wrapper over librdkafka's batch consume API (`rd_kafka_consume_batch_queue`), which
//! rust-rdkafka 0.39 does not wrap.
//!
//! The post's consumer story: poll() hands over one message per call, so at 100 B the
//! application thread is the limit; the batch API hands over up to N per call and moves the
//! limit to librdkafka's broker thread. And its harness bug: `rd_kafka_consume_batch_queue`
//! waits until it has N messages *or* the timeout passes (librdkafka's
//! `rd_kafka_q_serve_rkmessages`), so a wrapper that always calls it with a timeout adds up to
//! that timeout to every message at low rates. [`WaitPolicy`] names both ways.
//!
//! Ownership: the messages of a batch stay owned by the [`BatchQueue`] until the next call or
//! drop, and are destroyed exactly once then; the views a [`Batch`] hands out borrow the
//! queue, so none can outlive its message (the borrow checker enforces it).

use rdkafka::consumer::{BaseConsumer, ConsumerContext};
use rdkafka_sys as rdsys;
use std::marker::PhantomData;
use std::time::Duration;

/// How a batch call waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Take what is queued (timeout 0); only when nothing is, block until *one* message
    /// arrives (a call for one message), then take what came with it. The post's fix.
    Fixed,
    /// One call with a timeout: wait until the batch is full or the timeout passes. The
    /// post's bug: at low rates every message waits up to the timeout.
    Naive { timeout: Duration },
}

impl WaitPolicy {
    /// The post's naive wrapper: a 100 ms wait for a full batch.
    pub const NAIVE_100MS: WaitPolicy = WaitPolicy::Naive {
        timeout: Duration::from_millis(100),
    };

    pub fn name(&self) -> &'static str {
        match self {
            WaitPolicy::Fixed => "fixed",
            WaitPolicy::Naive { .. } => "naive",
        }
    }
}

/// librdkafka's default batch size in the post's harness.
pub const DEFAULT_BATCH: usize = 500;

/// The consumer's queue, read in batches. Borrows the consumer: the queue handle must be
/// destroyed before the consumer is (FACTS.md §5).
pub struct BatchQueue<'c> {
    queue: *mut rdsys::rd_kafka_queue_t,
    /// The current batch: owned message pointers, `len` of them valid.
    msgs: Box<[*mut rdsys::rd_kafka_message_t]>,
    len: usize,
    policy: WaitPolicy,
    taken: u64,
    destroyed: u64,
    _consumer: PhantomData<&'c ()>,
}

// The queue and messages are librdkafka objects safe to use from another thread; the wrapper
// is not Sync (one reader at a time).
unsafe impl Send for BatchQueue<'_> {}

#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error(
        "the consumer has no consumer queue: librdkafka gives one only to a consumer with a \
         group.id (it is needed even with assign(); nothing is committed)"
    )]
    NoConsumerQueue,
    #[error("batch size must be between 1 and 1000000, not {0}")]
    BadSize(usize),
    #[error("rd_kafka_consume_batch_queue failed: {0}")]
    Call(String),
}

impl<'c> BatchQueue<'c> {
    /// The consumer's queue (`rd_kafka_queue_get_consumer`), read up to `max` messages a call.
    /// Assign partitions with assign(): with subscribe(), the rebalance event reaches a batch
    /// call by librdkafka's fallback path and forces an unassign (FACTS.md §5).
    pub fn new<C: ConsumerContext>(
        consumer: &'c BaseConsumer<C>,
        max: usize,
        policy: WaitPolicy,
    ) -> Result<BatchQueue<'c>, BatchError> {
        if max == 0 || max > 1_000_000 {
            return Err(BatchError::BadSize(max));
        }
        use rdkafka::consumer::Consumer as _;
        let rk = consumer.client().native_ptr();
        let queue = unsafe { rdsys::rd_kafka_queue_get_consumer(rk) };
        if queue.is_null() {
            return Err(BatchError::NoConsumerQueue);
        }
        Ok(BatchQueue {
            queue,
            msgs: vec![std::ptr::null_mut(); max].into_boxed_slice(),
            len: 0,
            policy,
            taken: 0,
            destroyed: 0,
            _consumer: PhantomData,
        })
    }

    pub fn policy(&self) -> WaitPolicy {
        self.policy
    }

    /// Messages taken from librdkafka and not yet destroyed (the current batch).
    pub fn outstanding(&self) -> u64 {
        self.taken - self.destroyed
    }

    /// Messages taken over the queue's life.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// The next batch, after destroying the previous one. `block` bounds the wait when nothing
    /// is queued (fixed); the naive policy always waits its own timeout for a full batch (that
    /// wait is what it is there to show). An empty batch means the wait ran out.
    pub fn next_batch(&mut self, block: Duration) -> Result<Batch<'_>, BatchError> {
        self.release();
        let n = match self.policy {
            WaitPolicy::Fixed => {
                let got = self.call(0, self.msgs.len())?;
                if got > 0 {
                    got
                } else {
                    // Nothing queued: wait for the first message only, then take the rest
                    // that is already there without waiting.
                    let one = self.call(millis(block), 1)?;
                    if one == 1 && self.msgs.len() > 1 {
                        1 + self.call_at(1, 0)?
                    } else {
                        one
                    }
                }
            }
            WaitPolicy::Naive { timeout } => self.call(millis(timeout), self.msgs.len())?,
        };
        Ok(Batch {
            msgs: &self.msgs[..n],
            _queue: PhantomData,
        })
    }

    fn call(&mut self, timeout_ms: i32, n: usize) -> Result<usize, BatchError> {
        self.call_into(0, timeout_ms, n)
    }

    /// Fills `msgs[at..]` without waiting; returns how many came.
    fn call_at(&mut self, at: usize, timeout_ms: i32) -> Result<usize, BatchError> {
        let n = self.msgs.len() - at;
        self.call_into(at, timeout_ms, n)
    }

    fn call_into(&mut self, at: usize, timeout_ms: i32, n: usize) -> Result<usize, BatchError> {
        debug_assert!(at + n <= self.msgs.len() && self.len == at);
        let got = unsafe {
            rdsys::rd_kafka_consume_batch_queue(
                self.queue,
                timeout_ms,
                self.msgs.as_mut_ptr().add(at),
                n,
            )
        };
        if got < 0 {
            let err = unsafe { rdsys::rd_kafka_last_error() };
            let msg = unsafe { std::ffi::CStr::from_ptr(rdsys::rd_kafka_err2str(err)) };
            return Err(BatchError::Call(msg.to_string_lossy().into_owned()));
        }
        let got = got as usize;
        self.len = at + got;
        self.taken += got as u64;
        Ok(got)
    }

    /// Releases the current batch, then forgets the queue handle without destroying it: a
    /// deliberate leak for the leak checker's canary only (scripts/leak-check-batch proves it
    /// is caught). A leaked *message* cannot serve as the canary: librdkafka's destroy then
    /// waits for it forever, which the tests would show as a hang.
    #[doc(hidden)]
    pub fn leak_handle_for_canary(mut self) {
        self.release();
        std::mem::forget(self);
    }

    /// Destroys the current batch's messages, each exactly once.
    fn release(&mut self) {
        for p in &mut self.msgs[..self.len] {
            unsafe { rdsys::rd_kafka_message_destroy(*p) };
            *p = std::ptr::null_mut();
        }
        self.destroyed += self.len as u64;
        self.len = 0;
    }
}

impl Drop for BatchQueue<'_> {
    fn drop(&mut self) {
        self.release();
        unsafe { rdsys::rd_kafka_queue_destroy(self.queue) };
    }
}

fn millis(d: Duration) -> i32 {
    d.as_millis().min(i32::MAX as u128) as i32
}

/// One batch: borrowed views of its messages, valid until the queue's next call.
pub struct Batch<'q> {
    msgs: &'q [*mut rdsys::rd_kafka_message_t],
    _queue: PhantomData<&'q ()>,
}

impl<'q> Batch<'q> {
    pub fn len(&self) -> usize {
        self.msgs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = MessageView<'q>> + '_ {
        self.msgs.iter().map(|&p| MessageView {
            // Valid: owned by the queue until its next call, which needs &mut of the queue
            // this batch borrows.
            m: unsafe { &*p },
        })
    }
}

/// A borrowed view of one message: no copy of key or payload.
#[derive(Clone, Copy)]
pub struct MessageView<'q> {
    m: &'q rdsys::rd_kafka_message_t,
}

impl<'q> MessageView<'q> {
    pub fn partition(&self) -> i32 {
        self.m.partition
    }

    pub fn offset(&self) -> i64 {
        self.m.offset
    }

    pub fn payload(&self) -> Option<&'q [u8]> {
        slice(self.m.payload, self.m.len)
    }

    pub fn key(&self) -> Option<&'q [u8]> {
        slice(self.m.key, self.m.key_len)
    }

    /// The message is an error event, not data (cheap: no text is built).
    pub fn is_error(&self) -> bool {
        self.m.err != rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
    }

    /// A per-message error (e.g. a partition error delivered as a message), with librdkafka's
    /// text for it.
    pub fn error(&self) -> Option<String> {
        if self.m.err == rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            return None;
        }
        let text = unsafe { rdsys::rd_kafka_message_errstr(self.m) };
        Some(if text.is_null() {
            format!("{:?}", self.m.err)
        } else {
            unsafe { std::ffi::CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        })
    }
}

fn slice<'q>(p: *mut std::ffi::c_void, len: usize) -> Option<&'q [u8]> {
    if p.is_null() {
        None
    } else {
        Some(unsafe { std::slice::from_raw_parts(p as *const u8, len) })
    }
}
