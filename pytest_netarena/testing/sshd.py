"""A throwaway OpenSSH server on 127.0.0.1 for tests of remote xdist workers (`--tx ssh=...`).

    with LocalSSHServer(tmp_path / "ssh") as server:
        spec = f"ssh=root@127.0.0.1//ssh_config={server.client_config}//python={wrapper}"

The server, its host key and the client key live in the given folder and are made for the test;
the server listens on a free port of 127.0.0.1, accepts only that key, and is stopped (only it) on
exit. `client_config` is an ssh_config(5) file for `ssh -F` (execnet's `ssh_config=` spec key)
that points at the server with the key and no known-hosts prompts. Needs Debian's openssh-server
(`/usr/sbin/sshd`) and to run as the user the workers log in as.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"


class SSHUnavailable(RuntimeError):
    """sshd or ssh-keygen is missing, or the server did not start; the message says which."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalSSHServer:
    """sshd -D on 127.0.0.1:<free port>, accepting one key made here."""

    def __init__(self, folder: Path, user: str | None = None) -> None:
        self.folder = Path(folder)
        self.user = user or getpass.getuser()
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def client_config(self) -> Path:
        return self.folder / "ssh_config"

    def start(self) -> LocalSSHServer:
        sshd = shutil.which("sshd") or (SSHD if os.path.exists(SSHD) else None)
        if sshd is None or shutil.which("ssh-keygen") is None or shutil.which("ssh") is None:
            raise SSHUnavailable("openssh-server and openssh-client are needed (apt-get install openssh-server)")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.folder.chmod(0o700)
        for name in ("host_key", "client_key"):
            for old in (self.folder / name, self.folder / f"{name}.pub"):
                old.unlink(missing_ok=True)
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.folder / name)],
                           check=True, capture_output=True)
        (self.folder / "authorized_keys").write_text((self.folder / "client_key.pub").read_text())
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation folder
        self.port = _free_port()
        config = self.folder / "sshd_config"
        config.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.folder / 'host_key'}",
            f"AuthorizedKeysFile {self.folder / 'authorized_keys'}", f"PidFile {self.folder / 'sshd.pid'}",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "UsePAM no", "StrictModes no", "PrintMotd no", "AcceptEnv NONE", "LogLevel ERROR", "",
        ]))
        self.client_config.write_text("\n".join([
            "Host 127.0.0.1", f"  Port {self.port}", f"  User {self.user}", f"  IdentityFile {self.folder / 'client_key'}",
            "  IdentitiesOnly yes", "  StrictHostKeyChecking no", f"  UserKnownHostsFile {self.folder / 'known_hosts'}",
            "  LogLevel ERROR", "  BatchMode yes", "",
        ]))
        with open(self.folder / "sshd.log", "wb") as log:  # the daemon holds its own copy
            self.process = subprocess.Popen([sshd, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SSHUnavailable(f"sshd exited: {(self.folder / 'sshd.log').read_text()[-500:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise SSHUnavailable("sshd did not listen within 10 s")

    def run(self, command: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """Run a command over ssh (to check the server, or a wrapper)."""
        return subprocess.run(["ssh", "-F", str(self.client_config), "127.0.0.1", command],
                              capture_output=True, text=True, timeout=timeout, check=False)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> LocalSSHServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
