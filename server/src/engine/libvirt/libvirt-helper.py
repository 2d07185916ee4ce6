#!/usr/bin/python3
# The libvirt helper: ONE connection to one hypervisor through the official binding
# (python3-libvirt), for the server's LibvirtDriver. JSON lines on stdin/stdout:
#   first line {"uri": ..., "keepalive": [interval_s, count]}  -> {"ready": true} or {"fatal": {code, message}}
#   then {"id": n, "op": ..., ...}                              -> {"id": n, "result": ...} or {"id": n, "error": {code, message}}
#   and, unasked: {"ev": "lifecycle"|"serial"|"closed", ...}
#   a long request (vol_upload) also sends {"id": n, "progress": {"done": bytes, "total": bytes}} before its answer,
#   and stops at its next chunk after {"op": "cancel", "target": n}
# libvirt's own event loop runs in a thread (lifecycle events, console streams, keepalive);
# requests run in a small thread pool, so a slow one (createXML, a screenshot) never holds the others.
# It ends when its stdin closes (the server ended or closed the driver). The URI (it may carry a
# key path) comes on stdin, never on argv, and is never written anywhere.
import base64
import concurrent.futures
import json
import os
import re
import struct
import sys
import threading
import zlib
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

import libvirt
import libvirt_qemu

NS = 'https://vdi-portal.org/ns/machine/1'
out_lock = threading.Lock()


def send(obj):
    line = json.dumps(obj) + '\n'
    with out_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


# libvirt prints every error on stderr by default; they are answered instead.
libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
libvirt.virEventRegisterDefaultImpl()


def run_loop():
    while True:
        libvirt.virEventRunDefaultImpl()


threading.Thread(target=run_loop, daemon=True).start()

conn = None
consoles = {}
consoles_lock = threading.Lock()


def classify(e):
    msg = str(e)
    code = e.get_error_code() if isinstance(e, libvirt.libvirtError) else None
    if isinstance(e, Cancelled):
        return 'cancelled'
    if isinstance(e, AgentError):
        return e.code
    if code == libvirt.VIR_ERR_NO_DOMAIN:
        return 'no-domain'
    if code == libvirt.VIR_ERR_OPERATION_INVALID:
        return 'not-running'
    if re.search(r'host key|REMOTE HOST IDENTIFICATION', msg, re.I):
        return 'host-key'
    if conn is not None and not safe_alive():
        return 'connection-lost'
    return 'libvirt'


def safe_alive():
    try:
        return conn.isAlive() == 1
    except libvirt.libvirtError:
        return False


# ---- console (the first serial port) -------------------------------------------------------

def on_console(stream, _events, name):
    try:
        while True:
            data = stream.recv(65536)
            if data == -2:  # EAGAIN: nothing more for now
                return
            if not data:
                break
            send({'ev': 'serial', 'name': name, 'data': data.decode('utf-8', 'replace')})
    except libvirt.libvirtError:
        pass
    if close_console(name, stream):
        # Ours closed while the domain may still run (another console took it with force, the stream failed):
        # opened again once it can be, or the machine's serial output would be lost for good.
        reopen_console_later(name, 1.0)


def close_console(name, stream=None):
    """Closes the domain's console stream (or only `stream`, a stale one). True when it was the domain's current one."""
    with consoles_lock:
        current = consoles.get(name)
        ours = current is not None and (stream is None or current is stream)
        if ours:
            del consoles[name]
    target = current if ours else stream
    if target is not None:
        try:
            target.eventRemoveCallback()
        except libvirt.libvirtError:
            pass
        try:
            target.abort()
        except libvirt.libvirtError:
            pass
    return ours


def open_console(dom, force=True):
    name = dom.name()
    close_console(name)
    stream = conn.newStream(libvirt.VIR_STREAM_NONBLOCK)
    dom.openConsole(None, stream, libvirt.VIR_DOMAIN_CONSOLE_FORCE if force else 0)
    with consoles_lock:
        consoles[name] = stream
    stream.eventAddCallback(libvirt.VIR_STREAM_EVENT_READABLE | libvirt.VIR_STREAM_EVENT_ERROR | libvirt.VIR_STREAM_EVENT_HANGUP,
                            on_console, name)


def reopen_console_later(name, delay):
    """Opens a running domain's console again after `delay` s, without force (a person's `virsh console` keeps it):
    tried again, each time twice as late (up to a minute), until it opens or the domain stops."""
    def attempt():
        with consoles_lock:
            if name in consoles:
                return  # opened again meanwhile (a start, an adoption)
        try:
            dom = conn.lookupByName(name)
            if not dom.isActive():
                return
            open_console(dom, force=False)
        except libvirt.libvirtError as e:
            if e.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN or not safe_alive():
                return
            reopen_console_later(name, min(delay * 2, 60.0))
    timer = threading.Timer(delay, attempt)
    timer.daemon = True
    timer.start()


