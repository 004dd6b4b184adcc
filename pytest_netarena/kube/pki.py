"""The cluster's credentials: a CA, the serving and admin client certificates, the token signing key, TLS contexts."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass, field

#: names and addresses the serving certificate is valid for (kubectl checks them against the server URL)
SERVING_DNS = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
               "kubernetes.default.svc.cluster.local", "k3s")
SERVING_IPS = ("127.0.0.1", "::1", "10.96.0.1")
#: the admin kubeconfig's client certificate: a member of system:masters, as k3s and kubeadm make it
ADMIN_USER, ADMIN_GROUP = "kubernetes-admin", "system:masters"
VALIDITY = dt.timedelta(days=365)


def _pem(data: bytes) -> str:
    return base64.b64encode(data).decode()


@dataclass
class Authority:
    """Everything one server signs with, made at start (ECDSA P-256 keys, as k3s uses: milliseconds).

    Each server has its own: a token or certificate of one server is worthless at another."""

    ca_pem: bytes = b""
    serving_pem: bytes = b""
    serving_key_pem: bytes = b""
    admin_pem: bytes = b""
    admin_key_pem: bytes = b""
    signing_key: object = None  #: the ServiceAccount token key (cryptography EllipticCurvePrivateKey)
    key_id: str = ""
    _contexts: dict = field(default_factory=dict)

    @classmethod
    def create(cls) -> Authority:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)  # a clock a little behind still accepts them

        def name(common: str, organization: str = "") -> x509.Name:
            parts = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization)] if organization else []
            return x509.Name([*parts, x509.NameAttribute(NameOID.COMMON_NAME, common)])

        def key():
            return ec.generate_private_key(ec.SECP256R1())

        def cert(subject, public_key, issuer, issuer_key, ca: bool = False, usage=None, sans=None):
            builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
                       .serial_number(x509.random_serial_number()).not_valid_before(now)
                       .not_valid_after(now + VALIDITY)
                       .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
                       .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=not ca,
                                                    content_commitment=False, data_encipherment=False,
                                                    key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                                                    encipher_only=False, decipher_only=False), critical=True))
            if usage:
                builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            if sans:
                builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
            return builder.sign(issuer_key, hashes.SHA256())

        def pem_key(private) -> bytes:
            return private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption())

        ca_key = key()
        ca_name = name(f"netarena-server-ca@{int(now.timestamp())}")
        ca = cert(ca_name, ca_key.public_key(), ca_name, ca_key, ca=True)
        serving_key = key()
        sans = [x509.DNSName(n) for n in SERVING_DNS] + [x509.IPAddress(ipaddress.ip_address(a)) for a in SERVING_IPS]
        serving = cert(name("kube-apiserver"), serving_key.public_key(), ca_name, ca_key,
                       usage=ExtendedKeyUsageOID.SERVER_AUTH, sans=sans)
        admin_key = key()
        admin = cert(name(ADMIN_USER, ADMIN_GROUP), admin_key.public_key(), ca_name, ca_key,
                     usage=ExtendedKeyUsageOID.CLIENT_AUTH)
        signing = key()
        public = signing.public_key().public_bytes(serialization.Encoding.DER,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
        import hashlib

        encoding = serialization.Encoding.PEM
        return cls(ca.public_bytes(encoding), serving.public_bytes(encoding), pem_key(serving_key),
                   admin.public_bytes(encoding), pem_key(admin_key), signing,
                   base64.urlsafe_b64encode(hashlib.sha256(public).digest()).decode().rstrip("="))

    # -- what kubeconfigs and Secrets carry -------------------------------------------------------------
    @property
    def ca_data(self) -> str:
        """The CA certificate, base64 (a kubeconfig's certificate-authority-data)."""
        return _pem(self.ca_pem)

    def admin_user(self) -> dict:
        """A kubeconfig `user` entry with the admin client certificate."""
        return {"client-certificate-data": _pem(self.admin_pem), "client-key-data": _pem(self.admin_key_pem)}

    # -- TLS ------------------------------------------------------------------------------------------------
    def server_context(self, small_clients: bool = False) -> ssl.SSLContext:
        """The serving context: our certificate; client certificates optional, verified against our CA.

        small_clients: also accept TLS 1.2 clients that sign with SHA-1 only, as Go's server does (busybox wget's
        TLS, in pods): OpenSSL refuses them from security level 1; the ciphers stay the same (ECDHE, AES-GCM)."""
        name = "small" if small_clients else "server"
        context = self._contexts.get(name)
        if context is None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            if small_clients:
                context.set_ciphers("@SECLEVEL=0:ECDH+AESGCM:ECDH+CHACHA20:ECDH+AES:!aNULL:!eNULL:!SHA1:!AESCCM")
            with tempfile.TemporaryDirectory(prefix="netarena-tls-") as folder:  # ssl loads chains from files only
                cert_path, key_path = os.path.join(folder, "cert"), os.path.join(folder, "key")
                with open(os.open(key_path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as handle:
                    handle.write(self.serving_key_pem)
                with open(cert_path, "wb") as handle:
                    handle.write(self.serving_pem)
                context.load_cert_chain(cert_path, key_path)
            context.verify_mode = ssl.CERT_OPTIONAL
            context.load_verify_locations(cadata=self.ca_pem.decode())
            context.set_alpn_protocols(["http/1.1"])  # kubectl offers h2 first; this server speaks HTTP/1.1
            self._contexts[name] = context
        return context


def peer_identity(peer: dict | None) -> tuple[str, tuple[str, ...]] | None:
    """(user, groups) of a verified client certificate (CN and O, as Kubernetes reads them), or None."""
    if not peer:
        return None
    common, organizations = "", []
    for rdn in peer.get("subject") or ():
        for key, value in rdn:
            if key == "commonName":
                common = value
            elif key == "organizationName":
                organizations.append(value)
    return (common, tuple(organizations)) if common else None
