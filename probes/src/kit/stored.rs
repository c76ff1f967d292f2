//! A probe's report made again from a result.json it wrote, running nothing: the typed sweep
//! read back (each point's parameters and each run's figures into the probe's own types),
//! then the same [`Report`] a run makes, so the text, the charts and the HTML page are this
//! kgap's over the stored numbers. For a probe whose points and figures read back
//! (`Deserialize`); scripts/regen-docs makes the docs' screenshot of a probe's page so,
//! from a result kept in docs/html/, so the picture changes only when the page does.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::error::{ProbeError, Result};
use super::export::Report;
use super::probe::{Probe, Sweep};
use kgap_analyzers::findings::probe_result::{ProbeResult, SCHEMA, SCHEMA_VERSION};

/// The sweep `path` holds, for `probe`.
/// The verdicts are the run's, as stored: they are not decided again.
pub fn sweep<P: Probe>(path: &Path) -> Result<Sweep<P>>
where
    P::Point: DeserializeOwned,
    P::Figures: DeserializeOwned,
{
    let bad = |why: String| ProbeError::Usage(format!("{}: {why}", path.display()));
    let text = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let result: ProbeResult<P::Figures> =
        serde_json::from_slice(&text).map_err(|e| bad(format!("not {}'s result: {e}", P::NAME)))?;
    if result.schema != SCHEMA || result.schema_version != SCHEMA_VERSION {
        return Err(bad(format!(
            "schema {} version {}; this kgap reads {SCHEMA} version {SCHEMA_VERSION}",
            result.schema, result.schema_version
        )));
    }
    if result.probe != P::NAME {
        return Err(bad(format!(
            "a result of {}, not of {}",
            result.probe,
            P::NAME
        )));
    }
    let params = result
        .points
        .iter()
        .map(|p| {
            serde_json::from_value(serde_json::Value::Object(p.params.clone()))
                .map_err(|e| bad(format!("point {}: {e}", p.label)))
        })
        .collect::<Result<Vec<P::Point>>>()?;
    Ok(Sweep { result, params })
}

/// The report of the sweep `path` holds, shown as made by `command` (the command line that
/// ran it). No machine is named: the one re-making the report need not be the one that ran.
pub fn report<P: Probe>(probe: &P, path: &Path, command: String) -> Result<Report>
where
    P::Point: DeserializeOwned,
    P::Figures: DeserializeOwned,
{
    let sweep = sweep::<P>(path)?;
    Ok(Report::made(probe, &sweep, Some(command), None))
}
