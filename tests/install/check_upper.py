#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""check_upper.py UPPER [--package NAME]... [--allow PATH]...

After a package was installed into a throwaway overlay root and removed
again, its upper layer must hold nothing of it: every entry there is either
package-manager state (dpkg's and apt's databases, caches and logs, the
ld.so cache, man-db's index; --allow adds more), or a copy-up of something the host has
with the same content (directories the package's files passed through, a
file rewritten with what it held before).  Anything else is a file left
behind, a file changed, or a file of the host deleted (a whiteout).  dpkg's
database must not know the packages any more (--package).
Exit status 0 if clean, 1 otherwise; the problems are listed."""
import argparse
import os
import stat
import sys

STATE = ['var/lib/dpkg', 'var/lib/apt', 'var/cache/apt', 'var/cache/debconf',
         'var/cache/ldconfig', 'var/cache/man/index.db', 'var/log',
         'etc/ld.so.cache']


def under(rel, prefixes):
    return any(rel == p or rel.startswith(p + '/') for p in prefixes)


def same_file(a, b):
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, 'rb') as fa, open(b, 'rb') as fb:
            while True:
                x, y = fa.read(1 << 16), fb.read(1 << 16)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('upper')
    ap.add_argument('--package', action='append', default=[])
    ap.add_argument('--allow', action='append', default=[])
    ap.add_argument('--lower', default='/')
    a = ap.parse_args()
    allow = STATE + [p.strip('/') for p in a.allow]
    problems = []
    n = 0
    for top, dirs, files in os.walk(a.upper):
        for name in dirs + files:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, a.upper)
            low = os.path.join(a.lower, rel)
            n += 1
            st = os.lstat(path)
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                if not under(rel, allow):
                    problems.append(f'deleted from the system: /{rel}')
                continue
            if under(rel, allow):
                continue
            if stat.S_ISDIR(st.st_mode):
                if not os.path.isdir(low) or os.path.islink(low):
                    problems.append(f'directory left behind: /{rel}')
                else:
                    try:
                        if os.getxattr(path, 'trusted.overlay.opaque') == b'y':
                            problems.append(f'directory replaced: /{rel}')
                    except OSError:
                        pass
            elif stat.S_ISLNK(st.st_mode):
                if not os.path.islink(low) or os.readlink(low) != os.readlink(path):
                    problems.append(f'symlink left behind or changed: /{rel}')
            elif stat.S_ISREG(st.st_mode):
                if not os.path.isfile(low) or os.path.islink(low):
                    problems.append(f'file left behind: /{rel}')
                elif not same_file(path, low):
                    problems.append(f'file changed: /{rel}')
            else:
                problems.append(f'special file left behind: /{rel}')
    # dpkg's database: no trace of the packages.
    info = os.path.join(a.upper, 'var/lib/dpkg/info')
    status = os.path.join(a.upper, 'var/lib/dpkg/status')
    for pkg in a.package:
        if os.path.isdir(info):
            for f in sorted(os.listdir(info)):
                if f.startswith(pkg + '.') or f.startswith(pkg + ':'):
                    problems.append(f'dpkg still has /var/lib/dpkg/info/{f}')
        if os.path.isfile(status):
            with open(status, encoding='utf-8', errors='replace') as f:
                if any(line.rstrip('\n') == f'Package: {pkg}' for line in f):
                    problems.append(f'dpkg status still lists {pkg}')
    for p in problems:
        print('check_upper: ' + p)
    if problems:
        print(f'check_upper: {len(problems)} problem(s) in {a.upper}')
        return 1
    print(f'check_upper: {n} entries in the upper layer, all package-manager '
          'state or unchanged copies of the host\'s; no trace of ' +
          (', '.join(a.package) or 'the package'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
