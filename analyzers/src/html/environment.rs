//! Every page's "Environment" section: where its result was made and with what. The broker,
//! the machine (cores, load average, kernel, CPU model), librdkafka and kgap come first, in
//! this order and in the same words on every page; then what only that page knows. A fact
//! the page's source did not record is left out rather than read from the machine showing
//! the page, which may not be the one that ran.

use maud::{html, Markup};

use super::page;
use crate::vocab::host::Host;

#[derive(Default)]
pub(crate) struct Environment {
    /// A sentence under the heading: whose machine this is, when it may not be the run's.
    pub note: Option<&'static str>,
    pub broker: Option<String>,
    pub cores: Option<String>,
    pub load_average: Option<String>,
    pub kernel: Option<String>,
    pub cpu_model: Option<String>,
    pub librdkafka: Option<String>,
    /// The kgap that made the result (the page's own is in its footer).
    pub kgap: Option<String>,
    /// The page's own facts, after the shared ones.
    pub more: Vec<(&'static str, String)>,
}

impl Environment {
    /// This machine's facts, for a page made where its result was: `when` says when the
    /// load average was read ("when the page was made").
    pub fn on(mut self, host: &Host, when: &str) -> Environment {
        if self.cores.is_none() {
            self.cores = host.cores.map(|n| format!("{n} on this machine"));
        }
        self.load_average = host
            .load_average
            .as_ref()
            .map(|l| format!("{l} (1, 5, 15 min; {when})"));
        self.kernel = host.kernel.clone();
        self.cpu_model = host.cpu_model.clone();
        self
    }

    /// The section: its heading and one row a fact.
    pub fn render(&self) -> Markup {
        let shared = [
            ("broker", &self.broker),
            ("cores", &self.cores),
            ("load average", &self.load_average),
            ("kernel", &self.kernel),
            ("CPU", &self.cpu_model),
            ("librdkafka", &self.librdkafka),
            ("kgap", &self.kgap),
        ];
        let rows: Vec<(&str, String)> = shared
            .into_iter()
            .filter_map(|(k, v)| v.clone().map(|v| (k, v)))
            .chain(self.more.iter().cloned())
            .collect();
        html! {
            h2 { "Environment" }
            @if let Some(n) = self.note { p class="lead" { (n) } }
            (page::facts(&rows))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_facts_come_first_in_one_order_and_unknown_ones_are_left_out() {
        let host = Host {
            cores: Some(2),
            cpu_model: Some("Xeon <x>".into()),
            load_average: Some("0.10 0.20 0.30".into()),
            kernel: Some("6.1.0".into()),
        };
        let env = Environment {
            kgap: Some("0.1.0".into()),
            more: vec![("folder", "caps".into())],
            ..Environment::default()
        }
        .on(&host, "when the page was made")
        .render()
        .into_string();
        let at = |s: &str| env.find(s).unwrap_or_else(|| panic!("{s} in {env}"));
        assert!(at(">cores<") < at(">load average<"));
        assert!(at(">load average<") < at(">kernel<"));
        assert!(at(">CPU<") < at(">kgap<") && at(">kgap<") < at(">folder<"));
        assert!(env.contains("0.10 0.20 0.30 (1, 5, 15 min; when the page was made)"));
        assert!(env.contains("Xeon &lt;x&gt;"));
        assert!(!env.contains(">broker<") && !env.contains(">librdkafka<"));
    }
}
