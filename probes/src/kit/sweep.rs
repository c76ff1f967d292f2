//! The sweep driver: one for every probe.
//!
//! Order of work: the options (usage errors before anything starts), the out dir, the
//! broker, the Java side, every point's configuration, then the probe's setup and the runs
//! in the planned order, the result rewritten after each; Ctrl-C or SIGTERM stops between
//! runs with what was measured. The verdicts come last, from the catalogue.

use super::export::{self, Export, Report};
use super::watchdog::Watchdog;
use super::{noise, order, placement};
use crate::kit::broker::Broker;
use crate::kit::cli::CommonArgs;
use crate::kit::error::{exit, ProbeError, Result};
use crate::kit::interrupt;
use crate::kit::java::Java;
use crate::kit::out::OutDir;
use crate::kit::probe::{Context, Probe, Sweep, MIN_WINDOW_S};
use kgap_analyzers::findings::probe_result::{
    Client, DiscardedRun, Point, ProbeResult, RunOrder, RunSlot, SCHEMA, SCHEMA_VERSION,
};

/// Runs a probe as its binary does, prints its report (text, or JSON with `--json`) and
/// exits: 0 measured, 1 the run failed, 2 bad usage or configuration, 130 interrupted.
pub fn main<P: Probe>(probe: P) -> ! {
    let common = probe.common().clone();
    // Before any thread exists, so every thread the probe starts inherits it.
    let cpus = match probe.own_core() {
        Some(own) => match placement::rest_of(common.cpus.as_ref().map(|c| &c.0[..]), own) {
            Ok(rest) => Some(rest),
            Err(e) => {
                eprintln!("{}: {e}", P::NAME);
                std::process::exit(exit::USAGE);
            }
        },
        None => common.cpus.as_ref().map(|c| c.0.clone()),
    };
    if let Some(cpus) = &cpus {
        if let Err(e) = placement::pin(cpus) {
            eprintln!("{}: {e}", P::NAME);
            std::process::exit(exit::USAGE);
        }
    }
    interrupt::install();
    interrupt::name_this_thread("app");
    let quiet = common.quiet;
    let progress = move |line: &str| {
        if !quiet {
            eprintln!("{}: {line}", P::NAME);
        }
    };
    match run(&probe, Box::new(progress)) {
        Ok(sweep) => {
            let report = Report::of(&probe, &sweep);
            let files = if common.json {
                export::Json.files(&report)
            } else {
                export::Text.files(&report)
            };
            for (_, bytes) in files {
                use std::io::Write;
                let _ = std::io::stdout().write_all(&bytes);
            }
            std::process::exit(if sweep.result.interrupted {
                exit::INTERRUPTED
            } else {
                exit::OK
            });
        }
        Err(e) => {
            eprintln!("{}: error: {e}", P::NAME);
            std::process::exit(e.exit_code());
        }
    }
}

/// Runs the whole sweep and returns it (verdicts decided, files written).
pub fn run<P: Probe>(probe: &P, progress: Box<dyn Fn(&str)>) -> Result<Sweep<P>> {
    let common = probe.common().clone();
    check_options(probe, &common)?;
    let out = OutDir::new(common.out.as_deref(), P::NAME)?;
    let clients = probe.clients();
    let java = java_side(&clients, &common)?;
    refuse_bootstrap_override(&common)?;
    let broker = start_broker(&common, &*progress)?;
    let watchdog = Watchdog::start(&broker);
    let params = checked_points(probe, &broker)?;
    let table = PointTable::of(probe, &clients, &params)?;
    let seed = common.seed.unwrap_or_else(order::fresh_seed);
    let plan = order::plan(&table.slots, common.reps, seed);
    let result = new_result(probe, &broker, &common, &plan, table.points);
    let broker_pid = if broker.is_mock() {
        None
    } else {
        placement::local_broker_pid(broker.bootstrap())
    };
    let cx = Context {
        broker,
        java,
        out,
        common,
        progress,
        broker_pid,
    };
    cx.progress(&format!("broker: {}", cx.broker.label()));
    let mut sweep = Sweep {
        result,
        params: table.typed,
    };
    // The idle round trip before anything loads the broker, and again before every rep.
    let mut preflight = super::preflight::Hook::new();
    preflight.before(&cx.broker, 1, &mut sweep.result, &cx.progress);
    let setup = probe.prepare(&cx, &mut sweep.result)?;
    run_in_order(
        probe,
        &cx,
        &setup,
        &plan,
        watchdog.as_ref(),
        &mut preflight,
        &mut sweep,
    )?;
    if !sweep.result.interrupted {
        probe.after(&cx, &setup, &mut sweep)?;
    }
    drop(setup);
    decide(probe, &cx, &mut sweep);
    let report = Report::of(probe, &sweep);
    write(
        &cx.out,
        &report,
        &[
            &export::Json,
            &export::Csv,
            &export::Text,
            &export::Svg,
            &export::Html,
        ],
    )?;
    if let Some(path) = &cx.common.html {
        std::fs::write(path, export::html(&report))
            .map_err(|e| ProbeError::io(format!("writing {}", path.display()), e))?;
    }
    Ok(sweep)
}

