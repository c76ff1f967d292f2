//! probe-java-socket-buffers: do kafka-clients' fixed socket buffers cap each socket call?

use clap::Parser;
use kgap_probes::cli::{
    finish, parse_duration, parse_list_u64, parse_property, progress_printer, usage_exit,
    CommonArgs,
};
use kgap_probes::interrupt;
use kgap_probes::java_socket_buffers::{self, Options};
use std::time::Duration;

const ABOUT: &str = "\
Reproduces the post's two Java socket-buffer gaps.

kafka-clients fixes its sockets' buffers: send.buffer.bytes=131072 for the producer and
receive.buffer.bytes=65536 for the consumer (librdkafka leaves both to the OS). The post: with
1 MB batches each producer write took ~298 KB and the JDK re-copied the unsent rest of the
request on every write (630k → 875k msg/s with -1); a 1 KB consumer read ~56 KB per call on
its polling thread (1229k → 1427k msg/s with -1). The probe runs kgap's Java companion with
each fixed default and with -1, records the window with JFR (every jdk.SocketWrite and
jdk.SocketRead, threshold 0), and counts bytes per socket call with kgap's native JFR reader.

Needs a real Kafka broker (--brokers; a local one: scripts/kafka up) and a JDK 17+ with
Maven (scripts/java-companion builds the companion on first use).";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether -1 made socket calls larger), 1 the run
failed, 2 bad usage, no --brokers, no JDK, or a setting kafka-clients refused, 130
interrupted (what was measured is printed).

examples:
  probe-java-socket-buffers --brokers 127.0.0.1:9092 --out results/sb
                                             # 128K and 1M batches, 1 KB and 10 KB consumes
  probe-java-socket-buffers --brokers 127.0.0.1:9092 --batch-size 1048576 --consume-size 1024
                                             # the post's two headline cases only";

#[derive(Debug, Parser)]
#[command(name = "probe-java-socket-buffers", version, about = "Do kafka-clients' fixed socket buffers cap each socket call?", long_about = ABOUT, after_help = AFTER)]
struct Cli {
    /// Producer batch.size values (1 KB records), each with send.buffer.bytes default and -1.
    #[arg(long, value_name = "BYTES[,…]", default_value = "131072,1048576")]
    batch_size: String,

    /// Consumer record sizes, each with receive.buffer.bytes default and -1 (0: no consumer
    /// runs).
    #[arg(long, value_name = "BYTES[,…]", default_value = "1024,10240")]
    consume_size: String,

    /// Bytes prefilled per consumer topic (librdkafka, not measured).
    #[arg(long, value_name = "BYTES", default_value_t = 200_000_000)]
    consume_bytes: u64,

    /// Partitions of every topic.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=10_000))]
    partitions: i32,

    /// Measured window of each producer run, after its warmup.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    duration: Duration,

    /// The JVM's heap (-Xms and -Xmx).
    #[arg(long, default_value = "512m")]
    heap: String,

    /// kafka-clients property for every client, applied last (repeatable): -J linger.ms=20.
    #[arg(short = 'J', value_name = "KEY=VALUE", value_parser = parse_property)]
    java_property: Vec<(String, String)>,

    #[command(flatten)]
    common: CommonArgs,
}

fn main() {
    let cli = Cli::parse();
    interrupt::install();
    interrupt::name_this_thread("app");
    let usage = |msg: String| -> ! { usage_exit("probe-java-socket-buffers", &msg) };
    let batch_sizes =
        parse_list_u64(&cli.batch_size).unwrap_or_else(|e| usage(format!("--batch-size: {e}")));
    if batch_sizes.iter().any(|&b| b == 0 || b > i32::MAX as u64) {
        usage("--batch-size values must be between 1 and 2147483647".into());
    }
    let consume_sizes: Vec<usize> = parse_list_u64(&cli.consume_size)
        .unwrap_or_else(|e| usage(format!("--consume-size: {e}")))
        .into_iter()
        .filter(|&s| s > 0)
        .map(|s| {
            if s <= 10_485_760 {
                s as usize
            } else {
                usage("--consume-size values must be at most 10485760".into())
            }
        })
        .collect();
    if kgap_probes::java::parse_size(&cli.heap).is_err() {
        usage(format!(
            "--heap {:?} is not a JVM size (e.g. 512m, 2g)",
            cli.heap
        ));
    }
    let opts = Options {
        batch_sizes,
        consume_sizes,
        consume_bytes: cli.consume_bytes,
        partitions: cli.partitions,
        window: cli.duration,
        heap: cli.heap,
        java_properties: cli.java_property,
        common: cli.common,
    };
    let progress = progress_printer("probe-java-socket-buffers", opts.common.quiet);
    finish(
        "probe-java-socket-buffers",
        opts.common.json,
        java_socket_buffers::run(&opts, &progress),
        java_socket_buffers::render_text,
    );
}
