//! Repeated measurements, compared the post's way (and hyperfine's).
//!
//! A figure measured once per rep is a [`Reps`]: its median with min and max. Two settings
//! differ only when their min/max ranges do not overlap; a ratio is of medians, and refuses
//! (with the reason) when a side is missing or zero. Fewer than [`MIN_REPS`] reps decide
//! nothing: one sample is not a median. Outliers are flagged by their distance from the
//! median in MADs, with a warning that names what helps.

use super::verdict::{Check, CheckState};
use serde::{Deserialize, Serialize};

/// Reps a comparison needs: with fewer, min and max are not a range.
pub const MIN_REPS: usize = 3;

/// Modified z-score (0.6745 · |x − median| / MAD) above which a rep is an outlier
/// (Iglewicz and Hoaglin's 3.5, as hyperfine uses).
pub const OUTLIER_Z: f64 = 3.5;

/// …and at least this share of the median away from it: with reps that agree to 0.1%, the
/// MAD is tiny and a 0.4% difference scores above 3.5, yet changes nothing a reader cares
/// about (a warning that cries wolf teaches readers to skip warnings).
pub const OUTLIER_MIN_SHARE: f64 = 0.05;

/// What a reader can do when reps disagree or ranges overlap.
pub const MORE_REPS_HINT: &str =
    "more --reps, --cpus to pin the client away from the broker, or a quieter machine";

/// One figure over reps, in the order they ran. Non-finite values are dropped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "Spread", from = "Spread")]
pub struct Reps {
    values: Vec<f64>,
}

/// How a [`Reps`] is written: its summary and every value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub n: usize,
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub values: Vec<f64>,
}

impl From<Reps> for Spread {
    fn from(r: Reps) -> Spread {
        Spread {
            n: r.n(),
            median: r.median(),
            min: r.min(),
            max: r.max(),
            values: r.values,
        }
    }
}

impl From<Spread> for Reps {
    fn from(s: Spread) -> Reps {
        Reps::new(s.values)
    }
}

impl FromIterator<f64> for Reps {
    fn from_iter<I: IntoIterator<Item = f64>>(iter: I) -> Reps {
        Reps::new(iter)
    }
}

impl Reps {
    pub fn new(values: impl IntoIterator<Item = f64>) -> Reps {
        Reps {
            values: values.into_iter().filter(|x| x.is_finite()).collect(),
        }
    }

    /// The values of the reps that measured it (`None` for a rep that did not).
    pub fn of_some(values: impl IntoIterator<Item = Option<f64>>) -> Reps {
        Reps::new(values.into_iter().flatten())
    }

