//! Files a command writes besides the text report, checked before anything is measured so a
//! bad path costs no run (exit 2), and written at the end. `-` means standard output (the text
//! report then goes to standard error, so the output stays machine-readable).
//!
//! A file is never written through a symbolic link (one planted where a result goes would
//! redirect it anywhere the user may write): a link is refused, up front and again when
//! writing. A regular file is written whole or not at all (a temporary file beside it, then
//! renamed over it), so a reader never sees half a result; a device (`/dev/null`) is written
//! in place. A write that fails does not stop the others: [`Writes`] tries each, and the
//! command then fails naming every file lost, after its report was printed.

use std::fs::OpenOptions;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use crate::cli::OutputArgs;
use crate::error::LoadgenError;
use crate::model::percentiles::Percentiles;
use crate::render::formats::{Of, Written, FORMATS};

/// Where one output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dest {
    Stdout,
    File(PathBuf),
}

impl Dest {
    fn new(path: &Path) -> Dest {
        if path.as_os_str() == "-" {
            Dest::Stdout
        } else {
            Dest::File(path.to_path_buf())
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Dest::Stdout => "standard output".into(),
            Dest::File(p) => p.display().to_string(),
        }
    }

    /// Writes `contents` (whole).
    pub fn write(&self, contents: &str) -> Result<(), LoadgenError> {
        let result = match self {
            Dest::Stdout => flushed(std::io::stdout().lock(), contents.as_bytes()),
            Dest::File(path) => write_whole(path, contents.as_bytes()),
        };
        result.map_err(|e| LoadgenError::Failed(format!("writing {}: {e}", self.describe())))
    }
}

/// Writes `contents` to `path`, never through a symbolic link: a regular file (or a new one)
/// whole or not at all, a device in place.
fn write_whole(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(std::io::Error::other(
                "is a symbolic link; refusing to write through it (name the file itself)",
            ))
        }
        Ok(meta) if !meta.is_file() => return std::fs::write(path, contents),
        _ => {}
    }
    let dir = dir_of(path);
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let mut staged = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(dir)?;
    staged.write_all(contents)?;
    staged.as_file().sync_all()?;
    // rename(2) replaces the name itself: a link planted since the check is replaced, not
    // followed.
    staged.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The outputs of one command, written one after another: a failed write is remembered and
/// the next is still tried; [`Writes::finish`] then fails naming every file lost.
pub struct Writes {
    quiet: bool,
    lost: Vec<String>,
}

impl Writes {
    /// `quiet`: no "wrote FILE" lines.
    pub fn new(quiet: bool) -> Writes {
        Writes {
            quiet,
            lost: Vec::new(),
        }
    }

    /// Writes `contents` (or records why it could not be made) to `dest`.
    pub fn write(&mut self, dest: &Dest, contents: Result<String, String>) {
        match contents
            .map_err(LoadgenError::Failed)
            .and_then(|c| dest.write(&c))
        {
            Ok(()) if !self.quiet => eprintln!("wrote {}", dest.describe()),
            Ok(()) => {}
            Err(e) => self.lose(dest.describe(), e),
        }
    }

    /// Records a file (or set of files) that could not be written, and why.
    pub fn lose(&mut self, what: String, why: impl std::fmt::Display) {
        eprintln!("redlock-loadgen: not written: {what}: {why}");
        self.lost.push(what);
    }

    /// Fails (exit 1) naming every file lost, if any was.
    pub fn finish(self) -> Result<(), LoadgenError> {
        if self.lost.is_empty() {
            return Ok(());
        }
        Err(LoadgenError::Failed(format!(
            "{} output(s) not written (the report above is complete): {}",
            self.lost.len(),
            self.lost.join(", ")
        )))
    }
}

/// The checked outputs of a command.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub json: Option<Dest>,
    pub csv: Option<Dest>,
    pub plot: Option<Dest>,
    pub hlog: Option<Dest>,
    pub html: Option<Dest>,
    pub hgrm: Option<PathBuf>,
    pub percentiles: Percentiles,
}

