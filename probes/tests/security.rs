//! A real cluster is rarely plaintext: a probe and the Java companion over SASL_SSL (SCRAM,
//! a throwaway CA) against a broker of the test's own (`scripts/kafka up --security
//! sasl_ssl`), zstd on the shared plaintext broker, and the SCRAM password in no byte any of
//! them wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

const PORT: u16 = 9640;

fn kafka(args: &[&str]) -> std::process::Output {
    Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka"))
        .args(args)
        .env("KGAP_KAFKA_PORT", PORT.to_string())
        .env("KGAP_KAFKA_HEAP", "512m")
        .output()
        .expect("scripts/kafka runs")
}

struct SecuredBroker;

impl Drop for SecuredBroker {
    fn drop(&mut self) {
        let _ = kafka(&["down"]);
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn assert_secret_nowhere(secret: &str, out: &std::process::Output, dir: &Path) {
    for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !String::from_utf8_lossy(bytes).contains(secret),
            "the password is in the probe's {what}"
        );
    }
    let mut files = Vec::new();
    files_under(dir, &mut files);
    for f in files {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(!text.contains(secret), "the password is in {}", f.display());
    }
}

#[test]
fn a_probe_and_the_java_companion_reach_a_sasl_ssl_broker_and_leak_nothing() {
    let up = kafka(&["up", "--security", "sasl_ssl"]);
    assert!(
        up.status.success(),
        "scripts/kafka up --security sasl_ssl: {}",
        String::from_utf8_lossy(&up.stderr)
    );
    let _broker = SecuredBroker;
    let secret = std::fs::read_to_string(format!("/tmp/kgap-kafka-{PORT}/security/password"))
        .expect("the SCRAM password file")
        .trim()
        .to_string();
    assert!(secret.len() >= 16);
    assert!(
        !String::from_utf8_lossy(&up.stdout).contains(&secret),
        "up printed the password"
    );
    let lines = |java: bool| -> Vec<String> {
        let args: &[&str] = if java {
            &["client-args", "--java"]
        } else {
            &["client-args"]
        };
        String::from_utf8(kafka(args).stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let x = lines(false);
    let j = lines(true);
    assert!(
        x.contains(&"security.protocol=SASL_SSL".to_string()),
        "{x:?}"
    );
    let bootstrap = format!("127.0.0.1:{PORT}");

    // librdkafka: a short fetch-backoff sweep over SASL_SSL.
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = [
        "--brokers",
        &bootstrap,
        "--messages",
        "40000",
        "--partitions",
        "1",
        "--reps",
        "1",
        "--duration",
        "2s",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(x.iter().cloned());
    let out = Command::new(env!("CARGO_BIN_EXE_probe-fetch-backoff"))
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["broker"]["bootstrap"], bootstrap);
    assert!(
        r["points"][0]["runs"][0]["msgs_per_s"].as_f64().unwrap() > 0.0,
        "{r}"
    );
    assert!(
        r["notes"].to_string().contains("sasl.password=[redacted]"),
        "{}",
        r["notes"]
    );
    assert_secret_nowhere(&secret, &out, dir.path());

    // kafka-clients: the Java companion, one producer pair over SASL_SSL (-X for the probe's
    // own admin client, -J for the JVM's clients).
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = [
        "--brokers",
        &bootstrap,
        "--batch-size",
        "131072",
        "--consume-size",
        "0",
        "--reps",
        "1",
        "--duration",
        "2s",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(x.iter().cloned());
    args.extend(j.iter().cloned());
    let out = Command::new(env!("CARGO_BIN_EXE_probe-java-socket-buffers"))
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs: usize = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["runs"].as_array().unwrap().len())
        .sum();
    assert!(runs >= 2, "both buffer settings ran over SASL_SSL: {r}");
    assert_secret_nowhere(&secret, &out, dir.path());
}

#[test]
fn zstd_batches_go_through_the_plaintext_broker() {
    let b = std::env::var("KGAP_TEST_BROKERS").unwrap_or_else(|_| "127.0.0.1:9092".into());
    let out = Command::new(env!("CARGO_BIN_EXE_probe-gzip-batch"))
        .args([
            "--brokers",
            &b,
            "--codec",
            "zstd",
            "--batch-size",
            "16384,90112",
            "--level",
            "-1",
            "--reps",
            "1",
            "--duration",
            "2s",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &r["points"][0]["runs"][0];
    assert_eq!(
        r["points"][0]["params"]["compression.type"], "zstd",
        "{}",
        r["points"][0]["params"]
    );
    assert!(run.to_string().contains("ratio"), "{run}");
}
