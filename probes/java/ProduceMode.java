import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * kgap.mode=produce: K KafkaProducers, each on its own sending thread (kgap-producer-I),
 * send as fast as they go; after their warmup, the window (kgap.seconds) counts acks, times
 * every kgap.sample-th message send-to-ack, and reads kafka-clients' metrics and the
 * threads' CPU at both edges.
 */
final class ProduceMode {
    static volatile boolean stop;

    static final class ProducerThread extends Thread {
        final KafkaProducer<byte[], byte[]> producer;
        final String topic;
        final int partitions;
        final byte[][] pool;
        final long warmup;
        final int warmupRounds;
        // Messages sent before the window: warmup × the rounds it took.
        volatile long warmedMessages;
        final int sample;
        final Acks acks = new Acks();
        final Histogram hist = new Histogram();
        final Timed[] ring;
        final CountDownLatch warmedUp;
        // Messages handed to send(), published every 1024 so the window edges can read it.
        volatile long sent;
        long skipped;
        volatile Throwable failure;

        ProducerThread(int k, Properties props, String topic, int partitions, byte[][] pool,
                long warmup, int warmupRounds, int sample, CountDownLatch warmedUp) {
            super("kgap-producer-" + k);
            this.producer = new KafkaProducer<>(props);
            this.topic = topic;
            this.partitions = partitions;
            this.pool = pool;
            this.warmup = warmup;
            this.warmupRounds = warmupRounds;
            this.sample = sample;
            this.warmedUp = warmedUp;
            this.ring = new Timed[4096];
            for (int i = 0; i < ring.length; i++) {
                ring[i] = new Timed(acks, hist);
            }
        }

