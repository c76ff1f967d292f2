//! What a probe is to the kit: the [`Probe`] trait (its points, one run at a point, its
//! typed figures and what its sweep is evidence for), what a run can reach ([`Context`]),
//! and the sweep in progress or done ([`Sweep`], each point's runs as [`Measured`]).

use crate::kit::broker::Broker;
use crate::kit::cli::CommonArgs;
use crate::kit::error::Result;
use crate::kit::java::Java;
use crate::kit::out::OutDir;
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{Reps, Verdict};
use kgap_analyzers::vocab::svg::LineChart;
use serde::Serialize;
use std::path::Path;

/// The shortest window a run should measure: the thread sampler reads /proc once a second,
/// and a per-second timeline needs seconds.
pub const MIN_WINDOW_S: f64 = 2.0;

/// One probe: what it sweeps, how it runs a point, and what its sweep is evidence for.
pub trait Probe: Sized {
    /// The parameters of one point (serialized as the point's `params`).
    type Point: Clone + Serialize;
    /// One run's figures (serialized as one of the point's `runs`).
    type Figures: Clone + Serialize;
    /// What [`Probe::prepare`] leaves for the runs: a prefilled topic, a payload pool. It
    /// is dropped after the sweep (a topic guard deletes its topic then).
    type Setup<'c>;

    /// The binary's name (`probe-fetch-backoff`).
    const NAME: &'static str;

    /// The options every probe shares.
    fn common(&self) -> &CommonArgs;

    /// A cpu given to the clients' limiting threads alone (the probe's `--own-core`); the
    /// rest of the client runs on `--cpus` (all cpus when not given) without it. The run
    /// pins those threads ([`crate::kit::placement::pin_threads`]); the kit pins the rest.
    fn own_core(&self) -> Option<usize> {
        None
    }

    /// The clients this sweep runs at every point.
    fn clients(&self) -> Vec<Client> {
        vec![Client::Librdkafka]
    }

    /// Checks of the options alone, before anything starts (a usage error is exit 2).
    fn check(&self) -> Result<()> {
        Ok(())
    }

    /// The points of the sweep, in the order a table lists them.
    fn points(&self, broker: &Broker) -> Vec<Self::Point>;

    /// Whether `client` runs at `point` (a point of one client's own knob, such as Java's
    /// group.protocol, is not run by the other). Default: every client runs every point.
    fn applies(&self, _client: Client, _point: &Self::Point) -> bool {
        true
    }

    /// A point's short name: its run folders and progress lines (`backoff-1000ms`).
    fn label(&self, point: &Self::Point) -> String;

    /// Checks that need the broker but change nothing on it (librdkafka validates every
    /// point's configuration): exit 2 before any topic exists.
    fn validate(&self, _broker: &Broker, _points: &[Self::Point]) -> Result<()> {
        Ok(())
    }

