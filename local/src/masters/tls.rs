//! TLS-only masters: the certificates they serve, and a throw-away self-signed one.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The certificates of TLS-only masters ([`LocalMasters::start_tls_with`](super::LocalMasters::start_tls_with)).
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The server's certificate (PEM), for 127.0.0.1.
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// The CA whose client certificates the server accepts (`--tls-ca-cert-file`).
    pub client_ca: PathBuf,
    /// Require a client certificate signed by `client_ca` (mutual TLS).
    pub require_client_cert: bool,
}

impl TlsFiles {
    /// The server's `--tls-*` arguments.
    pub(super) fn add_server_args(&self, command: &mut Command) {
        let auth_clients = if self.require_client_cert {
            "yes"
        } else {
            "no"
        };
        command
            .arg("--tls-cert-file")
            .arg(&self.cert)
            .arg("--tls-key-file")
            .arg(&self.key)
            .arg("--tls-ca-cert-file")
            .arg(&self.client_ca)
            .args(["--tls-auth-clients", auth_clients]);
    }
}

/// A fresh self-signed certificate for 127.0.0.1 in `dir` (`server.crt`, `server.key`).
pub(super) fn self_signed(dir: &Path) -> io::Result<TlsFiles> {
    let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
    // Output captured (not shown): openssl's own words go into the error if it fails.
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .args([OsStr::new("-keyout"), key.as_os_str()])
        .args([OsStr::new("-out"), cert.as_os_str()])
        .stdin(Stdio::null())
        .output();
    match made {
        Ok(out) if out.status.success() => Ok(TlsFiles {
            client_ca: cert.clone(),
            cert,
            key,
            require_client_cert: false,
        }),
        Ok(out) => Err(io::Error::other(format!(
            "openssl could not make a test certificate ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(io::Error::other(
            "openssl not found: install it (`apt-get install openssl`) for TLS masters",
        )),
        Err(e) => Err(e),
    }
}

/// A private CA and a certificate it signed, for tests of TLS the way operators run it: writes
/// `{name}-ca.pem` / `{name}-ca.key` (the CA) and `{name}.pem` / `{name}.key` (a certificate
/// for 127.0.0.1 signed by it) into `dir`. Needs the `openssl` command.
pub fn private_ca(dir: &Path, name: &str) -> io::Result<()> {
    let run = |args: &[&str]| -> io::Result<()> {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "openssl {}: {}",
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&out.stderr).trim()
            )))
        }
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let (ca_key, ca_pem, ca_subject) = (
        format!("{name}-ca.key"),
        format!("{name}-ca.pem"),
        format!("/CN={name}-ca"),
    );
    let mut args = vec!["req", "-x509", "-days", "1", "-subj", ca_subject.as_str()];
    args.extend(ec);
    args.extend(["-keyout", &ca_key, "-out", &ca_pem]);
    run(&args)?;
    let (key, csr, pem) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.pem"),
    );
    let mut args = vec!["req", "-new", "-subj", "/CN=127.0.0.1"];
    args.extend(ec);
    args.extend(["-keyout", &key, "-out", &csr]);
    run(&args)?;
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n")?;
    run(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &ca_pem,
        "-CAkey",
        &ca_key,
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        "san.ext",
        "-out",
        &pem,
    ])
}
