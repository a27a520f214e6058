/**
 * Demo hero images drawn locally (no network): an SVG per section and variant, rasterised by sharp
 * and stored in the shared convention DATA_DIR/images/{hash}/{width}.webp (see schemas/image.ts).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { HERO_ASPECT, HERO_WIDTHS, heroImagePath } from '../../schemas/image.ts';
import type { Section } from '../../schemas/common.ts';
import { SECTION_LABELS } from '../../lib/sections.ts';

const WIDTH = HERO_WIDTHS[HERO_WIDTHS.length - 1]!;
const HEIGHT = Math.round((WIDTH * HERO_ASPECT.height) / HERO_ASPECT.width);
const SANS = 'DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif';
const SERIF = 'DejaVu Serif, Liberation Serif, Georgia, Times New Roman, serif';

/** Variants drawn per section: one per article of a section file (they repeat beyond that). */
export const HERO_VARIANTS = 8;

type Palette = { from: string; to: string; accent: string; second: string };

/** Per section: the dark start of the gradient, three end tones (one per variant in turn), accent and second colour. */
const PALETTES: Record<Section, { from: string; tones: [string, string, string]; accent: string; second: string }> = {
  world: { from: '#0b2f57', tones: ['#1b7fa6', '#2a9d8f', '#3d5a98'], accent: '#f2c14e', second: '#8fd3e8' },
  business: { from: '#0d3328', tones: ['#1f7a5c', '#2d6a4f', '#3c7f73'], accent: '#e8d9a8', second: '#9be3b8' },
  politics: { from: '#33091a', tones: ['#8c1c3a', '#6b2142', '#a03a2c'], accent: '#f4e3c1', second: '#4f8fd6' },
  tech: { from: '#0f0c33', tones: ['#3a2ca3', '#1f4fa0', '#5a2a8c'], accent: '#5ef2d6', second: '#b59cff' },
  sports: { from: '#5c2200', tones: ['#e0641b', '#c23b22', '#d98a1c'], accent: '#fff1d6', second: '#ffd23f' },
  culture: { from: '#3d1048', tones: ['#c2477a', '#8a3fb0', '#d46a4f'], accent: '#ffd166', second: '#7fe3ff' },
  opinion: { from: '#24221f', tones: ['#5c5346', '#3f4a57', '#6b4a3a'], accent: '#f5e6c8', second: '#d9674a' },
  home: { from: '#0f213a', tones: ['#2f5d8a', '#2f7a8a', '#4a4f8a'], accent: '#ff8a5c', second: '#cde3f7' },
};

type Random = () => number;

