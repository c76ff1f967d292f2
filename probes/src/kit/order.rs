//! The order runs take: reps outermost; within a rep the points shuffled from a seed (a new
//! permutation each rep), and at a point measured by both clients, the client that goes
//! first alternating from rep to rep. Drift over a sweep (a warming page cache, a JIT, a
//! neighbour's load) then favours no setting and no client, and the seed printed in the
//! result replays the same order.

use crate::kit::payload::SplitMix64;
use kgap_analyzers::findings::probe_result::{Client, RunOrder, RunSlot};

/// The run order of a sweep. `points[i]` is the client of point `i` and the index of its
/// parameters (points measured by both clients share a parameter index).
pub fn plan(points: &[(Client, usize)], reps: u32, seed: u64) -> RunOrder {
    let mut rng = SplitMix64::new(seed);
    let mut params: Vec<usize> = points.iter().map(|p| p.1).collect();
    params.sort_unstable();
    params.dedup();
    let mut runs = Vec::with_capacity(points.len() * reps as usize);
    for rep in 1..=reps {
        // Fisher–Yates with the seed's generator.
        let mut order = params.clone();
        for i in (1..order.len()).rev() {
            let j = (rng.next() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        // Which client leads this rep: alternates, starting from the seed's choice.
        let java_first = (rep % 2 == 0) ^ (seed & 1 == 1);
        for p in order {
            let mut at: Vec<usize> = (0..points.len()).filter(|&i| points[i].1 == p).collect();
            at.sort_by_key(|&i| (points[i].0 == Client::Java) != java_first);
            runs.extend(at.into_iter().map(|point| RunSlot { point, rep }));
        }
    }
    RunOrder { seed, runs }
}

/// A seed from the clock, for a sweep that was not given one.
pub fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    SplitMix64::new(t.as_nanos() as u64 ^ std::process::id() as u64).next() % 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_runs_once_per_rep_in_a_shuffled_order() {
        let points: Vec<(Client, usize)> = (0..6).map(|i| (Client::Librdkafka, i)).collect();
        let o = plan(&points, 3, 7);
        assert_eq!(o.runs.len(), 18);
        for rep in 1..=3 {
            let mut seen: Vec<usize> = o
                .runs
                .iter()
                .filter(|s| s.rep == rep)
                .map(|s| s.point)
                .collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..6).collect::<Vec<_>>());
        }
        let first: Vec<usize> = o.runs.iter().take(6).map(|s| s.point).collect();
        let second: Vec<usize> = o.runs.iter().skip(6).take(6).map(|s| s.point).collect();
        assert_ne!(first, second, "each rep draws a new permutation");
        // The same seed, the same order.
        assert_eq!(plan(&points, 3, 7), o);
        assert_ne!(plan(&points, 3, 8).runs, o.runs);
    }

    #[test]
    fn the_client_that_goes_first_alternates() {
        // Two parameter sets, each for both clients.
        let points = [
            (Client::Librdkafka, 0),
            (Client::Java, 0),
            (Client::Librdkafka, 1),
            (Client::Java, 1),
        ];
        let o = plan(&points, 4, 2);
        let leads: Vec<Client> = (1..=4)
            .map(|rep| {
                let s = o.runs.iter().find(|s| s.rep == rep).unwrap();
                points[s.point].0
            })
            .collect();
        assert_eq!(
            leads,
            [
                Client::Librdkafka,
                Client::Java,
                Client::Librdkafka,
                Client::Java
            ]
        );
        // Both clients of a parameter set run next to each other.
        for pair in o.runs.chunks(2) {
            assert_eq!(points[pair[0].point].1, points[pair[1].point].1);
        }
    }
}