    pub fn n(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn values(&self) -> &[f64] {
        &self.values
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.values.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    pub fn median(&self) -> Option<f64> {
        let v = self.sorted();
        let n = v.len();
        match n {
            0 => None,
            _ if n % 2 == 1 => Some(v[n / 2]),
            _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
        }
    }

    pub fn min(&self) -> Option<f64> {
        self.values.iter().copied().reduce(f64::min)
    }

    pub fn max(&self) -> Option<f64> {
        self.values.iter().copied().reduce(f64::max)
    }

    /// Median absolute deviation from the median.
    pub fn mad(&self) -> Option<f64> {
        let m = self.median()?;
        Reps::new(self.values.iter().map(|x| (x - m).abs())).median()
    }

    /// Indexes (0-based, in run order) of reps whose modified z-score exceeds
    /// [`OUTLIER_Z`]. None when MAD is zero (all but a few equal): nothing to scale by.
    pub fn outliers(&self) -> Vec<usize> {
        let (Some(m), Some(mad)) = (self.median(), self.mad()) else {
            return Vec::new();
        };
        if mad <= 0.0 || self.n() < MIN_REPS {
            return Vec::new();
        }
        self.values
            .iter()
            .enumerate()
            .filter(|(_, x)| 0.6745 * (*x - m).abs() / mad > OUTLIER_Z)
            .filter(|(_, x)| (*x - m).abs() >= OUTLIER_MIN_SHARE * m.abs())
            .map(|(i, _)| i)
            .collect()
    }

    /// A warning for each outlier, naming the figure and what helps; empty when none.
    pub fn outlier_warnings(&self, what: &str, fmt: impl Fn(f64) -> String) -> Vec<String> {
        let Some(m) = self.median() else {
            return Vec::new();
        };
        self.outliers()
            .into_iter()
            .map(|i| {
                format!(
                    "{what}: rep {} measured {} against a median of {} (an outlier: over \
                     3.5 MADs and 5% from the median): something else took CPU or the run was still warming up; {}",
                    i + 1,
                    fmt(self.values[i]),
                    fmt(m),
                    MORE_REPS_HINT
                )
            })
            .collect()
    }

    /// `1.48M (1.40M–1.52M) msg/s`: median with min and max, each through `fmt`, the unit
    /// written once when every value carries the same one; `389k msg/s (1 rep)` for one rep;
    /// `not measured` when none.
    pub fn show(&self, fmt: impl Fn(f64) -> String) -> String {
        match (self.median(), self.min(), self.max()) {
            (Some(m), Some(lo), Some(hi)) if self.n() > 1 => {
                let (m, lo, hi) = (fmt(m), fmt(lo), fmt(hi));
                let split = |s: &str| -> (String, String) {
                    match s.split_once(' ') {
                        Some((n, u)) => (n.to_string(), format!(" {u}")),
                        None => (s.to_string(), String::new()),
                    }
                };
                let ((mn, mu), (ln, lu), (hn, hu)) = (split(&m), split(&lo), split(&hi));
                if mu == lu && lu == hu {
                    format!("{mn} ({ln}–{hn}){mu}")
                } else {
                    format!("{m} ({lo}–{hi})")
                }
            }
            (Some(m), _, _) => format!("{} (1 rep)", fmt(m)),
            _ => "not measured".to_string(),
        }
    }
}

/// The tests' shorthand: the reps of the given values.
#[cfg(test)]
pub(crate) fn of(values: &[f64]) -> Reps {
    Reps::new(values.iter().copied())
}

/// Whether two ranges are apart, and which is higher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Apart {
    /// The first range lies wholly above the second.
    Higher,
    /// The first range lies wholly below the second.
    Lower,
    /// The ranges overlap: no difference shown.
    Overlap,
}

/// `a` against `b` by their min/max ranges; None when either is empty.
pub fn apart(a: &Reps, b: &Reps) -> Option<Apart> {
    let (amin, amax, bmin, bmax) = (a.min()?, a.max()?, b.min()?, b.max()?);
    Some(if amin > bmax {
        Apart::Higher
    } else if amax < bmin {
        Apart::Lower
    } else {
        Apart::Overlap
    })
}

/// A ratio of medians with whether the ranges behind it are apart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// median(num) / median(den).
    pub value: f64,
    /// num against den.
    pub apart: Apart,
}

/// median(num) / median(den), or the reason it cannot be taken.
pub fn ratio(num: &Reps, den: &Reps) -> Result<Ratio, String> {
    let (Some(n), Some(d)) = (num.median(), den.median()) else {
        return Err(format!(
            "{} not measured",
            if num.is_empty() {
                "the numerator is"
            } else {
                "the denominator is"
            }
        ));
    };
    if d == 0.0 {
        return Err("the denominator's median is 0: a ratio would divide by zero".to_string());
    }
    let a = apart(num, den).expect("both measured");
    Ok(Ratio {
        value: n / d,
        apart: a,
    })
}

/// The ratio's own measured spread: from the smallest to the largest ratio the reps allow
/// (min(num) / max(den) to max(num) / min(den)); None when a side is missing or reaches 0.
pub fn ratio_spread(num: &Reps, den: &Reps) -> Option<(f64, f64)> {
    let (nmin, nmax, dmin, dmax) = (num.min()?, num.max()?, den.min()?, den.max()?);
    (dmin > 0.0).then(|| (nmin / dmax, nmax / dmin))
}

fn too_few(a: &Reps, b: &Reps) -> Option<String> {
    let n = a.n().min(b.n());
    (n < MIN_REPS).then(|| {
        format!(
            "{n} rep{} of the smaller side; a difference needs ≥ {MIN_REPS} reps a side so min \
             and max make a range (run with --reps {MIN_REPS})",
            if n == 1 { "" } else { "s" }
        )
    })
}

/// A ratio as the checks print it: two decimals, or as many more (up to five) as it takes
/// for the printed value to fall on the same side of every `bound` as the value itself, so
/// that a check never reads "1.30x … below the 1.3x the rule asks" (1.297x).
pub fn ratio_text(value: f64, bounds: &[f64]) -> String {
    let mut decimals = 2;
    loop {
        let text = format!("{value:.decimals$}x");
        let shown: f64 = text[..text.len() - 1].parse().unwrap_or(value);
        let same_side = bounds
            .iter()
            .all(|&b| (shown >= b) == (value >= b) && (shown <= b) == (value <= b));
        if same_side || decimals == 5 || !value.is_finite() {
            return text;
        }
        decimals += 1;
    }
}

