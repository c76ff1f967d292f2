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
 * (kgap.messages of them); the window opens once kgap.warmup-fraction of them are read (0: at
 * the first records) and closes at the last. assignFromStart is e2e's too.
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
            assignFromStart(c, topic);
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
            r.put("poll_thread_cpu_s", cpuKnown ? Companion.round((pollCpu1 - pollCpu0) / 1e9) : -1);
            r.put("expected_messages", messages);
            r.put("complete", got >= messages);
            return r;
        }
    }
}
