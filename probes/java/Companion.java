import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * kgap's Java companion: the Java side of a probe, driven by probes/src/java.rs.
 *
 * Arguments are key=value. Keys starting with "kgap." are the companion's own; every other
 * key is a kafka-clients setting passed through unchanged (bootstrap.servers, batch.size,
 * send.buffer.bytes, buffer.memory, ...). It prints exactly one line starting "RESULT " with a
 * JSON object, and exits 0; a bad setting or a failed run prints "ERROR <message>" on stderr
 * and exits 2 (usage) or 1 (run failed).
 *
 * kgap.mode        pool-sha | produce | consume | consumers | e2e
 * kgap.size        payload bytes [100]        kgap.kind    random | text [random]
 * kgap.topic       a topic the probe created  kgap.partitions  its partition count
 * kgap.producers   K KafkaProducer instances, one sending thread each [1]
 * kgap.warmup      messages per producer, sent and flushed before the window [100000]
 * kgap.seconds     measured window [5]
 * kgap.messages    consume: messages to read (the prefilled count)
 * kgap.sample      produce: time send-to-ack for every Nth message [16]
 * kgap.jfr         a .jfr path: record the window only, with kgap.jfc's settings
 * kgap.jfc         the .jfc to record with (SocketRead/SocketWrite at threshold 0)
 * kgap.rate        e2e: messages per second, paced [1000]
 * kgap.warmup-seconds  e2e: paced and not measured, before the window [1]
 * consumer.KEY     e2e: a kafka-clients consumer setting (the rest go to the producer)
 * kgap.consumers   consumers: K KafkaConsumer instances, one poll() thread each [1]
 * kgap.warmup-fraction  consumers: share of all messages read before the window [0.1]
 *
 * The payloads are the seed benchmark's (FACTS.md §1), byte for byte the Rust kit's
 * (probes/src/payload.rs): SplitMix64 seeded with 42, min(16384, 64 MiB / size) payloads.
 */
public final class Companion {
    static final long SEED = 42;
    static final String[] WORDS = {
        "kafka", "stream", "broker", "topic", "partition", "offset", "consumer", "producer",
        "record", "batch", "leader", "follower", "replica", "commit", "segment", "index",
        "latency", "throughput", "cluster", "message", "payload", "header", "key", "value",
        "timestamp", "schema", "event", "log", "queue", "fetch", "poll", "ack",
    };

    static final class Usage extends Exception {
        private static final long serialVersionUID = 1L;

        Usage(String m) {
            super(m);
        }
    }

    // ------------------------------------------------------------------ payloads

    static long state;

    static long next() {
        state += 0x9E3779B97F4A7C15L;
        long z = state;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The pool, one array per payload: a ProducerRecord takes the array as is (no copy). */
    static byte[][] pool(int size, String kind) {
        int count = (int) Math.min(16384L, Math.max(1L, (64L * 1024 * 1024) / size));
        byte[][] pool = new byte[count][];
        state = SEED;
        StringBuilder text = new StringBuilder(size + 16);
        for (int p = 0; p < count; p++) {
            byte[] b = new byte[size];
            if (kind.equals("random")) {
                // Little-endian generator outputs; each payload starts from a fresh output.
                int at = 0;
                while (at < size) {
                    long w = next();
                    for (int i = 0; i < 8 && at < size; i++, at++) {
                        b[at] = (byte) (w >>> (8 * i));
                    }
                }
            } else {
                text.setLength(0);
                while (text.length() < size) {
                    // Unsigned modulo 32 = the low five bits.
                    text.append(WORDS[(int) (next() & 31)]).append(' ');
                }
                byte[] t = text.toString().getBytes(StandardCharsets.US_ASCII);
                System.arraycopy(t, 0, b, 0, size);
            }
            pool[p] = b;
        }
        return pool;
    }

    static String sha256(byte[][] pool) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        for (byte[] b : pool) {
            md.update(b);
        }
        StringBuilder s = new StringBuilder();
        for (byte x : md.digest()) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }

    // ------------------------------------------------------------------ latency histogram

    /**
     * Log-linear histogram of microseconds: exact below 128 µs, then 64 sub-buckets per power
     * of two (≤ 1.6% relative error). One writer thread; merged after the run.
     */
    static final class Histogram {
        final long[] counts = new long[128 + 64 * 40];
        long total;
        long max;