/// The check "`high` is at least `factor` × `low`, a real difference": passed when the
/// ratio of medians reaches `factor` and the ranges are apart; failed when the ranges are
/// apart but the ratio falls short (or goes the other way); undecided with too few reps, a
/// missing or zero side, or overlapping ranges. `fmt` writes one value with its unit.
pub fn check_at_least(
    condition: impl Into<String>,
    high: &Reps,
    low: &Reps,
    factor: f64,
    fmt: impl Fn(f64) -> String,
) -> Check {
    let condition = condition.into();
    let shown = format!("{} against {}", high.show(&fmt), low.show(&fmt));
    let r = match ratio(high, low) {
        Ok(r) => r,
        Err(why) => return Check::undecided(condition, format!("{shown}: {why}")),
    };
    if let Some(why) = too_few(high, low) {
        return Check::undecided(
            condition,
            format!("{}, {shown}: {why}", ratio_text(r.value, &[factor])),
        );
    }
    let detail = format!("{} ({shown})", ratio_text(r.value, &[factor]));
    let spread = ratio_spread(high, low);
    match r.apart {
        Apart::Overlap => Check::undecided(
            condition,
            format!("{detail}: the ranges overlap, so no difference is shown; {MORE_REPS_HINT}"),
        ),
        Apart::Higher if r.value >= factor => Check::passed(condition, detail),
        // Short of the bound by less than the ratio's own spread: another set of reps could
        // land on either side, so the run does not say the effect is too small.
        Apart::Higher if spread.is_some_and(|(_, hi)| hi >= factor) => {
            let (lo, hi) = spread.expect("checked");
            Check::undecided(
                condition,
                format!(
                    "{detail}: below the {factor}x the rule asks, but within the ratio's own \
                     spread ({}–{}): not shown either way; {MORE_REPS_HINT}",
                    ratio_text(lo, &[factor]),
                    ratio_text(hi, &[factor])
                ),
            )
        }
        Apart::Higher => Check::failed(
            condition,
            format!("{detail}: a real difference, but below the {factor}x the rule asks"),
        ),
        Apart::Lower => Check::failed(condition, format!("{detail}: the other way round")),
    }
}

/// The check "`a` and `b` are about the same", ratio of medians within `lo`–`hi`
/// (two-sided): passed inside the band; failed outside it when the ranges are apart;
/// undecided outside it with overlapping ranges (noise, not a difference), too few reps, or
/// a missing or zero side.
pub fn check_within(
    condition: impl Into<String>,
    a: &Reps,
    b: &Reps,
    lo: f64,
    hi: f64,
    fmt: impl Fn(f64) -> String,
) -> Check {
    let condition = condition.into();
    let shown = format!("{} against {}", a.show(&fmt), b.show(&fmt));
    let r = match ratio(a, b) {
        Ok(r) => r,
        Err(why) => return Check::undecided(condition, format!("{shown}: {why}")),
    };
    if let Some(why) = too_few(a, b) {
        return Check::undecided(
            condition,
            format!("{}, {shown}: {why}", ratio_text(r.value, &[lo, hi])),
        );
    }
    let detail = format!(
        "{} ({shown}; the band is {lo}x–{hi}x)",
        ratio_text(r.value, &[lo, hi])
    );
    let inside = r.value >= lo && r.value <= hi;
    // The ratio's own spread reaching into the band: outside it by less than the noise.
    let reaches = ratio_spread(a, b).is_some_and(|(slo, shi)| shi >= lo && slo <= hi);
    match (inside, r.apart) {
        (true, _) => Check::passed(condition, detail),
        (false, Apart::Overlap) => Check::undecided(
            condition,
            format!("{detail}: outside the band but the ranges overlap; {MORE_REPS_HINT}"),
        ),
        (false, _) if reaches => Check::undecided(
            condition,
            format!(
                "{detail}: outside the band, but the ratio's own spread reaches into it; \
                 {MORE_REPS_HINT}"
            ),
        ),
        (false, _) => Check::failed(condition, detail),
    }
}

