//! What a consumer run showed: its window's figures and what analyze-fetch-log reads in the
//! run's own `debug=fetch` log inside that window (the backoffs, and why).

use crate::kit::consume::ConsumedWindow;
use crate::kit::error::{ProbeError, Result};
use crate::kit::measure::{self, WindowFigures};
use kgap_analyzers::fetch_log::{self, FetchLogOptions};
use serde::Serialize;

/// One consumer run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ConsumerFigures {
    #[serde(flatten)]
    pub window: WindowFigures,
    /// Cores of every thread but the embedded mock's (the consumer process proper).
    pub consumer_cores: f64,
    /// The embedded mock broker's thread (0 against a real broker).
    pub mock_cores: f64,
    /// The consumer's busiest thread (the mock's excluded) and its cores.
    pub busiest_thread: String,
    pub busiest_thread_cores: f64,
    /// `Fetch backoff for …` lines in the window, all reasons.
    pub backoffs: u64,
    /// Of those, backoffs because the local queue was full (fetch.queue.backoff.ms).
    pub queue_full_backoffs: u64,
    /// Time backed off inside the window, summed over partitions (analyze-fetch-log).
    pub backoff_ms_total: f64,
    /// Mean share of the window a partition spent backed off.
    pub backoff_fraction: f64,
    /// analyze-fetch-log's diagnosis of this run's own debug log, if it found the gap.
    pub analyzer_diagnosis: Option<String>,
    pub debug_log_lines: u64,
}

impl ConsumerFigures {
    /// Reads the run's debug log (cut to its window) and names the busiest threads.
    pub fn of(run: ConsumedWindow) -> Result<ConsumerFigures> {
        let log = &run.debug_log;
        let report = std::fs::File::open(log)
            .map_err(|e| ProbeError::io(format!("reading {}", log.display()), e))
            .and_then(|f| {
                fetch_log::analyze_fetch_log(
                    f,
                    &FetchLogOptions {
                        window_start: Some(run.start_wall_s),
                        window_end: Some(run.end_wall_s),
                        ..FetchLogOptions::default()
                    },
                )
                .map_err(|e| ProbeError::Kafka(format!("analyzing {}: {e}", log.display())))
            })?;
        let parts = &report.partitions;
        let fractions: Vec<f64> = parts.iter().filter_map(|p| p.backoff_fraction).collect();
        let backoff_fraction = if fractions.is_empty() {
            0.0
        } else {
            measure::round3(fractions.iter().sum::<f64>() / fractions.len() as f64)
        };
        let diagnosis = report
            .diagnoses
            .iter()
            .find(|d| d.id == "fetch-queue-backoff")
            .map(|d| format!("{} Fix: {}", d.cause, d.fix));
        let window = run.window;
        let mock_cores: f64 = window
            .threads
            .iter()
            .filter(|t| t.name.starts_with("rdk:mock"))
            .map(|t| t.cores)
            .sum();
        let busiest = window
            .threads
            .iter()
            .find(|t| !t.name.starts_with("rdk:mock"))
            .cloned();
        Ok(ConsumerFigures {
            consumer_cores: measure::round3((window.cpu_cores - mock_cores).max(0.0)),
            mock_cores: measure::round3(mock_cores),
            busiest_thread: busiest.as_ref().map(|t| t.name.clone()).unwrap_or_default(),
            busiest_thread_cores: busiest.map_or(0.0, |t| t.cores),
            backoffs: parts.iter().map(|p| p.backoffs).sum(),
            queue_full_backoffs: parts.iter().map(|p| p.queue_full_backoffs).sum(),
            backoff_ms_total: measure::round3(parts.iter().map(|p| p.backoff_ms_total).sum()),
            backoff_fraction,
            analyzer_diagnosis: diagnosis,
            debug_log_lines: run.debug_log_lines,
            window,
        })
    }

    /// Cores of the threads whose name starts with `prefix`, summed.
    pub fn cores_of(&self, prefix: &str) -> f64 {
        self.window
            .threads
            .iter()
            .filter(|t| t.name.starts_with(prefix))
            .map(|t| t.cores)
            .sum::<f64>()
            + 0.0 // an empty sum is -0.0
    }
}
