//! Files the target already writes (`--stats FILE`, `--log FILE`): what it appends during the
//! capture is copied into the bundle, whole lines only, log lines with their secrets
//! redacted. A file that got nothing new gives its last lines instead, and says so.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// How much of a file that got nothing during the capture is copied (its tail).
const TAIL_BYTES: u64 = 16 << 20;

/// One file to include, from where it stood at the start.
#[derive(Debug, Clone)]
pub struct Included {
    pub source: PathBuf,
    /// The name in the bundle (`included/stats.jsonl`).
    pub name: String,
    pub redact: bool,
    start_len: u64,
}

/// What was copied.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Copied {
    pub name: String,
    pub bytes: u64,
    pub what: String,
}

impl Included {
    /// Notes where `source` ends now; an error when it cannot be read.
    pub fn mark(source: &Path, name: &str, redact: bool) -> io::Result<Included> {
        let len = std::fs::metadata(source)?.len();
        File::open(source)?; // readable now, not only at the end
        Ok(Included {
            source: source.to_path_buf(),
            name: name.into(),
            redact,
            start_len: len,
        })
    }

    /// Copies what was appended since [`mark`](Self::mark) (or the tail) into `bundle`.
    pub fn copy(&self, bundle: &Path) -> io::Result<Copied> {
        let mut f = File::open(&self.source)?;
        let len = f.metadata()?.len();
        let (from, what) = if len > self.start_len {
            (self.start_len, "what it wrote during the capture")
        } else if len < self.start_len {
            (
                0,
                "the file was truncated or rotated during the capture: all of it",
            )
        } else {
            (
                len.saturating_sub(TAIL_BYTES),
                "nothing was written during the capture: its last lines before it",
            )
        };
        // Start on a line: skip the rest of a line the start cut into.
        let mut skip_partial = from > 0;
        if from > 0 {
            f.seek(SeekFrom::Start(from - 1))?;
            let mut b = [0u8; 1];
            f.read_exact(&mut b)?;
            skip_partial = b[0] != b'\n';
        }
        let out_path = bundle.join(&self.name);
        if let Some(d) = out_path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let mut out = io::BufWriter::new(File::create(&out_path)?);
        let mut r = BufReader::new(f.take(len - from));
        let mut line = Vec::new();
        let mut bytes = 0u64;
        loop {
            line.clear();
            if r.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            if skip_partial {
                skip_partial = false;
                continue;
            }
            if !line.ends_with(b"\n") {
                break; // a line still being written
            }
            if self.redact {
                let text = crate::vocab::redact::scrub_properties(&String::from_utf8_lossy(&line));
                out.write_all(text.as_bytes())?;
                bytes += text.len() as u64;
            } else {
                out.write_all(&line)?;
                bytes += line.len() as u64;
            }
        }
        out.flush()?;
        Ok(Copied {
            name: self.name.clone(),
            bytes,
            what: format!("{}: {what}", self.source.display()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_whole_lines_appended_during_the_capture() {
        let dir = std::env::temp_dir().join(format!("kgap-include-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("app.log");
        std::fs::write(&src, "old line\nhalf").unwrap();
        let inc = Included::mark(&src, "included/app.log", true).unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&src).unwrap();
        f.write_all(b" of it\nsasl.password=hunter2\nnew\npartial")
            .unwrap();
        let c = inc.copy(&dir).unwrap();
        let got = std::fs::read_to_string(dir.join("included/app.log")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got, "sasl.password=[redacted]\nnew\n");
        assert_eq!(c.bytes, got.len() as u64);
    }
}
