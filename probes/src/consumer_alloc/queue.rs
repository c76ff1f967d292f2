//! One partition's own librdkafka queue (`rd_kafka_queue_get_partition`, forwarded to no
//! other queue), read in batches by that partition's processing thread: one thread per
//! partition as in the postmortem, and payloads that are views into librdkafka's messages.

use rdkafka::consumer::{BaseConsumer, Consumer as _, ConsumerContext};
use rdkafka_sys as rdsys;
use std::ffi::CString;
use std::marker::PhantomData;

/// Messages taken per call.
pub const BATCH: usize = 256;

/// A partition's queue. Borrows the consumer: it is destroyed before the consumer is.
pub struct PartitionQueue<'c> {
    queue: *mut rdsys::rd_kafka_queue_t,
    msgs: Box<[*mut rdsys::rd_kafka_message_t]>,
    _consumer: PhantomData<&'c ()>,
}

// librdkafka's queues and messages may be used from another thread; one reader at a time.
unsafe impl Send for PartitionQueue<'_> {}

impl<'c> PartitionQueue<'c> {
    /// The queue of `topic` [`partition`]; None if librdkafka has no such partition.
    pub fn new<C: ConsumerContext>(
        consumer: &'c BaseConsumer<C>,
        topic: &str,
        partition: i32,
    ) -> Option<PartitionQueue<'c>> {
        let topic = CString::new(topic).ok()?;
        let rk = consumer.client().native_ptr();
        let queue = unsafe { rdsys::rd_kafka_queue_get_partition(rk, topic.as_ptr(), partition) };
        if queue.is_null() {
            return None;
        }
        // Its messages stay on this queue instead of going to the consumer's.
        unsafe { rdsys::rd_kafka_queue_forward(queue, std::ptr::null_mut()) };
        Some(PartitionQueue {
            queue,
            msgs: vec![std::ptr::null_mut(); BATCH].into_boxed_slice(),
            _consumer: PhantomData,
        })
    }

    /// Takes what is queued, waiting up to `timeout_ms` for the first; calls `each` with
    /// every message's payload (errors are counted, not passed), destroys them, and returns
    /// (messages, errors).
    pub fn take(&mut self, timeout_ms: i32, mut each: impl FnMut(&[u8])) -> (usize, usize) {
        let got = unsafe {
            rdsys::rd_kafka_consume_batch_queue(
                self.queue,
                timeout_ms,
                self.msgs.as_mut_ptr(),
                self.msgs.len(),
            )
        };
        let got = got.max(0) as usize;
        let mut errors = 0;
        for &m in &self.msgs[..got] {
            // Safety: a message librdkafka handed over and not yet destroyed.
            let msg = unsafe { &*m };
            if msg.err != rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                errors += 1;
            } else if msg.payload.is_null() {
                each(&[]);
            } else {
                each(unsafe { std::slice::from_raw_parts(msg.payload as *const u8, msg.len) });
            }
            unsafe { rdsys::rd_kafka_message_destroy(m) };
        }
        (got - errors, errors)
    }
}

impl Drop for PartitionQueue<'_> {
    fn drop(&mut self) {
        unsafe { rdsys::rd_kafka_queue_destroy(self.queue) };
    }
}
