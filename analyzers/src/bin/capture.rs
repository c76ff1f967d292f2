//! capture: diagnose a running Kafka client in one command, without restarting it.

use std::process::ExitCode;

use clap::Parser;
use kgap_analyzers::capture::{self, Options};

const EXAMPLES: &str = "\
examples:
  capture --pid 4242                           # 30 s of a running client, report at the end
  capture --pid 4242 --duration 10s --out cap  # 10 s into ./cap
  capture --pid 4242 --stats /var/log/app/stats.jsonl   # with the statistics it writes
  capture --pid 4242 --jmx                     # a JVM's kafka-clients metrics too (agent stays)
  capture --pid 4242 --json | jq '.report.gaps[].finding'";

/// Capture a running Kafka client for a while (per-thread CPU with Kafka roles, memory,
/// each TCP connection's state; a JVM's JFR recording, GC log, thread dumps and heap
/// through jcmd, and kafka-clients' metrics when it serves JMX; the native stacks of a
/// librdkafka process's busiest threads) into a bundle with a manifest, then report which
/// of the post's gaps it shows and what it could not see. Read-only, except the JFR
/// recording and GC logging it starts and undoes (Ctrl-C too), and with --jmx the JVM's
/// local JMX agent, which cannot be stopped and stays until the JVM exits. Exit status:
/// 0 captured; 1 partial (the target exited, or sampling failed); 2 bad usage, no such
/// pid, or --out not new; 3 not a Kafka client; 4 no permission, or no jcmd for the JVM;
/// 130 interrupted (bundle and report of what was had, changes undone).
#[derive(Parser, Debug)]
#[command(name = "capture", version, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    opts: Options,
    /// Print the manifest, report and what could not be seen as JSON.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let a: Args = kgap_analyzers::vocab::args::parse();
    match capture::run(&a.opts) {
        Ok(c) => {
            if a.json {
                println!("{}", kgap_analyzers::vocab::json_doc::pretty("capture", &c));
            } else {
                print!("{}", c.render_text());
            }
            ExitCode::from(c.exit_code as u8)
        }
        Err(e) => {
            eprintln!("capture: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}