# ---- screenshots -----------------------------------------------------------------------------

def ppm_to_png(ppm):
    """QEMU's screendump is a binary PPM (P6, maxval 255); PNG with the standard library only."""
    m = re.match(rb'P6\s+(?:#[^\n]*\n\s*)*(\d+)\s+(\d+)\s+(\d+)\s', ppm)
    if not m:
        raise ValueError('not a P6 image')
    w, h = int(m.group(1)), int(m.group(2))
    pixels = ppm[m.end():m.end() + w * h * 3]
    stride = w * 3
    raw = b''.join(b'\x00' + pixels[y * stride:(y + 1) * stride] for y in range(h))

    def chunk(kind, body):
        return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body) & 0xffffffff)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(raw, 6)) + chunk(b'IEND', b''))


def screenshot(dom):
    stream = conn.newStream(0)
    try:
        mime = dom.screenshot(stream, 0, 0)
        parts = []
        while True:
            data = stream.recv(1 << 20)
            if not data:
                break
            parts.append(data)
        stream.finish()
    except Exception:
        try:
            stream.abort()
        except libvirt.libvirtError:
            pass
        raise
    image = b''.join(parts)
    if image[:8] != b'\x89PNG\r\n\x1a\n':
        image = ppm_to_png(image)
    return {'png': base64.b64encode(image).decode('ascii'), 'mime': mime}


# ---- requests --------------------------------------------------------------------------------

def ours(dom):
    try:
        dom.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT, NS, libvirt.VIR_DOMAIN_AFFECT_LIVE)
        return True
    except libvirt.libvirtError:
        return False


def set_password(dom, kind, passwd, valid_to):
    root = ET.fromstring(dom.XMLDesc(0))
    g = root.find(f"./devices/graphics[@type='{kind}']")
    if g is None:
        return {'absent': True}
    g.set('passwd', passwd)
    if valid_to:
        g.set('passwdValidTo', valid_to)
    elif 'passwdValidTo' in g.attrib:
        del g.attrib['passwdValidTo']
    dom.updateDeviceFlags(ET.tostring(g, encoding='unicode'), libvirt.VIR_DOMAIN_AFFECT_LIVE)
    return {}


def op_create(req):
    try:
        if conn.lookupByName(req['name']).isActive():
            return {'exists': True}
    except libvirt.libvirtError as e:
        if e.get_error_code() != libvirt.VIR_ERR_NO_DOMAIN:
            raise
    dom = conn.createXML(req['xml'], 0)
    try:
        open_console(dom)
    except libvirt.libvirtError:
        pass  # no serial port: waitForSerial will time out
    return {'xml': dom.XMLDesc(0)}


def op_state(req):
    try:
        state, reason = conn.lookupByName(req['name']).state()
    except libvirt.libvirtError as e:
        if e.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
            return {'state': None}
        raise
    return {'state': state, 'reason': reason}


def op_destroy(req):
    try:
        conn.lookupByName(req['name']).destroy()
    except libvirt.libvirtError as e:
        if e.get_error_code() not in (libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_ERR_OPERATION_INVALID):
            raise
    close_console(req['name'])
    return {}


def op_list(_req):
    out = []
    for dom in conn.listAllDomains(libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE):
        if ours(dom):
            try:
                out.append({'name': dom.name(), 'xml': dom.XMLDesc(0)})
            except libvirt.libvirtError:
                pass  # gone meanwhile
    return out


def memory():
    """The host's memory (total MiB, bytes a guest can get: free, buffers and page cache), from libvirt's
    node memory stats: the same sum the server reads from its own /proc/meminfo for its host
    (host/memory.ts). getInfo's total and getFreeMemory (MemFree alone) when the stats are not there."""
    try:
        s = conn.getMemoryStats(libvirt.VIR_NODE_MEMORY_STATS_ALL_CELLS, 0)
        total = s['total']
        return total // 1024, min(total, s.get('free', 0) + s.get('buffers', 0) + s.get('cached', 0)) * 1024
    except (libvirt.libvirtError, KeyError):
        return conn.getInfo()[1], conn.getFreeMemory()


def op_info(_req):
    info = conn.getInfo()
    kvm = True
    try:
        conn.getDomainCapabilities(None, None, None, 'kvm', 0)
    except libvirt.libvirtError:
        kvm = False
    total_mb, free = memory()
    return {'cpus': info[2], 'memoryMb': total_mb, 'freeBytes': free, 'kvm': kvm}


