#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""extract_ci_recipes.py CI_MD OUT_DIR

Turns the recipes of docs/ci.md into shell scripts, as written:
  OUT_DIR/gha-N.sh   the shell of the N-th `run:` block of the GitHub
                     Actions job (marked <!-- ci-recipe: github-actions -->)
  OUT_DIR/docker.sh  the Dockerfile (<!-- ci-recipe: dockerfile -->) as one
                     script run from the build context: COPY, RUN (through
                     /bin/sh -c), WORKDIR, ENV, then CMD; FROM must be
                     debian:12 and no other instruction is accepted.
Fails (exit 1, a message) if a recipe is missing or uses what the test
cannot run."""
import json
import os
import re
import shlex
import sys


def fenced_block(text, marker, lang):
    i = text.find('<!-- ci-recipe: ' + marker)
    if i < 0:
        sys.exit(f'extract_ci_recipes: no <!-- ci-recipe: {marker} --> in the page')
    m = re.compile(r'^```' + lang + r'\s*\n(.*?)^```', re.M | re.S).search(text, i)
    if not m:
        sys.exit(f'extract_ci_recipes: no ```{lang} block after the {marker} marker')
    return m.group(1)


def gha_steps(yaml):
    lines = yaml.split('\n')
    steps, skipped = [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r'^(\s*)(?:- )?(run|uses):\s*(.*)$', line)
        if not m:
            i += 1
            continue
        indent, key, rest = len(m.group(1)), m.group(2), m.group(3).strip()
        if key == 'uses':
            skipped.append(rest)
            i += 1
            continue
        if rest not in ('|', '|-', '|+'):
            steps.append(rest + '\n')
            i += 1
            continue
        body = []
        i += 1
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():
            body.pop()
        cut = min(len(b) - len(b.lstrip()) for b in body if b.strip())
        steps.append('\n'.join(b[cut:] for b in body) + '\n')
    if not steps:
        sys.exit('extract_ci_recipes: the GitHub Actions job has no run: step')
    return steps, skipped


def docker_script(dockerfile):
    # Backslash-newline continues an instruction; comments are dropped.
    text = re.sub(r'\\\n', ' ', dockerfile)
    out = ['set -e', 'context=$PWD']
    seen_from = False
    for raw in text.split('\n'):
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        word, _, args = line.partition(' ')
        word = word.upper()
        args = args.strip()
        if word == 'FROM':
            if args != 'debian:12':
                sys.exit(f'extract_ci_recipes: FROM {args}: the test root is Debian 12 only')
            seen_from = True
        elif not seen_from:
            sys.exit('extract_ci_recipes: the Dockerfile must start with FROM')
        elif word == 'COPY':
            parts = args.split()
            if len(parts) < 2 or any(p.startswith('--') for p in parts):
                sys.exit(f'extract_ci_recipes: COPY {args}: only COPY SRC... DEST')
            srcs = ' '.join('"$context"/' + p for p in parts[:-1])
            dest = parts[-1]
            out.append(f'echo "+ COPY {args}"')
            if dest.endswith('/'):
                out.append(f'mkdir -p {shlex.quote(dest)}')
            out.append(f'cp -r {srcs} {shlex.quote(dest)}')
        elif word == 'RUN':
            if args.startswith('['):
                sys.exit('extract_ci_recipes: RUN in exec form is not supported')
            out.append(f'echo {shlex.quote("+ RUN " + args)}')
            out.append(f'/bin/sh -c {shlex.quote(args)}')
        elif word == 'WORKDIR':
            out.append(f'mkdir -p {shlex.quote(args)} && cd {shlex.quote(args)}')
        elif word == 'ENV':
            m = re.match(r'^(\w+)=(.*)$', args) or re.match(r'^(\w+)\s+(.*)$', args)
            if not m:
                sys.exit(f'extract_ci_recipes: ENV {args}: only ENV KEY=VALUE')
            out.append(f'export {m.group(1)}={shlex.quote(m.group(2).strip(chr(34)))}')
        elif word == 'CMD':
            try:
                argv = json.loads(args)
            except ValueError:
                argv = ['/bin/sh', '-c', args]
            out.append(f'echo {shlex.quote("+ CMD " + args)}')
            out.append(' '.join(shlex.quote(a) for a in argv))
        else:
            sys.exit(f'extract_ci_recipes: {word}: not an instruction this test runs')
    return '\n'.join(out) + '\n'


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    page, outdir = sys.argv[1], sys.argv[2]
    text = open(page, encoding='utf-8').read()
    os.makedirs(outdir, exist_ok=True)
    steps, skipped = gha_steps(fenced_block(text, 'github-actions', 'yaml'))
    for n, step in enumerate(steps, 1):
        with open(os.path.join(outdir, f'gha-{n}.sh'), 'w') as f:
            f.write(step)
    with open(os.path.join(outdir, 'docker.sh'), 'w') as f:
        f.write(docker_script(fenced_block(text, 'dockerfile', 'dockerfile')))
    print(f'extract_ci_recipes: {len(steps)} run: steps (not run: {", ".join(skipped) or "none"}), '
          'the Dockerfile')


if __name__ == '__main__':
    main()