        static int index(long us) {
            if (us < 128) {
                return (int) Math.max(0, us);
            }
            int e = 63 - Long.numberOfLeadingZeros(us);
            long m = us >>> (e - 6);
            return (int) Math.min(128 + (e - 7) * 64 + (m - 64), 128 + 64 * 40 - 1);
        }

        static double value(int i) {
            if (i < 128) {
                return i;
            }
            int e = (i - 128) / 64 + 7;
            long m = (i - 128) % 64 + 64;
            long lo = m << (e - 6);
            return lo + (1L << (e - 6)) / 2.0;
        }

        void record(long us) {
            counts[index(us)]++;
            total++;
            if (us > max) {
                max = us;
            }
        }

        void add(Histogram o) {
            for (int i = 0; i < counts.length; i++) {
                counts[i] += o.counts[i];
            }
            total += o.total;
            max = Math.max(max, o.max);
        }

        /** Nearest-rank percentile in milliseconds, or -1 with no samples. */
        double percentileMs(double p) {
            if (total == 0) {
                return -1;
            }
            long rank = Math.max(1, (long) Math.ceil(p / 100.0 * total));
            long seen = 0;
            for (int i = 0; i < counts.length; i++) {
                seen += counts[i];
                if (seen >= rank) {
                    return Math.min(value(i), max) / 1000.0;
                }
            }
            return max / 1000.0;
        }
    }

    // ------------------------------------------------------------------ produce

    /** Window edges on System.nanoTime(); a latency sample counts when sent inside it. */
    static volatile long windowStart = Long.MAX_VALUE;
    static volatile long windowEnd = Long.MAX_VALUE;
    static volatile boolean stop;

    /** Counts acks and errors for every message: one instance per producer, no allocation. */
    static final class Acks implements Callback {
        // Written by the producer's network thread only (and by the caller on an immediate
        // failure, which is counted in errors).
        volatile long acked;
        final AtomicLong errors = new AtomicLong();
        volatile String firstError;

        @Override
        public void onCompletion(RecordMetadata m, Exception e) {
            if (e != null) {
                if (errors.getAndIncrement() == 0) {
                    firstError = e.toString();
                }
            } else {
                acked++;
            }
        }
    }

    /**
     * A reusable latency slot: every kgap.sample-th message takes a free slot from a fixed ring
     * instead of the shared callback, so timing costs no allocation either. A busy slot (its
     * message not acked yet) skips that sample, counted in latency_samples_skipped.
     */
    static final class Timed implements Callback {
        final Acks acks;
        final Histogram hist;
        volatile long sentAt; // 0 = free

        Timed(Acks acks, Histogram hist) {
            this.acks = acks;
            this.hist = hist;
        }

        @Override
        public void onCompletion(RecordMetadata m, Exception e) {
            long now = System.nanoTime();
            long s = sentAt;
            acks.onCompletion(m, e);
            if (e == null && s >= windowStart && s <= windowEnd) {
                hist.record((now - s) / 1000);
            }
            sentAt = 0;
        }
    }