/// Checks of the options alone (usage errors before anything starts).
fn check_options<P: Probe>(probe: &P, common: &CommonArgs) -> Result<()> {
    probe.check()?;
    if common.reps == 0 {
        return Err(ProbeError::Usage("--reps must be at least 1".into()));
    }
    // A page that cannot be written fails now, not after the sweep.
    if let Some(path) = &common.html {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| ProbeError::Usage(format!("--html: {}: {e}", path.display())))?;
    }
    Ok(())
}

/// The Java companion, when a client of the sweep is Java (it needs --brokers).
fn java_side(clients: &[Client], common: &CommonArgs) -> Result<Option<Java>> {
    if clients.contains(&Client::Java) {
        crate::kit::java::require_brokers(common.brokers.as_deref())?;
        Ok(Some(Java::locate()?))
    } else {
        Ok(None)
    }
}

/// `-X bootstrap.servers` (or metadata.broker.list) is refused: the cluster is --brokers.
fn refuse_bootstrap_override(common: &CommonArgs) -> Result<()> {
    if let Some((k, _)) = common
        .property
        .iter()
        .find(|(k, _)| k == "bootstrap.servers" || k == "metadata.broker.list")
    {
        return Err(ProbeError::Usage(format!(
            "-X {k} would send the clients somewhere other than every output names: give \
             the cluster with --brokers HOST:PORT instead"
        )));
    }
    Ok(())
}

/// The broker, reached (or the embedded mock started), its replication factor checked.
fn start_broker(common: &CommonArgs, progress: &dyn Fn(&str)) -> Result<Broker> {
    if let Some(b) = &common.brokers {
        progress(&format!(
            "waiting up to {} s for {b} to answer a Metadata request",
            crate::kit::broker::REACH_TIMEOUT.as_secs()
        ));
    }
    let mut broker = Broker::start(common.brokers.as_deref(), &common.property)?;
    broker.set_replication_factor(common.replication_factor);
    broker.check_replication_factor()?;
    Ok(broker)
}

/// The probe's points, every one's configuration validated before any topic exists.
fn checked_points<P: Probe>(probe: &P, broker: &Broker) -> Result<Vec<P::Point>> {
    let params = probe.points(broker);
    if params.is_empty() {
        return Err(ProbeError::Usage("nothing to sweep: no points".into()));
    }
    probe.validate(broker, &params)?;
    Ok(params)
}

/// The result's points: every parameter set once per client that runs it, in table order
/// (librdkafka's, then Java's). The three lists are parallel.
struct PointTable<P: Probe> {
    /// Each point's client and index in the probe's parameters, for the run order.
    slots: Vec<(Client, usize)>,
    points: Vec<Point<P::Figures>>,
    typed: Vec<P::Point>,
}

impl<P: Probe> PointTable<P> {
    fn of(probe: &P, clients: &[Client], params: &[P::Point]) -> Result<PointTable<P>> {
        // Every parameter set once per client, in table order: librdkafka's, then Java's.
        let mut slots: Vec<(Client, usize)> = Vec::new();
        let mut points: Vec<Point<P::Figures>> = Vec::new();
        let mut typed: Vec<P::Point> = Vec::new();
        for &client in clients {
            for (i, p) in params.iter().enumerate() {
                if !probe.applies(client, p) {
                    continue;
                }
                let label = match client {
                    Client::Java if clients.len() > 1 => format!("java-{}", probe.label(p)),
                    _ => probe.label(p),
                };
                let map = match serde_json::to_value(p) {
                    Ok(serde_json::Value::Object(m)) => m,
                    Ok(other) => {
                        let mut m = serde_json::Map::new();
                        m.insert("point".into(), other);
                        m
                    }
                    Err(e) => {
                        return Err(ProbeError::Usage(format!(
                            "a point does not serialize: {e}"
                        )))
                    }
                };
                slots.push((client, i));
                points.push(Point::new(label, client, map));
                typed.push(p.clone());
            }
        }
        Ok(PointTable {
            slots,
            points,
            typed,
        })
    }
}

