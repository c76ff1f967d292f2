import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** CPU, GC and (optionally) a JFR recording over the measured window. */
final class Window {
    final long startNanos = System.nanoTime();
    long endNanos;
    final long cpu0 = cpuNanos();
    final Map<String, long[]> gc0 = gcNow();
    final long[] native0 = nativeTicks();
    Map<String, long[]> gc1;
    long[] native1;
    long cpu1;
    Object recording; // jdk.jfr.Recording, loaded only when asked for
    Path jfr;

    /** A started recording with kgap.jfc's settings when kgap.jfr is set, else null. */
    static Object startRecording(Map<String, String> kgap) throws Exception {
        if (kgap.get("kgap.jfr") == null) {
            return null;
        }
        String jfc = Companion.need(kgap, "kgap.jfc");
        jdk.jfr.Configuration conf = jdk.jfr.Configuration.create(Paths.get(jfc));
        jdk.jfr.Recording r = new jdk.jfr.Recording(conf);
        r.start();
        return r;
    }

    /** Stops a recording of startRecording's and throws its events away. */
    static void discard(Object recording) {
        if (recording != null) {
            ((jdk.jfr.Recording) recording).close();
        }
    }

    static Window open(Map<String, String> kgap) throws Exception {
        String jfrPath = kgap.get("kgap.jfr");
        Object rec = startRecording(kgap);
        Window w = new Window();
        w.recording = rec;
        w.jfr = jfrPath == null ? null : Paths.get(jfrPath);
        return w;
    }

    void close() throws IOException {
        endNanos = System.nanoTime();
        cpu1 = cpuNanos();
        gc1 = gcNow();
        native1 = nativeTicks();
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
        r.put("seconds", Companion.round(secs));
        r.put("msgs_per_s", Companion.round(messages / secs));
        r.put("mb_per_s", Companion.round(bytes / secs / 1e6));
        r.put("process_cpu_s", Companion.round((cpu1 - cpu0) / 1e9));
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
        r.put("gc_fraction", Companion.round(ms / 1000.0 / secs));
        r.put("gc_collectors", collectors);
        // The JVM's own threads, which the ThreadMXBean does not list: what of the process's
        // CPU went to compiling (a fresh JVM's JIT shares the pinned core with poll()) and to
        // collecting. -1: not Linux.
        r.put("jit_cpu_s", native0[0] < 0 ? -1 : Companion.round((native1[0] - native0[0]) / TICKS));
        r.put("gc_cpu_s", native0[0] < 0 ? -1 : Companion.round((native1[1] - native0[1]) / TICKS));
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

    /** The JIT's share of a warmup round's wall time under which it has settled. */
    static final double JIT_SETTLED_SHARE = 0.1;
    /** A warmup round's length: long enough for /proc's 10 ms ticks to tell a tenth. */
    static final long WARMUP_ROUND_NANOS = 1_000_000_000L;

    /** The JIT's share of the wall time since t0 (ticks jit0 then), 0 where /proc is not. */
    static double jitShare(long jit0, long t0) {
        return jit0 < 0 ? 0 : (nativeTicks()[0] - jit0) / TICKS / ((System.nanoTime() - t0) / 1e9);
    }

    /** /proc's clock ticks a second (USER_HZ, 100 on Linux). */
    static final double TICKS = 100.0;

    /**
     * CPU ticks (user + system) of the JIT's compiler threads and of the GC's threads, from
     * /proc/self/task/TID/stat; {-1, -1} where there is no /proc.
     */
    static long[] nativeTicks() {
        long jit = 0;
        long gc = 0;
        try (java.nio.file.DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path t : tasks) {
                String stat;
                try {
                    stat = new String(Files.readAllBytes(t.resolve("stat")));
                } catch (IOException gone) {
                    continue; // the thread exited between the listing and the read
                }
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                if (open < 0 || close < open) {
                    continue;
                }
                String comm = stat.substring(open + 1, close);
                // Fields after the comm: state is field 3, utime 14 and stime 15.
                String[] f = stat.substring(close + 2).split(" ");
                long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
                if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
                    jit += ticks;
                } else if (comm.startsWith("GC Thread") || comm.startsWith("G1 ") || comm.equals("VM Thread")) {
                    gc += ticks;
                }
            }
        } catch (IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
        return new long[] {jit, gc};
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