/** mulberry32: a tiny seeded generator, so a variant looks the same on every run. */
function createRandom(seedText: string): Random {
  let seed = createHash('sha256').update(seedText).digest().readUInt32LE(0);
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function between(random: Random, min: number, max: number): number {
  return min + random() * (max - min);
}

const r1 = (n: number) => Math.round(n * 10) / 10;

function drawGlobe(random: Random, p: Palette): string {
  const cx = between(random, 720, 980);
  const cy = between(random, 230, 380);
  const r = between(random, 210, 290);
  let out = `<circle cx="${r1(cx)}" cy="${r1(cy)}" r="${r1(r)}" fill="${p.second}" fill-opacity="0.08" stroke="${p.accent}" stroke-opacity="0.6" stroke-width="3"/>`;
  for (let k = 1; k <= 5; k++) {
    const rx = r * Math.cos((k * Math.PI) / 12);
    out += `<ellipse cx="${r1(cx)}" cy="${r1(cy)}" rx="${r1(rx)}" ry="${r1(r)}" fill="none" stroke="${p.second}" stroke-opacity="0.35" stroke-width="1.5"/>`;
  }
  for (let k = -2; k <= 2; k++) {
    const y = cy + r * Math.sin((k * Math.PI) / 6);
    const half = r * Math.cos((k * Math.PI) / 6);
    out += `<line x1="${r1(cx - half)}" y1="${r1(y)}" x2="${r1(cx + half)}" y2="${r1(y)}" stroke="${p.second}" stroke-opacity="0.35" stroke-width="1.5"/>`;
  }
  for (let i = 0; i < 4; i++) {
    const x1 = between(random, 80, 700);
    const y1 = between(random, 120, 420);
    const x2 = cx + between(random, -r / 2, r / 2);
    const y2 = cy + between(random, -r / 2, r / 2);
    const lift = between(random, 80, 200);
    out += `<path d="M${r1(x1)} ${r1(y1)} Q${r1((x1 + x2) / 2)} ${r1(Math.min(y1, y2) - lift)} ${r1(x2)} ${r1(y2)}" fill="none" stroke="${p.accent}" stroke-width="2.5" stroke-dasharray="8 8" stroke-opacity="0.8"/>`;
    out += `<circle cx="${r1(x1)}" cy="${r1(y1)}" r="6" fill="${p.accent}"/><circle cx="${r1(x2)}" cy="${r1(y2)}" r="6" fill="${p.accent}"/>`;
  }
  return out;
}

function drawBars(random: Random, p: Palette): string {
  let out = '';
  for (let y = 120; y < HEIGHT; y += 80)
    out += `<line x1="0" y1="${y}" x2="${WIDTH}" y2="${y}" stroke="${p.second}" stroke-opacity="0.12"/>`;
  const count = Math.floor(between(random, 10, 15));
  const left = between(random, 420, 560);
  const step = (WIDTH - 60 - left) / count;
  let level = between(random, 0.25, 0.4);
  const points: string[] = [];
  for (let i = 0; i < count; i++) {
    level = Math.min(0.92, Math.max(0.15, level + between(random, -0.08, 0.14)));
    const h = level * (HEIGHT - 140);
    const x = left + i * step;
    const top = HEIGHT - h;
    out += `<rect x="${r1(x + step * 0.15)}" y="${r1(top)}" width="${r1(step * 0.7)}" height="${r1(h)}" rx="4" fill="${p.second}" fill-opacity="${r1(0.18 + i * 0.02)}"/>`;
    points.push(`${r1(x + step / 2)},${r1(top - 30)}`);
  }
  out += `<polyline points="${points.join(' ')}" fill="none" stroke="${p.accent}" stroke-width="5" stroke-linejoin="round" stroke-linecap="round"/>`;
  for (const point of points) {
    const [x, y] = point.split(',');
    out += `<circle cx="${x}" cy="${y}" r="7" fill="${p.accent}"/>`;
  }
  return out;
}

function drawHemicycle(random: Random, p: Palette): string {
  const cx = between(random, 760, 900);
  const cy = between(random, 520, 600);
  const split = between(random, 0.35, 0.65);
  const colours = [p.accent, p.second, '#ffffff'];
  let out = '';
  for (let row = 0; row < 8; row++) {
    const radius = 130 + row * 38;
    const seats = Math.floor((Math.PI * radius) / 34);
    for (let s = 0; s <= seats; s++) {
      const t = s / seats;
      const angle = Math.PI - t * Math.PI;
      const x = cx + radius * Math.cos(angle);
      const y = cy - radius * Math.sin(angle);
      const colour = t < split - 0.04 ? colours[0] : t > split + 0.04 ? colours[1] : colours[2];
      out += `<circle cx="${r1(x)}" cy="${r1(y)}" r="11" fill="${colour}" fill-opacity="0.75"/>`;
    }
  }
  return out;
}

function drawCircuit(random: Random, p: Palette): string {
  const grid = 40;
  let out = '';
  for (let i = 0; i < 26; i++) {
    let x = Math.round(between(random, 8, 29)) * grid;
    let y = Math.round(between(random, 1, 11)) * grid;
    let d = `M${x} ${y}`;
    for (let seg = 0; seg < 3; seg++) {
      if (seg % 2 === 0) x += Math.round(between(random, -6, 6)) * grid;
      // Kept above the label area so the section name stays readable.
      else y = Math.min(11, Math.max(1, y / grid + Math.round(between(random, -4, 4)))) * grid;
      d += ` L${x} ${y}`;
    }
    const colour = random() < 0.7 ? p.accent : p.second;
    out += `<path d="${d}" fill="none" stroke="${colour}" stroke-opacity="${r1(between(random, 0.35, 0.8))}" stroke-width="3"/>`;
    out += `<circle cx="${x}" cy="${y}" r="7" fill="none" stroke="${colour}" stroke-width="3"/>`;
  }
  const chipX = Math.round(between(random, 16, 22)) * grid;
  const chipY = Math.round(between(random, 4, 7)) * grid;
  out += `<rect x="${chipX}" y="${chipY}" width="200" height="200" rx="18" fill="${p.from}" stroke="${p.accent}" stroke-width="4"/>`;
  out += `<rect x="${chipX + 50}" y="${chipY + 50}" width="100" height="100" rx="8" fill="${p.accent}" fill-opacity="0.25"/>`;
  return out;
}

function drawTrack(random: Random, p: Palette): string {
  const x = between(random, 380, 520);
  const y = between(random, 60, 140);
  let out = '';
  for (let lane = 0; lane < 6; lane++) {
    const inset = lane * 34;
    const w = 900 - inset * 2;
    const h = 560 - inset * 2;
    out += `<rect x="${r1(x + inset)}" y="${r1(y + inset)}" width="${r1(w)}" height="${r1(h)}" rx="${r1(h / 2)}" fill="none" stroke="${p.accent}" stroke-opacity="${r1(0.25 + lane * 0.06)}" stroke-width="3"/>`;
  }
  const bx = between(random, 760, 1000);
  const by = between(random, 260, 420);
  out += `<circle cx="${r1(bx)}" cy="${r1(by)}" r="70" fill="${p.second}"/>`;
  out += `<path d="M${r1(bx - 70)} ${r1(by)} Q${r1(bx)} ${r1(by - 40)} ${r1(bx + 70)} ${r1(by)} M${r1(bx)} ${r1(by - 70)} Q${r1(bx + 40)} ${r1(by)} ${r1(bx)} ${r1(by + 70)}" fill="none" stroke="${p.from}" stroke-width="4"/>`;
  for (let i = 0; i < 4; i++) {
    const ly = by - 40 + i * 26;
    out += `<line x1="${r1(bx - 110 - i * 30)}" y1="${r1(ly)}" x2="${r1(bx - 280 - i * 30)}" y2="${r1(ly)}" stroke="${p.second}" stroke-opacity="0.6" stroke-width="6" stroke-linecap="round"/>`;
  }
  return out;
}

function drawSpotlights(random: Random, p: Palette): string {
  let out = '';
  for (let i = 0; i < 6; i++) {
    const colour = i % 2 === 0 ? p.accent : p.second;
    out += `<circle cx="${r1(between(random, 450, 1150))}" cy="${r1(between(random, 60, 500))}" r="${r1(between(random, 90, 240))}" fill="${colour}" fill-opacity="0.22"/>`;
  }
  for (let wave = 0; wave < 3; wave++) {
    const baseY = between(random, 180, 460);
    const amplitude = between(random, 20, 60);
    const period = between(random, 120, 220);
    let d = `M380 ${r1(baseY)}`;
    for (let x = 380; x <= WIDTH; x += 20) d += ` L${x} ${r1(baseY + amplitude * Math.sin((x / period) * Math.PI * 2 + wave))}`;
    out += `<path d="${d}" fill="none" stroke="${p.accent}" stroke-opacity="${r1(0.5 - wave * 0.12)}" stroke-width="3"/>`;
  }
  return out;
}

function drawQuote(random: Random, p: Palette): string {
  let out = '';
  for (let y = 90; y < HEIGHT; y += 44)
    out += `<line x1="0" y1="${y}" x2="${WIDTH}" y2="${y}" stroke="${p.accent}" stroke-opacity="0.08" stroke-width="2"/>`;
  out += `<line x1="${r1(between(random, 90, 140))}" y1="0" x2="${r1(between(random, 90, 140))}" y2="${HEIGHT}" stroke="${p.second}" stroke-opacity="0.45" stroke-width="3"/>`;
  const x = between(random, 560, 880);
  const y = between(random, 420, 600);
  out += `<text x="${r1(x)}" y="${r1(y)}" font-family="${SERIF}" font-size="${Math.round(between(random, 420, 640))}" font-weight="700" fill="${p.accent}" fill-opacity="0.28">\u201C</text>`;
  out += `<rect x="${r1(x + between(random, 40, 120))}" y="${r1(y - 40)}" width="${r1(between(random, 180, 320))}" height="14" rx="7" fill="${p.second}" fill-opacity="0.8"/>`;
  return out;
}

function drawCompass(random: Random, p: Palette): string {
  const cx = between(random, 760, 960);
  const cy = between(random, 250, 380);
  let out = '';
  for (let ring = 1; ring <= 6; ring++) {
    out += `<circle cx="${r1(cx)}" cy="${r1(cy)}" r="${ring * 48}" fill="none" stroke="${p.second}" stroke-opacity="${r1(0.5 - ring * 0.06)}" stroke-width="${ring === 4 ? 4 : 2}"/>`;
  }
  out += `<line x1="${r1(cx)}" y1="0" x2="${r1(cx)}" y2="${HEIGHT}" stroke="${p.accent}" stroke-width="3" stroke-opacity="0.7"/>`;
  out += `<line x1="${r1(cx - 320)}" y1="${r1(cy)}" x2="${r1(cx + 320)}" y2="${r1(cy)}" stroke="${p.second}" stroke-width="2" stroke-opacity="0.4"/>`;
  const turn = between(random, -0.5, 0.5);
  const tip = (angle: number, length: number) => `${r1(cx + length * Math.sin(angle + turn))},${r1(cy - length * Math.cos(angle + turn))}`;
  out += `<polygon points="${tip(0, 200)} ${tip(Math.PI / 2, 36)} ${tip(Math.PI, 200)} ${tip(-Math.PI / 2, 36)}" fill="${p.accent}" fill-opacity="0.85"/>`;
  out += `<circle cx="${r1(cx)}" cy="${r1(cy)}" r="12" fill="${p.from}" stroke="${p.accent}" stroke-width="4"/>`;
  return out;
}

const MOTIFS: Record<Section, (random: Random, palette: Palette) => string> = {
  world: drawGlobe,
  business: drawBars,
  politics: drawHemicycle,
  tech: drawCircuit,
  sports: drawTrack,
  culture: drawSpotlights,
  opinion: drawQuote,
  home: drawCompass,
};

/** The SVG source of one section variant: gradient, section motif, masthead and label. */
export function renderHeroSvg(section: Section, variant: number): string {
  const random = createRandom(`${section}:${variant}`);
  const { tones, ...colours } = PALETTES[section];
  const p: Palette = { ...colours, to: tones[variant % tones.length]! };
  const angle = Math.round(between(random, 0, 90));
  // Scaled about a point right of the label, so variants of one section differ in composition too.
  const scale = r1(between(random, 0.8, 1.3));
  const pivot = { x: Math.round(between(random, 700, 950)), y: Math.round(between(random, 200, 360)) };
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">
<defs>
<linearGradient id="bg" gradientTransform="rotate(${angle} 0.5 0.5)"><stop offset="0" stop-color="${p.from}"/><stop offset="1" stop-color="${p.to}"/></linearGradient>
<linearGradient id="shade" x1="0" y1="0" x2="0" y2="1"><stop offset="0.45" stop-color="#000" stop-opacity="0"/><stop offset="1" stop-color="#000" stop-opacity="0.55"/></linearGradient>
</defs>
<rect width="${WIDTH}" height="${HEIGHT}" fill="url(#bg)"/>
<g transform="translate(${pivot.x} ${pivot.y}) scale(${scale}) translate(${-pivot.x} ${-pivot.y})">${MOTIFS[section](random, p)}</g>
<rect width="${WIDTH}" height="${HEIGHT}" fill="url(#shade)"/>
<rect x="64" y="${HEIGHT - 178}" width="56" height="6" fill="${p.accent}"/>
<text x="64" y="${HEIGHT - 138}" font-family="${SANS}" font-size="24" font-weight="700" letter-spacing="6" fill="#ffffff" fill-opacity="0.85">MERIDIAN NEWS</text>
<text x="60" y="${HEIGHT - 62}" font-family="${SANS}" font-size="76" font-weight="700" fill="#ffffff">${SECTION_LABELS[section]}</text>
</svg>`;
}

/**
 * Rasterises an SVG into every hero width and stores it under its content hash (the first 32 hex
 * characters of the SHA-256 of the largest WebP); answers the heroImage path. Same bytes, same folder.
 */
export async function writeHeroImage(imagesDir: string, svg: string): Promise<string> {
  const { default: sharp } = await import('sharp');
  const { data, info } = await sharp(Buffer.from(svg)).resize(WIDTH, HEIGHT).raw().toBuffer({ resolveWithObject: true });
  const encode = (width: number) =>
    sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
      .resize(width, Math.round((width * HERO_ASPECT.height) / HERO_ASPECT.width))
      // Fastest encoder effort: files are ~40% larger but the whole seed stays within a few seconds.
      .webp({ quality: 80, effort: 0 })
      .toBuffer();
  const encoded = await Promise.all(HERO_WIDTHS.map(async (width) => ({ width, bytes: await encode(width) })));
  const largest = encoded.find((e) => e.width === WIDTH)!.bytes;
  const hash = createHash('sha256').update(largest).digest('hex').slice(0, 32);
  const dir = path.join(imagesDir, hash);
  await fs.mkdir(dir, { recursive: true });
  await Promise.all(encoded.map((e) => fs.writeFile(path.join(dir, `${e.width}.webp`), e.bytes)));
  return heroImagePath(hash, WIDTH);
}