/// The result document before any run: the broker, the run order, where the client ran,
/// what is not measured, the notes.
fn new_result<P: Probe>(
    probe: &P,
    broker: &Broker,
    common: &CommonArgs,
    plan: &RunOrder,
    points: Vec<Point<P::Figures>>,
) -> ProbeResult<P::Figures> {
    let placement = placement::detect(broker.bootstrap(), broker.is_mock(), probe.own_core());
    let mut warnings = Vec::new();
    if !broker.is_mock() && placement.shares_cores_with_broker == Some(true) {
        warnings.push(format!(
            "the client and the broker shared cores ({}); the post pinned them apart",
            placement.note
        ));
    }
    ProbeResult {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        probe: P::NAME.into(),
        kgap_version: env!("CARGO_PKG_VERSION").into(),
        librdkafka_version: rdkafka::util::get_rdkafka_version().1,
        broker: broker.info(),
        topics: Vec::new(),
        prefill: None,
        payload: None,
        reps: common.reps,
        order: plan.clone(),
        placement,
        points,
        verdicts: Vec::new(),
        diagnoses: Vec::new(),
        not_measured: probe.not_measured(broker),
        notes: probe
            .notes(broker)
            .into_iter()
            .chain(broker.overrides().iter().map(|(k, v)| {
                format!(
                    "-X {} (applied last to every client)",
                    kgap_analyzers::vocab::redact::pair(k, v)
                )
            }))
            .collect(),
        warnings,
        discarded: Vec::new(),
        interrupted: false,
        failed: None,
        preflight: None,
        noise: Vec::new(),
    }
}

/// The runs in the planned order, the preflight before each rep and the result rewritten
/// after each run; Ctrl-C or SIGTERM stops between runs with what was measured.
fn run_in_order<P: Probe>(
    probe: &P,
    cx: &Context,
    setup: &P::Setup<'_>,
    plan: &RunOrder,
    watchdog: Option<&Watchdog>,
    preflight: &mut super::preflight::Hook,
    sweep: &mut Sweep<P>,
) -> Result<()> {
    let total = plan.runs.len();
    for (k, slot) in plan.runs.iter().enumerate() {
        if interrupt::stopped() {
            sweep.result.interrupted = true;
            break;
        }
        preflight.before(&cx.broker, slot.rep, &mut sweep.result, &cx.progress);
        run_slot(probe, cx, setup, slot, (k, total), watchdog, sweep)?;
        if sweep.result.interrupted {
            break;
        }
    }
    Ok(())
}

/// One run of the order (`k` of `total`, counted from 0): kept with its progress line, set
/// aside when the broker stalled during it, or the sweep marked interrupted.
fn run_slot<P: Probe>(
    probe: &P,
    cx: &Context,
    setup: &P::Setup<'_>,
    slot: &RunSlot,
    (k, total): (usize, usize),
    watchdog: Option<&Watchdog>,
    sweep: &mut Sweep<P>,
) -> Result<()> {
    let (client, label) = {
        let p = &sweep.result.points[slot.point];
        (p.client, p.label.clone())
    };
    let dir = cx.out.run_dir(&label, slot.rep)?;
    let started = std::time::Instant::now();
    let before = noise::snapshot(cx.broker_pid);
    let outcome = probe.run(cx, setup, client, &sweep.params[slot.point], &dir);
    let after = noise::snapshot(cx.broker_pid);
    let stalls = watchdog
        .map(|w| w.stalls_between(started, std::time::Instant::now()))
        .unwrap_or_default();
    if let Some(reason) = interrupt::abort_reason() {
        return Err(broker_lost(cx, sweep, &reason, k, total));
    }
    let stall_note = |what: &str| {
        let (secs, at) = stalls[0];
        format!(
            "{label} rep {} set aside: the broker did not answer for {secs:.1} s, {at:.1} s \
             into the run, so it measured the stall, not the client{what}",
            slot.rep
        )
    };
    let figures = match outcome {
        Err(e) if !stalls.is_empty() => {
            let why = stall_note(&format!(" (the run failed: {e})"));
            set_aside(cx, sweep, slot, why, None);
            return Ok(());
        }
        Err(e) => return Err(e),
        Ok(None) => {
            sweep.result.interrupted = true;
            return Ok(());
        }
        Ok(Some(f)) => f,
    };
    // A run set aside made its topic too: the result lists it as one kept does.
    for t in probe.run_topics(&figures) {
        if !sweep.result.topics.contains(&t) {
            sweep.result.topics.push(t);
        }
    }
    if !stalls.is_empty() {
        set_aside(cx, sweep, slot, stall_note(""), Some(figures));
        return write(
            &cx.out,
            &Report::document_only(sweep),
            &[&export::Json, &export::Csv],
        );
    }
    cx.progress(&format!(
        "[{}/{total}] {label} rep {}/{}: {}",
        k + 1,
        slot.rep,
        sweep.result.reps,
        probe.describe(&figures)
    ));
    sweep.result.points[slot.point].push(figures);
    if let Some(n) = before
        .zip(after)
        .and_then(|(a, b)| noise::between(&a, &b, slot.point, slot.rep))
    {
        sweep.result.noise.push(n);
    }
    if interrupt::stopped() {
        sweep.result.interrupted = true;
    }
    write(
        &cx.out,
        &Report::document_only(sweep),
        &[&export::Json, &export::Csv],
    )
}

