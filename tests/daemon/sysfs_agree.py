# SPDX-License-Identifier: MIT
"""sysfs_agree.py UROCE DEV...: do `ibstat`, `ibstat -l`, `ibstat DEV 1`,
`ibstatus` and `ibv_devinfo -v`, all run under `UROCE run`, describe the
devices DEV... alike (names, node GUID, firmware, port state and physical
state, rate, link layer, GID 0 and the port GUID made of it)? Prints one
"ok:" or "FAIL:" line per check; exit 1 when any failed."""
import ipaddress
import re
import subprocess
import sys

uroce, devs = sys.argv[1], sys.argv[2:]
fails = 0


def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fails += 1


def run(*argv):
    p = subprocess.run([uroce, 'run', '--'] + list(argv), capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        print('    | %s exit %d: %s' % (' '.join(argv), p.returncode, p.stderr.strip()))
    return p.returncode, p.stdout


def blocks(text, start):
    """{name: block text} of an output made of blocks that begin with start(name)."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(start, line)
        if m:
            name = m.group(1)
            out[name] = ''
        elif name:
            out[name] += line + '\n'
    return out


def field(block, key):
    m = re.search(r'^\s*' + re.escape(key) + r':\s*(.*?)\s*$', block, re.M)
    return m.group(1) if m else None


rc, devinfo = run('ibv_devinfo', '-v')
check(rc == 0, 'ibv_devinfo -v runs')
info = blocks(devinfo, r'^hca_id:\s*(\S+)')
check(sorted(info) == sorted(devs), 'ibv_devinfo lists %s (got %s)' % (devs, sorted(info)))

rc, listing = run('ibstat', '-l')
check(rc == 0 and listing.split() == sorted(devs),
      'ibstat -l lists %s (got %r)' % (sorted(devs), listing))

rc, stat = run('ibstat')
check(rc == 0, 'ibstat runs')
cas = blocks(stat, r"^CA '(\S+)'")
check(sorted(cas) == sorted(devs), 'ibstat describes %s (got %s)' % (devs, sorted(cas)))

rc, status = run('ibstatus')
check(rc == 0, 'ibstatus runs')
ports = blocks(status, r"^Infiniband device '(\S+)' port 1 status:")
check(sorted(ports) == sorted(devs), 'ibstatus describes %s (got %s)' % (devs, sorted(ports)))

SPEED = {'2.5': 'SDR', '5.0': 'DDR', '10.0': 'QDR', '14.0': 'FDR', '25.0': 'EDR', '50.0': 'HDR',
         '100.0': 'NDR'}
for d in devs:
    i, c, s = info.get(d, ''), cas.get(d, ''), ports.get(d, '')
    guid = field(i, 'node_guid') or '?'
    guid_hex = '0x' + guid.replace(':', '')
    check(field(c, 'Node GUID') == guid_hex,
          '%s: node GUID %s (ibstat %s)' % (d, guid_hex, field(c, 'Node GUID')))
    check(field(c, 'System image GUID') == '0x' + (field(i, 'sys_image_guid') or '').replace(':', ''),
          '%s: system image GUID' % d)
    check(field(c, 'Firmware version') == field(i, 'fw_ver'),
          '%s: firmware %s (ibstat %s)' % (d, field(i, 'fw_ver'), field(c, 'Firmware version')))
    check(field(c, 'Number of ports') == field(i, 'phys_port_cnt'), '%s: number of ports' % d)
    check('PORT_ACTIVE (4)' in (field(i, 'state') or '') and field(c, 'State') == 'Active' and
          field(s, 'state') == '4: ACTIVE', '%s: port state active in all three' % d)
    check('LINK_UP (5)' in (field(i, 'phys_state') or '') and
          field(c, 'Physical state') == 'LinkUp' and field(s, 'phys state') == '5: LinkUp',
          '%s: physical state LinkUp in all three' % d)
    width = re.match(r'(\d+)X', field(i, 'active_width') or '')
    speed = re.match(r'([\d.]+) Gbps', field(i, 'active_speed') or '')
    if width and speed:
        gbps = float(speed.group(1)) * int(width.group(1))
        want = '%s Gb/sec (%sX %s)' % (('%g' % gbps), width.group(1), SPEED.get(speed.group(1)))
        check(field(s, 'rate') == want, '%s: rate %s (ibstatus %s)' % (d, want, field(s, 'rate')))
        check(field(c, 'Rate') == '%g' % gbps, '%s: ibstat rate %s' % (d, field(c, 'Rate')))
    else:
        check(False, '%s: ibv_devinfo active width/speed' % d)
    check(field(i, 'link_layer') == 'Ethernet' and field(c, 'Link layer') == 'Ethernet' and
          field(s, 'link_layer') == 'Ethernet', '%s: link layer Ethernet in all three' % d)
    m = re.search(r'GID\[\s*0\]:\s*(\S+), RoCE v2', i)
    if m:
        gid = ipaddress.ip_address(m.group(1))
        check(field(s, 'default gid') == gid.exploded,
              '%s: GID 0 %s (ibstatus %s)' % (d, gid.exploded, field(s, 'default gid')))
        check(field(c, 'Port GUID') == '0x%016x' % (int(gid) & (2**64 - 1)),
              '%s: port GUID from GID 0 (ibstat %s)' % (d, field(c, 'Port GUID')))
    else:
        check(False, '%s: ibv_devinfo shows GID 0 as RoCE v2' % d)
    check(field(i, 'board_id') == 'uroce', '%s: ibv_devinfo reads board_id from the view' % d)

    rc, one = run('ibstat', d, '1')
    check(rc == 0 and 'State: Active' in one and 'Link layer: Ethernet' in one and
          "CA '" not in one, "%s: ibstat %s 1 shows port 1 only" % (d, d))
sys.exit(1 if fails else 0)
