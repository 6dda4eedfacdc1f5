// The README and the pages of docs/ hold together: every relative link (and image) names a file
// that exists and, with an anchor, a heading of that file (GitHub's anchor rule); every page opens
// with a paragraph saying what it covers; the README stays a front door of a few screens.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const PAGES = ['README.md', ...fs.readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The text outside fenced code blocks, inline code and HTML comments. */
function prose(markdown: string): string {
  return markdown
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation and symbols dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\*+/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const text = fs.readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe('documentation links', () => {
  it('name files that exist, and headings that exist in them', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of PAGES) {
      for (const [, target] of prose(fs.readFileSync(page, 'utf8')).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
        if (/^[a-z][a-z+.-]*:/i.test(target!)) continue; // http:, https:, mailto:
        checked += 1;
        const [file, anchor] = target!.split('#') as [string, string | undefined];
        const resolved = file === '' ? page : path.join(path.dirname(page), decodeURIComponent(file));
        if (!fs.existsSync(resolved)) {
          broken.push(`${page}: ${target} (no ${resolved})`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(checked).toBeGreaterThan(80);
    expect(broken).toEqual([]);
  });

  it('follow GitHub’s anchor rule', () => {
    expect(slug('The time-series store (`src/store/timeseries`)')).toBe('the-time-series-store-srcstoretimeseries');
    expect(slug("Find an endpoint's code from its path")).toBe('find-an-endpoints-code-from-its-path');
    expect(slug('Fan-out: MQTT against webhooks')).toBe('fan-out-mqtt-against-webhooks');
    expect(slug('HTTP server: node:http by default, uWebSockets.js on request')).toBe('http-server-nodehttp-by-default-uwebsocketsjs-on-request');
    expect(slug('Seeding the demo: `npm run demo`')).toBe('seeding-the-demo-npm-run-demo');
  });
});

describe('documentation pages', () => {
  it('each open with a title and a paragraph saying what they cover', () => {
    const bad: string[] = [];
    for (const page of PAGES) {
      const [title, blank, ...rest] = fs.readFileSync(page, 'utf8').split('\n');
      const paragraph = rest.slice(0, rest.indexOf('')).join(' ');
      if (!/^# \S/.test(title!) || blank !== '' || !/^[A-Z`*]/.test(paragraph) || paragraph.length < 80) bad.push(page);
    }
    expect(bad).toEqual([]);
  });

  it('keep the README to a few screens', () => {
    expect(fs.readFileSync('README.md', 'utf8').split('\n').length).toBeLessThanOrEqual(250);
  });
});
