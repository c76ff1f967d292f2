import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * A reusable latency slot: every kgap.sample-th message takes a free slot from a fixed ring
 * instead of the shared callback, so timing costs no allocation either. A busy slot (its
 * message not acked yet) skips that sample, counted in latency_samples_skipped.
 */
final class Timed implements Callback {
    /** Window edges on System.nanoTime(); a latency sample counts when sent inside it. */
    static volatile long windowStart = Long.MAX_VALUE;
    static volatile long windowEnd = Long.MAX_VALUE;

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