def op_host(_req):
    """The host as the console shows it: CPU model and count, memory, its active storage pools."""
    info = conn.getInfo()
    model = ET.fromstring(conn.getCapabilities()).findtext('./host/cpu/model') or info[0]
    pools = []
    for p in conn.listAllStoragePools(libvirt.VIR_CONNECT_LIST_STORAGE_POOLS_ACTIVE):
        try:
            p.refresh(0)  # a dir pool's free space is measured on refresh
        except libvirt.libvirtError:
            pass  # a refresh already running: the last numbers
        try:
            _state, capacity, _allocation, available = p.info()
            path = ET.fromstring(p.XMLDesc(0)).findtext('./target/path') or ''
            pools.append({'name': p.name(), 'path': path, 'capacity': capacity, 'available': available})
        except libvirt.libvirtError:
            pass  # gone meanwhile
    total_mb, free = memory()
    return {'cpuModel': model, 'cpus': info[2], 'memoryMb': total_mb, 'freeBytes': free, 'pools': pools, 'cpuTimes': cpu_times()}


def cpu_times():
    """The host's CPU time since it booted, all CPUs (libvirt's node CPU stats, nanoseconds): idle (with
    iowait) and total; the server measures the load as the busy share between two readings. None when
    the host's libvirtd cannot tell."""
    try:
        s = conn.getCPUStats(libvirt.VIR_NODE_CPU_STATS_ALL_CPUS, 0)
        idle = s.get('idle', 0) + s.get('iowait', 0)
        return {'idle': idle, 'total': idle + s.get('kernel', 0) + s.get('user', 0)}
    except (libvirt.libvirtError, AttributeError):
        return None


def op_interface(req):
    """Whether the host has the network interface `name` (None: its libvirtd cannot tell)."""
    try:
        conn.interfaceLookupByName(req['name'])
        return {'present': True}
    except libvirt.libvirtError as e:
        if e.get_error_code() == libvirt.VIR_ERR_NO_INTERFACE:
            return {'present': False}
        if e.get_error_code() in (libvirt.VIR_ERR_NO_SUPPORT, libvirt.VIR_ERR_OPERATION_UNSUPPORTED):
            return {'present': None}
        raise
# ---- storage volumes (a template's base copied to a host, a desktop's disk there) ----------------

UPLOAD_CHUNK = 1 << 20
cancelled = set()
cancelled_lock = threading.Lock()


def find_pool(name):
    pool = conn.storagePoolLookupByName(name)
    try:
        pool.refresh(0)  # files made behind libvirt's back (or removed) are seen
    except libvirt.libvirtError:
        pass  # a refresh already running: its answer is as good
    return pool


def vol_facts(vol):
    _type, capacity, physical = vol.infoFlags(libvirt.VIR_STORAGE_VOL_GET_PHYSICAL)
    allocation = vol.info()[2]
    return {'path': vol.path(), 'capacity': capacity, 'physical': physical, 'allocation': allocation}


def op_vol_info(req):
    pool = find_pool(req['pool'])
    try:
        vol = pool.storageVolLookupByName(req['name'])
    except libvirt.libvirtError as e:
        if e.get_error_code() == libvirt.VIR_ERR_NO_STORAGE_VOL:
            return {'absent': True, 'poolPath': ET.fromstring(pool.XMLDesc(0)).findtext('./target/path') or ''}
        raise
    return vol_facts(vol)


def abort_stream(stream):
    """A volume stream given up after a failure (one already broken is fine)."""
    try:
        stream.abort()
    except libvirt.libvirtError:
        pass


def op_vol_upload(req):
    """A file of this machine into a new volume `name` of `pool` (one already there is replaced):
    virStorageVolUpload in chunks, progress after each, the size checked at the end."""
    rid = req['id']
    pool = find_pool(req['pool'])
    try:
        pool.storageVolLookupByName(req['name']).delete(0)
    except libvirt.libvirtError as e:
        if e.get_error_code() != libvirt.VIR_ERR_NO_STORAGE_VOL:
            raise
    with open(req['file'], 'rb') as f:
        total = os.fstat(f.fileno()).st_size
        xml = (f"<volume><name>{escape(req['name'])}</name><capacity unit='bytes'>{total}</capacity>"
               "<allocation unit='bytes'>0</allocation><target><format type='raw'/>"
               "<permissions><mode>0644</mode></permissions></target></volume>")
        vol = pool.createXML(xml, 0)
        stream = conn.newStream(0)
        done = 0
        try:
            vol.upload(stream, 0, total, 0)
            while True:
                with cancelled_lock:
                    if rid in cancelled:
                        raise Cancelled()
                data = f.read(UPLOAD_CHUNK)
                if not data:
                    break
                sent = 0
                while sent < len(data):
                    sent += stream.send(data[sent:])
                done += len(data)
                send({'id': rid, 'progress': {'done': done, 'total': total}})
            stream.finish()
        except BaseException:
            abort_stream(stream)
            try:
                vol.delete(0)
            except libvirt.libvirtError:
                pass
            raise
        finally:
            with cancelled_lock:
                cancelled.discard(rid)
    facts = vol_facts(pool.storageVolLookupByName(req['name']))
    if facts['physical'] != total:
        raise RuntimeError(f"the copy on the host has {facts['physical']} bytes, not {total}")
    return facts


