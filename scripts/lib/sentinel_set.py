"""A Redis primary, a replica and three Sentinels (quorum 2) on loopback ports of their own, for the failover
scenarios of scripts/chaos. Not shared with other scenarios: a scenario starts one in its own directory and the
deployment points its workers at it through REDIS_SENTINELS / REDIS_SENTINEL_MASTER instead of REDIS_URL.

The harness' own Redis reads and writes (`redis()`) go to whichever server the Sentinels name as the primary,
asked again when that server does not answer or is no longer the primary.
"""

import os
import signal
import subprocess
import time

from countdown_system import HarnessError, free_port, is_zombie, process_times, record_pid, wait_for


def redis_cli(port, *arguments, stdin=None, timeout=5):
    """One command through redis-cli; an error reply or a failed connection raises HarnessError."""
    command = ["redis-cli", "-e", "-p", str(port)]
    if stdin is not None:
        command.append("-x")
    try:
        result = subprocess.run(command + [str(a) for a in arguments], input=stdin, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise HarnessError(f"redis-cli -p {port} {arguments[0]}: no answer within {timeout}s")
    output = result.stdout.decode(errors="replace").strip()
    if result.returncode != 0:
        problem = (result.stderr.decode(errors="replace") + output).strip()
        raise HarnessError(f"redis-cli -p {port} {' '.join(map(str, arguments))[:80]} failed: {problem}")
    return output


class SentinelSet:
    """Primary, replica and three Sentinels in `directory`; `down_after_ms` is how long the primary may be silent
    before a Sentinel calls it down."""

    def __init__(self, directory, root, master="countdown", down_after_ms=1000, failover_timeout_ms=4000):
        self.directory = directory
        self.root = root
        self.master = master
        self.down_after_ms = down_after_ms
        os.makedirs(directory, exist_ok=True)
        self.servers = {}  # port -> name
        self._primary = None
        try:
            self.primary_port = self._start_server("primary")
            self.replica_port = self._start_server("replica", ["--replicaof", "127.0.0.1", str(self.primary_port)])
            wait_for(lambda: "state=online" in redis_cli(self.primary_port, "INFO", "replication"), 20, "the replica to sync")
            self.sentinel_ports = [self._start_sentinel(index, failover_timeout_ms) for index in range(3)]
            wait_for(self._sentinels_agree, 30, "the Sentinels to find the replica and each other", every=0.2)
        except BaseException:
            self.stop()
            raise

    # Processes

    def _pidfile(self, name):
        return os.path.join(self.directory, f"{name}.pid")

    def _wait_started(self, name, port):
        wait_for(lambda: os.path.exists(self._pidfile(name)), 20, f"{name} to write its pid file")
        wait_for(lambda: self._answers(port), 20, f"{name} to answer")
        record_pid(self.root, self.pid(name), "/usr/bin/redis-server")

    def _start_server(self, name, extra=()):
        port = free_port()
        directory = os.path.join(self.directory, name)
        os.makedirs(directory, exist_ok=True)
        subprocess.run(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory, "--daemonize", "yes",
                        "--pidfile", self._pidfile(name), "--logfile", os.path.join(self.directory, f"{name}.log"),
                        "--appendonly", "yes", "--appendfsync", "everysec", "--save", ""] + list(extra),
                       check=True, stdout=subprocess.DEVNULL)
        self._wait_started(name, port)
        self.servers[port] = name
        return port

    def _start_sentinel(self, index, failover_timeout_ms):
        name = f"sentinel-{index}"
        port = free_port()
        configuration = os.path.join(self.directory, f"{name}.conf")
        with open(configuration, "w") as handle:
            handle.write("\n".join([
                f"port {port}", "bind 127.0.0.1", "daemonize yes", f"pidfile {self._pidfile(name)}",
                f"logfile {os.path.join(self.directory, name + '.log')}", f"dir {self.directory}",
                f"sentinel monitor {self.master} 127.0.0.1 {self.primary_port} 2",
                f"sentinel down-after-milliseconds {self.master} {self.down_after_ms}",
                f"sentinel failover-timeout {self.master} {failover_timeout_ms}",
                f"sentinel parallel-syncs {self.master} 1", ""]))
        subprocess.run(["redis-server", configuration, "--sentinel"], check=True, stdout=subprocess.DEVNULL)
        self._wait_started(name, port)
        return port

    def pid(self, name):
        try:
            with open(self._pidfile(name)) as handle:
                return int(handle.read().strip())
        except (OSError, ValueError):
            return None

    def _answers(self, port):
        try:
            return redis_cli(port, "PING", timeout=2) == "PONG"
        except HarnessError:
            return False

    def _sentinels_agree(self):
        """Every Sentinel knows the other two and sees the replica up."""
        for port in self.sentinel_ports:
            fields = redis_cli(port, "SENTINEL", "MASTER", self.master).splitlines()
            master = dict(zip(fields[0::2], fields[1::2]))
            if master.get("num-other-sentinels") != "2" or master.get("num-slaves") != "1":
                return False
            replica = redis_cli(port, "SENTINEL", "REPLICAS", self.master).splitlines()
            flags = dict(zip(replica[0::2], replica[1::2])).get("flags", "")
            if "s_down" in flags or "disconnected" in flags:
                return False
        return True

    # What the workers are given

    def redis_environment(self):
        return {"REDIS_URL": "redis://sentinel-managed/0", "REDIS_SENTINEL_MASTER": self.master,
                "REDIS_SENTINELS": ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)}

    # The current primary

    def primary_according_to_sentinels(self):
        """The port a reachable Sentinel names as the primary, or None."""
        for port in self.sentinel_ports:
            try:
                answer = redis_cli(port, "SENTINEL", "get-master-addr-by-name", self.master, timeout=2).splitlines()
            except HarnessError:
                continue
            if len(answer) == 2:
                return int(answer[1])
        return None

    def role(self, port):
        try:
            return redis_cli(port, "ROLE", timeout=2).splitlines()[0]
        except (HarnessError, IndexError):
            return None

    def _find_primary(self):
        port = self.primary_according_to_sentinels()
        return port if port is not None and self.role(port) == "master" else None

    def redis(self, *arguments, stdin=None, timeout=30):
        """Runs a command on the current primary, finding it again (for up to `timeout` seconds) when the one last
        used fails or has become a replica."""
        deadline = time.time() + timeout
        while True:
            if self._primary is None:
                self._primary = self._find_primary()
            if self._primary is not None:
                try:
                    return redis_cli(self._primary, *arguments, stdin=stdin)
                except HarnessError as error:
                    self._primary = None
                    if time.time() >= deadline:
                        raise error
            elif time.time() >= deadline:
                raise HarnessError(f"no primary for {self.master} within {timeout:.0f}s")
            time.sleep(0.2)

    def redis_on(self, port, *arguments):
        """A command on one server of the set, whatever its role."""
        return redis_cli(port, *arguments)

    # Faults

    def kill(self, port):
        """SIGKILL to the server on `port` (a crash: no final write)."""
        name = self.servers[port]
        pid = self.pid(name)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: process_times(pid) is None or is_zombie(pid), 10, f"{name} to die")

    def wait_for_primary(self, port, timeout=30):
        """Waits until the Sentinels name `port` and it answers as the primary; returns the seconds waited."""
        started = time.time()
        wait_for(lambda: self.primary_according_to_sentinels() == port and self.role(port) == "master", timeout,
                 f"the Sentinels to name :{port} the primary", every=0.05)
        return time.time() - started

    def stop(self):
        for name in ["sentinel-0", "sentinel-1", "sentinel-2", "replica", "primary"]:
            pid = self.pid(name)
            if pid is None:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            try:
                wait_for(lambda: process_times(pid) is None or is_zombie(pid), 10, f"{name} to stop")
            except HarnessError:
                pass