    /// Once, before the runs: topics, prefill, payload pool. May fill the result's
    /// `payload`, `prefill`, `topics` and `notes`.
    fn prepare<'c>(
        &self,
        cx: &'c Context,
        result: &mut ProbeResult<Self::Figures>,
    ) -> Result<Self::Setup<'c>>;

    /// One run at a point by one client, its captures in `dir`. `Ok(None)`: Ctrl-C came
    /// before the run's window opened, nothing of it to report. `client` is always one of
    /// [`Probe::clients`] for which [`Probe::applies`] holds: a librdkafka-only probe need
    /// not check it.
    fn run(
        &self,
        cx: &Context,
        setup: &Self::Setup<'_>,
        client: Client,
        point: &Self::Point,
        dir: &Path,
    ) -> Result<Option<Self::Figures>>;

    /// The progress line after a run (`1.48M msg/s, 0 Queue-full backoffs`).
    fn describe(&self, figures: &Self::Figures) -> String;

    /// Topics a run created (and deleted) itself, for the result's `topics`: a probe that
    /// gives every run a fresh topic names it here.
    fn run_topics(&self, _figures: &Self::Figures) -> Vec<String> {
        Vec::new()
    }

    /// A run's measured window in seconds, for the kit's check that every window is long
    /// enough to sample ([`MIN_WINDOW_S`]).
    fn window_s(&self, _figures: &Self::Figures) -> Option<f64> {
        None
    }

    /// After the last run, when not interrupted: extra passes that are not part of the
    /// table (a short debug=protocol run for an analyzer).
    fn after(
        &self,
        _cx: &Context,
        _setup: &Self::Setup<'_>,
        _sweep: &mut Sweep<Self>,
    ) -> Result<()> {
        Ok(())
    }

    /// The catalogue's verdicts on this sweep: gather typed evidence, call each finding's
    /// rule. No other code decides a finding.
    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict>;

    /// What one run is, for the report's first line (`2000000 × 100 B messages per run`).
    fn headline(&self, sweep: &Sweep<Self>) -> String;

    /// The probe's part of the text report: its tables and timelines.
    fn render(&self, sweep: &Sweep<Self>) -> String;

    /// Charts, each with its file name in the out dir.
    fn charts(&self, _sweep: &Sweep<Self>) -> Vec<(String, LineChart)> {
        Vec::new()
    }

    /// What this probe does not measure, said plainly.
    fn not_measured(&self, _broker: &Broker) -> Vec<String> {
        Vec::new()
    }

    /// Settings that differ from the defaults besides the swept knob, and why.
    fn notes(&self, _broker: &Broker) -> Vec<String> {
        Vec::new()
    }
}

/// What a run can reach: the broker, the Java side, the out dir, the options, progress.
pub struct Context {
    pub broker: Broker,
    /// The Java companion, when a client of the sweep is Java.
    pub java: Option<Java>,
    pub out: OutDir,
    pub common: CommonArgs,
    /// Set by the sweep driver ([`crate::kit::sweep`]), which makes the context.
    pub(super) progress: Box<dyn Fn(&str)>,
    /// The local broker's process, whose CPU is not counted as noise beside a run.
    pub(super) broker_pid: Option<i32>,
}

impl Context {
    /// A progress line on stderr (unless --quiet).
    pub fn progress(&self, line: &str) {
        (self.progress)(line)
    }

    /// The Java companion; an error if the sweep has no Java client.
    pub fn java(&self) -> Result<&Java> {
        self.java.as_ref().ok_or_else(|| {
            crate::kit::error::ProbeError::Usage("this sweep has no Java client".into())
        })
    }
}

/// A sweep in progress or done: the result document, and the typed parameters of each of
/// its points (parallel to `result.points`).
pub struct Sweep<P: Probe> {
    pub result: ProbeResult<P::Figures>,
    pub params: Vec<P::Point>,
}

/// One point of a sweep with its runs, typed.
pub struct Measured<'a, P: Probe> {
    pub point: &'a P::Point,
    pub client: Client,
    pub label: &'a str,
    pub runs: &'a [P::Figures],
}

impl<P: Probe> Clone for Measured<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P: Probe> Copy for Measured<'_, P> {}

impl<'a, P: Probe> Measured<'a, P> {
    /// A figure over this point's reps.
    pub fn reps(&self, figure: impl Fn(&P::Figures) -> f64) -> Reps {
        Reps::new(self.runs.iter().map(figure))
    }

    /// A figure some reps may not have measured (absent, not zero).
    pub fn reps_of(&self, figure: impl Fn(&P::Figures) -> Option<f64>) -> Reps {
        Reps::of_some(self.runs.iter().map(figure))
    }
}

impl<P: Probe> Sweep<P> {
    /// Every point with at least one run, in table order.
    pub fn measured(&self) -> impl Iterator<Item = Measured<'_, P>> {
        self.points().filter(|m| !m.runs.is_empty())
    }

    /// Every point, measured or not, in table order.
    pub fn points(&self) -> impl Iterator<Item = Measured<'_, P>> {
        self.result
            .points
            .iter()
            .zip(&self.params)
            .map(|(p, point)| Measured {
                point,
                client: p.client,
                label: &p.label,
                runs: &p.runs,
            })
    }

    /// The measured points of one client.
    pub fn of(&self, client: Client) -> impl Iterator<Item = Measured<'_, P>> {
        self.measured().filter(move |m| m.client == client)
    }
}
