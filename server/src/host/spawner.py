# The program helper: a small process that starts every program the server runs (qemu-img, ip),
# so that the server never forks itself. Node can only fork (a copy of its page tables, then
# copy-on-write faults, plus ~1 ms of JavaScript per child): under a rush of 25 desktops created
# at once that cost as much CPU as the server's own database. posix_spawn here starts a child
# without copying this process (vfork semantics): ~0.25 ms per program, measured.
#
# Protocol, one JSON object per line. Requests on stdin:
#   {"id", "file", "args", "timeoutMs" (0: none), "maxBuffer" (bytes per stream), "nice" (0: as is)}
# Answers on stdout: {"id", "err": null | {"message", "code" (exit code or null)}, "stdout", "stderr"}
# The helper ends when its stdin closes (the server went away). Standard library only.
import json
import os
import selectors
import signal
import sys
import time

# A stop signal to the whole process group (a service manager, Ctrl+C) is the server's to handle:
# its stop still runs programs through this helper (the guest network's teardown), and this
# helper ends with it (stdin closes). The children get every signal's default back (below).
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
CHILD_DEFAULT_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE, signal.SIGXFSZ)

selector = selectors.DefaultSelector()
running = {}  # pidfd -> Run
streams = {}  # pipe fd -> (Run, index 0 stdout / 1 stderr)


class Run:
    def __init__(self, request, pid, pidfd, out_fd, err_fd):
        self.request = request
        self.pid = pid
        self.pidfd = pidfd
        self.open = {out_fd, err_fd}
        self.chunks = ([], [])
        self.sizes = [0, 0]
        self.status = None  # wait status once it ended
        self.failure = None  # why it was stopped (time limit, output limit)
        timeout = request.get("timeoutMs") or 0
        self.deadline = time.monotonic() + timeout / 1000 if timeout > 0 else None


def send(answer):
    data = (json.dumps(answer) + "\n").encode()
    while data:
        data = data[os.write(1, data):]


def command_line(request):
    return " ".join([request["file"], *request["args"]])


def start(request):
    rid = request["id"]
    out_r, out_w = os.pipe()  # both ends close-on-exec; dup2 below gives the child its own 1 and 2
    err_r, err_w = os.pipe()
    try:
        pid = os.posix_spawnp(
            request["file"],
            [request["file"], *request["args"]],
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2),
            ],
            setsigdef=CHILD_DEFAULT_SIGNALS,
            setsigmask=(),
        )
    except OSError as e:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        code = e.errno and os.strerror(e.errno)
        send({"id": rid, "err": {"message": f"spawn {request['file']} failed: {code or e}", "code": None}, "stdout": "", "stderr": ""})
        return
    os.close(out_w)
    os.close(err_w)
    nice = request.get("nice") or 0
    if nice:
        try:
            os.setpriority(os.PRIO_PROCESS, pid, nice)
        except OSError:
            pass  # gone already, or refused: it runs at this helper's priority
    pidfd = os.pidfd_open(pid)
    run = Run(request, pid, pidfd, out_r, err_r)
    running[pidfd] = run
    selector.register(pidfd, selectors.EVENT_READ, "exit")
    for index, fd in enumerate((out_r, err_r)):
        os.set_blocking(fd, False)
        streams[fd] = (run, index)
        selector.register(fd, selectors.EVENT_READ, "stream")


def stop(run, why):
    if run.failure is None:
        run.failure = why
    if run.status is None:
        try:
            os.kill(run.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def read_stream(fd):
    run, index = streams[fd]
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return
    if chunk:
        run.sizes[index] += len(chunk)
        limit = run.request.get("maxBuffer") or 0
        if limit and run.sizes[index] > limit:
            stop(run, "output larger than allowed")
        else:
            run.chunks[index].append(chunk)
        return
    selector.unregister(fd)
    os.close(fd)
    del streams[fd]
    run.open.discard(fd)
    finish_if_done(run)


def reap(pidfd):
    run = running[pidfd]
    _, status = os.waitpid(run.pid, 0)
    run.status = status
    selector.unregister(pidfd)
    os.close(pidfd)
    del running[pidfd]
    finish_if_done(run)


def finish_if_done(run):
    # Answered once the program ended and both its streams closed (as Node's execFile does).
    if run.status is None or run.open:
        return
    stdout, stderr = (b"".join(c).decode("utf-8", "replace") for c in run.chunks)
    code = os.waitstatus_to_exitcode(run.status)
    err = None
    if run.failure is not None:
        err = {"message": f"{command_line(run.request)}: {run.failure}", "code": None}
    elif code != 0:
        # A negative code is a signal: no exit code (null), as Node reports it.
        err = {"message": f"Command failed: {command_line(run.request)}\n{stderr}", "code": code if code > 0 else None}
    send({"id": run.request["id"], "err": err, "stdout": stdout, "stderr": stderr})


def main():
    os.set_blocking(0, False)
    selector.register(0, selectors.EVENT_READ, "requests")
    pending = b""
    while True:
        deadlines = [r.deadline for r in running.values() if r.deadline is not None and r.failure is None]
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
        for key, _ in selector.select(timeout):
            fd = key.fd
            if key.data == "requests":
                try:
                    chunk = os.read(0, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    return  # the server went away
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        start(json.loads(line))
            elif key.data == "stream":
                if fd in streams:
                    read_stream(fd)
            elif fd in running:
                reap(fd)
        now = time.monotonic()
        for run in list(running.values()):
            if run.deadline is not None and run.failure is None and now >= run.deadline:
                stop(run, "timed out")


if __name__ == "__main__":
    main()
    sys.exit(0)
