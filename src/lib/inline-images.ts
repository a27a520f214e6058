/** Render-time srcset for images inside an article body: an uploaded inline image gets the same WebP widths as a hero. */
import { heroImageAttributes } from '../schemas/image.ts';

/** The body column is at most about 720 px wide; on phones an image fills the screen. */
export const INLINE_IMAGE_SIZES = '(max-width: 760px) 100vw, 720px';

// The sanitiser's output quotes every attribute with double quotes and never keeps srcset or sizes.
const LOCAL_IMG = /<img\b([^>]*?)\ssrc="(\/images\/[a-f0-9]{16,64}\/\d+\.webp)"([^>]*)>/g;

/** Adds srcset and sizes to every <img> of an uploaded image in sanitised body HTML; other images are left as they are. */
export function addInlineImageSrcset(html: string): string {
  if (!html.includes('<img')) return html;
  return html.replace(LOCAL_IMG, (whole, before: string, src: string, after: string) => {
    const image = heroImageAttributes(src);
    if (!image.srcset) return whole;
    return `<img${before} src="${image.src}" srcset="${image.srcset}" sizes="${INLINE_IMAGE_SIZES}"${after}>`;
  });
}