        @Override
        public void run() {
            try {
                final int count = pool.length;
                long i = 0;
                // Rounds of a second (the first at least kgap.warmup messages), flushed, until
                // the JIT's compiler threads took under a tenth of one (kgap.warmup-passes of
                // them at most): a fresh JVM's C2 otherwise takes a third of the pinned core
                // in a 3 s window.
                int rounds = 0;
                double share;
                do {
                    long jit0 = Window.nativeTicks()[0];
                    long t0 = System.nanoTime();
                    long least = i + (rounds == 0 ? warmup : 0);
                    while (i < least || (warmupRounds > 1 && System.nanoTime() - t0 < Window.WARMUP_ROUND_NANOS)) {
                        producer.send(new ProducerRecord<>(topic, (int) (i % partitions), null,
                                pool[(int) (i % count)]), acks);
                        i++;
                    }
                    producer.flush();
                    rounds++;
                    share = Window.jitShare(jit0, t0);
                } while (rounds < warmupRounds && share >= Window.JIT_SETTLED_SHARE);
                final long warmed = i;
                warmedMessages = warmed;
                warmedUp.countDown();
                long slot = 0;
                while (!stop) {
                    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic,
                            (int) (i % partitions), null, pool[(int) (i % count)]);
                    Callback cb = acks;
                    if (i % sample == 0) {
                        Timed t = ring[(int) (slot++ & (ring.length - 1))];
                        if (t.sentAt == 0) {
                            t.sentAt = System.nanoTime();
                            cb = t;
                        } else {
                            skipped++;
                        }
                    }
                    producer.send(r, cb);
                    i++;
                    if ((i & 1023) == 0) {
                        sent = i - warmed;
                    }
                }
                sent = i - warmed;
            } catch (Throwable t) {
                // After the window, closing abandons a send() blocked on buffer.memory: that is
                // the end of the run, not a failure.
                if (!stop) {
                    failure = t;
                }
                warmedUp.countDown();
            }
        }
    }

    static Map<String, Object> produce(Map<String, String> kgap, Properties props) throws Exception {
        String topic = Companion.need(kgap, "kgap.topic");
        int partitions = Companion.intOf(kgap, "kgap.partitions", 1);
        int size = Companion.intOf(kgap, "kgap.size", 100);
        String kind = kgap.getOrDefault("kgap.kind", "random");
        int k = Companion.intOf(kgap, "kgap.producers", 1);
        long warmup = Companion.longOf(kgap, "kgap.warmup", 100_000);
        int warmupRounds = Math.max(1, Companion.intOf(kgap, "kgap.warmup-passes", 1));
        double seconds = Companion.doubleOf(kgap, "kgap.seconds", 5);
        int sample = Companion.intOf(kgap, "kgap.sample", 16);
        if (k < 1 || sample < 1 || partitions < 1 || !(seconds > 0)) {
            throw new Companion.Usage("kgap.producers, kgap.sample, kgap.partitions and kgap.seconds must be positive");
        }
        props.putIfAbsent("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        props.putIfAbsent("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        // kafka-clients' averages (batch-size-avg, compression-rate-avg) are sampled stats,
        // 2 × 30 s by default: 1 s samples, as many as the window has seconds, keep the warmup
        // mostly out of the figures read at the window's end.
        props.putIfAbsent("metrics.sample.window.ms", "1000");
        props.putIfAbsent("metrics.num.samples", Integer.toString(Math.max(2, (int) Math.ceil(seconds))));
        byte[][] pool = Companion.pool(size, kind);
        CountDownLatch warmedUp = new CountDownLatch(k);
        List<ProducerThread> threads = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            Properties p = new Properties();
            p.putAll(props);
            p.putIfAbsent("client.id", "kgap-java-" + i);
            threads.add(new ProducerThread(i, p, topic, partitions, pool, warmup, warmupRounds, sample, warmedUp));
        }
        // A first JFR recording instruments the socket classes and throws their compiled code
        // away: one over the warmup rounds moves that before the window, its events not kept.
        Object instrument = warmupRounds > 1 ? Window.startRecording(kgap) : null;
        for (ProducerThread t : threads) {
            t.start();
        }
        warmedUp.await();
        Window.discard(instrument);
        for (ProducerThread t : threads) {
            if (t.failure != null) {
                throw new RuntimeException("producer failed in warmup: " + t.failure, t.failure);
            }
        }
        Window w = Window.open(kgap);
        long acked0 = 0;
        long sent0 = 0;
        double wait0 = 0;
        double wire0 = 0;
        double records0 = 0;
        for (ProducerThread t : threads) {
            acked0 += t.acks.acked;
            sent0 += t.sent;
            wait0 += metric(t.producer, "bufferpool-wait-time-ns-total");
            wire0 += topicMetric(t.producer, "byte-total", topic);
            records0 += topicMetric(t.producer, "record-send-total", topic);
        }
        long sendCpu0 = threadCpuNanos("kgap-producer-");
        long ioCpu0 = threadCpuNanos("kafka-producer-network-thread");
        long ioUser0 = threadCpuNanos("kafka-producer-network-thread", true);
        Timed.windowStart = w.startNanos;
        Thread.sleep((long) (seconds * 1000));
        long acked1 = 0;
        long sent1 = 0;
        double wait1 = 0;
        double bufferUsed = 0;
        double wire1 = 0;
        double records1 = 0;
        // Means of the producers' own per-batch averages (kafka-clients' sampled stats; the
        // companion sets 1 s samples spanning about the window, so warmup batches age out).
        double batchSize = 0;
        double compressionRate = 0;
        double recordsPerRequest = 0;
        for (ProducerThread t : threads) {
            acked1 += t.acks.acked;
            sent1 += t.sent;
            wait1 += metric(t.producer, "bufferpool-wait-time-ns-total");
            bufferUsed += metric(t.producer, "buffer-total-bytes")
                    - metric(t.producer, "buffer-available-bytes");
            wire1 += topicMetric(t.producer, "byte-total", topic);
            records1 += topicMetric(t.producer, "record-send-total", topic);
            batchSize += metric(t.producer, "batch-size-avg") / k;
            compressionRate += metric(t.producer, "compression-rate-avg") / k;
            recordsPerRequest += metric(t.producer, "records-per-request-avg") / k;
        }
        long sendCpu1 = threadCpuNanos("kgap-producer-");
        long ioCpu1 = threadCpuNanos("kafka-producer-network-thread");
        long ioUser1 = threadCpuNanos("kafka-producer-network-thread", true);
        long errors = 0;
        for (ProducerThread t : threads) {
            errors += t.acks.errors.get();
        }
        w.close();
        Timed.windowEnd = w.endNanos;
        stop = true;
        // The backlog left after the window is not measured: close without waiting for it
        // (its records fail with "producer closed", after the error count was taken).
        for (ProducerThread t : threads) {
            t.producer.close(Duration.ZERO);
        }
        Histogram hist = new Histogram();
        long skipped = 0;
        String firstError = null;
        for (ProducerThread t : threads) {
            t.join();
            if (t.failure != null) {
                throw new RuntimeException("producer failed: " + t.failure, t.failure);
            }
            hist.add(t.hist);
            skipped += t.skipped;
            if (firstError == null) {
                firstError = t.acks.firstError;
            }
        }
        long messages = acked1 - acked0;
        Map<String, Object> r = w.figures(messages, (long) size * messages);
        r.put("producers", k);
        // The backlog: records handed to send() and not yet acknowledged, and the accumulator's
        // bytes in use, at the window's end; the time send() spent blocked on a full
        // buffer.memory during the window (all producers).
        r.put("sent_per_s", Companion.round((sent1 - sent0) / w.seconds()));
        long warmedAll = 0;
        for (ProducerThread t : threads) {
            warmedAll += t.warmedMessages;
        }
        r.put("backlog_messages_end", sent1 + warmedAll - acked1);
        r.put("warmup_messages", warmedAll);
        r.put("buffer_used_bytes_end", (long) bufferUsed);
        r.put("buffer_wait_s", Companion.round((wait1 - wait0) / 1e9));
        r.put("latency_sample_every", sample);
        r.put("latency_samples", hist.total);
        r.put("latency_samples_skipped", skipped);
        r.put("send_to_ack_ms_p50", hist.percentileMs(50));
        r.put("send_to_ack_ms_p99", hist.percentileMs(99));
        r.put("send_to_ack_ms_max", hist.total == 0 ? -1 : hist.max / 1000.0);
        // Batches as sent (closed, so compressed): bytes and records the producers drained
        // to the wire during the window (producer-topic-metrics totals), and the per-batch means.
        r.put("wire_bytes_window", (long) (wire1 - wire0));
        r.put("records_sent_window", (long) (records1 - records0));
        r.put("batch_size_avg", Companion.round(batchSize));
        r.put("compression_rate_avg", Companion.round(compressionRate));
        r.put("records_per_request_avg", Companion.round(recordsPerRequest));
        // Java compresses in send(), on the calling thread; the network thread only writes.
        r.put("send_thread_cpu_s", sendCpu0 < 0 ? -1 : Companion.round((sendCpu1 - sendCpu0) / 1e9));
        r.put("network_thread_cpu_s", ioCpu0 < 0 ? -1 : Companion.round((ioCpu1 - ioCpu0) / 1e9));
        // Its user-space part (the JDK's copies into temporary direct buffers); the rest of
        // network_thread_cpu_s is the kernel's (HotSpot reads both from /proc/self/task/<tid>).
        r.put("network_thread_user_cpu_s", ioUser0 < 0 ? -1 : Companion.round((ioUser1 - ioUser0) / 1e9));
        r.put("delivery_errors", errors);
        if (firstError != null && errors > 0) {
            r.put("first_error", firstError);
        }
        return r;
    }

    /** A producer-topic-metrics metric of one topic (NaN when absent). */
    static double topicMetric(KafkaProducer<byte[], byte[]> p, String name, String topic) {
        for (Map.Entry<org.apache.kafka.common.MetricName, ? extends org.apache.kafka.common.Metric> e
                : p.metrics().entrySet()) {
            org.apache.kafka.common.MetricName n = e.getKey();
            if (n.name().equals(name) && n.group().equals("producer-topic-metrics")
                    && topic.equals(n.tags().get("topic"))) {
                Object v = e.getValue().metricValue();
                return v instanceof Number ? ((Number) v).doubleValue() : Double.NaN;
            }
        }
        return Double.NaN;
    }

    /** CPU nanoseconds of the live threads whose name starts with `prefix` (-1: unsupported). */
    static long threadCpuNanos(String prefix) {
        return threadCpuNanos(prefix, false);
    }

    /** As above; `userOnly`: user-space CPU only (ThreadMXBean.getThreadUserTime). */
    static long threadCpuNanos(String prefix, boolean userOnly) {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        if (!mx.isThreadCpuTimeSupported()) {
            return -1;
        }
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix)) {
                long ns = userOnly ? mx.getThreadUserTime(t.getId()) : mx.getThreadCpuTime(t.getId());
                if (ns > 0) {
                    sum += ns;
                }
            }
        }
        return sum;
    }

    /** A producer metric of group producer-metrics by name (NaN when absent). */
    static double metric(KafkaProducer<byte[], byte[]> p, String name) {
        for (Map.Entry<org.apache.kafka.common.MetricName, ? extends org.apache.kafka.common.Metric> e
                : p.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics")) {
                Object v = e.getValue().metricValue();
                return v instanceof Number ? ((Number) v).doubleValue() : Double.NaN;
            }
        }
        return Double.NaN;
    }
}
