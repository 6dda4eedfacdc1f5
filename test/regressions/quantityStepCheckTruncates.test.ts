// Regression: isMultipleOf(0.0000001, 0.1) was true because toScaled
// truncated to 6 decimals while parseDecimal rounded, so a quantity off the market zone's step
// was accepted. Every quantity and amount now has one exact decimal representation.
import { describe, expect, it } from 'vitest';
import { isMultipleOf } from '../../src/products/decimal.ts';
import { quantityErrors } from '../../src/products/rules.ts';

describe('quantity step check', () => {
  it('sees digits beyond the sixth decimal', () => {
    expect(isMultipleOf(0.0000001, 0.1)).toBe(false);
    expect(isMultipleOf(0.1000001, 0.1)).toBe(false);
    expect(isMultipleOf('12.30000004', '0.1')).toBe(false);
    expect(isMultipleOf(1e-7, 1e-7)).toBe(true);
    expect(isMultipleOf(0.3, 0.1)).toBe(true);
    expect(quantityErrors({ quantity: 0.0000001 }, 0.1)).toEqual([{ path: 'quantity', message: expect.stringContaining('0.1') }]);
  });
});
