"""Object uids and generated names that depend only on what names the object, never on timing (reproducible runs).

A uid is a hash of (resource, namespace, name, how many objects of that name the server made before), so
the pods' status writes, which land in whatever order the running pods answer, never change one: two
servers fed the same requests give the same uids. The count outlives a reset of the store, so a uid is
never handed out twice by one server (the kubelet, the garbage collector and owner references key on it).
"""

from __future__ import annotations

import hashlib
import uuid

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  #: the consonants and digits Kubernetes' name suffixes use


def stable_uid(*parts: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256("/".join(parts).encode()).digest()[:16], version=4))


def object_uid(store, plural: str, namespace: str, name: str, advance: bool = True) -> str:
    """The uid of the next object store makes under (plural, namespace, name); advance False: a dry run's."""
    with store.lock:
        count = store.made.get((plural, namespace, name), 0)
        if advance:
            store.made[(plural, namespace, name)] = count + 1
    return stable_uid(plural, namespace, name, str(count))


def suffix(text: str, length: int) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return "".join(ALPHABET[b % len(ALPHABET)] for b in digest[:length])


def generated_name(store, plural: str, namespace: str, prefix: str) -> str:
    """A free name for metadata.generateName: prefix plus a suffix from how many names it was asked for before
    (the counter returns with the store's snapshot on a reset, so an episode's names do not depend on the last)."""
    key = f"generate/{plural}/{namespace}/{prefix}"
    with store.lock:
        for _ in range(1000):
            count = store.counters.get(key, 0)
            store.counters[key] = count + 1
            name = prefix + suffix(f"{prefix}/{count}", 5)
            if store.get(plural, namespace, name) is None:
                return name
    return ""
