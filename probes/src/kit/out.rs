//! The `--out` folder: the result documents at the top (rewritten after every run, so an
//! interrupted or failed sweep loses nothing), one sub-folder per run with its debug log,
//! statistics and per-thread CPU. Without `--out` the runs still write their captures (the
//! probe reads them back) into a temporary folder that is removed at the end.

use crate::kit::error::{ProbeError, Result};
use std::path::{Path, PathBuf};

pub struct OutDir {
    pub root: PathBuf,
    /// A temporary folder (no `--out`): removed when done.
    temporary: bool,
}

impl OutDir {
    /// Creates the folder (checked before anything else starts: a bad path is a usage
    /// error, exit 2).
    pub fn new(out: Option<&Path>, probe: &str) -> Result<OutDir> {
        let (root, temporary) = match out {
            Some(p) => (p.to_path_buf(), false),
            None => (
                std::env::temp_dir().join(format!("kgap-{probe}-{}", std::process::id())),
                true,
            ),
        };
        std::fs::create_dir_all(&root).map_err(|e| {
            let err = ProbeError::io(format!("creating {}", root.display()), e);
            if temporary {
                err
            } else {
                ProbeError::Usage(format!("--out: {err}"))
            }
        })?;
        // A folder we cannot write into fails now, not after the first run.
        let probe_file = root.join(".kgap-write-check");
        std::fs::write(&probe_file, b"")
            .and_then(|_| std::fs::remove_file(&probe_file))
            .map_err(|e| {
                ProbeError::Usage(format!("--out: cannot write into {}: {e}", root.display()))
            })?;
        Ok(OutDir { root, temporary })
    }

    pub fn is_temporary(&self) -> bool {
        self.temporary
    }

    /// The folder of one run (`<label>-rep<k>`), created.
    pub fn run_dir(&self, label: &str, rep: u32) -> Result<PathBuf> {
        let d = self.root.join(format!("{label}-rep{rep}"));
        std::fs::create_dir_all(&d)
            .map_err(|e| ProbeError::io(format!("creating {}", d.display()), e))?;
        Ok(d)
    }

    /// Writes one file at the top of the folder (nothing when temporary).
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        if self.temporary {
            return Ok(());
        }
        let p = self.root.join(name);
        std::fs::write(&p, bytes).map_err(|e| ProbeError::io(format!("writing {}", p.display()), e))
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}