/// A run the broker's stall spoiled: said on progress and in the warnings, kept apart.
fn set_aside<P: Probe>(
    cx: &Context,
    sweep: &mut Sweep<P>,
    slot: &RunSlot,
    why: String,
    figures: Option<P::Figures>,
) {
    cx.progress(&why);
    sweep.result.warnings.push(why.clone());
    sweep.result.discarded.push(DiscardedRun {
        point: slot.point,
        rep: slot.rep,
        reason: why,
        figures,
    });
}

/// After the runs: the short-window warning, the catalogue's verdicts, and the diagnoses of
/// the probe's own statistics.
fn decide<P: Probe>(probe: &P, cx: &Context, sweep: &mut Sweep<P>) {
    if let Some(w) = short_windows(probe, sweep) {
        sweep.result.warnings.push(w);
    }
    sweep.result.verdicts = probe.verdicts(sweep);
    noise::annotate(&mut sweep.result.verdicts, &sweep.result.noise);
    if let Some(line) = noise::summary(&sweep.result.noise) {
        if sweep.result.noise.iter().any(noise::noisy) {
            sweep.result.warnings.push(line);
        } else {
            sweep.result.notes.push(line);
        }
    }
    let stats = super::self_diagnosis::read(&cx.out, sweep);
    sweep.result.diagnoses.extend(stats);
}

/// The broker is gone: keep what was measured (verdicts on it, the documents written), and
/// say which topics may remain on the cluster.
fn broker_lost<P: Probe>(
    cx: &Context,
    sweep: &mut Sweep<P>,
    reason: &str,
    done: usize,
    total: usize,
) -> ProbeError {
    sweep.result.failed = Some(reason.to_string());
    sweep.result.verdicts = Vec::new();
    let _ = write(
        &cx.out,
        &Report::document_only(sweep),
        &[&export::Json, &export::Csv],
    );
    let kept = if cx.out.is_temporary() {
        String::new()
    } else {
        format!(" (result.json in {})", cx.out.root.display())
    };
    let topics = if sweep.result.topics.is_empty() {
        String::new()
    } else {
        format!(
            "; this sweep's topic(s) {} may remain on the cluster: delete them once it is back",
            sweep.result.topics.join(", ")
        )
    };
    ProbeError::Kafka(format!(
        "{reason}; the sweep stopped after {done} of {total} runs{kept}{topics}"
    ))
}

/// A warning when runs measured windows too short to sample.
fn short_windows<P: Probe>(probe: &P, sweep: &Sweep<P>) -> Option<String> {
    let windows: Vec<f64> = sweep
        .result
        .points
        .iter()
        .flat_map(|p| p.runs.iter())
        .filter_map(|f| probe.window_s(f))
        .collect();
    let short: Vec<f64> = windows
        .iter()
        .copied()
        .filter(|&w| w < MIN_WINDOW_S)
        .collect();
    let shortest = short.iter().copied().reduce(f64::min)?;
    Some(format!(
        "{} of {} runs measured a window shorter than {} s (the shortest {:.2} s): per-second \
         rates and per-thread samples are thin there; give more --messages or a longer window",
        short.len(),
        windows.len(),
        MIN_WINDOW_S,
        shortest
    ))
}

fn write(out: &OutDir, report: &Report, exports: &[&dyn Export]) -> Result<()> {
    for e in exports {
        for (name, bytes) in e.files(report) {
            out.write(&name, &bytes)?;
        }
    }
    Ok(())
}
