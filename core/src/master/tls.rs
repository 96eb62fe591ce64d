//! TLS for `rediss://` masters (rustls with the ring provider).
//!
//! Trust: the system's roots (rustls-native-certs, which also reads `SSL_CERT_FILE` and
//! `SSL_CERT_DIR`), loaded once per process, or a private CA given in the URL. `#insecure`
//! at the end of a URL skips certificate verification (self-signed test servers only).
//!
//! URL query parameters (the spelling redis-py uses): `ssl_ca_certs=PATH` (PEM file of the CA
//! certificates to trust instead of the system's), `ssl_certfile=PATH` and `ssl_keyfile=PATH`
//! (PEM client certificate chain and private key, for masters that require mutual TLS).

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;

use crate::vote::FailureKind;

use crate::answer::Failure;

static PROVIDER: LazyLock<Arc<CryptoProvider>> =
    LazyLock::new(|| Arc::new(rustls::crypto::ring::default_provider()));

/// The system's trust roots, loaded once (reading them takes milliseconds).
static SYSTEM_ROOTS: LazyLock<Arc<RootCertStore>> = LazyLock::new(|| {
    let mut roots = RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(found.certs);
    Arc::new(roots)
});

/// Files named in a `rediss://` URL's query.
#[derive(Debug, Default)]
pub(crate) struct TlsFiles {
    pub(crate) ca: Option<PathBuf>,
    pub(crate) cert: Option<PathBuf>,
    pub(crate) key: Option<PathBuf>,
}

impl TlsFiles {
    /// Reads `ssl_ca_certs`, `ssl_certfile` and `ssl_keyfile` from `url`'s query.
    pub(crate) fn from_url(url: &str) -> Self {
        let mut files = TlsFiles::default();
        if let Ok(parsed) = url::Url::parse(url) {
            for (name, value) in parsed.query_pairs() {
                let path = Some(PathBuf::from(value.as_ref()));
                match name.as_ref() {
                    "ssl_ca_certs" => files.ca = path,
                    "ssl_certfile" => files.cert = path,
                    "ssl_keyfile" => files.key = path,
                    _ => {}
                }
            }
        }
        files
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ca.is_none() && self.cert.is_none() && self.key.is_none()
    }
}

/// The client configuration of a `rediss://` master; an error names the file at fault.
pub(crate) fn client_config(insecure: bool, files: &TlsFiles) -> Result<Arc<ClientConfig>, String> {
    let builder = ClientConfig::builder_with_provider(Arc::clone(&PROVIDER))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))?;
    let builder = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate))
    } else {
        let roots = match &files.ca {
            Some(path) => Arc::new(private_roots(path)?),
            None => Arc::clone(&SYSTEM_ROOTS),
        };
        builder.with_root_certificates(roots)
    };
    let config = match (&files.cert, &files.key) {
        (None, None) => builder.with_no_client_auth(),
        (Some(cert), Some(key)) => {
            let chain = certificates(cert, "ssl_certfile")?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                format!(
                    "ssl_keyfile {:?}: no usable private key ({e})",
                    key.display()
                )
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("ssl_certfile/ssl_keyfile: {e}"))?
        }
        (Some(_), None) => return Err("ssl_certfile needs ssl_keyfile too".into()),
        (None, Some(_)) => return Err("ssl_keyfile needs ssl_certfile too".into()),
    };
    Ok(Arc::new(config))
}

/// Every certificate of a PEM file; an error names the parameter and the file.
fn certificates(path: &Path, param: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let read = |e: &dyn std::fmt::Display| format!("{param} {:?}: {e}", path.display());
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| read(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| read(&e))?;
    if certs.is_empty() {
        return Err(read(&"no PEM certificate in the file"));
    }
    Ok(certs)
}

/// A trust store of the CA certificates in `path` only.
fn private_roots(path: &Path) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    for cert in certificates(path, "ssl_ca_certs")? {
        roots
            .add(cert)
            .map_err(|e| format!("ssl_ca_certs {:?}: {e}", path.display()))?;
    }
    Ok(roots)
}

/// Runs the TLS handshake over `tcp`; a failure names the certificate problem.
pub(crate) async fn handshake(
    config: &Arc<ClientConfig>,
    host: &str,
    tcp: TcpStream,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, Failure> {
    let name = ServerName::try_from(host.to_string()).map_err(|e| {
        Failure::new(
            FailureKind::Tls,
            format!("{host:?} is not a valid TLS server name: {e}"),
        )
    })?;
    tokio_rustls::TlsConnector::from(Arc::clone(config))
        .connect(name, tcp)
        .await
        .map_err(|e| Failure::new(FailureKind::Tls, format!("TLS handshake failed: {e}")))
}

/// `#insecure`: accepts any certificate (signatures are still checked, so the handshake is
/// real TLS; only the identity is not).
#[derive(Debug)]
struct AcceptAnyCertificate;

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &PROVIDER.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &PROVIDER.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        PROVIDER
            .signature_verification_algorithms
            .supported_schemes()
    }
}
