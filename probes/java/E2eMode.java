import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * kgap.mode=e2e: a paced producer and a consumer of the same topic in one JVM, each message
 * stamped with its wall-clock send time (see e2e()): the stamp, the consumer half and the
 * paced sending loop.
 */
final class E2eMode {
    /** Wall clock in ns without an allocation per read: one Instant, then nanoTime. */
    static final long MONO0 = System.nanoTime();
    static final long WALL0;

    static {
        java.time.Instant t = java.time.Instant.now();
        WALL0 = t.getEpochSecond() * 1_000_000_000L + t.getNano() - (System.nanoTime() - MONO0);
    }

    static long wallNanos() {
        return WALL0 + (System.nanoTime() - MONO0);
    }

    /** The Rust kit's e2e stamp (payload.rs stamp_e2e): wall ns, big-endian, bytes 0..8. */
    static void stamp(byte[] v, long ns) {
        for (int b = 7; b >= 0; b--) {
            v[b] = (byte) ns;
            ns >>>= 8;
        }
    }

    static long readStamp(byte[] v) {
        return readAt(v, 0);
    }

    /** The intended send time (the pacer's slot), as payload.rs stamp_e2e_intended: bytes 8..16. */
    static void stampIntended(byte[] v, long ns) {
        if (v.length < 16) {
            return;
        }
        for (int b = 15; b >= 8; b--) {
            v[b] = (byte) ns;
            ns >>>= 8;
        }
    }

    static long readAt(byte[] v, int at) {
        long ns = 0;
        for (int b = at; b < at + 8; b++) {
            ns = (ns << 8) | (v[b] & 0xff);
        }
        return ns;
    }

    /** The consumer half of e2e: every record's receive time minus its stamp. */
    static final class E2eConsumer extends Thread {
        final KafkaConsumer<byte[], byte[]> consumer;
        final String topic;
        final Histogram hist = new Histogram();
        /** From the intended send time: a late send's wait counts (coordinated omission). */
        final Histogram intended = new Histogram();
        final CountDownLatch ready = new CountDownLatch(1);
        volatile long from = Long.MAX_VALUE; // window edges, as wall-clock stamps
        volatile long to = Long.MAX_VALUE;
        volatile long inWindow;
        volatile boolean done;
        volatile Throwable failure;

        E2eConsumer(Properties props, String topic) {
            super("kgap-e2e-consumer");
            this.consumer = new KafkaConsumer<>(props);
            this.topic = topic;
        }

