"""The run fingerprint's package digest: read from metadata headers alone, equal to what a full parse gives."""

from __future__ import annotations

import hashlib
from importlib import metadata

from pytest_netarena.reporting import fingerprint


def test_the_package_digest_is_the_full_metadata_parses_digest() -> None:
    names = sorted({f"{(dist.metadata['Name'] or '').lower()}=={dist.version}" for dist in metadata.distributions()})
    assert len(names) > 10  # this environment has pytest, the plugin and their dependencies at least
    assert fingerprint._packages_digest() == hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]


def test_a_distribution_is_named_by_its_header_even_with_a_long_description(tmp_path) -> None:
    info = tmp_path / "demo_pkg-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: Demo-Pkg\nVersion: 1.2.3\n\nName: not-this\n"
                                   "Version: 9.9.9\n" + "long description\n" * 1000)
    (dist,) = metadata.distributions(path=[str(tmp_path)])
    assert fingerprint._name_and_version(dist) == "demo-pkg==1.2.3"
