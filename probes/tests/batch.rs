//! The batch-consume wrapper (kgap_probes::kit::batch) on librdkafka's mock cluster: every message
//! taken exactly once, in order per partition, released on every path; the two waiting
//! policies wait as documented. `scripts/leak-check-batch` runs this file under valgrind.

use kgap_probes::kit::batch::{BatchError, BatchQueue, WaitPolicy};
use kgap_probes::kit::broker::{Broker, Consumer};
use kgap_probes::kit::capture::Sink;
use kgap_probes::kit::payload::{PayloadKind, Pool};
use kgap_probes::kit::produce;
use rdkafka::consumer::Consumer as _;
use rdkafka::{Offset, TopicPartitionList};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PARTITIONS: i32 = 3;

/// A mock cluster with a topic of `n` messages over PARTITIONS partitions.
fn filled(n: u64) -> (Broker, String) {
    let broker = Broker::start(None, &[]).expect("mock cluster");
    let topic = broker
        .create_topic("test-batch", PARTITIONS)
        .expect("topic");
    let name = topic.name.clone();
    // The mock cannot delete topics; the guard's drop is a no-op there.
    drop(topic);
    let pool = Pool::new(64, PayloadKind::Text);
    produce::prefill(&broker, &name, PARTITIONS, &pool, n, "none", &|_| {}).expect("prefill");
    (broker, name)
}

fn assigned(broker: &Broker, topic: &str) -> Consumer {
    let settings = [
        ("auto.offset.reset", "earliest".to_string()),
        ("group.id", format!("{topic}.group")),
        ("enable.auto.commit", "false".to_string()),
    ];
    let c = Consumer::new(broker, &settings, Arc::new(Sink::default())).expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .unwrap();
    }
    c.consumer.assign(&tpl).expect("assign");
    c
}

/// Reads until `n` messages or 20 s; returns per-partition offsets in arrival order.
fn read_all(q: &mut BatchQueue, n: u64) -> Vec<Vec<i64>> {
    let mut seen = vec![Vec::new(); PARTITIONS as usize];
    let mut count = 0u64;
    let until = Instant::now() + Duration::from_secs(20);
    while count < n && Instant::now() < until {
        let batch = q.next_batch(Duration::from_millis(200)).expect("batch");
        let len = batch.len();
        assert!(len <= 500);
        for m in batch.iter() {
            assert!(m.error().is_none(), "per-message error: {:?}", m.error());
            assert_eq!(m.payload().map(<[u8]>::len), Some(64));
            seen[m.partition() as usize].push(m.offset());
            count += 1;
        }
        // Every message of the batch is held until the next call, none longer.
        assert_eq!(q.outstanding(), len as u64);
    }
    seen
}

fn exactly_once(policy: WaitPolicy) {
    let n = 6_000;
    let (broker, topic) = filled(n);
    let c = assigned(&broker, &topic);
    let mut q = BatchQueue::new(&c.consumer, 500, policy).expect("queue");
    let seen = read_all(&mut q, n);
    let total: usize = seen.iter().map(Vec::len).sum();
    assert_eq!(total as u64, n, "{policy:?}: every message exactly once");
    for (p, offsets) in seen.iter().enumerate() {
        let expected: Vec<i64> = (0..offsets.len() as i64).collect();
        assert_eq!(
            offsets, &expected,
            "partition {p}: in order, no gap, no repeat"
        );
    }
    assert_eq!(q.taken(), n);
    // Nothing more arrives: an empty batch releases the last one.
    let empty = q.next_batch(Duration::from_millis(50)).expect("batch");
    assert!(empty.is_empty());
    assert_eq!(q.outstanding(), 0);
}

#[test]
fn fixed_policy_takes_every_message_exactly_once_in_order() {
    exactly_once(WaitPolicy::Fixed);
}

#[test]
fn naive_policy_takes_every_message_exactly_once_in_order() {
    exactly_once(WaitPolicy::Naive {
        timeout: Duration::from_millis(50),
    });
}

