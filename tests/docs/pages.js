// The pages a user reads (the README and the user guide) as fenced blocks:
// {page, line, info, body}, the info string split into words.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const USER_PAGES = ['README.md', 'docs/USER.md'];

export function blocks(page) {
  const lines = readFileSync(path.join(ROOT, page), 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(```+|~~~+)\s*(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !lines[i].startsWith(open[1]); i++) body.push(lines[i]);
    out.push({ page, line: start + 1, info: open[2].split(/\s+/).filter(Boolean), body });
  }
  return out;
}
