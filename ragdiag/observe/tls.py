"""A generated, self-signed certificate for the https side of `ragdiag record`.

Some Azure SDK credentials (bearer tokens: `DefaultAzureCredential`, managed identity) refuse
plain http, so the proxy can listen with TLS. The certificate names ``localhost``, ``127.0.0.1``
and ``::1`` (plus the listening host), lives 30 days, and its private key is written with mode
0600 beside it. The client trusts it by its CA bundle:

- Python (requests, the Azure SDK's default transport): ``REQUESTS_CA_BUNDLE=cert.pem``, or
  ``SearchClient(..., connection_verify="cert.pem")``;
- aiohttp (the async SDK) and the standard library: ``SSL_CERT_FILE=cert.pem``;
- Node.js: ``NODE_EXTRA_CA_CERTS=cert.pem``; .NET/Java: import it into the trust store.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
from pathlib import Path

DAYS = 30


def generate_certificate(folder: str | os.PathLike[str], host: str = "127.0.0.1") -> tuple[Path, Path]:
    """Write ``ragdiag-record-cert.pem`` and ``ragdiag-record-key.pem`` into `folder`; return both paths."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ragdiag record (local proxy)")])
    alt: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                   x509.IPAddress(ipaddress.ip_address("::1"))]
    try:
        ip = ipaddress.ip_address(host)
        if all(not (isinstance(a, x509.IPAddress) and a.value == ip) for a in alt):
            alt.append(x509.IPAddress(ip))
    except ValueError:
        if host != "localhost":
            alt.append(x509.DNSName(host))
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=DAYS))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = out / "ragdiag-record-cert.pem", out / "ragdiag-record-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))
    return cert_path, key_path


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(cert), str(key))
    return ctx


__all__ = ["generate_certificate", "server_context"]
