/**
 * The hero image convention shared by the image pipeline, the seed and the views: a normalised
 * image lives at DATA_DIR/images/{hash}/{width}.webp (served as /images/{hash}/{width}.webp),
 * cropped to 16:9, in the widths below. `heroImage` stores the largest one.
 */

export const HERO_WIDTHS = [400, 800, 1200] as const;
export const HERO_ASPECT = { width: 16, height: 9 } as const;

const LOCAL_HERO = /^\/images\/([a-f0-9]{16,64})\/(\d+)\.webp$/;

/** The public path of one width of a normalised image. */
export function heroImagePath(hash: string, width: number): string {
  return `/images/${hash}/${width}.webp`;
}

export type HeroImageAttributes = { src: string; srcset?: string; width: number; height: number };

/** `src`, `srcset` and explicit dimensions for an <img> of a hero image (local or external). */
export function heroImageAttributes(heroImage: string): HeroImageAttributes {
  const largest = HERO_WIDTHS[HERO_WIDTHS.length - 1]!;
  const height = Math.round((largest * HERO_ASPECT.height) / HERO_ASPECT.width);
  const match = LOCAL_HERO.exec(heroImage);
  if (!match) return { src: heroImage, width: largest, height };
  const hash = match[1]!;
  return {
    src: heroImagePath(hash, 800),
    srcset: HERO_WIDTHS.map((w) => `${heroImagePath(hash, w)} ${w}w`).join(', '),
    width: largest,
    height,
  };
}
