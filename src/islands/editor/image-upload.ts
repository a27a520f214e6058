/** The hero image upload flow: signed upload URL, raw PUT of the file, then normalisation into web images. */
import { api, ApiRequestError } from '../../lib/api-client.ts';
import type { NormalizeImageResult, UploadUrlResult } from '../../schemas/misc.ts';

/** Uploads an image file and answers the public path that becomes `heroImage`. */
export async function uploadHeroImage(file: File): Promise<string> {
  if (!file.type.startsWith('image/')) throw new Error('Not an image file');
  const { uploadURL } = await api.post<UploadUrlResult>('/api/images/upload-url');
  // The raw file, not JSON: the one fetch helper only speaks JSON, so this PUT is done here.
  const response = await fetch(uploadURL, {
    method: 'PUT',
    body: file,
    headers: { 'Content-Type': file.type },
    credentials: 'include',
  });
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    throw new ApiRequestError(response.status, text, response.statusText);
  }
  const { path } = await api.post<NormalizeImageResult>('/api/images/normalize', { imageUrl: uploadURL });
  return path;
}