    static final class ProducerThread extends Thread {
        final KafkaProducer<byte[], byte[]> producer;
        final String topic;
        final int partitions;
        final byte[][] pool;
        final long warmup;
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
                long warmup, int sample, CountDownLatch warmedUp) {
            super("kgap-producer-" + k);
            this.producer = new KafkaProducer<>(props);
            this.topic = topic;
            this.partitions = partitions;
            this.pool = pool;
            this.warmup = warmup;
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
                for (; i < warmup; i++) {
                    producer.send(new ProducerRecord<>(topic, (int) (i % partitions), null,
                            pool[(int) (i % count)]), acks);
                }
                producer.flush();
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
                        sent = i - warmup;
                    }
                }
                sent = i - warmup;
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
        String topic = need(kgap, "kgap.topic");
        int partitions = intOf(kgap, "kgap.partitions", 1);
        int size = intOf(kgap, "kgap.size", 100);
        String kind = kgap.getOrDefault("kgap.kind", "random");
        int k = intOf(kgap, "kgap.producers", 1);
        long warmup = longOf(kgap, "kgap.warmup", 100_000);
        double seconds = doubleOf(kgap, "kgap.seconds", 5);
        int sample = intOf(kgap, "kgap.sample", 16);
        if (k < 1 || sample < 1 || partitions < 1 || !(seconds > 0)) {
            throw new Usage("kgap.producers, kgap.sample, kgap.partitions and kgap.seconds must be positive");
        }
        props.putIfAbsent("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        props.putIfAbsent("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        // kafka-clients' averages (batch-size-avg, compression-rate-avg) are sampled stats,
        // 2 × 30 s by default: 1 s samples, as many as the window has seconds, keep the warmup
        // mostly out of the figures read at the window's end.
        props.putIfAbsent("metrics.sample.window.ms", "1000");
        props.putIfAbsent("metrics.num.samples", Integer.toString(Math.max(2, (int) Math.ceil(seconds))));
        byte[][] pool = pool(size, kind);
        CountDownLatch warmedUp = new CountDownLatch(k);
        List<ProducerThread> threads = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            Properties p = new Properties();
            p.putAll(props);
            p.putIfAbsent("client.id", "kgap-java-" + i);
            threads.add(new ProducerThread(i, p, topic, partitions, pool, warmup, sample, warmedUp));
        }
        for (ProducerThread t : threads) {
            t.start();
        }
        warmedUp.await();
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
        windowStart = w.startNanos;
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
        windowEnd = w.endNanos;
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
        r.put("sent_per_s", round((sent1 - sent0) / w.seconds()));
        r.put("backlog_messages_end", sent1 + warmup * k - acked1);
        r.put("buffer_used_bytes_end", (long) bufferUsed);
        r.put("buffer_wait_s", round((wait1 - wait0) / 1e9));
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
        r.put("batch_size_avg", round(batchSize));
        r.put("compression_rate_avg", round(compressionRate));
        r.put("records_per_request_avg", round(recordsPerRequest));
        // Java compresses in send(), on the calling thread; the network thread only writes.
        r.put("send_thread_cpu_s", sendCpu0 < 0 ? -1 : round((sendCpu1 - sendCpu0) / 1e9));
        r.put("network_thread_cpu_s", ioCpu0 < 0 ? -1 : round((ioCpu1 - ioCpu0) / 1e9));
        // Its user-space part (the JDK's copies into temporary direct buffers); the rest of
        // network_thread_cpu_s is the kernel's (HotSpot reads both from /proc/self/task/<tid>).
        r.put("network_thread_user_cpu_s", ioUser0 < 0 ? -1 : round((ioUser1 - ioUser0) / 1e9));
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

    // ------------------------------------------------------------------ consume

    /**
     * Every partition of the probe's own topic from its start: assign(), not subscribe(), so
     * no group join and no other topic.
     */
    static List<TopicPartition> assignFromStart(KafkaConsumer<byte[], byte[]> c, String topic) {
        List<TopicPartition> tps = new ArrayList<>();
        for (PartitionInfo p : c.partitionsFor(topic, Duration.ofSeconds(15))) {
            tps.add(new TopicPartition(topic, p.partition()));
        }
        c.assign(tps);
        c.seekToBeginning(tps);
        return tps;
    }

    static Map<String, Object> consume(Map<String, String> kgap, Properties props) throws Exception {
        String topic = need(kgap, "kgap.topic");
        long messages = longOf(kgap, "kgap.messages", -1);
        double seconds = doubleOf(kgap, "kgap.seconds", 60);
        if (messages < 1) {
            throw new Usage("consume needs kgap.messages (the topic's prefilled message count)");
        }
        props.putIfAbsent("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        props.putIfAbsent("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        props.putIfAbsent("enable.auto.commit", "false");
        props.putIfAbsent("auto.offset.reset", "earliest");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
            assignFromStart(c, topic);
            Window w = null;
            long got = 0;
            long bytes = 0;
            // The classic consumer reads the socket on the thread that calls poll(): its CPU
            // over the window says whether one core is the limit.
            java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            boolean cpuKnown = mx.isCurrentThreadCpuTimeSupported();
            long pollCpu0 = 0;
            long deadline = System.nanoTime() + (long) (seconds * 1e9);
            while (got < messages && System.nanoTime() < deadline) {
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(100));
                if (rs.isEmpty()) {
                    continue;
                }
                if (w == null) {
                    // The window opens at the first records: connection and metadata excluded.
                    w = Window.open(kgap);
                    pollCpu0 = cpuKnown ? mx.getCurrentThreadCpuTime() : 0;
                }
                for (ConsumerRecord<byte[], byte[]> r : rs) {
                    got++;
                    bytes += r.value().length;
                }
            }
            if (w == null) {
                throw new RuntimeException("no records within " + seconds + " s");
            }
            long pollCpu1 = cpuKnown ? mx.getCurrentThreadCpuTime() : 0;
            w.close();
            Map<String, Object> r = w.figures(got, bytes);
            r.put("poll_thread_cpu_s", cpuKnown ? round((pollCpu1 - pollCpu0) / 1e9) : -1);
            r.put("expected_messages", messages);
            r.put("complete", got >= messages);
            return r;
        }
    }

    // ------------------------------------------------------------------ consumers

    /** CPU nanoseconds (total, user) of every live thread by id, with its name. */
    static Map<Long, Object[]> threadCpu(java.lang.management.ThreadMXBean mx) {
        Map<Long, Object[]> m = new LinkedHashMap<>();
        long[] ids = mx.getAllThreadIds();
        java.lang.management.ThreadInfo[] infos = mx.getThreadInfo(ids);
        for (int i = 0; i < ids.length; i++) {
            if (infos[i] == null) {
                continue;
            }
            long cpu = mx.getThreadCpuTime(ids[i]);
            long user = mx.getThreadUserTime(ids[i]);
            if (cpu >= 0) {
                m.put(ids[i], new Object[] {infos[i].getThreadName(), cpu, user});
            }
        }
        return m;
    }

    /** The role of a JVM thread in a consumer run, by its name. */
    static String role(String name) {
        if (name.startsWith("kgap-poll")) {
            return "poll";
        }
        if (name.contains("background")) {
            // group.protocol=consumer: the ConsumerNetworkThread does the network I/O.
            return "background";
        }
        if (name.contains("heartbeat")) {
            return "heartbeat";
        }
        return "other";
    }

    /**
     * K KafkaConsumers in this JVM, each its own client with its own connection, each on its
     * own poll() thread (kgap-poll-I) reading every partition of kgap.topic from the start:
     * the post's "K independent instances in one process". The window opens when all of them
     * together have read kgap.warmup-fraction of their messages and closes when the first
     * finishes (or at kgap.seconds), so all K run through all of it. CPU per thread by role
     * (poll, background with group.protocol=consumer, heartbeat, other) at both edges from
     * the ThreadMXBean; GC threads are not Java threads and count only in process_cpu_s.
     */
    static Map<String, Object> consumers(Map<String, String> kgap, Properties props) throws Exception {
        String topic = need(kgap, "kgap.topic");
        long messages = longOf(kgap, "kgap.messages", -1);
        double seconds = doubleOf(kgap, "kgap.seconds", 60);
        int k = intOf(kgap, "kgap.consumers", 1);
        final int partitions = intOf(kgap, "kgap.partitions", 0);
        if (partitions < 1) {
            throw new Usage("consumers needs kgap.partitions (the topic's partition count)");
        }
        double warmupFraction = doubleOf(kgap, "kgap.warmup-fraction", 0.1);
        if (messages < 1) {
            throw new Usage("consumers needs kgap.messages (the topic's prefilled message count)");
        }
        if (k < 1 || k > 64) {
            throw new Usage("kgap.consumers must be 1 to 64");
        }
        if (warmupFraction < 0 || warmupFraction >= 1) {
            throw new Usage("kgap.warmup-fraction must be in [0, 1)");
        }
        props.putIfAbsent("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        props.putIfAbsent("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        props.putIfAbsent("enable.auto.commit", "false");
        props.putIfAbsent("auto.offset.reset", "earliest");
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        if (!mx.isThreadCpuTimeSupported()) {
            throw new RuntimeException("this JVM cannot measure per-thread CPU time");
        }
        mx.setThreadCpuTimeEnabled(true);
        final AtomicLong[] got = new AtomicLong[k];
        final AtomicLong[] bytes = new AtomicLong[k];
        final Throwable[] failed = new Throwable[k];
        final CountDownLatch ready = new CountDownLatch(k);
        final CountDownLatch go = new CountDownLatch(1);
        final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        final java.util.concurrent.atomic.AtomicInteger finished = new java.util.concurrent.atomic.AtomicInteger();
        // A consumer that has read everything waits for the window's end edge before it
        // closes and its thread exits, so its CPU is still there to be read.
        final java.util.concurrent.atomic.AtomicInteger doneReading = new java.util.concurrent.atomic.AtomicInteger();
        final CountDownLatch edgeTaken = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            got[i] = new AtomicLong();
            bytes[i] = new AtomicLong();
            final int me = i;
            Properties mine = new Properties();
            mine.putAll(props);
            mine.setProperty("client.id", "kgap-consumer-" + i);
            Thread t = new Thread(() -> {
                try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(mine)) {
                    // The partitions the probe created, without a Metadata round trip bound
                    // by a timeout (a fresh JVM on a loaded machine can miss 15 s).
                    List<TopicPartition> tps = new ArrayList<>();
                    for (int p = 0; p < partitions; p++) {
                        tps.add(new TopicPartition(topic, p));
                    }
                    c.assign(tps);
                    c.seekToBeginning(tps);
                    ready.countDown();
                    go.await();
                    long n = 0;
                    long b = 0;
                    while (n < messages && !stop.get()) {
                        ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(100));
                        for (ConsumerRecord<byte[], byte[]> r : rs) {
                            n++;
                            b += r.value().length;
                        }
                        // Once per poll(), not per record.
                        got[me].set(n);
                        bytes[me].set(b);
                    }
                    doneReading.incrementAndGet();
                    edgeTaken.await(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (Throwable e) {
                    failed[me] = e;
                    ready.countDown();
                } finally {
                    finished.incrementAndGet();
                }
            }, "kgap-poll-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        ready.await();
        for (Throwable e : failed) {
            if (e != null) {
                stop.set(true);
                go.countDown();
                throw new RuntimeException("a consumer failed before the start: " + e, e);
            }
        }
        go.countDown();
        long total = messages * k;
        long warmup = (long) (total * warmupFraction);
        long deadline = System.nanoTime() + (long) ((seconds + 120) * 1e9);
        while (sum(got) < Math.max(1, warmup)) {
            if (finished.get() > 0 || doneReading.get() > 0 || System.nanoTime() > deadline) {
                stop.set(true);
                edgeTaken.countDown();
                throw new RuntimeException("the consumers read " + sum(got) + " of " + total
                        + " messages and never passed the warmup" + firstFailure(failed));
            }
            Thread.sleep(1);
        }
        Window w = Window.open(kgap);
        long[] got0 = snapshot(got);
        long[] bytes0 = snapshot(bytes);
        Map<Long, Object[]> cpu0 = threadCpu(mx);
        long windowEnd = System.nanoTime() + (long) (seconds * 1e9);
        while (finished.get() == 0 && doneReading.get() == 0 && System.nanoTime() < windowEnd) {
            Thread.sleep(1);
        }
        // The edge: every poll thread is still alive, so its CPU counts.
        Map<Long, Object[]> cpu1 = threadCpu(mx);
        long[] got1 = snapshot(got);
        long[] bytes1 = snapshot(bytes);
        w.close();
        stop.set(true);
        edgeTaken.countDown();
        for (Thread t : threads) {
            t.join(30_000);
        }
        String failure = firstFailure(failed);
        if (!failure.isEmpty()) {
            throw new RuntimeException("a consumer failed" + failure);
        }
        long n = 0;
        long b = 0;
        List<Object> per = new ArrayList<>();
        double secs = w.seconds();
        for (int i = 0; i < k; i++) {
            long dn = got1[i] - got0[i];
            n += dn;
            b += bytes1[i] - bytes0[i];
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("instance", i);
            c.put("messages", dn);
            c.put("msgs_per_s", round(dn / secs));
            c.put("mb_per_s", round((bytes1[i] - bytes0[i]) / secs / 1e6));
            per.add(c);
        }
        Map<String, Object> r = w.figures(n, b);
        List<Object> ts = new ArrayList<>();
        for (Map.Entry<Long, Object[]> e : cpu1.entrySet()) {
            Object[] before = cpu0.get(e.getKey());
            long c0 = before == null ? 0 : (Long) before[1];
            long u0 = before == null ? 0 : (Long) before[2];
            long dc = (Long) e.getValue()[1] - c0;
            long du = (Long) e.getValue()[2] - u0;
            if (dc <= 0) {
                continue;
            }
            String name = (String) e.getValue()[0];
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("name", name);
            t.put("role", role(name));
            t.put("cpu_s", round(dc / 1e9));
            t.put("user_s", round(du / 1e9));
            ts.add(t);
        }
        r.put("consumers", k);
        r.put("group_protocol", props.getProperty("group.protocol", "classic"));
        r.put("per_consumer", per);
        r.put("threads", ts);
        r.put("expected_messages", messages);
        r.put("complete", doneReading.get() > 0);
        return r;
    }

    static long sum(AtomicLong[] a) {
        long s = 0;
        for (AtomicLong x : a) {
            s += x.get();
        }
        return s;
    }

    static long[] snapshot(AtomicLong[] a) {
        long[] s = new long[a.length];
        for (int i = 0; i < a.length; i++) {
            s[i] = a[i].get();
        }
        return s;
    }

    static String firstFailure(Throwable[] failed) {
        for (Throwable e : failed) {
            if (e != null) {
                return ": " + e;
            }
        }
        return "";
    }

    // ------------------------------------------------------------------ end to end

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
        long ns = 0;
        for (int b = 0; b < 8; b++) {
            ns = (ns << 8) | (v[b] & 0xff);
        }
        return ns;
    }

    /** The consumer half of e2e: every record's receive time minus its stamp. */
    static final class E2eConsumer extends Thread {
        final KafkaConsumer<byte[], byte[]> consumer;
        final String topic;
        final Histogram hist = new Histogram();
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
                for (TopicPartition tp : assignFromStart(consumer, topic)) {
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
     * records the difference. Pacing as FACTS.md §1 and measure.rs's Pacer: park, spin the last
     * 100 µs, and more than 1 ms behind re-anchor instead of bursting, reporting the worst lag.
     * The payload is stamped in place: send() has copied it into its batch when it returns.
     */
    static Map<String, Object> e2e(Map<String, String> kgap, Properties props) throws Exception {
        String topic = need(kgap, "kgap.topic");
        int partitions = intOf(kgap, "kgap.partitions", 1);
        int size = intOf(kgap, "kgap.size", 100);
        String kind = kgap.getOrDefault("kgap.kind", "random");
        long rate = longOf(kgap, "kgap.rate", 1000);
        double seconds = doubleOf(kgap, "kgap.seconds", 5);
        double warmupSeconds = doubleOf(kgap, "kgap.warmup-seconds", 1);
        int sample = intOf(kgap, "kgap.sample", 1);
        if (size < 8) {
            throw new Usage("e2e needs kgap.size of at least 8 (the send time is stamped in bytes 0..8)");
        }
        if (rate < 1 || partitions < 1 || sample < 1 || !(seconds > 0) || warmupSeconds < 0) {
            throw new Usage("kgap.rate, kgap.partitions, kgap.sample and kgap.seconds must be positive");
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
        byte[][] pool = pool(size, kind);
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
        long reanchors = 0;
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
                    windowStart = System.nanoTime();
                }
                long lag = now - due;
                if (measured) {
                    worstLag = Math.max(worstLag, lag);
                }
                if (lag > 1_000_000) {
                    anchor = now;
                    k = 0;
                    reanchors += measured ? 1 : 0;
                }
                k++;
                byte[] v = pool[(int) (i % count)];
                stamp(v, wallNanos());
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
            windowEnd = System.nanoTime();
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
        r.put("rate_achieved_per_s", round(sentWindow / w.seconds()));
        r.put("worst_lag_ms", round(worstLag / 1e6));
        r.put("reanchors", reanchors);
        r.put("e2e_samples", e.total);
        r.put("e2e_missing", sentWindow - e.total);
        r.put("e2e_ms_p50", e.percentileMs(50));
        r.put("e2e_ms_p90", e.percentileMs(90));
        r.put("e2e_ms_p99", e.percentileMs(99));
        r.put("e2e_ms_p999", e.percentileMs(99.9));
        r.put("e2e_ms_max", e.total == 0 ? -1 : e.max / 1000.0);
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

    // ------------------------------------------------------------------ the window

    /** CPU, GC and (optionally) a JFR recording over the measured window. */
    static final class Window {
        final long startNanos = System.nanoTime();
        long endNanos;
        final long cpu0 = cpuNanos();
        final Map<String, long[]> gc0 = gcNow();
        Map<String, long[]> gc1;
        long cpu1;
        Object recording; // jdk.jfr.Recording, loaded only when asked for
        Path jfr;

        static Window open(Map<String, String> kgap) throws Exception {
            String jfrPath = kgap.get("kgap.jfr");
            Object rec = null;
            if (jfrPath != null) {
                String jfc = need(kgap, "kgap.jfc");
                jdk.jfr.Configuration conf = jdk.jfr.Configuration.create(Paths.get(jfc));
                jdk.jfr.Recording r = new jdk.jfr.Recording(conf);
                r.start();
                rec = r;
            }
            Window w = new Window();
            w.recording = rec;
            w.jfr = jfrPath == null ? null : Paths.get(jfrPath);
            return w;
        }

        void close() throws IOException {
            endNanos = System.nanoTime();
            cpu1 = cpuNanos();
            gc1 = gcNow();
            if (recording != null) {
                jdk.jfr.Recording r = (jdk.jfr.Recording) recording;
                r.stop();
                r.dump(jfr);
                r.close();
            }
        }

        double seconds() {
            return (endNanos - startNanos) / 1e9;
        }

        Map<String, Object> figures(long messages, long bytes) {
            double secs = seconds();
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("messages", messages);
            r.put("seconds", round(secs));
            r.put("msgs_per_s", round(messages / secs));
            r.put("mb_per_s", round(bytes / secs / 1e6));
            r.put("process_cpu_s", round((cpu1 - cpu0) / 1e9));
            long count = 0;
            long ms = 0;
            List<Map<String, Object>> collectors = new ArrayList<>();
            for (Map.Entry<String, long[]> e : gc1.entrySet()) {
                long[] a = gc0.getOrDefault(e.getKey(), new long[2]);
                long dc = e.getValue()[0] - a[0];
                long dt = e.getValue()[1] - a[1];
                count += dc;
                ms += dt;
                Map<String, Object> c = new LinkedHashMap<>();
                c.put("name", e.getKey());
                c.put("count", dc);
                c.put("time_ms", dt);
                collectors.add(c);
            }
            r.put("gc_count", count);
            r.put("gc_time_ms", ms);
            r.put("gc_fraction", round(ms / 1000.0 / secs));
            r.put("gc_collectors", collectors);
            r.put("rss_bytes", procStatus("VmRSS:"));
            r.put("rss_peak_bytes", procStatus("VmHWM:"));
            r.put("heap_max_bytes", Runtime.getRuntime().maxMemory());
            r.put("java_version", System.getProperty("java.version"));
            r.put("kafka_clients_version", org.apache.kafka.common.utils.AppInfoParser.getVersion());
            if (jfr != null) {
                r.put("jfr", jfr.toString());
            }
            return r;
        }

        static long cpuNanos() {
            java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean) {
                return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
            }
            return -1;
        }

        static Map<String, long[]> gcNow() {
            Map<String, long[]> m = new LinkedHashMap<>();
            for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
                m.put(b.getName(), new long[] {b.getCollectionCount(), b.getCollectionTime()});
            }
            return m;
        }

        static long procStatus(String key) {
            try {
                for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
                    if (line.startsWith(key)) {
                        String[] f = line.substring(key.length()).trim().split("\\s+");
                        return Long.parseLong(f[0]) * 1024;
                    }
                }
            } catch (IOException | RuntimeException e) {
                // Not Linux: RSS is unknown, said as -1.
            }
            return -1;
        }
    }

    // ------------------------------------------------------------------ main

    /**
     * Exits when the probe that started this JVM is gone (killed, not Ctrl-C'd): a producer
     * whose broker went away retries forever and would otherwise outlive it.
     */
    static void exitWithParent() {
        java.util.Optional<ProcessHandle> parent = ProcessHandle.current().parent();
        if (parent.isEmpty()) {
            return;
        }
        ProcessHandle p = parent.get();
        Thread t = new Thread(() -> {
            while (p.isAlive()) {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
            }
            System.err.println("ERROR the process that started the companion is gone");
            Runtime.getRuntime().halt(1);
        }, "kgap-parent-watch");
        t.setDaemon(true);
        t.start();
    }

    public static void main(String[] args) {
        exitWithParent();
        Map<String, String> kgap = new LinkedHashMap<>();
        Properties props = new Properties();
        try {
            for (String a : args) {
                int eq = a.indexOf('=');
                if (eq <= 0) {
                    throw new Usage("expected key=value, got \"" + a + "\"");
                }
                String key = a.substring(0, eq).trim();
                String value = a.substring(eq + 1);
                if (key.startsWith("kgap.")) {
                    kgap.put(key, value);
                } else {
                    props.setProperty(key, value);
                }
            }
            // Secret client properties come on stdin, one key=value a line, so they never
            // show in the command line that ps and /proc/PID/cmdline show everyone.
            if (kgap.getOrDefault("kgap.secrets", "0").equals("stdin")) {
                java.io.BufferedReader in = new java.io.BufferedReader(
                        new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
                for (String line; (line = in.readLine()) != null && !line.isEmpty(); ) {
                    int eq = line.indexOf('=');
                    if (eq <= 0) {
                        throw new Usage("a secret property on stdin is not key=value");
                    }
                    props.setProperty(line.substring(0, eq).trim(), line.substring(eq + 1));
                }
            }
            String mode = kgap.getOrDefault("kgap.mode", "");
            int size = intOf(kgap, "kgap.size", 100);
            String kind = kgap.getOrDefault("kgap.kind", "random");
            if (size < 1) {
                throw new Usage("kgap.size must be at least 1");
            }
            if (!kind.equals("random") && !kind.equals("text")) {
                throw new Usage("kgap.kind must be random or text, got " + kind);
            }
            Map<String, Object> r;
            switch (mode) {
                case "pool-sha": {
                    byte[][] pool = pool(size, kind);
                    r = new LinkedHashMap<>();
                    r.put("pool_count", pool.length);
                    r.put("payload_sha256", sha256(pool));
                    break;
                }
                case "produce":
                    r = produce(kgap, props);
                    r.put("payload_sha256", sha256(pool(size, kind)));
                    break;
                case "consume":
                    r = consume(kgap, props);
                    break;
                case "consumers":
                    r = consumers(kgap, props);
                    r.put("payload_sha256", sha256(pool(size, kind)));
                    break;
                case "e2e":
                    r = e2e(kgap, props);
                    r.put("payload_sha256", sha256(pool(size, kind)));
                    break;
                default:
                    throw new Usage("kgap.mode must be pool-sha, produce, consume, consumers or e2e, got \"" + mode + "\"");
            }
            r.put("mode", mode);
            System.out.println("RESULT " + json(r));
            System.out.flush();
            System.exit(0);
        } catch (Usage e) {
            System.err.println("ERROR " + e.getMessage());
            System.exit(2);
        } catch (org.apache.kafka.common.config.ConfigException e) {
            // An unknown or bad client setting: the user's configuration, not a failed run.
            System.err.println("ERROR kafka-clients refused the configuration: " + e.getMessage());
            System.exit(2);
        } catch (Throwable e) {
            System.err.println("ERROR " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }

    static String need(Map<String, String> kgap, String key) throws Usage {
        String v = kgap.get(key);
        if (v == null || v.isEmpty()) {
            throw new Usage("missing " + key);
        }
        return v;
    }

    static int intOf(Map<String, String> kgap, String key, int dflt) throws Usage {
        return (int) longOf(kgap, key, dflt);
    }

    static double doubleOf(Map<String, String> kgap, String key, double dflt) throws Usage {
        String v = kgap.get(key);
        if (v == null) {
            return dflt;
        }
        try {
            return Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new Usage(key + " must be a number, got \"" + v + "\"");
        }
    }

    static long longOf(Map<String, String> kgap, String key, long dflt) throws Usage {
        String v = kgap.get(key);
        if (v == null) {
            return dflt;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new Usage(key + " must be an integer, got \"" + v + "\"");
        }
    }

    static double round(double x) {
        return Math.round(x * 1000.0) / 1000.0;
    }

    static String json(Object o) {
        if (o == null) {
            return "null";
        }
        if (o instanceof Map) {
            StringBuilder s = new StringBuilder("{");
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
                if (!first) {
                    s.append(',');
                }
                first = false;
                s.append(json(e.getKey().toString())).append(':').append(json(e.getValue()));
            }
            return s.append('}').toString();
        }
        if (o instanceof List) {
            StringBuilder s = new StringBuilder("[");
            boolean first = true;
            for (Object x : (List<?>) o) {
                if (!first) {
                    s.append(',');
                }
                first = false;
                s.append(json(x));
            }
            return s.append(']').toString();
        }
        if (o instanceof Double) {
            double d = (Double) o;
            return Double.isFinite(d) ? String.format(Locale.ROOT, "%s", d) : "null";
        }
        if (o instanceof Number || o instanceof Boolean) {
            return o.toString();
        }
        String str = o.toString();
        StringBuilder s = new StringBuilder("\"");
        for (char c : str.toCharArray()) {
            switch (c) {
                case '"': s.append("\\\""); break;
                case '\\': s.append("\\\\"); break;
                case '\n': s.append("\\n"); break;
                case '\r': s.append("\\r"); break;
                case '\t': s.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        s.append(String.format("\\u%04x", (int) c));
                    } else {
                        s.append(c);
                    }
            }
        }
        return s.append('"').toString();
    }
}
