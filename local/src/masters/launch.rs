//! Local masters of a chosen server, with their options, ready to start.

use super::{LocalError, LocalMasters, ServerKind, Tls, TlsFiles};

/// Local masters of a chosen server, ready to start: see [`LocalMasters::of`].
#[derive(Debug, Clone)]
pub struct Launch {
    pub(super) server: ServerKind,
    pub(super) fake_clock: bool,
    /// More arguments for every server, after the ones every master gets.
    pub(super) server_args: Vec<String>,
}

impl Launch {
    /// Runs every master under libfaketime, so [`LocalMasters::shift_clock`] can jump its wall
    /// clock. Starting fails when libfaketime is missing, or the server is built with jemalloc
    /// (it hangs under libfaketime: use Valkey, `make deps-valkey`).
    pub fn with_fake_clock(mut self) -> Launch {
        self.fake_clock = true;
        self
    }
    /// Starts every master with these arguments too (configuration directives as
    /// `redis-server` takes them: `["--rename-command", "DELIFEQ", ""]`), after the ones
    /// every master gets.
    pub fn with_server_args<I, S>(mut self, args: I) -> Launch
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.server_args.extend(args.into_iter().map(Into::into));
        self
    }
    /// Starts `n` masters; see [`LocalMasters::start`].
    pub fn start(&self, n: usize) -> Result<LocalMasters, LocalError> {
        LocalMasters::start_with_options(self, n, None, Tls::Off)
    }
    /// Starts `n` masters that require `password`; see [`LocalMasters::start_with_password`].
    pub fn start_with_password(
        &self,
        n: usize,
        password: &str,
    ) -> Result<LocalMasters, LocalError> {
        LocalMasters::start_with_options(self, n, Some(password.to_string()), Tls::Off)
    }
    /// Starts `n` TLS-only masters, self-signed; see [`LocalMasters::start_tls`].
    pub fn start_tls(&self, n: usize) -> Result<LocalMasters, LocalError> {
        LocalMasters::start_with_options(self, n, None, Tls::SelfSigned)
    }
    /// Starts `n` TLS-only masters with `files`; see [`LocalMasters::start_tls_with`].
    pub fn start_tls_with(&self, n: usize, files: TlsFiles) -> Result<LocalMasters, LocalError> {
        LocalMasters::start_with_options(self, n, None, Tls::Files(files))
    }
}
