// A real headless Chromium for the end-to-end tests: Debian's `chromium` package (installed by
// .ci/run when missing) driven by playwright-core. Where no Chromium exists the browser tests
// report themselves skipped with this reason.
import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const NO_CHROMIUM = fs.existsSync(CHROMIUM_PATH) ? undefined : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
if (NO_CHROMIUM) console.warn(`Browser tests skipped: ${NO_CHROMIUM}`);

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

export interface PixelStats {
  width: number;
  height: number;
  /** Distinct colours among sampled pixels. */
  colours: number;
  /** Share of sampled pixels that are not (near) white. */
  inked: number;
}

/** Decodes a PNG screenshot in the browser itself (canvas) and measures how much it shows. */
export async function pixelStats(page: Page, png: Buffer): Promise<PixelStats> {
  return page.evaluate(async (dataUrl) => {
    // Runs in the page; the test program is type-checked without the DOM library.
    const g = globalThis as any;
    const img = new g.Image();
    img.src = dataUrl;
    await img.decode();
    const canvas = g.document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(img, 0, 0);
    const { data } = ctx.getImageData(0, 0, img.width, img.height);
    const colours = new Set<number>();
    let inked = 0;
    let sampled = 0;
    for (let i = 0; i < data.length; i += 4 * 7) {
      const [r, g, b] = [data[i]!, data[i + 1]!, data[i + 2]!];
      colours.add((r << 16) | (g << 8) | b);
      if (r < 235 || g < 235 || b < 235) inked += 1;
      sampled += 1;
    }
    return { width: img.width, height: img.height, colours: colours.size, inked: inked / sampled };
  }, `data:image/png;base64,${png.toString('base64')}`);
}