def op_pool_space(req):
    """The pool's size and free bytes now (refreshed: a dir pool measures its filesystem on refresh)."""
    _state, capacity, _allocation, available = find_pool(req['pool']).info()
    return {'capacity': capacity, 'available': available}


def op_vol_download(req):
    """The volume at `path` into a new file `file` of this machine (virStorageVolDownload in chunks);
    a failure removes the partial file."""
    vol = vol_by_path(req['path'])
    if vol is None:
        raise RuntimeError('the disk is not on the hypervisor')
    total = vol.infoFlags(libvirt.VIR_STORAGE_VOL_GET_PHYSICAL)[2]
    stream = conn.newStream(0)
    done = 0
    try:
        with open(req['file'], 'xb') as f:
            os.fchmod(f.fileno(), 0o600)
            vol.download(stream, 0, total, 0)
            while True:
                data = stream.recv(UPLOAD_CHUNK)
                if data == -2:
                    continue  # non-blocking streams only; ours blocks
                if not data:
                    break
                f.write(data)
                done += len(data)
            stream.finish()
    except BaseException:
        abort_stream(stream)
        try:
            os.unlink(req['file'])
        except OSError:
            pass
        raise
    if done != total:
        os.unlink(req['file'])
        raise RuntimeError(f"the copy from the host has {done} bytes, not {total}")
    return {'bytes': done}


class Cancelled(Exception):
    pass


class AgentError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


# errors of virDomainQemuAgentCommand that mean "no agent answers" (none configured, not connected, silent)
AGENT_GONE = {getattr(libvirt, n) for n in ('VIR_ERR_AGENT_UNRESPONSIVE', 'VIR_ERR_AGENT_UNSYNCED', 'VIR_ERR_ARGUMENT_UNSUPPORTED')
              if hasattr(libvirt, n)}


def op_agent(req):
    """One command to the guest agent (qemu-ga) through libvirt, which syncs with it first:
    {"return": ...}; an agent that does not answer -> agent-unavailable, its error answer -> agent-error."""
    dom = conn.lookupByName(req['name'])
    cmd = {'execute': req['command']}
    if isinstance(req.get('args'), dict):
        cmd['arguments'] = req['args']
    try:
        out = libvirt_qemu.qemuAgentCommand(dom, json.dumps(cmd), max(1, int(req.get('timeout', 15))), 0)
    except libvirt.libvirtError as e:
        msg = str(e)
        if e.get_error_code() in AGENT_GONE or re.search(r'agent is not (connected|configured|responding)|not responding', msg, re.I):
            raise AgentError('agent-unavailable', msg)
        if e.get_error_code() == libvirt.VIR_ERR_OPERATION_INVALID:
            raise
        raise AgentError('agent-error', msg)
    return {'return': json.loads(out).get('return')}


def op_cancel(req):
    with cancelled_lock:
        cancelled.add(req['target'])
    return {}


def vol_by_path(path):
    """The volume at `path`, or None; a file libvirt does not know yet is looked for again after its pools are read."""
    for attempt in (0, 1):
        try:
            return conn.storageVolLookupByPath(path)
        except libvirt.libvirtError as e:
            if e.get_error_code() != libvirt.VIR_ERR_NO_STORAGE_VOL:
                raise
        if attempt == 0:
            for p in conn.listAllStoragePools(libvirt.VIR_CONNECT_LIST_STORAGE_POOLS_ACTIVE):
                try:
                    p.refresh(0)
                except libvirt.libvirtError:
                    pass
    return None


def op_vol_at(req):
    """The volume at `path` (its facts and the name of its pool), or absent."""
    vol = vol_by_path(req['path'])
    if vol is None:
        return {'absent': True}
    return {**vol_facts(vol), 'pool': vol.storagePoolLookupByVolume().name()}


