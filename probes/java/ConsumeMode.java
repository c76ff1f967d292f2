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
 * (kgap.messages of them); the window opens at the first records. assignFromStart is e2e's
 * too.
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
            r.put("poll_thread_cpu_s", cpuKnown ? Companion.round((pollCpu1 - pollCpu0) / 1e9) : -1);
            r.put("expected_messages", messages);
            r.put("complete", got >= messages);
            return r;
        }
    }
}
