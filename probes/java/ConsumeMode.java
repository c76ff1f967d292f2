import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * kgap.mode=consume: one KafkaConsumer reads the probe's prefilled topic from its start
 * (kgap.messages of them), after rounds of reading it until the JIT has settled (kgap.warmup-passes); the
 * window opens once kgap.warmup-fraction of them are read (0: at the first records) and
 * closes at the last. assignFromStart is e2e's too.
 */
final class ConsumeMode {
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

    /**
     * kgap.warmup-passes=N (default 0): before the run, read the topic in rounds of a second
     * (from its start again whenever its kgap.messages records are read) until the JIT's
     * compiler threads took under Window.JIT_SETTLED_SHARE of a round, N rounds at most, then seek
     * back to the start. A fresh JVM spends its first seconds compiling the read path on the
     * poll() thread's pinned core (C2 took half of it over a 2 s window after one read of
     * the topic at 100 B); the run is measured once that has settled, as in a service that
     * has run a while. Returns {rounds, the last round's JIT share in thousandths}.
     */
    static long[] warmupPasses(Map<String, String> kgap, KafkaConsumer<byte[], byte[]> c,
            List<TopicPartition> tps, long messages, long deadlineNanos) throws Exception {
        int max = Companion.intOf(kgap, "kgap.warmup-passes", 0);
        long rounds = 0;
        double share = -1;
        long sinceStart = 0;
        // The first recording instruments the socket classes and throws their compiled code
        // away (the JIT took 0.6 of a 1 s window that started one); one over the rounds
        // moves that before the run, and its events are not kept.
        Object instrument = max > 0 ? Window.startRecording(kgap) : null;
        while (rounds < max && (share < 0 || share >= Window.JIT_SETTLED_SHARE)) {
            long jit0 = Window.nativeTicks()[0];
            long t0 = System.nanoTime();
            while (System.nanoTime() - t0 < Window.WARMUP_ROUND_NANOS) {
                if (System.nanoTime() > deadlineNanos) {
                    throw new RuntimeException("warmup round " + (rounds + 1) + " read no more than "
                            + sinceStart + " of " + messages + " messages before its deadline");
                }
                sinceStart += c.poll(Duration.ofMillis(100)).count();
                if (sinceStart >= messages) {
                    c.seekToBeginning(tps);
                    sinceStart = 0;
                }
            }
            rounds++;
            share = Window.jitShare(jit0, t0);
        }
        Window.discard(instrument);
        if (rounds > 0) {
            c.seekToBeginning(tps);
        }
        return new long[] {rounds, Math.round(share * 1000)};
    }

    static Map<String, Object> consume(Map<String, String> kgap, Properties props) throws Exception {
        String topic = Companion.need(kgap, "kgap.topic");
        long messages = Companion.longOf(kgap, "kgap.messages", -1);
        double seconds = Companion.doubleOf(kgap, "kgap.seconds", 60);
        if (messages < 1) {
            throw new Companion.Usage("consume needs kgap.messages (the topic's prefilled message count)");
        }
        // A fresh JVM compiles the consumer's hot paths during its first seconds, on the
        // same pinned core: a window from the first records measured the JIT beside poll()
        // (the poll thread at 0.38 of the JVM's 0.97 cores in a 3 s window).
        double warmupFraction = Companion.doubleOf(kgap, "kgap.warmup-fraction", 0);
        if (warmupFraction < 0 || warmupFraction >= 1) {
            throw new Companion.Usage("kgap.warmup-fraction must be in [0, 1)");
        }
        long warmup = (long) (messages * warmupFraction);
        props.putIfAbsent("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        props.putIfAbsent("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        props.putIfAbsent("enable.auto.commit", "false");
        props.putIfAbsent("auto.offset.reset", "earliest");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
            List<TopicPartition> tps = assignFromStart(c, topic);
            long[] warmedUp = warmupPasses(kgap, c, tps, messages, System.nanoTime() + (long) ((seconds + 300) * 1e9));
            Window w = null;
            long got = 0;
            long bytes = 0;
            long gotBefore = 0;
            long bytesBefore = 0;
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
                for (ConsumerRecord<byte[], byte[]> r : rs) {
                    got++;
                    bytes += r.value().length;
                }
                if (w == null && got >= Math.max(1, warmup)) {
                    // Connection, metadata and the warmup excluded.
                    w = Window.open(kgap);
                    pollCpu0 = cpuKnown ? mx.getCurrentThreadCpuTime() : 0;
                    gotBefore = got;
                    bytesBefore = bytes;
                }
            }
            if (w == null) {
                throw new RuntimeException("no records within " + seconds + " s");
            }
            long pollCpu1 = cpuKnown ? mx.getCurrentThreadCpuTime() : 0;
            w.close();
            Map<String, Object> r = w.figures(got - gotBefore, bytes - bytesBefore);
            r.put("warmup_messages", gotBefore);
            r.put("warmup_passes", warmedUp[0]);
            r.put("warmup_jit_share", warmedUp[1] / 1000.0);
            r.put("poll_thread_cpu_s", cpuKnown ? Companion.round((pollCpu1 - pollCpu0) / 1e9) : -1);
            r.put("expected_messages", messages);
            r.put("complete", got >= messages);
            return r;
        }
    }
}
