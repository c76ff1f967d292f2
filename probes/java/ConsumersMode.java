import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * kgap.mode=consumers: K KafkaConsumers in this JVM, each on its own poll() thread, and the
 * CPU of every thread by role over the window (see consumers()).
 */
final class ConsumersMode {
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
        String topic = Companion.need(kgap, "kgap.topic");
        long messages = Companion.longOf(kgap, "kgap.messages", -1);
        double seconds = Companion.doubleOf(kgap, "kgap.seconds", 60);
        int k = Companion.intOf(kgap, "kgap.consumers", 1);
        final int partitions = Companion.intOf(kgap, "kgap.partitions", 0);
        if (partitions < 1) {
            throw new Companion.Usage("consumers needs kgap.partitions (the topic's partition count)");
        }
        double warmupFraction = Companion.doubleOf(kgap, "kgap.warmup-fraction", 0.1);
        if (messages < 1) {
            throw new Companion.Usage("consumers needs kgap.messages (the topic's prefilled message count)");
        }
        if (k < 1 || k > 64) {
            throw new Companion.Usage("kgap.consumers must be 1 to 64");
        }
        if (warmupFraction < 0 || warmupFraction >= 1) {
            throw new Companion.Usage("kgap.warmup-fraction must be in [0, 1)");
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
        final long[][] warmedUp = new long[k][];
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
                    warmedUp[me] = ConsumeMode.warmupPasses(kgap, c, tps, messages,
                            System.nanoTime() + (long) ((seconds + 300) * 1e9));
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
            c.put("msgs_per_s", Companion.round(dn / secs));
            c.put("mb_per_s", Companion.round((bytes1[i] - bytes0[i]) / secs / 1e6));
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
            t.put("cpu_s", Companion.round(dc / 1e9));
            t.put("user_s", Companion.round(du / 1e9));
            ts.add(t);
        }
        r.put("consumers", k);
        r.put("group_protocol", props.getProperty("group.protocol", "classic"));
        r.put("per_consumer", per);
        r.put("threads", ts);
        r.put("expected_messages", messages);
        // Consumer 0's passes: the K run theirs side by side under one JIT.
        if (warmedUp[0] != null) {
            r.put("warmup_passes", warmedUp[0][0]);
            r.put("warmup_jit_share", warmedUp[0][1] / 1000.0);
        }
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
}
