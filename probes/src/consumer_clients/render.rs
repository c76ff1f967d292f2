//! The text report: one table of every consumer at every size and instance count, with the
//! cores of each thread by role, and the instances curve beside the machine's cores.

use super::figures::Figures;
use super::options::ConsumerClients;
use super::point::Api;
use crate::kit::{Measured, Sweep, Table};
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::units;

fn med(m: &Measured<'_, ConsumerClients>, f: impl Fn(&Figures) -> f64) -> f64 {
    m.reps(f).median().unwrap_or(0.0)
}

/// The two thread roles a consumer's limit is read from, with their median cores.
fn roles(m: &Measured<'_, ConsumerClients>) -> String {
    let k = m.point.instances;
    match m.point.api {
        Api::Poll | Api::Tuned => format!(
            "app {:.2} · rdk:broker {:.2}{}",
            med(m, |f| f.busiest("app")),
            med(m, |f| f.busiest("rdk:broker")),
            if k > 1 {
                format!("/{:.2}", med(m, |f| f.kth("rdk:broker", k)))
            } else {
                String::new()
            }
        ),
        Api::Classic | Api::Consumer => {
            let bg = med(m, |f| f.busiest("background"));
            format!(
                "poll {:.2}{}",
                med(m, |f| f.busiest("poll")),
                if m.point.api == Api::Consumer {
                    format!(" · background {bg:.2}")
                } else {
                    String::new()
                }
            )
        }
    }
}

pub fn render(sweep: &Sweep<ConsumerClients>) -> String {
    let mut t = Table::new([
        "consumer",
        "size",
        "K",
        "msg/s median (min–max)",
        "MB/s",
        "cores by thread (median)",
        "proc",
        "CPU s/M",
    ]);
    for m in sweep.measured() {
        t.row(vec![
            m.point.api.name().to_string(),
            format!("{} B", m.point.size_bytes),
            m.point.instances.to_string(),
            m.reps(|f| f.msgs_per_s).show(units::si),
            format!("{:.0}", med(&m, |f| f.mb_per_s)),
            roles(&m),
            format!("{:.2}", med(&m, |f| f.process_cores)),
            format!("{:.2}", med(&m, |f| f.cpu_s_per_million)),
        ]);
    }
    let mut s = t.render();
    s.push('\n');
    let cores = sweep.result.placement.machine_cores;
    wrap_into(
        &mut s,
        "",
        &format!(
            "poll: librdkafka's poll() at its defaults; tuned: the batch API, 500 per call, \
             fetch.queue.backoff.ms=10; classic/consumer: one Java KafkaConsumer per instance \
             with that group.protocol. K: instances in one process, each its own connection \
             (msg/s is all of them together). cores: the busiest thread of the role (app: the \
             thread calling poll() or the batch API; poll: Java's poll() thread; background: \
             its consumer_background_thread; rdk:broker a/b: the busiest and the least busy of \
             the K instances' broker threads). proc: the client process's cores. CPU s/M: the \
             process's CPU seconds per million messages. This machine has {cores} cores."
        ),
    );
    let machine: Vec<String> = sweep
        .measured()
        .filter(|m| m.runs.iter().any(|f| f.machine_busy_cores.is_some()))
        .filter(|m| matches!(m.point.api, Api::Poll | Api::Tuned))
        .map(|m| {
            format!(
                "{}-{}B K={} {:.2}",
                m.point.api.name(),
                m.point.size_bytes,
                m.point.instances,
                m.reps_of(|f| f.machine_busy_cores).median().unwrap_or(0.0)
            )
        })
        .collect();
    if !machine.is_empty() {
        s.push('\n');
        wrap_into(
            &mut s,
            "",
            &format!(
                "machine busy cores over librdkafka's windows (of {cores}; the broker \
                 included): {}",
                machine.join(", ")
            ),
        );
    }
    s
}