impl Outputs {
    /// Checks every path of `args` up front.
    pub fn check(args: &OutputArgs) -> Result<Outputs, LoadgenError> {
        let dest = |flag: &str, path: &Option<PathBuf>| -> Result<Option<Dest>, LoadgenError> {
            let Some(path) = path else { return Ok(None) };
            let dest = Dest::new(path);
            if let Dest::File(p) = &dest {
                check_file(flag, p)?;
            }
            Ok(Some(dest))
        };
        let outputs = Outputs {
            json: dest("--json", &args.json)?,
            csv: dest("--csv", &args.csv)?,
            plot: dest("--plot", &args.plot)?,
            hlog: dest("--hlog", &args.hlog)?,
            html: dest("--html", &args.html)?,
            hgrm: args.hgrm.clone(),
            percentiles: args.percentiles.clone().unwrap_or_default(),
        };
        if outputs.to_stdout() > 1 {
            return Err(LoadgenError::Usage(
                "only one of --json, --csv, --plot, --hlog and --html can write to standard output (-)".into(),
            ));
        }
        if let Some(dir) = &outputs.hgrm {
            check_dir("--hgrm", dir)?;
        }
        Ok(outputs)
    }

    /// The checked `--json` and `--html` of a command that writes no other file (`compare`,
    /// `scenarios`), refused up front as every command's are.
    pub fn json_and_html(
        json: &Option<PathBuf>,
        html: &Option<PathBuf>,
    ) -> Result<Outputs, LoadgenError> {
        Outputs::check(&OutputArgs {
            json: json.clone(),
            html: html.clone(),
            ..OutputArgs::default()
        })
    }

    /// The files asked for, in the order of [`FORMATS`].
    fn destinations(&self) -> [&Option<Dest>; 5] {
        [&self.json, &self.csv, &self.plot, &self.hlog, &self.html]
    }

    /// Refuses, before anything is measured, every file `command` (whose result is a `kind`)
    /// cannot write, naming the results that can.
    pub fn refuse_for(&self, command: &str, kind: Of) -> Result<(), LoadgenError> {
        if kind != Of::Run && self.hgrm.is_some() {
            return Err(LoadgenError::Usage(format!(
                "{command} does not write --hgrm (results of run do)"
            )));
        }
        let asked = self.destinations().into_iter().zip(&FORMATS);
        match asked
            .filter(|(dest, _)| dest.is_some())
            .find_map(|(_, f)| f.refusal(command, kind))
        {
            Some(why) => Err(LoadgenError::Usage(why)),
            None => Ok(()),
        }
    }

    /// Writes every file asked for of `written`, one writer per format
    /// ([`crate::render::formats`]); each is tried, and the command then fails naming every
    /// file lost.
    pub fn write(&self, written: Written<'_>, quiet: bool) -> Result<(), LoadgenError> {
        let mut writes = Writes::new(quiet);
        self.write_into(&mut writes, written);
        writes.finish()
    }

    /// The same, into `writes`, whose caller finishes it (with its other files).
    pub fn write_into(&self, writes: &mut Writes, written: Written<'_>) {
        for (dest, format) in self.destinations().into_iter().zip(&FORMATS) {
            if let Some(dest) = dest {
                writes.write(dest, (format.write)(&written, &self.percentiles));
            }
        }
        if let (Written::Run(report), Some(dir)) = (written, &self.hgrm) {
            match crate::render::hgrm::write_all(report, dir) {
                Ok(files) if !writes.quiet => {
                    eprintln!("wrote {} .hgrm files into {}", files.len(), dir.display())
                }
                Ok(_) => {}
                Err(e) => writes.lose(format!(".hgrm files in {}", dir.display()), e),
            }
        }
    }

    /// How many outputs take standard output (one at most; the text report then goes to
    /// stderr).
    fn to_stdout(&self) -> usize {
        let taking = |d: &&Option<Dest>| matches!(d, Some(Dest::Stdout));
        self.destinations().into_iter().filter(taking).count()
    }

    /// Prints the human report where it belongs.
    pub fn print_report(&self, text: &str) -> Result<(), LoadgenError> {
        let result = match self.to_stdout() > 0 {
            true => flushed(std::io::stderr().lock(), text.as_bytes()),
            false => flushed(std::io::stdout().lock(), text.as_bytes()),
        };
        result.map_err(|e| LoadgenError::Failed(format!("writing the report: {e}")))
    }
}

/// Writes `bytes` whole to `out`, then flushes it.
fn flushed(mut out: impl std::io::Write, bytes: &[u8]) -> std::io::Result<()> {
    out.write_all(bytes)?;
    out.flush()
}