#[test]
fn dropping_mid_batch_and_mid_stream_releases_everything() {
    let (broker, topic) = filled(3_000);
    let c = assigned(&broker, &topic);
    {
        let mut q = BatchQueue::new(&c.consumer, 100, WaitPolicy::Fixed).expect("queue");
        let until = Instant::now() + Duration::from_secs(20);
        // Early return with a batch still held: the queue's drop must destroy it.
        loop {
            let b = q.next_batch(Duration::from_millis(200)).expect("batch");
            if !b.is_empty() || Instant::now() > until {
                break;
            }
        }
        assert!(q.outstanding() > 0);
    }
    // A second queue on the same consumer goes on where the first stopped taking.
    let mut q = BatchQueue::new(&c.consumer, 100, WaitPolicy::Fixed).expect("queue");
    let b = q.next_batch(Duration::from_secs(5)).expect("batch");
    assert!(!b.is_empty());
}

#[test]
fn naive_waits_its_timeout_for_a_full_batch_fixed_does_not() {
    let (broker, topic) = filled(3);
    let c = assigned(&broker, &topic);
    // Let the three messages arrive in the local queue first.
    let mut warm = BatchQueue::new(&c.consumer, 1, WaitPolicy::Fixed).expect("queue");
    let first = warm
        .next_batch(Duration::from_secs(10))
        .expect("batch")
        .len();
    assert_eq!(first, 1);
    drop(warm);
    // The other two partitions' messages come in their own fetches: give them time to land
    // in the local queue (under valgrind a fetch can take a few hundred ms).
    std::thread::sleep(Duration::from_secs(2));
    let timeout = Duration::from_millis(300);
    let mut naive = BatchQueue::new(&c.consumer, 500, WaitPolicy::Naive { timeout }).unwrap();
    let t = Instant::now();
    let got = naive.next_batch(Duration::from_secs(10)).unwrap().len();
    let waited = t.elapsed();
    // Messages were there, yet it did not return with them: it waited for a full batch.
    assert!((1..=2).contains(&got), "{got} of the two messages left");
    // librdkafka waits until the batch is full or the timeout passes: the whole timeout here.
    assert!(
        waited >= timeout - Duration::from_millis(5),
        "naive returned after {waited:?}"
    );
    drop(naive);

    // Fixed: with nothing queued it blocks for one message only. Produce one more and take it.
    let (broker2, topic2) = filled(1);
    let c2 = assigned(&broker2, &topic2);
    let mut fixed = BatchQueue::new(&c2.consumer, 500, WaitPolicy::Fixed).unwrap();
    let t = Instant::now();
    let got = fixed.next_batch(Duration::from_secs(10)).unwrap().len();
    let waited = t.elapsed();
    assert_eq!(got, 1);
    // It returned on the message, long before the 10 s bound (a full batch never comes).
    assert!(waited < Duration::from_secs(5), "fixed waited {waited:?}");
}

#[test]
fn a_consumer_without_group_id_has_no_queue_and_says_why() {
    let broker = Broker::start(None, &[]).expect("mock cluster");
    let c = Consumer::new(&broker, &[], Arc::new(Sink::default())).expect("consumer");
    let err = BatchQueue::new(&c.consumer, 500, WaitPolicy::Fixed)
        .err()
        .expect("no queue without group.id");
    assert!(matches!(err, BatchError::NoConsumerQueue));
    assert!(err.to_string().contains("group.id"));
    assert!(matches!(
        BatchQueue::new(&c.consumer, 0, WaitPolicy::Fixed).err(),
        Some(BatchError::BadSize(0))
    ));
}

/// The leak checker's canary: leaks the queue handle on purpose. Runs only when
/// KGAP_LEAK_CANARY=1 (scripts/leak-check-batch expects valgrind to fail on it).
#[test]
fn leak_canary_only_under_the_leak_check() {
    if std::env::var_os("KGAP_LEAK_CANARY").is_none() {
        return;
    }
    let (broker, topic) = filled(100);
    let c = assigned(&broker, &topic);
    let mut q = BatchQueue::new(&c.consumer, 100, WaitPolicy::Fixed).unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while q.next_batch(Duration::from_millis(200)).unwrap().is_empty() && Instant::now() < until {}
    q.leak_handle_for_canary();
}
