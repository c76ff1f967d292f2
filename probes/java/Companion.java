import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * kgap's Java companion: the Java side of a probe, driven by probes/src/kit/java.rs.
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
 * (probes/src/kit/payload.rs): SplitMix64 seeded with 42, min(16384, 64 MiB / size) payloads.
 *
 * The files (probes/java, default package; scripts/java-companion compiles them together):
 *   Companion.java      main: the arguments and stdin's secrets, the dispatch by kgap.mode,
 *                       the payload pool (and pool-sha), usage errors, the parent watch,
 *                       the RESULT line's JSON
 *   ProduceMode.java    produce: K producer threads sending as fast as they go
 *   ConsumeMode.java    consume: one consumer reading the prefilled topic from its start
 *   ConsumersMode.java  consumers: K consumers, each on its own poll() thread
 *   E2eMode.java        e2e: a paced producer and a consumer, end-to-end latency
 *   Window.java         the measured window: CPU, GC, RSS, JFR, and the figures every mode
 *                       reports
 *   Histogram.java      the latency histogram (produce, e2e)
 *   Acks.java           the send callback counting acks and errors (produce, e2e)
 *   Timed.java          the send callback timing send-to-ack, and the window edges it
 *                       counts samples in (produce, e2e)
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
                    r = ProduceMode.produce(kgap, props);
                    r.put("payload_sha256", sha256(pool(size, kind)));
                    break;
                case "consume":
                    r = ConsumeMode.consume(kgap, props);
                    break;
                case "consumers":
                    r = ConsumersMode.consumers(kgap, props);
                    r.put("payload_sha256", sha256(pool(size, kind)));
                    break;
                case "e2e":
                    r = E2eMode.e2e(kgap, props);
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
