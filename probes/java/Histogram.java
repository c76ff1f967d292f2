/**
 * Log-linear histogram of microseconds: exact below 128 µs, then 64 sub-buckets per power
 * of two (≤ 1.6% relative error). One writer thread; merged after the run.
 */
final class Histogram {
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
