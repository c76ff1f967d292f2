import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.RecordMetadata;

/** Counts acks and errors for every message: one instance per producer, no allocation. */
final class Acks implements Callback {
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
