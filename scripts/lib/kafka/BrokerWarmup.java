// BrokerWarmup.java: `scripts/kafka warm`, run as a single-file program (java BrokerWarmup.java)
// with the broker's own kafka-clients jar.
//
// Why: a freshly started broker compiles its produce and fetch paths for its first ~20 s of
// load, its C1/C2 compiler threads taking up to 60% of the broker's core. Probe runs in that
// time measured the broker's JIT: the first request-ceiling reps ran 2.5x slower per request
// than the later ones. So: rounds of load (ProduceRequests of 16 KB and of 1 MB batches over
// 6 partitions, then fetching it back), each on a topic of its own that is deleted at the end
// of the round, until the broker's compiler threads took under a tenth of a round.
//
// args: BOOTSTRAP BROKER_PIDS (comma-separated: a cluster's nodes) MAX_ROUNDS CLK_TCK [client key=value ...]
// stdout: one line a round, then "warm after N rounds" or "not settled after N rounds";
// exit 0 either way (a broker still compiling is reported, not an error), 1 on failure.

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class BrokerWarmup {
    static final int PARTITIONS = 6;
    static final int RECORD_BYTES = 1024;
    /** The compiler threads' share of a round under which the broker counts as warm. */
    static final double SETTLED_SHARE = 0.10;
    static final long PRODUCE_NANOS = TimeUnit.MILLISECONDS.toNanos(700);
    static final long FETCH_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: BrokerWarmup BOOTSTRAP BROKER_PIDS MAX_ROUNDS CLK_TCK [key=value ...]");
            System.exit(2);
        }
        Properties base = new Properties();
        base.put("bootstrap.servers", args[0]);
        long[] pids = java.util.Arrays.stream(args[1].split(",")).mapToLong(Long::parseLong).toArray();
        int maxRounds = Integer.parseInt(args[2]);
        double clkTck = Double.parseDouble(args[3]);
        for (int i = 4; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            base.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        String prefix = "kgap.broker-warmup." + ProcessHandle.current().pid() + ".";
        try (Admin admin = Admin.create(base)) {
            for (int round = 1; round <= maxRounds; round++) {
                long jit0 = compilerTicks(pids);
                long t0 = System.nanoTime();
                String topic = prefix + round;
                admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
                try {
                    produce(base, topic, 16384);
                    produce(base, topic, 1048576);
                    fetch(base, topic);
                } finally {
                    admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
                }
                double wall = (System.nanoTime() - t0) / 1e9;
                double share = (compilerTicks(pids) - jit0) / clkTck / wall;
                System.out.printf("round %d: %.1f s, the broker's compiler threads %.0f%% of the round%n",
                        round, wall, 100 * share);
                if (share < SETTLED_SHARE) {
                    System.out.printf("warm after %d rounds%n", round);
                    return;
                }
            }
            System.out.printf("not settled after %d rounds%n", maxRounds);
        }
    }

    static void produce(Properties base, String topic, int batchSize) {
        Properties p = new Properties();
        p.putAll(base);
        p.put("batch.size", Integer.toString(batchSize));
        p.put("linger.ms", "5");
        p.put("buffer.memory", Integer.toString(64 << 20));
        // Bounded: a warm-up must end. Without idempotence a late batch is dropped, not
        // retried into an out-of-order sequence (which held one round for 120 s).
        p.put("enable.idempotence", "false");
        p.put("acks", "1");
        p.put("request.timeout.ms", "10000");
        p.put("delivery.timeout.ms", "15000");
        byte[] value = new byte[RECORD_BYTES];
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            long end = System.nanoTime() + PRODUCE_NANOS;
            for (long i = 0; System.nanoTime() < end; i++) {
                producer.send(new ProducerRecord<>(topic, (int) (i % PARTITIONS), null, value));
            }
            producer.flush();
            producer.close(Duration.ofSeconds(10));
        }
    }

    static void fetch(Properties base, String topic) {
        Properties c = new Properties();
        c.putAll(base);
        c.put("enable.auto.commit", "false");
        List<TopicPartition> parts = new ArrayList<>();
        for (int i = 0; i < PARTITIONS; i++) parts.add(new TopicPartition(topic, i));
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            long end = System.nanoTime() + FETCH_NANOS;
            while (System.nanoTime() < end) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) break;
            }
        }
    }

    /** CPU ticks (user + system) of the brokers' C1/C2 compiler threads, from /proc. */
    static long compilerTicks(long[] pids) throws Exception {
        long ticks = 0;
        for (long pid : pids) ticks += compilerTicks(pid);
        return ticks;
    }

    static long compilerTicks(long pid) throws Exception {
        long ticks = 0;
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                String comm, stat;
                try {
                    comm = Files.readString(task.resolve("comm")).trim();
                    stat = Files.readString(task.resolve("stat"));
                } catch (java.io.IOException gone) {
                    continue; // the thread exited between the listing and the read
                }
                if (!comm.startsWith("C1 Compiler") && !comm.startsWith("C2 Compiler")) continue;
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
            }
        }
        return ticks;
    }
}