/// The check "every rep's value meets `pred`" over a figure measured per rep (a count that
/// must be above zero in each rep, a share that must stay under a bound): passed when all
/// reps do, failed when none do, undecided when they disagree or there are too few.
pub fn check_every_rep(
    condition: impl Into<String>,
    reps: &Reps,
    pred: impl Fn(f64) -> bool,
    fmt: impl Fn(f64) -> String,
) -> Check {
    let condition = condition.into();
    let n = reps.n();
    let ok = reps.values().iter().filter(|&&x| pred(x)).count();
    let shown = reps.show(&fmt);
    if n == 0 {
        return Check::undecided(condition, "not measured");
    }
    let state = if n < MIN_REPS {
        CheckState::Undecided
    } else if ok == n {
        CheckState::Passed
    } else if ok == 0 {
        CheckState::Failed
    } else {
        CheckState::Undecided
    };
    let detail = match state {
        CheckState::Undecided if n < MIN_REPS => format!(
            "{shown}, in {ok} of {n} reps: {MIN_REPS} reps are needed to call it (--reps {MIN_REPS})"
        ),
        CheckState::Undecided => {
            format!("{shown}, in {ok} of {n} reps: the reps disagree; {MORE_REPS_HINT}")
        }
        _ => format!("{shown}, in {ok} of {n} reps"),
    };
    Check::new(condition, state, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::findings::reps::of as r;

    fn plain(x: f64) -> String {
        format!("{x}")
    }

    #[test]
    fn median_min_max_and_mad() {
        let x = r(&[3.0, 1.0, 2.0, 10.0]);
        assert_eq!(x.median(), Some(2.5));
        assert_eq!(x.min(), Some(1.0));
        assert_eq!(x.max(), Some(10.0));
        assert_eq!(r(&[1.0, 2.0, 3.0]).mad(), Some(1.0));
        assert_eq!(Reps::default().median(), None);
        assert_eq!(r(&[f64::NAN, 1.0]).n(), 1);
    }

    #[test]
    fn an_outlier_is_flagged_with_what_helps() {
        let x = r(&[100.0, 101.0, 99.0, 100.5, 40.0]);
        assert_eq!(x.outliers(), vec![4]);
        let w = x.outlier_warnings("msg/s", plain);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("rep 5") && w[0].contains("--reps"),
            "{}",
            w[0]
        );
        assert!(r(&[1.0, 1.0, 1.0]).outliers().is_empty());
        // 5.05 ms against 5.03 (0.4% off): many MADs when the reps agree closely, but no
        // difference worth a warning.
        let close = r(&[5.03, 5.031, 5.029, 5.03, 5.05]);
        assert!(close.outliers().is_empty(), "{close:?}");
        assert!(close.outlier_warnings("p99", plain).is_empty());
    }

    #[test]
    fn a_range_writes_its_unit_once() {
        let x = r(&[1.39e6, 1.04e6, 1.74e6]);
        assert_eq!(
            x.show(crate::vocab::units::msgs_per_s),
            "1.39M (1.04M–1.74M) msg/s"
        );
        assert_eq!(
            r(&[15.6e3, 1.05e6]).show(crate::vocab::units::bytes),
            "532.8 KB (15.6 KB–1.05 MB)"
        );
        assert_eq!(r(&[3.0]).show(plain), "3 (1 rep)");
        assert_eq!(Reps::default().show(plain), "not measured");
    }

    #[test]
    fn ratios_refuse_a_zero_or_missing_side() {
        assert!(ratio(&r(&[1.0]), &r(&[0.0]))
            .unwrap_err()
            .contains("divide by zero"));
        assert!(ratio(&r(&[]), &r(&[1.0]))
            .unwrap_err()
            .contains("not measured"));
        let q = ratio(&r(&[4.0, 5.0, 6.0]), &r(&[1.0, 2.0, 3.0])).unwrap();
        assert_eq!(q.value, 2.5);
        assert_eq!(q.apart, Apart::Higher);
    }

    #[test]
    fn a_ratio_is_printed_on_the_side_of_its_bound_it_is_on() {
        assert_eq!(ratio_text(1.42, &[1.5]), "1.42x");
        assert_eq!(ratio_text(1.297, &[1.3]), "1.297x");
        assert_eq!(ratio_text(1.2999, &[1.3]), "1.2999x");
        assert_eq!(ratio_text(1.3, &[1.3]), "1.30x");
        assert_eq!(ratio_text(1.1504, &[0.87, 1.15]), "1.1504x");
        assert_eq!(ratio_text(0.8696, &[0.87, 1.15]), "0.8696x");
        // The real run that showed it: 1.31M against 1.01M msg/s, below 1.3x.
        let c = check_at_least(
            "raised ≥ 1.3x",
            &r(&[1.29e6, 1.31e6, 1.36e6]),
            &r(&[0.552e6, 1.0102e6, 1.23e6]),
            1.3,
            crate::vocab::units::msgs_per_s,
        );
        // Below 1.3x, but the ratio's own spread (1.05x–2.46x: the slower side ran from
        // 552k to 1.23M) reaches it: not shown either way.
        assert_eq!(c.state, CheckState::Undecided, "{c:?}");
        assert!(c.detail.starts_with("1.297x ("), "{}", c.detail);
        assert!(c.detail.contains("own spread"), "{}", c.detail);
    }

    #[test]
    fn short_of_a_bound_by_less_than_its_own_spread_is_not_a_failure() {
        // fetch-backoff-zero's run: 1.09x against a 1.1x bound, the ranges apart but the
        // ratio's spread reaching past 1.1x.
        let low = r(&[1.40e6, 1.43e6, 1.47e6]);
        let zero = r(&[1.28e6, 1.31e6, 1.33e6]);
        let c = check_at_least("worse at 0", &low, &zero, 1.1, plain);
        assert_eq!(c.state, CheckState::Undecided, "{c:?}");
        // A ratio whose whole spread is short of the bound: failed.
        let c = check_at_least(
            "worse at 0",
            &r(&[1.04, 1.05, 1.06]),
            &r(&[1.0, 1.001, 1.002]),
            1.1,
            plain,
        );
        assert_eq!(c.state, CheckState::Failed, "{c:?}");
        assert_eq!(
            ratio_spread(&r(&[2.0, 3.0]), &r(&[1.0, 2.0])),
            Some((1.0, 3.0))
        );
        assert_eq!(ratio_spread(&r(&[2.0]), &r(&[0.0, 1.0])), None);
    }

    #[test]
    fn at_least_needs_apart_ranges_and_three_reps() {
        let fast = r(&[1.40e6, 1.48e6, 1.52e6]);
        let slow = r(&[3.8e5, 3.9e5, 4.1e5]);
        let c = check_at_least("faster", &fast, &slow, 1.3, plain);
        assert_eq!(c.state, CheckState::Passed, "{c:?}");
        // The same medians with overlapping ranges decide nothing.
        let wide = r(&[3.8e5, 1.48e6, 1.6e6]);
        let c = check_at_least("faster", &fast, &wide, 1.3, plain);
        assert_eq!(c.state, CheckState::Undecided);
        assert!(c.detail.contains("overlap"), "{}", c.detail);
        // One rep a side: a ratio but no verdict.
        let c = check_at_least("faster", &r(&[2.0]), &r(&[1.0]), 1.3, plain);
        assert_eq!(c.state, CheckState::Undecided);
        assert!(c.detail.contains("--reps 3"), "{}", c.detail);
        // Apart but short of the factor, and the other way round: failed.
        let c = check_at_least(
            "faster",
            &r(&[1.2, 1.21, 1.22]),
            &r(&[1.0, 1.01, 1.02]),
            1.3,
            plain,
        );
        assert_eq!(c.state, CheckState::Failed);
        let c = check_at_least("faster", &slow, &fast, 1.3, plain);
        assert_eq!(c.state, CheckState::Failed);
    }

    #[test]
    fn within_is_two_sided() {
        let a = r(&[240.0, 241.0, 239.0]);
        let c = check_within("flat", &a, &r(&[238.0, 240.0, 242.0]), 0.8, 1.25, plain);
        assert_eq!(c.state, CheckState::Passed);
        // 0.73x passed the old one-sided rule; it is a real drop.
        let c = check_within("flat", &r(&[175.0, 176.0, 177.0]), &a, 0.8, 1.25, plain);
        assert_eq!(c.state, CheckState::Failed, "{c:?}");
        let c = check_within("flat", &r(&[100.0, 175.0, 250.0]), &a, 0.8, 1.25, plain);
        assert_eq!(c.state, CheckState::Undecided);
    }

    #[test]
    fn every_rep_needs_agreement() {
        let c = check_every_rep("naps", &r(&[12.0, 11.0, 9.0]), |x| x > 0.0, plain);
        assert_eq!(c.state, CheckState::Passed);
        let c = check_every_rep("naps", &r(&[0.0, 0.0, 0.0]), |x| x > 0.0, plain);
        assert_eq!(c.state, CheckState::Failed);
        let c = check_every_rep("naps", &r(&[0.0, 3.0, 0.0]), |x| x > 0.0, plain);
        assert_eq!(c.state, CheckState::Undecided);
        let c = check_every_rep("naps", &r(&[3.0]), |x| x > 0.0, plain);
        assert_eq!(c.state, CheckState::Undecided);
    }

    #[test]
    fn reps_serialize_with_their_summary_and_read_back() {
        let x = r(&[1.0, 3.0, 2.0]);
        let v = serde_json::to_value(&x).unwrap();
        assert_eq!(v["median"], 2.0);
        assert_eq!(v["n"], 3);
        let back: Reps = serde_json::from_value(v).unwrap();
        assert_eq!(back, x);
    }
}