/// The directory `path` is in (`.` for a bare file name).
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn usage(flag: &str, path: &Path, why: impl std::fmt::Display) -> LoadgenError {
    LoadgenError::Usage(format!("{flag} {}: {why}", path.display()))
}

/// A file the command will write: not a symbolic link nor a directory, its directory exists
/// and takes files, and an existing file (or device) accepts writes; refused naming `flag`.
pub fn check_file(flag: &str, path: &Path) -> Result<(), LoadgenError> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(usage(
            flag,
            path,
            "is a symbolic link; name the file itself (or - for standard output)",
        ));
    }
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(usage(flag, path, "is a directory; give a file name")),
        Ok(meta) => {
            let mut file = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| usage(flag, path, e))?;
            if !meta.is_file() && !file.is_terminal() {
                // A device: one byte tells /dev/full from /dev/null before the run, not after.
                file.write_all(b"\n").map_err(|e| usage(flag, path, e))?;
            }
            Ok(())
        }
        Err(_) => {
            let parent = dir_of(path);
            if !parent.is_dir() {
                return Err(usage(
                    flag,
                    path,
                    format!("no directory {}", parent.display()),
                ));
            }
            // Create it to be sure it can be, then remove the empty file again.
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| usage(flag, path, e))?;
            let _ = std::fs::remove_file(path);
            Ok(())
        }
    }
}

/// An output directory (`--hgrm`, `--history`, `--results`): created now (empty directories are
/// harmless), must take files, refused naming `flag` otherwise.
pub fn check_dir(flag: &str, dir: &Path) -> Result<(), LoadgenError> {
    if dir.exists() && !dir.is_dir() {
        return Err(usage(flag, dir, "is a file; give a directory"));
    }
    std::fs::create_dir_all(dir).map_err(|e| usage(flag, dir, e))?;
    let probe = dir.join(".redlock-loadgen-write-check");
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&probe)
        .map_err(|e| usage(flag, dir, e))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: &str) -> OutputArgs {
        OutputArgs {
            json: Some(PathBuf::from(json)),
            ..OutputArgs::default()
        }
    }

    #[test]
    fn unwritable_paths_are_refused_up_front_naming_the_flag_and_path() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let err = Outputs::check(&args(d)).unwrap_err();
        assert!(matches!(err, LoadgenError::Usage(_)));
        assert!(err.to_string().contains("--json") && err.to_string().contains("directory"));
        let err = Outputs::check(&args("/nonexistent/x.json")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent"), "{err}");
        let ok = dir.path().join("out.json");
        let outputs = Outputs::check(&args(ok.to_str().unwrap())).unwrap();
        assert_eq!(outputs.json, Some(Dest::File(ok.clone())));
        assert!(!ok.exists(), "the check leaves no file behind");
        assert_eq!(Outputs::check(&args("-")).unwrap().to_stdout(), 1);
        if Path::new("/dev/full").exists() {
            let err = Outputs::check(&args("/dev/full")).unwrap_err();
            assert!(err.to_string().contains("/dev/full"), "{err}");
        }
        let file = dir.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        let hgrm = OutputArgs {
            hgrm: Some(file.clone()),
            ..OutputArgs::default()
        };
        assert!(Outputs::check(&hgrm)
            .unwrap_err()
            .to_string()
            .contains("--hgrm"));
    }

    #[test]
    fn a_planted_link_is_refused_and_its_target_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, "keep me").unwrap();
        let link = dir.path().join("A.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = Outputs::check(&args(link.to_str().unwrap())).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let err = Dest::File(link.clone()).write("{}").unwrap_err();
        assert!(err.to_string().contains("A.json"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
        // A regular file is replaced whole, and nothing staged is left beside it.
        let file = dir.path().join("B.json");
        std::fs::write(&file, "old").unwrap();
        Dest::File(file.clone()).write("new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_lost_write_does_not_stop_the_next_and_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let gone = Dest::File(dir.path().join("vanished/A.json"));
        let kept = Dest::File(dir.path().join("B.json"));
        let mut writes = Writes::new(true);
        writes.write(&gone, Ok("{}".into()));
        writes.write(&kept, Ok("{}".into()));
        writes.write(&kept, Err("cannot render".into()));
        let err = writes.finish().unwrap_err().to_string();
        assert!(err.contains("2 output(s) not written"), "{err}");
        assert!(err.contains("vanished/A.json"), "{err}");
        assert!(dir.path().join("B.json").exists());
    }
}
