// docs/virtual-registers.md stays true to the code tables.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BASELINE_ALGORITHMS } from '../../../src/shared/virtual/baselines.ts';
import { VIRTUAL_ERROR_CODES } from '../../../src/shared/virtual/errors.ts';
import { MAX_EXPRESSION_LENGTH, MAX_NESTING_DEPTH } from '../../../src/shared/virtual/expression.ts';

const doc = fs.readFileSync('docs/virtual-registers.md', 'utf8');

describe('docs/virtual-registers.md', () => {
  it('lists every baseline code with its name', () => {
    for (const [code, { name }] of Object.entries(BASELINE_ALGORITHMS)) expect(doc, name).toContain(`| ${code} | ${name} |`);
  });

  it('lists every error code with its meaning', () => {
    for (const [code, meaning] of Object.entries(VIRTUAL_ERROR_CODES)) {
      expect(doc, code).toContain(`| \`${code}\` | ${meaning.replace("'HH:MM:SS'", '`HH:MM:SS`').replace("'YYYY-MM-DD'", '`YYYY-MM-DD`')} |`);
    }
  });

  it('states the expression limits', () => {
    expect(doc).toContain(`At most ${MAX_EXPRESSION_LENGTH.toLocaleString('en')} characters and ${MAX_NESTING_DEPTH} levels of nesting`);
  });
});