        @Override
        public void run() {
            try {
                // The positions are looked up before the producer starts.
                for (TopicPartition tp : ConsumeMode.assignFromStart(consumer, topic)) {
                    consumer.position(tp, Duration.ofSeconds(15));
                }
                ready.countDown();
                long n = 0;
                while (!done) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(20))) {
                        long now = wallNanos();
                        byte[] v = r.value();
                        if (v == null || v.length < 8) {
                            continue;
                        }
                        long sent = readStamp(v);
                        if (sent >= from && sent < to) {
                            hist.record((now - sent) / 1000);
                            if (v.length >= 16) {
                                long due = readAt(v, 8);
                                if (due > 0 && due <= sent) {
                                    intended.record((now - due) / 1000);
                                }
                            }
                            n++;
                        }
                    }
                    inWindow = n;
                }
            } catch (Throwable t) {
                failure = t;
                ready.countDown();
            } finally {
                consumer.close();
            }
        }
    }

    /**
     * A paced producer and a consumer of the same topic in one JVM, as the Rust kit's
     * probe-inflight-latency: each message carries its wall-clock send time and the consumer
     * records the difference. Pacing as measure.rs's Pacer: park, spin the last 100 µs, and when
     * behind send at once until back on the schedule, dropping no slot (re-anchoring lost sends
     * for good and never counted their wait); each message also carries its slot's time, and
     * latency is reported from it too (coordinated omission).
     * The payload is stamped in place: send() has copied it into its batch when it returns.
     */
    static Map<String, Object> e2e(Map<String, String> kgap, Properties props) throws Exception {
        String topic = Companion.need(kgap, "kgap.topic");
        int partitions = Companion.intOf(kgap, "kgap.partitions", 1);
        int size = Companion.intOf(kgap, "kgap.size", 100);
        String kind = kgap.getOrDefault("kgap.kind", "random");
        long rate = Companion.longOf(kgap, "kgap.rate", 1000);
        double seconds = Companion.doubleOf(kgap, "kgap.seconds", 5);
        double warmupSeconds = Companion.doubleOf(kgap, "kgap.warmup-seconds", 1);
        int sample = Companion.intOf(kgap, "kgap.sample", 1);
        if (size < 8) {
            throw new Companion.Usage("e2e needs kgap.size of at least 8 (the send time is stamped in bytes 0..8)");
        }
        if (rate < 1 || partitions < 1 || sample < 1 || !(seconds > 0) || warmupSeconds < 0) {
            throw new Companion.Usage("kgap.rate, kgap.partitions, kgap.sample and kgap.seconds must be positive");
        }
        Properties cp = new Properties();
        Properties pp = new Properties();
        for (String key : props.stringPropertyNames()) {
            if (key.startsWith("consumer.")) {
                cp.setProperty(key.substring("consumer.".length()), props.getProperty(key));
            } else {
                pp.setProperty(key, props.getProperty(key));
            }
        }
        cp.putIfAbsent("bootstrap.servers", pp.getProperty("bootstrap.servers", ""));
        cp.putIfAbsent("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        cp.putIfAbsent("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        cp.putIfAbsent("enable.auto.commit", "false");
        cp.putIfAbsent("auto.offset.reset", "earliest");
        pp.putIfAbsent("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        pp.putIfAbsent("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        pp.putIfAbsent("client.id", "kgap-java-e2e");
        byte[][] pool = Companion.pool(size, kind);
        E2eConsumer consumer = new E2eConsumer(cp, topic);
        consumer.start();
        consumer.ready.await();
        if (consumer.failure != null) {
            throw new RuntimeException("consumer failed: " + consumer.failure, consumer.failure);
        }
        Acks acks = new Acks();
        Histogram ackHist = new Histogram();
        Timed[] ring = new Timed[1 << 16];
        for (int j = 0; j < ring.length; j++) {
            ring[j] = new Timed(acks, ackHist);
        }
        long skipped = 0;
        long sentWindow = 0;
        long worstLag = 0;
        long lateSends = 0;
        Window w = null;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
            double interval = 1e9 / rate;
            long anchor = System.nanoTime();
            long k = 0;
            long warmEnd = anchor + (long) (warmupSeconds * 1e9);
            long end = warmEnd + (long) (seconds * 1e9);
            long i = 0;
            long slot = 0;
            final int count = pool.length;
            while (true) {
                long due = anchor + (long) (k * interval);
                long now = System.nanoTime();
                if (now + 100_000 < due) {
                    LockSupport.parkNanos(due - now - 100_000);
                    continue;
                }
                if (now < due) {
                    Thread.onSpinWait();
                    continue;
                }
                if (now >= end) {
                    break;
                }
                boolean measured = now >= warmEnd;
                if (measured && w == null) {
                    w = Window.open(kgap);
                    consumer.from = wallNanos();
                    Timed.windowStart = System.nanoTime();
                }
                long lag = now - due;
                if (measured) {
                    worstLag = Math.max(worstLag, lag);
                }
                if (lag > 1_000_000 && measured) {
                    lateSends++;
                }
                k++;
                byte[] v = pool[(int) (i % count)];
                long wall = wallNanos();
                stamp(v, wall);
                stampIntended(v, wall - lag);
                Callback cb = acks;
                if (measured && i % sample == 0) {
                    Timed t = ring[(int) (slot++ & (ring.length - 1))];
                    if (t.sentAt == 0) {
                        t.sentAt = System.nanoTime();
                        cb = t;
                    } else {
                        skipped++;
                    }
                }
                producer.send(new ProducerRecord<>(topic, (int) (i % partitions), null, v), cb);
                i++;
                if (measured) {
                    sentWindow++;
                }
            }
            if (w == null) {
                w = Window.open(kgap);
                consumer.from = wallNanos();
            }
            consumer.to = wallNanos();
            Timed.windowEnd = System.nanoTime();
            w.close();
            producer.flush();
        }
        // The window's messages still in flight to the consumer: wait for them (bounded).
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (consumer.inWindow < sentWindow && System.nanoTime() < deadline
                && consumer.failure == null) {
            Thread.sleep(5);
        }
        consumer.done = true;
        consumer.join();
        if (consumer.failure != null) {
            throw new RuntimeException("consumer failed: " + consumer.failure, consumer.failure);
        }
        Histogram e = consumer.hist;
        Map<String, Object> r = w.figures(sentWindow, (long) size * sentWindow);
        r.put("rate_target_per_s", rate);
        r.put("rate_achieved_per_s", Companion.round(sentWindow / w.seconds()));
        r.put("worst_lag_ms", Companion.round(worstLag / 1e6));
        r.put("late_sends", lateSends);
        r.put("e2e_samples", e.total);
        r.put("e2e_missing", sentWindow - e.total);
        r.put("e2e_ms_p50", e.percentileMs(50));
        r.put("e2e_ms_p90", e.percentileMs(90));
        r.put("e2e_ms_p99", e.percentileMs(99));
        r.put("e2e_ms_p999", e.percentileMs(99.9));
        r.put("e2e_ms_max", e.total == 0 ? -1 : e.max / 1000.0);
        Histogram d = consumer.intended;
        if (d.total > 0) {
            r.put("e2e_intended_ms_p50", d.percentileMs(50));
            r.put("e2e_intended_ms_p99", d.percentileMs(99));
            r.put("e2e_intended_ms_p999", d.percentileMs(99.9));
        }
        r.put("latency_sample_every", sample);
        r.put("latency_samples", ackHist.total);
        r.put("latency_samples_skipped", skipped);
        r.put("send_to_ack_ms_p50", ackHist.percentileMs(50));
        r.put("send_to_ack_ms_p99", ackHist.percentileMs(99));
        r.put("send_to_ack_ms_max", ackHist.total == 0 ? -1 : ackHist.max / 1000.0);
        r.put("delivery_errors", acks.errors.get());
        if (acks.firstError != null) {
            r.put("first_error", acks.firstError);
        }
        return r;
    }
}