def op_vol_delete(req):
    """Deletes the volume at `path` (a disk of ours on the host); one already gone is fine."""
    vol = vol_by_path(req['path'])
    if vol is None:
        return {'absent': True}
    vol.delete(0)
    return {}


def op_vol_resize(req):
    """Grows the disk at `path` to `capacity` bytes (its virtual size; the host's qemu-img through libvirt); never shrinks."""
    vol = vol_by_path(req['path'])
    if vol is None:
        raise RuntimeError('the disk is not on the hypervisor')
    current = vol.info()[1]
    if req['capacity'] < current:
        raise RuntimeError(f"refusing to shrink the disk from {current} to {req['capacity']} bytes")
    if req['capacity'] > current:
        vol.resize(req['capacity'], 0)
    return vol_facts(vol)


def op_console(req):
    dom = conn.lookupByName(req['name'])
    with consoles_lock:
        if req['name'] in consoles:
            return {}
    open_console(dom)
    return {}


OPS = {
    'create': op_create,
    'state': op_state,
    'destroy': op_destroy,
    'list': op_list,
    'info': op_info,
    'console': op_console,
    'host': op_host,
    'interface': op_interface,
    'shutdown': lambda r: conn.lookupByName(r['name']).shutdownFlags(libvirt.VIR_DOMAIN_SHUTDOWN_ACPI_POWER_BTN) and {},
    'reset': lambda r: conn.lookupByName(r['name']).reset(0) and {},
    'password': lambda r: set_password(conn.lookupByName(r['name']), r['type'], r['passwd'], r.get('validTo')),
    'screenshot': lambda r: screenshot(conn.lookupByName(r['name'])),
    'agent': op_agent,
    'vol_info': op_vol_info,
    'vol_upload': op_vol_upload,
    'vol_at': op_vol_at,
    'vol_delete': op_vol_delete,
    'vol_resize': op_vol_resize,
    'vol_download': op_vol_download,
    'pool_space': op_pool_space,
}


def parse_request(line):
    """A line as a request (an object with a numeric id and a known op; a cancel with its target), or
    None once it is answered with a `bad-request` error (with its id when it has one): a bad line never
    ends the helper."""
    try:
        req = json.loads(line)
    except ValueError:
        req = None
    if not isinstance(req, dict):
        send({'id': None, 'error': {'code': 'bad-request', 'message': 'a request is a JSON object'}})
        return None
    if req.get('op') == 'cancel' and isinstance(req.get('target'), int):
        return req
    rid = req.get('id')
    if not isinstance(rid, int) or isinstance(rid, bool):
        send({'id': None, 'error': {'code': 'bad-request', 'message': 'a request needs a numeric id'}})
        return None
    if not isinstance(req.get('op'), str) or req['op'] not in OPS:
        send({'id': rid, 'error': {'code': 'bad-request', 'message': 'unknown op'}})
        return None
    return req


def handle(req):
    try:
        result = OPS[req['op']](req)
        send({'id': req['id'], 'result': result if result is not None else {}})
    except Exception as e:  # every failure is answered, never printed
        send({'id': req['id'], 'error': {'code': classify(e), 'message': str(e)}})


def on_lifecycle(_conn, dom, event, detail, _opaque):
    send({'ev': 'lifecycle', 'name': dom.name(), 'event': event, 'detail': detail})
    if event == libvirt.VIR_DOMAIN_EVENT_STOPPED:
        close_console(dom.name())


def main():
    global conn
    first = json.loads(sys.stdin.readline() or '{}')
    try:
        conn = libvirt.open(first['uri'])
        interval, count = first.get('keepalive', [5, 2])
        conn.setKeepAlive(interval, count)
        conn.registerCloseCallback(lambda _c, reason, _o: send({'ev': 'closed', 'reason': reason}), None)
        conn.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE, on_lifecycle, None)
        # Not VIR_DOMAIN_EVENT_ID_REBOOT: with it registered (python3-libvirt 9.0) console streams
        # never get a readable callback again (measured: no serial output in 25 s, 30 reads without).
    except Exception as e:
        send({'fatal': {'code': 'host-key' if classify(e) == 'host-key' else 'connect', 'message': str(e)}})
        return
    send({'ready': True})
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=8)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = parse_request(line)
        if req is None:
            continue
        if req['op'] == 'cancel':
            op_cancel(req)  # at once, unanswered: the upload it stops holds a worker
        else:
            pool.submit(handle, req)
    pool.shutdown(wait=True, cancel_futures=True)
    try:
        conn.close()
    except libvirt.libvirtError:
        pass


if __name__ == '__main__':
    main()
