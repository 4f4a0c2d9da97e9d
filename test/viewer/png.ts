import { inflateSync } from "node:zlib";

/** A decoded image: `pixels` holds RGBA bytes, row by row. */
export type Image = { width: number; height: number; pixels: Uint8Array };

/**
 * Decodes a PNG as browsers' screenshots are: 8 bits per channel, RGB or RGBA, not interlaced.
 * Throws for anything else.
 */
export function decodePng(file: Buffer): Image {
  if (!file.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    throw new Error("not a PNG");
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  for (let offset = 8; offset < file.length;) {
    const length = file.readUInt32BE(offset);
    const type = file.toString("latin1", offset + 4, offset + 8);
    const chunk = file.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = chunk.readUInt32BE(0);
      height = chunk.readUInt32BE(4);
      const [depth, colorType, , , interlace] = [chunk[8], chunk[9], chunk[10], chunk[11], chunk[12]];
      if (depth !== 8 || (colorType !== 2 && colorType !== 6) || interlace !== 0)
        throw new Error(`unsupported PNG: depth ${depth}, color type ${colorType}, interlace ${interlace}`);
      channels = colorType === 6 ? 4 : 3;
    } else if (type === "IDAT") data.push(chunk);
    else if (type === "IEND") break;
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const rows = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const source = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = rows.subarray(y * stride, (y + 1) * stride);
    const above = y > 0 ? rows.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? row[x - channels]! : 0;
      const up = above[x]!;
      const upLeft = x >= channels ? above[x - channels]! : 0;
      const predictor = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter];
      if (predictor === undefined) throw new Error(`unknown PNG filter ${filter}`);
      row[x] = (source[x]! + predictor) & 0xff;
    }
  }
  if (channels === 4) return { width, height, pixels: rows };
  const pixels = new Uint8Array(width * height * 4);
  for (let index = 0; index < width * height; index++) {
    pixels.set(rows.subarray(index * 3, index * 3 + 3), index * 4);
    pixels[index * 4 + 3] = 255;
  }
  return { width, height, pixels };
}

function paeth(left: number, up: number, upLeft: number): number {
  const estimate = left + up - upLeft;
  const toLeft = Math.abs(estimate - left);
  const toUp = Math.abs(estimate - up);
  const toUpLeft = Math.abs(estimate - upLeft);
  return toLeft <= toUp && toLeft <= toUpLeft ? left : toUp <= toUpLeft ? up : upLeft;
}

/** How many pixels in the rectangle are within `tolerance` (per channel) of `hex` ("#2f6fdf"). */
export function countColor(
  image: Image,
  hex: string,
  area: { x: number; y: number; width: number; height: number },
  tolerance = 12,
): number {
  const target = [1, 3, 5].map((start) => Number.parseInt(hex.slice(start, start + 2), 16));
  let count = 0;
  for (let y = Math.max(0, Math.floor(area.y)); y < Math.min(image.height, area.y + area.height); y++) {
    for (let x = Math.max(0, Math.floor(area.x)); x < Math.min(image.width, area.x + area.width); x++) {
      const at = (y * image.width + x) * 4;
      if (target.every((value, channel) => Math.abs(image.pixels[at + channel]! - value) <= tolerance)) count++;
    }
  }
  return count;
}
