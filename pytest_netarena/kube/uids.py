"""Object uids that depend only on what names the object and when it was written (reproducible runs)."""

from __future__ import annotations

import hashlib
import uuid


def stable_uid(*parts: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256("/".join(parts).encode()).digest()[:16], version=4))
