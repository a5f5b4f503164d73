import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { encodeRgbPng } from '../../../src/nodesets/_lib/rgb-png.js';

/** The RGB bytes of a decoded PNG (pngjs hands RGBA back). */
function decodeRgb(png: Buffer): { width: number; height: number; rgb: Buffer } {
  const img = PNG.sync.read(png);
  const rgb = Buffer.alloc(img.width * img.height * 3);
  for (let p = 0; p < img.width * img.height; p++) {
    img.data.copy(rgb, p * 3, p * 4, p * 4 + 3);
    expect(img.data[p * 4 + 3]).toBe(255);
  }
  return { width: img.width, height: img.height, rgb };
}

describe('encodeRgbPng', () => {
  it('gives back every pixel through an independent decoder: repeated rows, changed rows, wrapping differences', () => {
    const width = 37;
    const height = 29;
    const rgb = Buffer.alloc(width * height * 3);
    let seed = 7;
    for (let y = 0; y < height; y++) {
      // Runs of equal rows (the fast path) between rows of noise (each byte less the one above, mod 256).
      if (y % 5 !== 0 && y > 0) rgb.copy(rgb, y * width * 3, (y - 1) * width * 3, y * width * 3);
      else
        for (let i = 0; i < width * 3; i++) {
          seed = (seed * 1103515245 + 12345) >>> 0;
          rgb[y * width * 3 + i] = seed >>> 24;
        }
    }
    const png = encodeRgbPng(width, height, rgb);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const back = decodeRgb(png);
    expect([back.width, back.height]).toEqual([width, height]);
    expect(back.rgb.equals(rgb)).toBe(true);
  });

  it('encodes a one-pixel image, and the same pixels to the same bytes', () => {
    const px = Buffer.from([1, 2, 3]);
    expect(decodeRgb(encodeRgbPng(1, 1, px)).rgb).toEqual(px);
    expect(encodeRgbPng(1, 1, px).equals(encodeRgbPng(1, 1, Buffer.from(px)))).toBe(true);
  });

  it('refuses a size that does not match the bytes', () => {
    expect(() => encodeRgbPng(2, 2, Buffer.alloc(11))).toThrow(/expected 12 bytes of RGB, got 11/);
    expect(() => encodeRgbPng(0, 2, Buffer.alloc(0))).toThrow(/positive whole width and height/);
  });
});
