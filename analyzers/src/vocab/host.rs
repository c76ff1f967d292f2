//! The machine a tool runs on, as a reader of its output needs it beside the figures: its
//! cores and CPU model (/proc/cpuinfo), the load average (/proc/loadavg) and the kernel
//! (/proc/sys/kernel/osrelease). What cannot be read is left out, never guessed.

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Host {
    /// Online processors (`processor` entries of /proc/cpuinfo).
    pub cores: Option<usize>,
    /// The first processor's `model name` (x86) or `Hardware`/`CPU part` line's value.
    pub cpu_model: Option<String>,
    /// The 1, 5 and 15 minute load averages, as /proc/loadavg prints them.
    pub load_average: Option<String>,
    /// The kernel release (`uname -r`).
    pub kernel: Option<String>,
}

impl Host {
    /// This machine, now.
    pub fn read() -> Host {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let mut host = read("/proc/cpuinfo").map_or_else(Host::default, |c| cpuinfo(&c));
        host.load_average = read("/proc/loadavg").and_then(|l| load_average(&l));
        host.kernel = read("/proc/sys/kernel/osrelease")
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty());
        host
    }
}

/// Cores and CPU model from /proc/cpuinfo's text.
fn cpuinfo(text: &str) -> Host {
    let value = |line: &str, key: &str| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    };
    let cores = text
        .lines()
        .filter(|l| value(l, "processor").is_some())
        .count();
    let cpu_model = ["model name", "Hardware", "cpu model"]
        .iter()
        .find_map(|key| text.lines().find_map(|l| value(l, key)))
        .filter(|m| !m.is_empty());
    Host {
        cores: (cores > 0).then_some(cores),
        cpu_model,
        ..Host::default()
    }
}

/// `0.52 0.58 0.59 1/467 12345` → `0.52 0.58 0.59`.
fn load_average(text: &str) -> Option<String> {
    let three: Vec<&str> = text.split_whitespace().take(3).collect();
    (three.len() == 3).then(|| three.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_gives_the_processor_count_and_the_model() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) \
                    Platinum 8375C CPU @ 2.90GHz\n\nprocessor\t: 1\nmodel name\t: Intel(R) \
                    Xeon(R) Platinum 8375C CPU @ 2.90GHz\n";
        let h = cpuinfo(text);
        assert_eq!(h.cores, Some(2));
        assert_eq!(
            h.cpu_model.as_deref(),
            Some("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz")
        );
        assert_eq!(cpuinfo("garbage\n"), Host::default());
    }

    #[test]
    fn the_load_average_is_loadavgs_first_three_fields() {
        assert_eq!(
            load_average("0.52 0.58 0.59 1/467 12345\n").as_deref(),
            Some("0.52 0.58 0.59")
        );
        assert_eq!(load_average("0.52\n"), None);
    }

    #[test]
    fn this_machine_reads() {
        let h = Host::read();
        assert!(h.cores.is_some_and(|c| c >= 1), "{h:?}");
        assert!(h.kernel.is_some() && h.load_average.is_some(), "{h:?}");
    }
}
